// The passive primary's side of checkpointing.
//
// Paper: every checkpoint interval the primary sends its backup a checkpoint; once the backup
// acknowledges it, upstream servers may trim everything it covers (section 4.1). With k standbys
// (beyond the paper) every checkpoint goes to all of them and counts as acknowledged once every
// live standby acknowledged it: upstream servers trim, and an arbitrary fragment releases output,
// only up to what *every* standby holds, so whichever survives k - 1 failures (in any order,
// during a takeover too) can reproduce everything delivered and find everything it needs
// upstream. (A majority would do for agreement, but not here: the survivor of k failures may be
// the one standby that lagged.)
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
#include <set>
#include <vector>

#include "primary/checkpoint_state.h"
#include "primary/server.h"

namespace hapair {

class CheckpointSender {
 public:
  // restoring: the standbys are restarted nodes rejoining (or followers of a new primary); the
  // first checkpoint each acknowledges restores the pair (traced as pair_restored). first_id: the
  // id of the first checkpoint (a new primary's continue above its predecessor's).
  CheckpointSender(Server& server, std::vector<NodeId> standbys, bool restoring = false, std::uint64_t first_id = 1);
  // at_once: the first checkpoint is due now (a new primary's followers), else after an interval.
  void on_start(TimeUs now, bool at_once = false);
  void on_tick(TimeUs now, Effects& eff);
  void on_ack(TimeUs now, NodeId from, const CheckpointAck& ack, Effects& eff);
  // k standbys: another standby joins (restored); the next checkpoint is full, taken now unless
  // one is in flight (the in-flight one does not wait for it).
  void add_standby(TimeUs now, NodeId standby, Effects& eff);
  // A standby is gone: nothing waits for it any more. False when none is left.
  bool remove_standby(NodeId standby);
  // Takes a checkpoint now (a rejoined standby should not wait a whole interval).
  void take_now(TimeUs now, Effects& eff) {
    if (!in_flight_) take_checkpoint(now, eff);
  }
  TimeUs next_due_us() const { return in_flight_ ? in_flight_sent_us_ + ack_timeout_us_ : next_due_us_; }
  bool holds_output() const { return hold_output_; }

 private:
  void take_checkpoint(TimeUs now, Effects& eff);
  // Every standby it was sent to acknowledged the checkpoint in flight: upstream may trim.
  void acknowledged(TimeUs now, Effects& eff);
  TimeUs base_ack_timeout_us() const;

  Server& server_;
  std::vector<NodeId> standbys_;
  bool hold_output_ = false;
  std::set<NodeId> restoring_;
  // The next checkpoint is full (a standby joined that has no base).
  bool full_next_ = false;
  TimeUs next_due_us_ = kNever;
  std::uint64_t next_id_ = 1;
  struct InFlight {
    CheckpointContent summary;  // without tuples and state: positions only
    std::vector<std::uint64_t> versions;
    std::set<NodeId> sent_to;   // the standbys it was sent to
    std::set<NodeId> awaiting;  // ... that have not acknowledged it
  };
  std::optional<InFlight> in_flight_;
  std::optional<CheckpointBase> base_;
  // What the acknowledged checkpoints covered, per input stream (their level-1 positions).
  std::map<StreamId, TupleId> acked_inputs_;
  TimeUs in_flight_sent_us_ = 0;
  TimeUs ack_timeout_us_ = 0;
};

}  // namespace hapair
