// The primary role: the node that processes its fragment and sends its output downstream.
//
// Paper: the primary of a process pair (section 4): it processes input, retains output in its
// output queues until downstream acknowledgements trim them, heartbeats its standby, and —
// depending on the fragment's HA mode — sends level-1 acks carrying its restart point upstream
// (upstream backup), checkpoints to its passive standby, or determinants to its active standby.
//
// Invariants: a primary that learns of a newer epoch of its own fragment stops at once (it is
// fenced); after a takeover that cannot regenerate identical ids, nothing is processed until
// every consumer has said where it resumes, so rebased ids are above everything they accepted;
// a lost standby never stalls the fragment (docs/FAULTS.md): the primary declares it lost,
// dissolves the pair in a new epoch and releases what it held (on_standby_lost), so the old
// standby, if it was only paused, is answered with that epoch and rejoins; of two claims of one
// epoch only one side's output and upstream trimming ever count (on_competing_claim).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "primary/approach.h"
#include "primary/role.h"
#include "protocols/failure_detector.h"

namespace hapair {

// A primary declares its standby lost once the standby has been silent for this many failure
// timeouts: one timeout after the suspicion, so that a standby that was only cut off from its
// primary (and took over after one timeout) has been followed by the neighbours before the
// primary claims a new epoch of its own. See docs/FAULTS.md, "crash of a standby".
inline constexpr std::int64_t kStandbyLossFailureTimeouts = 2;

class PrimaryRole : public RoleBehaviour {
 public:
  // `side` is the fragment's approach at the primary (approach.h): make_primary_side.
  PrimaryRole(Server& server, PrimaryOptions options, std::unique_ptr<PrimarySide> side);
  void on_start(TimeUs now, Effects& eff) override;
  void on_tick(TimeUs now, Effects& eff) override;
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override;
  void on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) override;
  TimeUs next_wakeup_us() const override;
  std::unique_ptr<RoleBehaviour> take_successor() override { return std::move(successor_); }
  // A live switch (docs/ARCHITECTURE.md "Live switching"), at the boundary between two events,
  // so between two tuples: my old end lets its standbys go (on_standby_lost), a new epoch names
  // the new approach and the same standbys (announced to every neighbour and to them: each
  // standby becomes the new approach's standby, rejoined, and producers retain and route as
  // the new approach needs), and the new end starts and is joined by every standby
  // (on_standby_joined: the full state a rejoining standby gets). Traced as approach_switch.
  bool switch_approach(TimeUs now, const Approach& to, Effects& eff) override;

  // My standby is gone: its connection closed (PeerLost, detector=connection: at once), or it
  // was silent for kStandbyLossFailureTimeouts failure timeouts (my heartbeats, or the driver's
  // PeerLost with detector=heartbeat plus one more timeout). Releases every output held for
  // it, stops checkpointing and shipping determinants to it, and dissolves the pair in a new
  // epoch that names no standby: upstream servers stop keeping input for it, and the old
  // standby, if it comes back, is answered with the new epoch and rejoins. Traced as
  // standby_lost. What was held is released (held_output_released) and a passive primary
  // acknowledges upstream directly at once after a closed connection, and after a silence once
  // every neighbour follows the new epoch (the standby may have been cut off and taken over in
  // it: on_competing_claim). Does nothing when I have no standby.
  // With k standbys, losing one of several opens a new epoch that names the others (no
  // dissolution: what is held keeps waiting for them).
  void on_standby_lost(TimeUs now, Effects& eff, NodeId standby, Detector detector);

