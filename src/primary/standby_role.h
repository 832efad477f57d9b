// The standby's end of a process pair: what every approach's standby role shares (the spare of
// amnesia and upstream backup, the passive standby, the active standby). It watches its primary
// (PrimaryWatch: heartbeats to it, a failure detector fed by every message from it), learns of
// the primary's failure from its own detector or from the driver's (PeerLost), and hands over,
// once, to its successor: the primary role it becomes at a takeover (takeover.h has the steps
// every takeover shares), or the fenced role when the pair went on without it. What it does
// until then, and how it takes over, is the approach's: primary_failed and the rest of the role.
//
// Paper: the backup of a process pair detects its primary's fail-stop crash by missed heartbeats
// (section 2) and takes over (sections 4.1-4.3). With k standbys (beyond the paper) the standbys
// first elect the most advanced of them (election.h); the others follow it.
//
// Invariants: a failure is reported (primary_failed) only of the current primary, never after
// the role handed over; the successor is handed over once (each approach's primary_failed
// checks that it has no successor yet). "Never of the node itself" holds for the driver's
// PeerLost (on_peer_lost filters it) but is not an invariant of the heartbeat path: a Takeover
// of my own fragment in a newer epoch that names me (only a forged envelope says that) makes
// the route name me while I am still the standby, and my heartbeat detector then reports
// myself; begin_takeover and the announcement tolerate it (they never send to myself), so it
// is not checked.
#pragma once

#include <memory>
#include <vector>

#include "primary/election.h"
#include "primary/primary_watch.h"
#include "primary/role.h"

namespace hapair {

class StandbyRole : public RoleBehaviour {
 public:
  // The driver found the current primary failed (connection lost, or its own heartbeats), or
  // another standby of my fragment (an election among k standbys no longer waits for it).
  void on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) final;
  std::unique_ptr<RoleBehaviour> take_successor() final { return std::move(successor_); }
  // My primary failed before my first state and I handed back to my predecessor: it acts on that
  // loss (its on_peer_lost, after its on_start).
  std::optional<PeerLost> take_partner_loss() final;
  bool holds_takeover_state() const override { return true; }
  // Kept when it (or the predecessor it kept itself) can take over; I hand back to it when my
  // primary fails before my first state is installed (cannot_take_over).
  bool keep_predecessor(PredecessorStandby predecessor) final;
  PredecessorStandby take_predecessor() final { return std::move(predecessor_); }

 protected:
  explicit StandbyRole(Server& server) : server_(server), watch_(server) {}

  // A tick's first step: heartbeats the primary and, unless `detect` is false (a standby that is
  // taking over already), checks it; with other standbys, runs the election (election.h).
  // True when the primary was found failed now and primary_failed ran.
  bool watch_primary(TimeUs now, Effects& eff, bool detect = true);
  // The primary failed, found by `detector`: take over (setting successor_), or say why this
  // standby cannot. With k standbys, only the winner of the election gets here.
  virtual void primary_failed(TimeUs now, Effects& eff, Detector detector) = 0;
  // What primary_failed does when this standby holds no state to take over with (an active
  // standby still bootstrapping, a passive one that rejoined and has no checkpoint of the new
  // pair yet). After a live switch whose predecessor I keep: I hand back to it, in its approach,
  // and it takes over with its copy (a passive standby's last checkpoint, an active standby's
  // live copy, a spare's restart points, which upstream still holds: docs/ARCHITECTURE.md "The
  // window after a switch"). Otherwise: counts `counter` and traces the detection with `why`,
  // and stays a standby. If the primary only stalled it goes on; if it died, both copies of the
  // state are gone.
  void cannot_take_over(TimeUs now, Effects& eff, Detector detector, const char* counter, const char* why);
  // My first state of the new approach is installed (called before it goes into the node, for a
  // state that does): the predecessor I kept is released, and the node's copy with it (a fresh
  // fragment, nothing accepted or queued, as a standby that follows a switch gets at once when it
  // keeps no predecessor). Nothing when I keep none.
  void first_state_installed();
  // How far my state goes, for the election among k standbys (passive standby: the id of the
  // last checkpoint it installed). Compared only between standbys of one primary and epoch.
  virtual std::uint64_t election_position() const { return 0; }
  // A Candidacy from another standby of my fragment: the election's (true: handled, counted or
  // dropped). Every standby role calls it first in on_message.
  bool on_election_message(TimeUs now, const Envelope& env, Effects& eff);
  // A Takeover (standby_learns_takeover, `answer` as there): the role to swap to when the pair
  // went on without me (fenced); when it names me as a standby of a new primary (the winner of an
  // election, or my primary's new pair), I follow it: the election closes, and my watch turns to
  // the new primary.
  std::unique_ptr<RoleBehaviour> learn_takeover(TimeUs now, const Takeover& t, Effects& eff, bool answer = true);
  // I followed a new primary in a newer epoch (learn_takeover). What my state needs then is the
  // approach's: a passive standby keeps it until the new primary's first checkpoint replaces it,
  // an active standby of a fragment that follows determinants awaits the new primary's
  // bootstrap. Nothing by default.
  virtual void on_followed(TimeUs /*now*/, Effects& /*eff*/) {}
  // The other standbys the winner names as its own (it heard them in the election; none with one
  // standby): begin_takeover's followers.
  std::vector<StandbyRef> followers() const;
  // When the watch or the election next needs a Tick.
  TimeUs watch_wakeup_us() const;
  // A standby that processes input never sends output before it takes over (its log waits for
  // the takeover): none of the messages sent since `first` is a tuple batch (checked). Cheap: a
  // standby sends a handful of acks and heartbeats per event.
  void check_no_output_sent(const Effects& eff, std::size_t first) const;

  Server& server_;
  PrimaryWatch watch_;
  // The role to swap to (set once: the primary role after a takeover, or the fenced role).
  std::unique_ptr<RoleBehaviour> successor_;

 private:
  // My primary was found failed: take over at once (the only standby), or open the election.
  // True when primary_failed ran.
  bool primary_suspected(TimeUs now, Effects& eff, Detector detector);
  // Decides when it can: takes over (the winner) or waits for the winner's Takeover.
  bool decide(TimeUs now, Effects& eff);
  void send_candidacy(TimeUs now, Effects& eff);
  // The winner I waited for failed before its Takeover reached me: suspect it, count it, and let
  // the most advanced of the rest win after one more failure timeout.
  void give_up_awaited_winner(TimeUs now);

  Election election_;
  // The standby role a live switch replaced, until my first state is installed (keep_predecessor).
  PredecessorStandby predecessor_;
  std::optional<PeerLost> partner_loss_;  // handed to the predecessor with my successor
  Detector detector_ = Detector::heartbeat;  // what found the primary failed
  TimeUs next_candidacy_us_ = kNever;        // repeated until decided
  NodeId awaited_winner_ = kNoNode;          // lost: the winner whose Takeover I wait for
  TimeUs winner_due_us_ = kNever;            // ... until then, else it is suspected
  TimeUs election_opened_us_ = 0;            // when I stood (the primary heard after: it lives)
  bool winner_lost_ = false;                 // a winner failed before its Takeover reached me
  bool deadline_passed_ = false;             // the election's deadline is behind me
};

}  // namespace hapair
