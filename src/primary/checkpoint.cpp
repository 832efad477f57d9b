#include "primary/checkpoint.h"

#include <algorithm>

namespace hapair {
namespace {

constexpr std::uint64_t kMagic = 0x6861706169726370ULL;  // "hapaircp"

void write_tuple(ByteWriter& w, const Tuple& t) {
  w.u64(t.id);
  w.i64(t.ts_us);
  w.i64(t.key);
  w.f64(t.value);
  w.u64(t.lineage);
}

Tuple read_tuple(ByteReader& r) {
  Tuple t;
  t.id = r.u64();
  t.ts_us = r.i64();
  t.key = r.i64();
  t.value = r.f64();
  t.lineage = r.u64();
  return t;
}

}  // namespace

Bytes serialize_checkpoint(const CheckpointContent& c) {
  ByteWriter w;
  std::size_t size = 64 + c.fragment_state.size() + 17 * c.inputs.size();
  for (const auto& o : c.outputs) size += 41 + 40 * o.tuples.size();
  w.reserve(size);
  w.u64(kMagic);
  w.u64(c.id);
  w.u8(c.delta ? 1 : 0);
  w.u64(c.base_id);
  w.u64(c.epoch);
  w.bytes(c.fragment_state);
  w.u64(c.inputs.size());
  for (const auto& in : c.inputs) {
    w.u64(in.stream);
    w.u64(in.processed);
    w.u8(in.eos_processed ? 1 : 0);
  }
  w.u64(c.outputs.size());
  for (const auto& o : c.outputs) {
    w.u64(o.stream);
    w.u64(o.offset);
    w.u64(o.trimmed_up_to);
    w.u64(o.last_id);
    w.u8(o.ended ? 1 : 0);
    w.u64(o.tuples.size());
    for (const Tuple& t : o.tuples) write_tuple(w, t);
  }
  return w.take();
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
  const std::uint64_t inputs = r.count(17);
  for (std::uint64_t i = 0; i < inputs && r.ok(); ++i) {
    CheckpointInput in;
    in.stream = static_cast<StreamId>(r.u64());
    in.processed = r.u64();
    in.eos_processed = r.u8() != 0;
    c.inputs.push_back(in);
  }
  const std::uint64_t outputs = r.count(41);
  for (std::uint64_t i = 0; i < outputs && r.ok(); ++i) {
    CheckpointOutput o;
    o.stream = static_cast<StreamId>(r.u64());
    o.offset = r.u64();
    o.trimmed_up_to = r.u64();
    o.last_id = r.u64();
    o.ended = r.u8() != 0;
    const std::uint64_t n = r.count(40);
    o.tuples.reserve(n);
    for (std::uint64_t k = 0; k < n && r.ok(); ++k) o.tuples.push_back(read_tuple(r));
    c.outputs.push_back(std::move(o));
  }
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return c;
}

std::vector<Checkpoint> chunk_checkpoint(std::uint64_t id, bool delta, std::uint64_t base_id, const Bytes& payload,
                                         std::size_t chunk_bytes) {
  chunk_bytes = std::max<std::size_t>(chunk_bytes, 1);
  const std::size_t count = std::max<std::size_t>(1, (payload.size() + chunk_bytes - 1) / chunk_bytes);
  std::vector<Checkpoint> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    Checkpoint c;
    c.checkpoint_id = id;
    c.delta = delta;
    c.base_checkpoint_id = base_id;
    c.chunk_index = static_cast<std::uint32_t>(i);
    c.chunk_count = static_cast<std::uint32_t>(count);
    const std::size_t begin = i * chunk_bytes;
    const std::size_t end = std::min(payload.size(), begin + chunk_bytes);
    c.payload.assign(payload.begin() + static_cast<std::ptrdiff_t>(begin), payload.begin() + static_cast<std::ptrdiff_t>(end));
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
  if (chunk.checkpoint_id > id_ || chunks_.empty()) {
    if (have_ > 0 && have_ < count_) ++discarded_;
    id_ = chunk.checkpoint_id;
    count_ = chunk.chunk_count;
    chunks_.assign(count_, std::nullopt);
    have_ = 0;
  }
  if (chunk.chunk_count != count_) {
    ++rejected_;
    return std::nullopt;
  }
  auto& slot = chunks_[chunk.chunk_index];
  if (slot) return std::nullopt;  // a duplicate chunk
  slot = chunk.payload;
  ++have_;
  if (have_ < count_) return std::nullopt;
  Bytes whole;
  for (auto& c : chunks_) whole.insert(whole.end(), c->begin(), c->end());
  chunks_.clear();
  have_ = 0;
  count_ = 0;
  ++id_;  // later chunks of this id are late duplicates
  return whole;
}

}  // namespace hapair
