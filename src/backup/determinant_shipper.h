// The active primary's side of determinants.
//
// Paper: for non-deterministic operators the primary must ship its non-deterministic choices
// (Union's interleaving) to the active standby, or the standby's output differs and recovery
// is only rollback (section 4.2). The primary releases an output only after the standby has
// acknowledged every determinant it depends on, so a crash right after a send cannot leave the
// downstream holding a tuple the standby would produce differently.
//
// Invariants: a stream's release gate only moves forward, and only to positions whose
// determinants are acknowledged (checked in release, and where the holds are written: each
// hold reaches at least as far as the one before); every gate is held while the shipper lives;
// the records shipped for an operator are numbered consecutively (checked in after_processing);
// coalescing for a resend keeps every unacknowledged record. Acknowledgements come from the
// standby (or from a forged envelope): one beyond what was sent is not an invariant of mine and
// is not checked.
//
// k standbys (issue 36): the determinants go to every standby, and an output is released only
// once *every* standby acknowledged what it depends on (and every standby that is still being
// brought up to date from my state, a follower after my takeover, has installed it), so whichever
// replica survives can reproduce everything downstream has. A lost standby is removed; what
// waited only for it is released.
#pragma once

#include <deque>
#include <map>
#include <vector>

#include "primary/server.h"

namespace hapair {

class DeterminantShipper {
 public:
  // `not_ready`: standbys (among `standbys`) that are installing my state (a bootstrap): nothing
  // is released until each of them is ready (mark_ready), whatever they acknowledged.
  DeterminantShipper(Server& server, const std::vector<NodeId>& standbys, const std::vector<NodeId>& not_ready = {});
  void on_start();
  // A standby installed my state, which covers `covered` (what I had sent when I captured it): it
  // counts like the others from now on.
  void mark_ready(NodeId standby, const std::map<std::uint16_t, std::uint64_t>& covered);
  // One more standby (a rejoined one installing my state): it counts once it acknowledged.
  void add_standby(NodeId standby);
  const std::map<std::uint16_t, std::uint64_t>& sent() const { return sent_; }
  // A standby is gone; false when none is left (the shipper should go too).
  bool remove_standby(NodeId standby);
  bool ships_to(NodeId standby) const { return standbys_.count(standby) > 0; }
  // Ships new determinants and records what the output produced so far depends on.
  void after_processing(TimeUs now, Effects& eff);
  void on_ack(NodeId from, const DeterminantAck& ack);
  // Re-sends determinants the standby has not acknowledged for retransmit_timeout_ms; returns
  // when it next needs to look.
  TimeUs retransmit(TimeUs now, Effects& eff);

 private:
  void release();

  Server& server_;
  struct Progress {
    bool ready = true;                               // installed my state (not a bootstrap in flight)
    std::map<std::uint16_t, std::uint64_t> acked;  // per operator, cumulative
  };
  // Whether every standby is ready and acknowledged `seq` of operator `op`.
  bool all_acked(std::uint16_t op, std::uint64_t seq) const;
  void send_to_all(TimeUs now, const Determinants& d, Effects& eff);

  std::map<NodeId, Progress> standbys_;  // never empty while I live
  std::map<std::uint16_t, std::uint64_t> sent_;
  struct Hold {
    std::map<StreamId, TupleId> up_to;
    std::map<std::uint16_t, std::uint64_t> needs;
  };
  std::deque<Hold> holds_;
  // Sent but unacknowledged determinants, oldest first (bounded by what the standby acks; a
  // standby that is gone stops the primary's output, which is held for it anyway).
  std::deque<Determinants> unacked_;
  TimeUs oldest_sent_us_ = 0;
  std::uint32_t resends_ = 0;
};

}  // namespace hapair
