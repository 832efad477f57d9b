// The wire codec: plain Envelope values <-> Cap'n Proto bytes (wire.capnp). This is the only
// code that sees capnp types.
//
// Decoding is defensive: input of any alignment is copied into aligned words first (capnp 0.9
// refuses unaligned input, and ZeroMQ tcp frames often are unaligned); reader limits bound the
// traversal and nesting; any malformed input (truncated, random bytes, unknown union member,
// out-of-range ids) becomes a counted drop with a reason, never an exception or a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocols/bytes.h"
#include "protocols/messages.h"

namespace hapair {

struct DecodeLimits {
  std::uint64_t traversal_limit_words = 64ull << 20;  // 512 MiB of words: large checkpoints fit
  int nesting_limit = 16;
  std::size_t max_message_bytes = 256u << 20;
};

// Counts of dropped inputs by reason; the owner logs and reports them.
struct DecodeStats {
  std::uint64_t decoded = 0;
  std::uint64_t dropped = 0;
  std::map<std::string, std::uint64_t> dropped_by_reason;
  std::string last_error;
};

Bytes encode(const Envelope& envelope);
// The same bytes, written into memory the caller provides: `room(size)` returns size writable
// bytes (a transport's message, so the encoded batch is not copied once more).
void encode_into(const Envelope& envelope, const std::function<std::uint8_t*(std::size_t)>& room);

// nullopt means dropped; stats says why (last_error, dropped_by_reason). `scratch`: where an
// unaligned frame is copied to be read (capnp reads aligned words only), kept by the caller so a
// stream of frames does not allocate one buffer each (frames above 64 KiB, and nullptr: a buffer
// of their own, so a huge frame does not leave a huge scratch behind).
std::optional<Envelope> decode(const std::uint8_t* data, std::size_t size, DecodeStats& stats,
                               const DecodeLimits& limits = {}, std::vector<std::uint64_t>* scratch = nullptr);
inline std::optional<Envelope> decode(const Bytes& b, DecodeStats& stats, const DecodeLimits& limits = {}) {
  return decode(b.data(), b.size(), stats, limits);
}

}  // namespace hapair
