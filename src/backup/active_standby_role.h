// The active standby: a backup that receives the same input as its primary and processes it in
// parallel, logging its output instead of sending it. Downstream acknowledgements of the
// primary's output reach it too and trim its log. For an arbitrary fragment it follows the
// primary's determinants (Union's interleaving), so its log is identical tuple for tuple; with
// determinants turned off it runs on its own arrival order and takeover rebases its ids, so the
// divergence shows up as rollback (duplicates) rather than silently dropped tuples.
//
// Paper: active standby (section 4.2). On the primary's failure the standby becomes primary at
// once: it sends its unacknowledged log, downstream drops duplicates by id, upstream stops
// sending to the dead primary.
//
// Invariants: the standby never sends output before it takes over (checked after every tick and
// message: no tuple batch among what it sent); determinants are acknowledged only once applied
// (cumulatively: records after a lost one are not; checked in apply_determinants); without
// determinants, its log keeps one flow-control window more than acknowledgements allow (checked
// at takeover, where the log goes out); it takes over at most once, never while bootstrapping; a
// bootstrap the primary repeats after I installed it is acknowledged again, never installed twice.
//
// k standbys (issue 36): the standbys elect the one whose copy processed the most input (epoch,
// then processed input, then the lowest replica index); the others follow it and keep
// processing. A follower never sends output (checked as above), so one that got further than
// the winner emits nothing twice: should it take over later, it re-sends its unacknowledged log
// and the downstream drops the ids it has (deterministic ids, or determinants). Where the
// fragment follows determinants the follower's choices may differ from the winner's, so it is
// brought up to date from the winner's state (a bootstrap) and the winner's output waits for it.
#pragma once

#include "primary/checkpoint.h"
#include "primary/standby_role.h"

namespace hapair {

class ActiveStandbyRole : public StandbyRole {
 public:
  // bootstrapping: a rejoined standby that must first install its primary's full checkpoint.
  explicit ActiveStandbyRole(Server& server, bool bootstrapping = false)
      : StandbyRole(server), bootstrapping_(bootstrapping) {}
  void on_start(TimeUs now, Effects& eff) override;
  void on_tick(TimeUs now, Effects& eff) override;
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override;
  TimeUs next_wakeup_us() const override;
  bool holds_takeover_state() const override { return !bootstrapping_; }

 private:
  // Takes over (not while bootstrapping: without the primary's state there is nothing to take
  // over with).
  void primary_failed(TimeUs now, Effects& eff, Detector detector) override;
  // The election's position (k standbys): the input my copy has processed, summed over its input
  // streams (every copy processes the same streams, so the sums compare how far each got).
  std::uint64_t election_position() const override;
  // A follower of a new primary (k standbys) whose fragment follows determinants awaits its
  // bootstrap: my copy applied the old primary's choices as far as it got, the new primary's
  // may differ. Until it arrives I keep my state (I can still take over should the new primary
  // fail first) but apply no determinants and acknowledge no input (a producer's cursor stays
  // where the new primary redirected it, so my input after the bootstrap is still held).
  void on_followed(TimeUs now, Effects& eff) override;
  bool follows_determinants() const;
  void on_bootstrap_chunk(TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff);
  // Applies the primary's determinants to my following fragment; outputs go to my log. Returns
  // the number of the last record now applied for d.op_index (cumulative; 0: none).
  std::uint64_t apply_determinants(const Determinants& d);
  // At takeover: stop following and emit what waited for determinants, in arrival order.
  void release_determinant_buffers();

  bool bootstrapping_ = false;
  // A follower awaiting its new primary's bootstrap (on_followed), state kept meanwhile.
  bool awaiting_bootstrap_ = false;
  // The bootstrap checkpoint I installed (0: none); a repeat of it is acknowledged again.
  std::uint64_t installed_bootstrap_id_ = 0;
  CheckpointAssembler assembler_;
  TimeUs next_retransmit_us_ = kNever;
};

}  // namespace hapair
