#include "primary/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "protocols/check.h"

namespace hapair {
namespace {

// "hapairc2": the second layout, tuples packed (below); a payload of the first layout (tuples
// as five 64-bit fields) is refused as any payload with a wrong magic is.
constexpr std::uint64_t kMagic = 0x6861706169726332ULL;
constexpr std::size_t kInputBytes = 17;
constexpr std::size_t kOutputHeadBytes = 41;

// A retained tuple in a checkpoint, packed: most of a checkpoint is its output queues' tuples,
// and every byte of them is copied, sent, received and copied again. Against the tuple before
// it in the same output (the first: against id 0 and ts 0):
//   id       varint of the difference (ids grow: a gap-free stream takes 1 byte)
//   ts_us    varint of the zigzag of the difference
//   key      varint of the zigzag of the key
//   value    an integer whose magnitude is below 2^53 (and not -0.0): varint of its zigzag times
//            2; any other double (fractions, NaN, infinities, -0.0): varint 1, then its 8 bytes
//   lineage  8 bytes (a hash: nothing to pack)
// All little-endian, arithmetic modulo 2^64, so any tuple comes back bit for bit. At least
// kPackedTupleBytesMin bytes, at most kPackedTupleBytesMax.
constexpr std::size_t kPackedTupleBytesMin = 12;
constexpr std::size_t kPackedTupleBytesMax = 10 + 10 + 10 + 1 + 8 + 8;

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

std::uint8_t* put_varint(std::uint64_t v, std::uint8_t* out) {
  while (v >= 0x80) {
    *out++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<std::uint8_t>(v);
  return out;
}

// Reads a varint of at most 10 bytes from [p, end); false when it runs past the end or is
// longer than 64 bits.
bool get_varint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& v) {
  if (p != end && *p < 0x80) {  // the usual one-byte case
    v = *p++;
    return true;
  }
  std::uint64_t r = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const std::uint8_t b = *p++;
    if (shift == 63 && b > 1) return false;
    r |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      v = r;
      return true;
    }
  }
  return false;
}

constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53

std::uint8_t* pack_tuple(const Tuple& t, Tuple& prev, std::uint8_t* out) {
  out = put_varint(t.id - prev.id, out);
  out = put_varint(zigzag(static_cast<std::int64_t>(static_cast<std::uint64_t>(t.ts_us) - static_cast<std::uint64_t>(prev.ts_us))), out);
  out = put_varint(zigzag(t.key), out);
  const double v = t.value;
  if (v > -kExactIntegerLimit && v < kExactIntegerLimit && v == static_cast<double>(static_cast<std::int64_t>(v)) &&
      !(v == 0.0 && std::signbit(v))) {
    out = put_varint(zigzag(static_cast<std::int64_t>(v)) << 1, out);
  } else {
    *out++ = 1;
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    put_le64(bits, out);
    out += 8;
  }
  put_le64(t.lineage, out);
  out += 8;
  prev = t;
  return out;
}

bool unpack_tuple(const std::uint8_t*& p, const std::uint8_t* end, Tuple& prev, Tuple& t) {
  std::uint64_t id_step, ts_step, key, value;
  if (end - p >= static_cast<std::ptrdiff_t>(kPackedTupleBytesMax) && p[0] < 0x80 && p[1] < 0x80 && p[2] < 0x80 &&
      p[3] < 0x80) {
    // The usual tuple, far from the end: four one-byte varints.
    id_step = p[0];
    ts_step = p[1];
    key = p[2];
    value = p[3];
    p += 4;
  } else if (!get_varint(p, end, id_step) || !get_varint(p, end, ts_step) || !get_varint(p, end, key) ||
             !get_varint(p, end, value)) {
    return false;
  }
  t.id = prev.id + id_step;
  t.ts_us = static_cast<TimeUs>(static_cast<std::uint64_t>(prev.ts_us) + static_cast<std::uint64_t>(unzigzag(ts_step)));
  t.key = unzigzag(key);
  if (value == 1) {
    if (end - p < 8) return false;
    const std::uint64_t bits = get_le64(p);
    std::memcpy(&t.value, &bits, sizeof bits);
    p += 8;
  } else {
    if ((value & 1) != 0) return false;  // neither an integer nor the raw marker
    t.value = static_cast<double>(unzigzag(value >> 1));
  }
  if (end - p < 8) return false;
  t.lineage = get_le64(p);
  p += 8;
  prev = t;
  return true;
}

