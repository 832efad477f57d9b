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
// Invariants: the standby never sends output before it takes over; determinants are
// acknowledged only once stored.
#pragma once

#include "primary/primary_watch.h"
#include "primary/checkpoint.h"
#include "primary/role.h"

namespace hapair {

class ActiveStandbyRole : public RoleBehaviour {
 public:
  // bootstrapping: a rejoined standby that must first install its primary's full checkpoint.
  explicit ActiveStandbyRole(Server& server, bool bootstrapping = false);
  void on_start(TimeUs now, Effects& eff) override;
  void on_tick(TimeUs now, Effects& eff) override;
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override;
  void on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) override;
  TimeUs next_wakeup_us() const override;
  std::unique_ptr<RoleBehaviour> take_successor() override { return std::move(successor_); }

 private:
  void take_over(TimeUs now, Effects& eff, Detector detector);
  void on_bootstrap_chunk(TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff);

  Server& server_;
  PrimaryWatch watch_;
  bool bootstrapping_ = false;
  CheckpointAssembler assembler_;
  TimeUs next_retransmit_us_ = kNever;
  std::unique_ptr<RoleBehaviour> successor_;
};

}  // namespace hapair
