// The passive standby: a backup that does not process. It installs the checkpoints its primary
// sends and acknowledges them; when the primary fails it installs the last checkpoint, becomes
// primary at a new epoch, asks upstream servers to re-send what they retained after the
// checkpoint, and re-sends its checkpointed output queue to downstream servers (which drop
// duplicates by id).
//
// Paper: passive standby (section 4.1). Recovery is precise for every operator class: the
// checkpoint restores output id counters, so regenerated output repeats the same ids, and the
// primary of an arbitrary fragment released only output covered by an acknowledged checkpoint.
//
// Invariants: a checkpoint is acknowledged only after it is installed, whole (checked before the
// ack: the installed copy has its id and is full); a partial or corrupt one is never installed
// (counted: it comes from a peer); the standby takes over at most once (checked in
// primary_failed), from a completely unpacked copy; a standby that rejoined never takes over
// before its first checkpoint from the new pair is installed (empty state is the state of a
// fragment at the start of the run only: chaos passive case 480 of seed 1 took over empty after a
// false suspicion and its producers had trimmed everything before).
#pragma once

#include "backup/checkpoint_receiver.h"
#include "primary/standby_role.h"

namespace hapair {

class PassiveStandbyRole : public StandbyRole {
 public:
  PassiveStandbyRole(Server& server, bool rejoined) : StandbyRole(server), awaiting_first_checkpoint_(rejoined) {}
  void on_start(TimeUs now, Effects& eff) override;
  void on_tick(TimeUs now, Effects& eff) override;
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override;
  TimeUs next_wakeup_us() const override { return successor_ ? kNever : watch_wakeup_us(); }
  // A live switch to a standby without state: my last checkpoint goes into the node.
  void leave_copy_in_node() override;
  bool holds_takeover_state() const override { return !awaiting_first_checkpoint_; }

 private:
  // Installs the last checkpoint and becomes the primary (with k standbys: the election's winner,
  // naming the others as its followers).
  void primary_failed(TimeUs now, Effects& eff, Detector detector) override;
  // The last checkpoint installed: k standbys elect the one that installed the newest.
  std::uint64_t election_position() const override { return checkpoints_.installed().id; }

  CheckpointReceiver checkpoints_;
  // Rejoined, and no checkpoint of the new pair installed yet: nothing to take over with.
  bool awaiting_first_checkpoint_;
};

}  // namespace hapair