// Steps over one packed tuple, accepting exactly what unpack_tuple() accepts (a standby checks a
// whole checkpoint this way as it arrives: nothing computed, nothing stored).
bool check_tuple(const std::uint8_t*& p, const std::uint8_t* end) {
  std::uint64_t value;
  if (end - p >= static_cast<std::ptrdiff_t>(kPackedTupleBytesMax) && ((p[0] | p[1] | p[2] | p[3]) & 0x80) == 0) {
    value = p[3];  // four one-byte varints; the raw value and the lineage fit before the end
    p += 4;
  } else {
    std::uint64_t ignored;
    if (!get_varint(p, end, ignored) || !get_varint(p, end, ignored) || !get_varint(p, end, ignored) ||
        !get_varint(p, end, value))
      return false;
  }
  const std::ptrdiff_t rest = value == 1 ? 16 : 8;
  if (value != 1 && (value & 1) != 0) return false;
  if (end - p < rest) return false;
  p += rest;
  return true;
}

// n packed tuples from the reader, appended to `out` (empty) when `out` is given, only checked
// when it is null; false (the reader's ok() false) when they do not parse.
bool read_tuples(ByteReader& r, std::uint64_t n, Tuples* out) {
  if (out) out->reserve(static_cast<std::size_t>(n));  // not resize(): no zeroing of what is written next
  const std::uint8_t* p = r.cursor();
  const std::uint8_t* const begin = p;
  const std::uint8_t* const end = p + r.remaining();
  if (!out) {
    for (std::uint64_t k = 0; k < n; ++k)
      if (!check_tuple(p, end)) {
        r.fail();
        return false;
      }
    r.skip(static_cast<std::size_t>(p - begin));
    return true;
  }
  Tuple prev{};
  Tuple t;
  for (std::uint64_t k = 0; k < n; ++k) {
    if (!unpack_tuple(p, end, prev, t)) {
      r.fail();
      out->clear();
      return false;
    }
    out->push_back(t);
  }
  r.skip(static_cast<std::size_t>(p - begin));
  return true;
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
  prev_ = Tuple{};
}

void CheckpointPayloadWriter::tuples(const Tuple* first, std::size_t n) {
  HAPAIR_CHECK_MSG(n <= tuples_left_, n << " tuples written where " << tuples_left_ << " are left of the output");
  tuples_left_ -= n;
  // Packed a block at a time into a buffer on the stack, then put into the chunks.
  constexpr std::size_t kBlock = 256;
  std::uint8_t buffer[kBlock * kPackedTupleBytesMax];
  while (n > 0) {
    const std::size_t block = std::min(n, kBlock);
    std::uint8_t* out = buffer;
    for (std::size_t i = 0; i < block; ++i) out = pack_tuple(first[i], prev_, out);
    put(buffer, static_cast<std::size_t>(out - buffer));
    first += block;
    n -= block;
  }
}

std::vector<Bytes> CheckpointPayloadWriter::take_chunks() {
  HAPAIR_CHECK_MSG(head_written_ && outputs_left_ == 0 && tuples_left_ == 0,
                   "an unfinished checkpoint payload: outputs left " << outputs_left_ << ", tuples left " << tuples_left_);
  return std::move(chunks_);
}

Bytes serialize_checkpoint(const CheckpointContent& c) {
  std::size_t size = 64 + c.fragment_state.size() + kInputBytes * c.inputs.size();
  for (const auto& o : c.outputs) size += kOutputHeadBytes + kPackedTupleBytesMax * o.tuples.size();
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

std::optional<CheckpointContent> parse_checkpoint(const Bytes& payload, TupleParsing tuples) {
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
    const std::uint64_t n = r.count(kPackedTupleBytesMin);
    if (!r.ok() || !read_tuples(r, n, tuples == TupleParsing::unpack ? &o.tuples : nullptr)) return std::nullopt;
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
