#include "primary/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

#include "protocols/check.h"

namespace hapair {
namespace {

constexpr std::uint64_t kMagic = 0x6861706169726370ULL;  // "hapaircp"
constexpr std::size_t kTupleBytes = 40;
constexpr std::size_t kInputBytes = 17;
constexpr std::size_t kOutputHeadBytes = 41;

// A Tuple in memory is its five fields in the payload's order; on a little-endian machine a run
// of tuples is its payload bytes as they are.
constexpr bool kTuplesAsBytes = std::endian::native == std::endian::little && sizeof(Tuple) == kTupleBytes &&
                                offsetof(Tuple, id) == 0 && offsetof(Tuple, ts_us) == 8 && offsetof(Tuple, key) == 16 &&
                                offsetof(Tuple, value) == 24 && offsetof(Tuple, lineage) == 32;

Tuple read_tuple(ByteReader& r) {
  Tuple t;
  t.id = r.u64();
  t.ts_us = r.i64();
  t.key = r.i64();
  t.value = r.f64();
  t.lineage = r.u64();
  return t;
}

void read_tuples(ByteReader& r, std::uint64_t n, Tuples& out) {
  if constexpr (kTuplesAsBytes) {
    out.resize(static_cast<std::size_t>(n));
    r.raw(out.data(), static_cast<std::size_t>(n) * kTupleBytes);
  } else {
    out.reserve(n);
    for (std::uint64_t k = 0; k < n && r.ok(); ++k) out.push_back(read_tuple(r));
  }
}

}  // namespace

CheckpointPayloadWriter::CheckpointPayloadWriter(std::size_t chunk_bytes) : chunk_bytes_(std::max<std::size_t>(chunk_bytes, 1)) {}

void CheckpointPayloadWriter::put(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  bytes_ += n;
  while (n > 0) {
    if (chunks_.empty() || chunks_.back().size() == chunk_bytes_) {
      chunks_.emplace_back();
      chunks_.back().reserve(chunk_bytes_);
    }
    Bytes& chunk = chunks_.back();
    const std::size_t take = std::min(n, chunk_bytes_ - chunk.size());
    chunk.insert(chunk.end(), p, p + take);
    p += take;
    n -= take;
  }
}

void CheckpointPayloadWriter::u64(std::uint64_t v) {
  std::uint8_t le[8];
  put_le64(v, le);
  put(le, 8);
}

void CheckpointPayloadWriter::head(const CheckpointContent& c) {
  HAPAIR_CHECK_MSG(!head_written_, "a checkpoint payload has one head");
  head_written_ = true;
  u64(kMagic);
  u64(c.id);
  u8(c.delta ? 1 : 0);
  u64(c.base_id);
  u64(c.epoch);
  u64(c.fragment_state.size());
  put(c.fragment_state.data(), c.fragment_state.size());
  u64(c.inputs.size());
  for (const auto& in : c.inputs) {
    u64(in.stream);
    u64(in.processed);
    u8(in.eos_processed ? 1 : 0);
  }
  u64(c.outputs.size());
  outputs_left_ = c.outputs.size();
}

void CheckpointPayloadWriter::output_head(const CheckpointOutput& o, std::size_t tuple_count) {
  HAPAIR_CHECK_MSG(head_written_ && outputs_left_ > 0 && tuples_left_ == 0,
                   "output head out of order: outputs left " << outputs_left_ << ", tuples left " << tuples_left_);
  --outputs_left_;
  tuples_left_ = tuple_count;
  u64(o.stream);
  u64(o.offset);
  u64(o.trimmed_up_to);
  u64(o.last_id);
  u8(o.ended ? 1 : 0);
  u64(tuple_count);
}

void CheckpointPayloadWriter::tuples(const Tuple* first, std::size_t n) {
  HAPAIR_CHECK_MSG(n <= tuples_left_, n << " tuples written where " << tuples_left_ << " are left of the output");
  tuples_left_ -= n;
  if constexpr (kTuplesAsBytes) {
    put(first, n * kTupleBytes);
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const Tuple& t = first[i];
      u64(t.id);
      u64(static_cast<std::uint64_t>(t.ts_us));
      u64(static_cast<std::uint64_t>(t.key));
      std::uint64_t bits;
      std::memcpy(&bits, &t.value, sizeof bits);
      u64(bits);
      u64(t.lineage);
    }
  }
}

std::vector<Bytes> CheckpointPayloadWriter::take_chunks() {
  HAPAIR_CHECK_MSG(head_written_ && outputs_left_ == 0 && tuples_left_ == 0,
                   "an unfinished checkpoint payload: outputs left " << outputs_left_ << ", tuples left " << tuples_left_);
  return std::move(chunks_);
}

