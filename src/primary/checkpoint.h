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

#include <cstddef>
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

// Writes a checkpoint's payload in parts, straight into chunks of at most chunk_bytes each: a
// primary writes its output queues' tuples into the chunks it sends without first copying them
// into a CheckpointContent. Order: head(), then for each of its outputs output_head() and that
// many tuples (in runs), then take_chunks(). serialize_checkpoint() is the same layout in one piece.
// Tuples are packed (checkpoint.cpp): a gap-free stream's tuple with an integer value takes
// about 12 bytes instead of its 40 in memory.
class CheckpointPayloadWriter {
 public:
  explicit CheckpointPayloadWriter(std::size_t chunk_bytes);
  // Everything but the outputs' tuples; `c.outputs` gives the outputs (their tuples are not read).
  void head(const CheckpointContent& c);
  void output_head(const CheckpointOutput& o, std::size_t tuple_count);
  void tuples(const Tuple* first, std::size_t n);
  std::size_t bytes() const { return bytes_; }
  // The payload's chunks (at least one); checks every announced output and tuple was written.
  std::vector<Bytes> take_chunks();

 private:
  void put(const void* data, std::size_t n);
  void u8(std::uint8_t v) { put(&v, 1); }
  void u64(std::uint64_t v);

  std::size_t chunk_bytes_;
  std::vector<Bytes> chunks_;
  std::size_t bytes_ = 0;
  std::size_t outputs_left_ = 0;
  std::size_t tuples_left_ = 0;
  bool head_written_ = false;
  Tuple prev_{};  // the tuple packed before, in the current output
};

Bytes serialize_checkpoint(const CheckpointContent& c);
// What parse_checkpoint() does with the outputs' tuples: unpacks them, or only checks that every
// one parses and leaves CheckpointOutput::tuples empty (a passive standby keeps a full
// checkpoint packed until it takes over, primary/checkpoint_state.h). Either way a payload that
// does not parse entirely gives nullopt.
enum class TupleParsing { unpack, check };
std::optional<CheckpointContent> parse_checkpoint(const Bytes& payload, TupleParsing tuples = TupleParsing::unpack);

// The chunk messages of one checkpoint, the payload's chunks moved into them.
std::vector<Checkpoint> checkpoint_messages(std::uint64_t id, bool delta, std::uint64_t base_id,
                                            std::vector<Bytes> chunks);

// Reassembles the chunks of one checkpoint at a time; a chunk of a newer checkpoint discards an
// unfinished older one (bounded: at most one payload in assembly). Chunks arriving in order
// (the usual case: one connection) are appended to the payload at once; a chunk ahead of its
// turn waits in its slot until those before it have come.
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
  Bytes whole_;                               // chunks 0 .. next_ - 1
  std::uint32_t next_ = 0;                    // the next chunk to append
  std::map<std::uint32_t, Bytes> ahead_;      // chunks after next_ that came early
  std::uint32_t have_ = 0;
  std::uint64_t rejected_ = 0;
  std::uint64_t discarded_ = 0;
};

}  // namespace hapair
