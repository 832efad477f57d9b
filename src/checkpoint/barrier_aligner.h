// Barrier alignment of one fragment (docs/CHECKPOINT.md; Carbone et al. 2015, "Lightweight
// asynchronous snapshots for distributed dataflows", section 3.2): a checkpoint's barrier on an
// input stream is a position ("checkpoint c falls after tuple id x on stream s"); the fragment
// processes each input up to its barrier of c and holds it there until every input reached its
// barrier, then takes its snapshot of c, which therefore reflects input up to the barrier on
// every input and nothing beyond (the cut is consistent). An input that ended will bring no more
// barriers: it counts as aligned once all of it was processed.
//
// Barriers are positions, not tuples in the stream, so they may arrive before or after the
// tuples they follow and be repeated: a repeated barrier is ignored, one of a checkpoint already
// taken or abandoned is stale, and one of a newer checkpoint abandons the alignment in progress
// (its checkpoint can no longer complete: Flink cancels it the same way).
//
// Invariants: at most one checkpoint is being aligned; checkpoint ids only grow; an input's
// processing limit is its barrier's position while it is held, else none.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "primary/checkpoint_store.h"
#include "protocols/ids.h"

namespace hapair {

class BarrierAligner {
 public:
  static constexpr TupleId kNoLimit = ~TupleId{0};

  explicit BarrierAligner(std::vector<StreamId> inputs);

  enum class Heard : std::uint8_t { started, added, repeated, stale, superseded };
  // The barrier of checkpoint `id` on input `stream` after tuple `after_id`.
  Heard barrier(StreamId stream, CheckpointId id, TupleId after_id);
  // Input `stream` ended after tuple `last_id` (end of stream).
  void ended(StreamId stream, TupleId last_id);

  // How far input `stream` may be processed now.
  TupleId limit(StreamId stream) const;
  // The checkpoint to snapshot now: every input reached its barrier (or ended and was processed
  // to its end), given how far each input was processed.
  std::optional<CheckpointId> ready(const std::map<StreamId, TupleId>& processed) const;
  // The snapshot of `id` was taken: the inputs are released. Returns the barrier positions of
  // `id` on every input (the snapshot's input positions).
  std::map<StreamId, TupleId> taken(CheckpointId id);

  // Checkpoint `id` cannot be taken here (an input went past its barrier): the alignment of it
  // ends, and its barriers are stale from now on.
  void abandon(CheckpointId id);
  std::optional<CheckpointId> aligning() const { return aligning_; }
  CheckpointId last_taken() const { return last_taken_; }
  std::uint64_t abandoned() const { return abandoned_; }

 private:
  std::vector<StreamId> inputs_;
  std::optional<CheckpointId> aligning_;
  std::map<StreamId, TupleId> barriers_;  // of the checkpoint being aligned
  std::map<StreamId, TupleId> ended_;
  CheckpointId last_taken_ = 0;
  CheckpointId newest_heard_ = 0;
  CheckpointId abandoned_id_ = 0;
  std::uint64_t abandoned_ = 0;
};

}  // namespace hapair
