// Passive-standby checkpoints: what a primary captures, how it travels, how a standby
// assembles it.
//
// Paper: every checkpoint interval the primary sends its backup the state of its operators and
// of its queues; the backup acknowledges; upstream servers trim only what an acknowledged
// checkpoint covers (section 4.1). A checkpoint here holds the fragment state (full snapshot or
// a delta since the last acknowledged one), the last processed id of every input stream, and
// every output queue (the retained tuples, or those appended since the base, plus its trim
// position, last id and id offset).
//
// Invariants: a checkpoint is installed only when every chunk has arrived and the whole payload
// parsed (an incomplete or corrupt one is never half-applied); a delta applies only to the
// checkpoint it was based on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "protocols/bytes.h"
#include "protocols/messages.h"

namespace hapair {

struct CheckpointInput {
  StreamId stream = kNoStream;
  TupleId processed = 0;
  bool eos_processed = false;
  friend bool operator==(const CheckpointInput&, const CheckpointInput&) = default;
};

struct CheckpointOutput {
  StreamId stream = kNoStream;
  TupleId offset = 0;
  TupleId trimmed_up_to = 0;
  TupleId last_id = 0;
  bool ended = false;
  Tuples tuples;  // full: every retained tuple; delta: those with id > the base's last_id
  friend bool operator==(const CheckpointOutput&, const CheckpointOutput&) = default;
};

struct CheckpointContent {
  std::uint64_t id = 0;
  bool delta = false;
  std::uint64_t base_id = 0;
  Epoch epoch = 0;
  Bytes fragment_state;  // Fragment::snapshot() or Fragment::snapshot_delta()
  std::vector<CheckpointInput> inputs;
  std::vector<CheckpointOutput> outputs;
  friend bool operator==(const CheckpointContent&, const CheckpointContent&) = default;
};

Bytes serialize_checkpoint(const CheckpointContent& c);
std::optional<CheckpointContent> parse_checkpoint(const Bytes& payload);

// Splits a payload into chunks of at most chunk_bytes.
std::vector<Checkpoint> chunk_checkpoint(std::uint64_t id, bool delta, std::uint64_t base_id, const Bytes& payload,
                                         std::size_t chunk_bytes);

// Reassembles the chunks of one checkpoint at a time; a chunk of a newer checkpoint discards an
// unfinished older one (bounded: at most one payload in assembly).
class CheckpointAssembler {
 public:
  // Returns the whole payload when this chunk completes its checkpoint; nullopt otherwise.
  // Malformed chunks (index out of range, inconsistent counts) are counted in `rejected`.
  std::optional<Bytes> add(const Checkpoint& chunk);
  std::uint64_t rejected() const { return rejected_; }
  std::uint64_t discarded_incomplete() const { return discarded_; }

 private:
  std::uint64_t id_ = 0;
  std::uint32_t count_ = 0;
  std::vector<std::optional<Bytes>> chunks_;
  std::uint32_t have_ = 0;
  std::uint64_t rejected_ = 0;
  std::uint64_t discarded_ = 0;
};

}  // namespace hapair
