// The passive primary's side of checkpointing.
//
// Paper: every checkpoint interval the primary sends its backup a checkpoint; once the backup
// acknowledges it, upstream servers may trim everything it covers (section 4.1).
//
// Invariants: at most one checkpoint is in flight (the next waits for the ack, so a delta always
// applies to what the standby installed, and its base is older than it); level-1 acks name only
// input covered by an acknowledged checkpoint, and never less than an earlier one covered; a
// fragment with an arbitrary operator releases output only when a checkpoint covering it is
// acknowledged (its gates stay held while the sender lives), so no delivered output depends on
// a non-deterministic choice the standby does not have. All checked where they are written or
// read (take_checkpoint, on_ack, on_tick). A primary without a standby acknowledges input
// directly instead, never while a sender lives (passive_primary_side.cpp checks that).
#pragma once

#include <map>
#include <optional>

#include "primary/checkpoint_state.h"
#include "primary/server.h"

namespace hapair {

class CheckpointSender {
 public:
  // restoring: the standby is a restarted node rejoining; its first acknowledged checkpoint
  // restores the pair (traced as pair_restored).
  CheckpointSender(Server& server, NodeId standby, bool restoring = false);
  void on_start(TimeUs now);
  void on_tick(TimeUs now, Effects& eff);
  void on_ack(TimeUs now, const CheckpointAck& ack, Effects& eff);
  // Takes a checkpoint now (a rejoined standby should not wait a whole interval).
  void take_now(TimeUs now, Effects& eff) {
    if (!in_flight_) take_checkpoint(now, eff);
  }
  TimeUs next_due_us() const { return in_flight_ ? in_flight_sent_us_ + ack_timeout_us_ : next_due_us_; }
  bool holds_output() const { return hold_output_; }

 private:
  void take_checkpoint(TimeUs now, Effects& eff);
  TimeUs base_ack_timeout_us() const;

  Server& server_;
  NodeId standby_;
  bool hold_output_ = false;
  bool restoring_ = false;
  TimeUs next_due_us_ = kNever;
  std::uint64_t next_id_ = 1;
  struct InFlight {
    CheckpointContent summary;  // without tuples and state: positions only
    std::vector<std::uint64_t> versions;
  };
  std::optional<InFlight> in_flight_;
  std::optional<CheckpointBase> base_;
  // What the acknowledged checkpoints covered, per input stream (their level-1 positions).
  std::map<StreamId, TupleId> acked_inputs_;
  TimeUs in_flight_sent_us_ = 0;
  TimeUs ack_timeout_us_ = 0;
};

}  // namespace hapair