 private:
  void after_event(TimeUs now, Effects& eff);
  void maybe_finish_rebase(TimeUs now, Effects& eff);
  // A restarted node of my fragment asks to become my standby again.
  void on_rejoin(TimeUs now, NodeId from, const Rejoin& r, Effects& eff);
  // The standby was found failed, by my heartbeat detector or the driver's (PeerLost): lost at
  // once after a closed connection, after one more failure timeout of silence otherwise.
  void standby_suspected(TimeUs now, Effects& eff, NodeId standby, Detector detector);
  // My heartbeat to my standbys was due a failure timeout ago or more: I did not run meanwhile.
  // Their silence is not counted against them, and no Rejoin is accepted until stalled_until_us_.
  void discount_own_stall(TimeUs now);
  // Counts and traces the loss of a standby (in the epoch that dropped it).
  TraceEvent& trace_standby_lost(TimeUs now, Effects& eff, NodeId lost, Detector detector, TimeUs silent_us);
  // After a standby loss declared on silence: every producer echoed my route and every consumer
  // fragment's primary told me where it resumes, i.e. every neighbour follows my epoch.
  bool dissolve_confirmed() const;
  // Asks every producer that has not echoed my route yet (a replay request after what I
  // accepted, which it answers with the echo, Server::on_replay_request); again every
  // retransmit timeout until every producer echoed it in `epoch` (after a dissolution declared
  // on silence, and after forming a pair again: a producer that followed another claim dropped
  // me from its consumers).
  void begin_confirmations(TimeUs now, Effects& eff, Epoch epoch);
  void request_confirmations(TimeUs now, Effects& eff);
  bool producers_confirmed() const;
  // Sends what was held for the lost standby, and acknowledges upstream directly (passive).
  void release_held_output(TimeUs now, Effects& eff);
  // Another node of my fragment claims the epoch in which I dissolved the pair.
  bool claims_my_dissolved_epoch(const Takeover& t) const;
  // Settles it: while my claim is unconfirmed I yield (fenced, rejoin) to a claim some
  // neighbour follows (its statement, sent by the neighbour); the claimant's own announcement
  // proves nothing and waits for my neighbours' answers (deferred_claimant_); once my claim is
  // confirmed, mine stands and I renew it in a newer epoch, which fences the other.
  void on_competing_claim(TimeUs now, NodeId from, const Takeover& t, Effects& eff);
  // Mine stands against `over`: a newer epoch makes that plain to everyone, `over` included.
  void renew_claim_over(TimeUs now, NodeId over, Effects& eff);

  // A standby I watch and heartbeat. Its heartbeats: a standby that goes silent is reported
  // (standby_suspected) after one failure timeout, and declared lost (on_standby_lost) after
  // kStandbyLossFailureTimeouts. (A closed connection is reported by the driver, PeerLost, and
  // declares it lost at once.) Until then held output stays held — only the standby's
  // acknowledgement releases it — so a standby that was merely cut off and took over is
  // followed by the neighbours first, and the primary's later claim loses to it
  // (on_competing_claim).
  struct WatchedStandby {
    NodeId node = kNoNode;
    FailureDetector detector;
    // Declared lost at this time unless heard from first (kNever: not suspected), and by whom
    // it was suspected.
    TimeUs loss_due_us = kNever;
    // When it was last suspected and how long it had been silent then (for the loss's trace).
    TimeUs suspected_at_us = 0;
    TimeUs silence_at_suspicion_us = 0;
    Detector suspected_by = Detector::heartbeat;
  };
  // Starts watching `standby` (again, when it restarted).
  void watch_standby(TimeUs now, NodeId standby);
  WatchedStandby* watched(NodeId n);
  // The standbys I watch and heartbeat (k standbys; in node order).
  std::vector<NodeId> live_standbys() const;

  Server& server_;
  PrimaryOptions options_;
  std::vector<WatchedStandby> standbys_;
  // The epoch in which I dissolved my pair after a standby loss (0: none since the last pair),
  // and whether that claim still waits for my neighbours' answers (held output stays held).
  Epoch dissolved_epoch_ = 0;
  bool dissolve_pending_ = false;
  std::set<NodeId> confirmed_producers_;  // producers that echoed my route in confirming_epoch_
  Epoch confirming_epoch_ = 0;             // 0: no confirmation asked for
  // A node of my fragment that announced a claim of my dissolved epoch before any neighbour
  // answered mine (kNoNode: none): renewed over once every neighbour follows me.
  NodeId deferred_claimant_ = kNoNode;
  TimeUs next_confirmation_request_us_ = kNever;
  TimeUs next_heartbeat_us_ = kNever;
  TimeUs stalled_until_us_ = 0;  // after a stall of my own: no new pair before then
  TimeUs next_source_us_ = kNever;
  TimeUs next_retransmit_us_ = kNever;
  bool rebase_pending_ = false;
  // What the fragment's approach does at the primary: level-1 rounds (upstream backup),
  // checkpoints (passive standby), determinants and bootstraps (active standby).
  std::unique_ptr<PrimarySide> side_;
  std::unique_ptr<RoleBehaviour> successor_;
};

// The role of a primary that learned a newer epoch of its own fragment: it sends nothing and
// drops everything (counted), so a paused-and-resumed old primary cannot break a guarantee.
// The primary's end of `approach` for my fragment (a source or a sink: the stateless one).
std::unique_ptr<PrimarySide> make_primary_side(const Approach& approach, Server& server, const PrimaryOptions& options);

class FencedRole : public RoleBehaviour {
 public:
  explicit FencedRole(Server& server) : server_(server) {}
  void on_start(TimeUs now, Effects& eff) override;
  void on_tick(TimeUs, Effects&) override {}
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override;
  TimeUs next_wakeup_us() const override { return kNever; }

 private:
  Server& server_;
};

}  // namespace hapair
