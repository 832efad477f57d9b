// What an operator fragment does for global checkpoints (docs/CHECKPOINT.md), apart from the
// node it runs on: the brain of ha = checkpoint's primary end. It turns the coordinator's
// trigger and its producers' barriers into barrier positions on its inputs (through a
// BarrierAligner), says how far each input may be processed, decides when the snapshot of a
// checkpoint is due and which barriers it then sends downstream, and, once the coordinator
// declares a checkpoint complete, how far its producers may trim.
//
// Sources are outside the checkpoint, as a Kafka topic is outside a Flink job: a source's tuples
// are a function of their ids, so the fragment reading a source stream records its offset. The
// coordinator's trigger therefore goes to the fragments that read a source stream, and the
// barrier on a source stream is the last id accepted from it when the trigger arrived (a rewind
// is the fragment's replay request after that id). Barriers on the other inputs come from the
// producing fragments, after the last id they produced up to their own snapshot.
//
// Invariants: a snapshot of c reflects input up to c's barrier on every input and nothing beyond;
// the barriers sent downstream for c are the output positions at that snapshot; trimming
// positions only grow and come only from complete checkpoints; at most kTakenMax taken
// checkpoints wait for completion (older ones can no longer complete: the coordinator has at
// most one in flight).
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "checkpoint/barrier_aligner.h"

namespace hapair {

// A snapshot to take now: checkpoint `id`, reflecting input up to `inputs` (per stream), with the
// fragment's output at `outputs` (the barriers to send each consumer).
struct DueSnapshot {
  CheckpointId id = 0;
  std::map<StreamId, TupleId> inputs;
  std::map<StreamId, TupleId> outputs;
};

class FragmentCheckpointer {
 public:
  static constexpr std::size_t kTakenMax = 4;

  // `inputs`: every input stream; `source_inputs`: those a source produces (a subset).
  FragmentCheckpointer(std::vector<StreamId> inputs, std::vector<StreamId> source_inputs);

  // The coordinator triggers checkpoint `id`: barriers on every source input after what was
  // accepted from it. False when stale (an older trigger, or one already heard).
  bool trigger(CheckpointId id, const std::map<StreamId, TupleId>& accepted);
  // A producer's barrier of checkpoint `id` on input `stream` after tuple `after_id`.
  BarrierAligner::Heard barrier(StreamId stream, CheckpointId id, TupleId after_id);
  void input_ended(StreamId stream, TupleId last_id) { aligner_.ended(stream, last_id); }
  // Checkpoint `id` cannot be taken here (an input went past its barrier before it came).
  void abandon(CheckpointId id) { aligner_.abandon(id); }
  // `stream` is produced outside the checkpoint (a source): the trigger sets its barrier.
  bool is_outside(StreamId stream) const {
    return std::find(source_inputs_.begin(), source_inputs_.end(), stream) != source_inputs_.end();
  }
  // How far input `stream` may be processed now.
  TupleId limit(StreamId stream) const { return aligner_.limit(stream); }

  // After processing: the snapshot due now, if every input reached its barrier; `processed` per
  // input, `produced` the last id of every output stream.
  std::optional<DueSnapshot> due(const std::map<StreamId, TupleId>& processed, const std::map<StreamId, TupleId>& produced);
  // The coordinator declares `id` complete: the input positions producers may trim to (nullopt:
  // I took no snapshot of `id`, or an already-complete newer one covers it).
  std::optional<std::map<StreamId, TupleId>> completed(CheckpointId id);

  CheckpointId last_complete() const { return last_complete_; }
  std::uint64_t abandoned() const { return aligner_.abandoned(); }

 private:
  std::vector<StreamId> source_inputs_;
  BarrierAligner aligner_;
  CheckpointId last_trigger_ = 0;
  std::map<CheckpointId, std::map<StreamId, TupleId>> taken_;  // awaiting completion
  CheckpointId last_complete_ = 0;
};

}  // namespace hapair
