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

 private:
  // Takes over (not while bootstrapping: without the primary's state there is nothing to take
  // over with).
  void primary_failed(TimeUs now, Effects& eff, Detector detector) override;
  void on_bootstrap_chunk(TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff);
  // Applies the primary's determinants to my following fragment; outputs go to my log. Returns
  // the number of the last record now applied for d.op_index (cumulative; 0: none).
  std::uint64_t apply_determinants(const Determinants& d);
  // At takeover: stop following and emit what waited for determinants, in arrival order.
  void release_determinant_buffers();

  bool bootstrapping_ = false;
  // The bootstrap checkpoint I installed (0: none); a repeat of it is acknowledged again.
  std::uint64_t installed_bootstrap_id_ = 0;
  CheckpointAssembler assembler_;
  TimeUs next_retransmit_us_ = kNever;
};

}  // namespace hapair
