// The hybrid standby: a passive standby (it installs and acknowledges its primary's checkpoints,
// CheckpointReceiver) that its primary can make active: it installs a bootstrap checkpoint into
// the node and from then on processes the input its producers were asked to send it, logging
// its output instead of sending it, as a rejoined active standby does (its node's role is
// active_backup from then on: a passive_backup node processes nothing). It is not told when it is
// passive again: its producers stop sending, so its live copy stops moving while the checkpoints
// go on.
//
// Paper: passive and active standby (Hwang et al., ICDE 2005, sections 4.1-4.2), switched as in
// Zhang, Gu et al. (ICDCS 2010).
//
// At a takeover it starts from the more advanced of its two copies: the live one when it has
// accepted, on every input stream, at least what the last installed checkpoint covers (it needs
// no replay of the checkpoint's worth of input: the short recovery of active standby), else the
// checkpoint (passive standby's recovery). Either way upstream servers still retain the input
// after it: they trim only what an acknowledged checkpoint covers (the primary's level-1 acks),
// and an installed checkpoint is at least as new as an acknowledged one.
//
// k standbys (issue 36): every standby installs the passive checkpoints and, on a switch, the
// bootstrap; the standbys elect the one whose copy to take over with processed the most input;
// the others follow it and keep both copies until its first checkpoint replaces the passive one
// (the new epoch ends the producers' redirection, so their live copies fall behind and the
// checkpoint is what they would take over with).
//
// Invariants: the standby never sends output before it takes over (checked after every tick and
// message); it takes over at most once; the live copy is used only if every input stream's
// accepted position is at or beyond the installed checkpoint's (checked at takeover); its log
// is trimmed only to where its primary's log began at an installed checkpoint.
#pragma once

#include "backup/checkpoint_receiver.h"
#include "primary/checkpoint.h"
#include "primary/standby_role.h"

namespace hapair {

class HybridStandbyRole : public StandbyRole {
 public:
  HybridStandbyRole(Server& server, bool rejoined) : StandbyRole(server), awaiting_first_checkpoint_(rejoined) {}
  void on_start(TimeUs now, Effects& eff) override;
  void on_tick(TimeUs now, Effects& eff) override;
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override;
  TimeUs next_wakeup_us() const override;
  // A live switch to a standby without state: the copy I would take over with stays in the node
  // (the live one when it is ahead, else my last checkpoint, installed).
  void leave_copy_in_node() override;
  bool holds_takeover_state() const override { return !awaiting_first_checkpoint_ || live_; }

 private:
  void on_bootstrap_chunk(TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff);
  // Trims my live log to where the primary's log began at the last installed checkpoint.
  void trim_live_log();
  // The live copy has accepted at least what the installed checkpoint covers, on every input.
  bool live_is_ahead() const;
  void primary_failed(TimeUs now, Effects& eff, Detector detector) override;
  // The election's position (k standbys): the input processed by the copy I would take over
  // with (the live one when it is ahead of the installed checkpoint, else the checkpoint),
  // summed over the input streams.
  std::uint64_t election_position() const override;
  // k standbys: I follow a new primary (the election's winner). Its bootstraps are numbered on
  // their own, and the redirection of my input ended with the old epoch: my live copy keeps what
  // it accepted (it may still be the copy I take over with) but accepts nothing more until the
  // new primary's bootstrap replaces it.
  void on_followed(TimeUs now, Effects& eff) override;

  CheckpointReceiver checkpoints_;     // the passive copy
  CheckpointAssembler bootstrap_;      // the bootstrap of the live copy
  bool live_ = false;                  // a bootstrap is installed into the node: it processes
  // My current primary's bootstrap is installed, so the input its producers send me continues my
  // live copy (false after following a new primary until its bootstrap is installed).
  bool live_input_open_ = false;
  bool awaiting_first_checkpoint_;     // rejoined, and neither copy of the new pair's state yet
  TimeUs next_retransmit_us_ = kNever;
};

}  // namespace hapair
