// The election among a fragment's k standbys when its primary fails (k standbys, issue 36): each
// standby that finds its primary failed sends every other standby its candidacy (its epoch and
// how far its state goes, Candidacy) and takes over only if it is the most advanced of the
// candidates it heard, once it heard from every standby it does not suspect (or a failure timeout
// passed). The others follow the winner: its Takeover names them as its standbys in the new epoch.
// A winner that does not take over within a failure timeout is suspected in turn, and the most
// advanced of the rest wins. A standby that still hears the primary answers a candidacy with a
// refusal (Raft's pre-vote): while one does, nobody wins, so a standby cut off from a live
// primary alone does not take over (the primary drops it instead, and it rejoins).
//
// Paper: beyond the paper's process pairs. Kafka Streams promotes the standby with the least
// changelog lag, Samza and Clonos the first one found; Raft's rule, a candidate wins only if its
// log is at least as up to date as the voters', is the one kept here: epoch first, then position
// (passive standby: its last installed checkpoint), then the lowest replica index, so every
// standby that heard the same candidates names the same winner without a coordinator.
//
// Invariants: a decision names a candidate that was heard (or me) and not suspected; the order is
// total (no two candidates compare equal: the replica index breaks every tie); a closed election
// decides nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "protocols/ids.h"

namespace hapair {

class Election {
 public:
  struct Candidate {
    NodeId node = kNoNode;
    Epoch epoch = 0;
    std::uint64_t position = 0;
    std::size_t index = 0;  // the replica index (PlanFragment::replica_index): ties go to the lowest
  };
  // Whether `a` is more advanced than `b`: a newer epoch, else a further position, else a lower
  // replica index.
  static bool ahead(const Candidate& a, const Candidate& b);

  // The election about primary `failed` opens: me, the other standbys I wait for (each heard or
  // suspected), and when to decide among those heard at the latest. Candidacies heard before it
  // opened (another standby found the failure first) count.
  // `refusal_us`: how long a refusal holds (a failure timeout).
  void open(NodeId failed, const Candidate& me, const std::vector<NodeId>& others, TimeUs deadline_us, TimeUs refusal_us);
  bool is_open() const { return open_; }
  NodeId failed() const { return failed_; }
  const Candidate& me() const { return me_; }
  // Another standby's candidacy about primary `failed` (kept even before I open the election).
  void heard(NodeId failed, const Candidate& c);
  // Another standby still hears the primary: no winner while it says so, i.e. until a failure
  // timeout after its last refusal (it repeats one for every candidacy), its candidacy, or its loss.
  // (Its last word counts: a refusal replaces its earlier candidacy, and a candidacy a refusal.)
  void refused(NodeId n, TimeUs now) {
    heard_.erase(n);
    refusing_[n] = now;
  }
  // Whether a live standby's refusal holds now (so nobody can win).
  bool refused_now(TimeUs now) const;
  // A standby found failed (its connection closed), or a winner that never took over.
  void suspect(NodeId n) { suspected_.insert(n); }
  // The winner: kNoNode until every standby I wait for was heard or is suspected, or the deadline
  // passed; then the most advanced of me and the candidates heard and not suspected.
  NodeId winner(TimeUs now) const;
  // The candidates heard and not suspected, but me, most advanced first: the winner's followers.
  std::vector<Candidate> others_heard() const;
  TimeUs deadline_us() const { return open_ ? deadline_us_ : kNever; }
  // Decides later (a winner that never took over was suspected: the rest wait for each other).
  void extend(TimeUs deadline_us) { deadline_us_ = deadline_us; }
  void close() { open_ = false; }
  // Closes it and forgets what the others said (a refused candidate watches its primary again).
  void abandon() {
    open_ = false;
    heard_.clear();
    refusing_.clear();
  }

 private:
  bool open_ = false;
  NodeId failed_ = kNoNode;
  Candidate me_;
  std::vector<NodeId> others_;
  TimeUs deadline_us_ = kNever;
  std::map<NodeId, Candidate> heard_;  // about failed_heard_
  NodeId failed_heard_ = kNoNode;
  std::set<NodeId> suspected_;
  std::map<NodeId, TimeUs> refusing_;  // standbys that still hear the primary, when they last said so
  TimeUs refusal_us_ = 0;
};

}  // namespace hapair