Bytes serialize_checkpoint(const CheckpointContent& c) {
  std::size_t size = 64 + c.fragment_state.size() + kInputBytes * c.inputs.size();
  for (const auto& o : c.outputs) size += kOutputHeadBytes + kTupleBytes * o.tuples.size();
  CheckpointPayloadWriter w(size);
  w.head(c);
  for (const auto& o : c.outputs) {
    w.output_head(o, o.tuples.size());
    w.tuples(o.tuples.data(), o.tuples.size());
  }
  std::vector<Bytes> chunks = w.take_chunks();
  HAPAIR_CHECK(chunks.size() == 1);
  return std::move(chunks.front());
}

std::optional<CheckpointContent> parse_checkpoint(const Bytes& payload) {
  ByteReader r(payload);
  if (r.u64() != kMagic) return std::nullopt;
  CheckpointContent c;
  c.id = r.u64();
  c.delta = r.u8() != 0;
  c.base_id = r.u64();
  c.epoch = r.u64();
  c.fragment_state = r.bytes();
  const std::uint64_t inputs = r.count(kInputBytes);
  for (std::uint64_t i = 0; i < inputs && r.ok(); ++i) {
    CheckpointInput in;
    in.stream = static_cast<StreamId>(r.u64());
    in.processed = r.u64();
    in.eos_processed = r.u8() != 0;
    c.inputs.push_back(in);
  }
  const std::uint64_t outputs = r.count(kOutputHeadBytes);
  for (std::uint64_t i = 0; i < outputs && r.ok(); ++i) {
    CheckpointOutput o;
    o.stream = static_cast<StreamId>(r.u64());
    o.offset = r.u64();
    o.trimmed_up_to = r.u64();
    o.last_id = r.u64();
    o.ended = r.u8() != 0;
    const std::uint64_t n = r.count(kTupleBytes);
    read_tuples(r, n, o.tuples);
    c.outputs.push_back(std::move(o));
  }
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return c;
}

std::vector<Checkpoint> checkpoint_messages(std::uint64_t id, bool delta, std::uint64_t base_id,
                                            std::vector<Bytes> chunks) {
  if (chunks.empty()) chunks.emplace_back();
  std::vector<Checkpoint> out;
  out.reserve(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    Checkpoint c;
    c.checkpoint_id = id;
    c.delta = delta;
    c.base_checkpoint_id = base_id;
    c.chunk_index = static_cast<std::uint32_t>(i);
    c.chunk_count = static_cast<std::uint32_t>(chunks.size());
    c.payload = std::move(chunks[i]);
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<Bytes> CheckpointAssembler::add(const Checkpoint& chunk) {
  if (chunk.chunk_count == 0 || chunk.chunk_index >= chunk.chunk_count) {
    ++rejected_;
    return std::nullopt;
  }
  if (chunk.checkpoint_id < id_) {
    ++rejected_;  // an older checkpoint than the one in assembly
    return std::nullopt;
  }
  if (chunk.checkpoint_id > id_ || count_ == 0) {
    if (have_ > 0 && have_ < count_) ++discarded_;
    id_ = chunk.checkpoint_id;
    count_ = chunk.chunk_count;
    whole_.clear();
    next_ = 0;
    ahead_.clear();
    have_ = 0;
  }
  if (chunk.chunk_count != count_) {
    ++rejected_;
    return std::nullopt;
  }
  if (chunk.chunk_index < next_ || ahead_.count(chunk.chunk_index)) return std::nullopt;  // a duplicate chunk
  ++have_;
  if (chunk.chunk_index > next_) {
    ahead_.emplace(chunk.chunk_index, chunk.payload);
    return std::nullopt;
  }
  // Room for the whole payload at once when chunks are full-sized (a claimed count alone never
  // reserves more than 64 MiB).
  if (next_ == 0) whole_.reserve(std::min<std::size_t>(chunk.payload.size() * std::size_t{count_}, std::size_t{64} << 20));
  whole_.insert(whole_.end(), chunk.payload.begin(), chunk.payload.end());
  ++next_;
  for (auto it = ahead_.find(next_); it != ahead_.end(); it = ahead_.find(next_)) {
    whole_.insert(whole_.end(), it->second.begin(), it->second.end());
    ahead_.erase(it);
    ++next_;
  }
  if (next_ < count_) return std::nullopt;
  ahead_.clear();
  have_ = 0;
  count_ = 0;
  ++id_;  // later chunks of this id are late duplicates
  return std::move(whole_);
}

}  // namespace hapair
