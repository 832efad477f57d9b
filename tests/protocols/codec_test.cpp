// Tests of the wire codec (protocols/codec.h): every message kind survives encode/decode with
// every field intact, and no input a peer can send — unaligned, truncated, random, bit-flipped,
// oversized or crafted to exhaust memory — crashes the decoder or goes uncounted.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "protocols/codec.h"
#include "protocols/rng.h"

namespace hapair {
namespace {

Tuple sample_tuple(std::uint64_t i) {
  return Tuple{1000 + i, -5'000'000 + static_cast<TimeUs>(i) * 7, -42 - static_cast<std::int64_t>(i),
               3.25 + static_cast<double>(i), 0xabcdef0000ULL + i};
}

Bytes pattern_bytes(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng.next_u64());
  return b;
}

// One body per Message alternative with a non-default value in every field; nullopt for a kind
// without a sample, so adding a kind to Message without adding it here fails the tests.
std::optional<Message> sample_body(std::size_t kind) {
  switch (kind) {
    case 0: return TupleBatch{7, {sample_tuple(1), sample_tuple(2), sample_tuple(3)}, true, true, 41, 6};
    case 1: return Level0Ack{3, 123456789012ULL, true};
    case 2:
      return Level1Ack{4, 99, 17, pattern_bytes(37, 2),
                       {DownstreamRestartPoints{5, 6, 321,
                                                {StoredRestartPoint{9, 300, pattern_bytes(11, 5),
                                                                    {DownstreamRestartPoints{7, kNoFragment, 290, {}}}}}}}};
    case 3: return Checkpoint{55, true, 54, 2, 5, pattern_bytes(1001, 3)};
    case 4: return CheckpointAck{56};
    case 5: return Heartbeat{0xfedcba9876543210ULL};
    case 6: return Takeover{2, 9, 4, {{11, 77}, {12, 78}}};
    case 7: return Redirect{6, 11, false, 777};
    case 8: return ReplayRequest{5, 888, 3, 999};
    case 9:
      return RestartPoints{
          8, 400,
          {StoredRestartPoint{2, 350, pattern_bytes(9, 4),
                              {DownstreamRestartPoints{3, 4, 345,
                                                       {StoredRestartPoint{12, 340, pattern_bytes(5, 6),
                                                                           {DownstreamRestartPoints{1, kNoFragment, 333, {}}}}}}}},
           StoredRestartPoint{3, 380, {}, {}}}};
    case 10: return Determinants{1, 1000, {DeterminantRecord{0, 3}, DeterminantRecord{65535, 4000000000u}}};
    case 11: return DeterminantAck{2, 1003};
    case 12: return Rejoin{3, 8, 123456};
    case 13: return Candidacy{2, 9, 0x123456789aULL};
    case 14: return CheckpointTrigger{77};
    case 15: return CheckpointBarrier{4, 78, 0x100000003ULL};
    case 16: return CheckpointComplete{79};
    case 17: return Rollback{3, 78, 2, {1, 2, 65534}};
    case 18: return Restored{3, 2};
    case 19: return Hello{"aggregate.backup", "tcp://127.0.0.1:40123", 31337, "tcp://127.0.0.1:40124"};
    case 20: return Directory{{"tcp://127.0.0.1:1", "", "tcp://10.0.0.2:5555"},
                            1'700'000'000'000'000,
                            {"tcp://127.0.0.1:2", "", "tcp://10.0.0.2:5556"}};
    case 21: return StopRun{true};
    case 22: return Kill{250};
    case 23: return NodeStats{123456, true, {Counter{"bytes_sent.tuples", 1 << 30}, Counter{"cpu_us", -1}}};
    case 24:
      return TraceBatch{{TraceEvent(10, 1, TraceKind::takeover).with(TraceKey::epoch, 1).with(TraceKey::fragment_primary, 2),
                         TraceEvent(-3, 0, TraceKind::fatal).with(TraceKey::count, -1).with_text("détection ratée")}};
    case 26: return ClockRequest{7, 1'700'000'000'123'456};
    case 27: return ClockReply{7, 1'700'000'000'123'456, 1'700'000'002'469'134, -5};
    case 25:
      return DeliveryBatch{{Delivery{500, 2, sample_tuple(9)}, Delivery{501, 2, sample_tuple(10)}},
                           true,
                           {MergeOrder{4, 7, true, false, 1, 1001, {MergeRun{0, 17, 3}, MergeRun{1, 9, 250}}},
                            MergeOrder{5, 6, false, true, 0, 1, {}}}};
    default: return std::nullopt;
  }
}

Envelope envelope_of(Message body) {
  return Envelope{Header{3, 0x1234567890ULL, 1'234'567}, std::move(body)};
}

std::vector<Envelope> all_samples() {
  std::vector<Envelope> out;
  for (std::size_t kind = 0; kind < std::variant_size_v<Message>; ++kind) {
    auto body = sample_body(kind);
    if (body) out.push_back(envelope_of(std::move(*body)));
  }
  return out;
}

std::uint32_t u32_at(const Bytes& b, std::size_t offset) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + offset, sizeof v);
  return v;
}

std::uint64_t reasons_total(const DecodeStats& stats) {
  std::uint64_t total = 0;
  for (const auto& [reason, count] : stats.dropped_by_reason) total += count;
  return total;
}

// Whatever the decoder accepts must encode again, and decoding that gives the same bytes back:
// an accepted value is a valid message, not a half-checked one.
void require_reencodes_stably(const Envelope& decoded) {
  const Bytes once = encode(decoded);
  DecodeStats stats;
  const auto again = decode(once, stats);
  REQUIRE(again.has_value());
  REQUIRE(encode(*again) == once);
}

// Index of the only `width`-byte little-endian occurrence of `value` in `bytes`.
std::size_t find_unique(const Bytes& bytes, std::uint64_t value, std::size_t width) {
  std::size_t found = bytes.size();
  for (std::size_t i = 0; i + width <= bytes.size(); ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + i, width);
    if (v == value) {
      REQUIRE(found == bytes.size());
      found = i;
    }
  }
  REQUIRE(found < bytes.size());
  return found;
}

void write_le(Bytes& bytes, std::size_t offset, std::uint64_t value, std::size_t width) {
  std::memcpy(bytes.data() + offset, &value, width);
}

}  // namespace

TEST_CASE("every message kind has a sample with non-default values", "[codec]") {
  for (std::size_t kind = 0; kind < std::variant_size_v<Message>; ++kind) {
    INFO("kind " << kind << " (" << kMessageKindNames[kind] << ") needs a sample in sample_body()");
    const auto body = sample_body(kind);
    REQUIRE(body.has_value());
    REQUIRE(body->index() == kind);
    // Differs from the default-constructed alternative, so a field the codec forgets shows.
    Message defaults = *body;
    std::visit([](auto& m) { m = std::decay_t<decltype(m)>{}; }, defaults);
    REQUIRE_FALSE(defaults == *body);
  }
  REQUIRE(all_samples().size() == std::variant_size_v<Message>);
}

TEST_CASE("decode of encode returns every message kind unchanged", "[codec]") {
  for (const Envelope& sample : all_samples()) {
    INFO("kind " << message_kind_name(sample.body));
    DecodeStats stats;
    const auto decoded = decode(encode(sample), stats);
    REQUIRE(decoded.has_value());
    REQUIRE(*decoded == sample);
    REQUIRE(stats.decoded == 1);
    REQUIRE(stats.dropped == 0);
  }
}

TEST_CASE("default-constructed messages of every kind round trip, sentinel ids included", "[codec]") {
  for (std::size_t kind = 0; kind < std::variant_size_v<Message>; ++kind) {
    Message body = *sample_body(kind);
    std::visit([](auto& m) { m = std::decay_t<decltype(m)>{}; }, body);
    const Envelope sample{Header{}, body};
    INFO("kind " << message_kind_name(sample.body));
    DecodeStats stats;
    const auto decoded = decode(encode(sample), stats);
    REQUIRE(decoded.has_value());
    REQUIRE(*decoded == sample);
  }
}

TEST_CASE("encode writes one segment that holds the whole message", "[codec]") {
  for (const Envelope& sample : all_samples()) {
    INFO("kind " << message_kind_name(sample.body));
    const Bytes bytes = encode(sample);
    REQUIRE(bytes.size() % 8 == 0);
    REQUIRE(u32_at(bytes, 0) == 0);  // segment count - 1
    REQUIRE(u32_at(bytes, 4) == bytes.size() / 8 - 1);
  }
}

TEST_CASE("decode accepts encoded bytes at odd, unaligned offsets", "[codec]") {
  for (const Envelope& sample : all_samples()) {
    const Bytes bytes = encode(sample);
    for (std::size_t offset : {0u, 1u, 3u, 5u, 8u}) {
      INFO("kind " << message_kind_name(sample.body) << " offset " << offset);
      Bytes buffer(offset + bytes.size() + 7, 0xee);
      std::memcpy(buffer.data() + offset, bytes.data(), bytes.size());
      DecodeStats stats;
      const auto decoded = decode(buffer.data() + offset, bytes.size(), stats);
      REQUIRE(decoded.has_value());
      REQUIRE(*decoded == sample);
    }
  }
}

TEST_CASE("encode_into writes encode's bytes, and decode reads unaligned frames through a reused scratch", "[codec]") {
  std::vector<std::uint64_t> scratch;
  for (const Envelope& sample : all_samples()) {
    INFO("kind " << message_kind_name(sample.body));
    const Bytes bytes = encode(sample);
    Bytes into;
    std::size_t asked = 0;
    encode_into(sample, [&](std::size_t size) {
      asked = size;
      into.assign(size, 0xee);
      return into.data();
    });
    REQUIRE(asked == bytes.size());
    REQUIRE(into == bytes);
    for (std::size_t offset : {1u, 3u}) {
      Bytes buffer(offset + bytes.size(), 0xee);
      std::memcpy(buffer.data() + offset, bytes.data(), bytes.size());
      DecodeStats stats;
      const auto decoded = decode(buffer.data() + offset, bytes.size(), stats, {}, &scratch);
      REQUIRE(decoded.has_value());
      REQUIRE(*decoded == sample);
    }
  }
  // The scratch holds the largest small frame, and a frame above 64 KiB does not grow it.
  CHECK(!scratch.empty());
  CHECK(scratch.size() <= 8192);
  const Envelope big = envelope_of(Checkpoint{7, false, 0, 0, 1, pattern_bytes(1u << 20, 5)});
  const Bytes big_bytes = encode(big);
  Bytes shifted(big_bytes.size() + 1);
  std::memcpy(shifted.data() + 1, big_bytes.data(), big_bytes.size());
  DecodeStats stats;
  const std::size_t before = scratch.size();
  const auto decoded = decode(shifted.data() + 1, big_bytes.size(), stats, {}, &scratch);
  REQUIRE(decoded.has_value());
  CHECK(*decoded == big);
  CHECK(scratch.size() == before);
}

TEST_CASE("every truncation of an encoded message is dropped and counted", "[codec]") {
  for (const Envelope& sample : all_samples()) {
    const Bytes bytes = encode(sample);
    for (std::size_t offset : {0u, 1u}) {  // in place and through the aligned copy
      INFO("kind " << message_kind_name(sample.body) << " offset " << offset);
      Bytes buffer(offset + bytes.size());
      std::memcpy(buffer.data() + offset, bytes.data(), bytes.size());
      DecodeStats stats;
      std::uint64_t failures = 0;
      for (std::size_t length = 0; length < bytes.size(); ++length) {
        if (!decode(buffer.data() + offset, length, stats)) ++failures;
      }
      REQUIRE(failures == bytes.size());
      REQUIRE(stats.dropped == failures);
      REQUIRE(stats.decoded == 0);
      REQUIRE(reasons_total(stats) == stats.dropped);
      REQUIRE(stats.dropped_by_reason["empty"] == 1);
      REQUIRE(stats.dropped_by_reason["not word aligned length"] == bytes.size() - bytes.size() / 8);
      REQUIRE_FALSE(stats.last_error.empty());
    }
  }
}

TEST_CASE("random bytes never crash the decoder and every drop is counted", "[codec]") {
  constexpr std::uint64_t kSeeds = 600;
  DecodeStats stats;
  std::uint64_t failures = 0;
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    INFO("seed " << seed);
    Rng rng(seed);
    Bytes bytes;
    switch (seed % 4) {
      case 0: bytes = pattern_bytes(rng.below(300), seed); break;  // any length
      case 1: bytes = pattern_bytes(8 * rng.below(40), seed); break;  // whole words
      default: {
        // A plausible one-segment table, so the reader gets past it into random pointers; for
        // half of these also a root pointer to an Envelope-sized struct (three data words, one
        // pointer), so the reader gets to a random union discriminant and a random body.
        const std::size_t words = 6 + rng.below(40);
        bytes = pattern_bytes(8 * words, seed);
        write_le(bytes, 0, 0, 4);
        write_le(bytes, 4, words - 1, 4);
        if (seed % 4 == 3) write_le(bytes, 8, (std::uint64_t{1} << 48) | (std::uint64_t{3} << 32), 8);
        break;
      }
    }
    const std::size_t offset = seed % 2;  // half of them unaligned
    Bytes buffer(offset + bytes.size());
    if (!bytes.empty()) std::memcpy(buffer.data() + offset, bytes.data(), bytes.size());
    const auto decoded = decode(buffer.data() + offset, bytes.size(), stats);
    if (decoded) {
      require_reencodes_stably(*decoded);
    } else {
      ++failures;
    }
  }
  REQUIRE(stats.decoded + stats.dropped == kSeeds);
  REQUIRE(stats.dropped == failures);
  REQUIRE(reasons_total(stats) == stats.dropped);
  // The plausible segment tables must have reached the reader and the union check.
  REQUIRE(stats.dropped_by_reason["malformed capnp"] > 0);
  REQUIRE(stats.dropped_by_reason["unknown message kind"] > 0);
}

TEST_CASE("bit flips in valid messages decode to a valid message or are counted", "[codec]") {
  DecodeStats stats;
  std::uint64_t attempts = 0;
  std::uint64_t failures = 0;
  for (const Envelope& sample : all_samples()) {
    const Bytes bytes = encode(sample);
    for (std::uint64_t seed = 0; seed < 60; ++seed) {
      INFO("kind " << message_kind_name(sample.body) << " seed " << seed);
      Rng rng = Rng::derive(seed, sample.body.index());
      Bytes flipped = bytes;
      const std::uint64_t flips = 1 + rng.below(3);
      for (std::uint64_t i = 0; i < flips; ++i) {
        flipped[rng.below(flipped.size())] ^= static_cast<std::uint8_t>(1u << rng.below(8));
      }
      ++attempts;
      const auto decoded = decode(flipped, stats);
      if (decoded) {
        require_reencodes_stably(*decoded);
      } else {
        ++failures;
      }
    }
  }
  REQUIRE(stats.decoded + stats.dropped == attempts);
  REQUIRE(stats.dropped == failures);
  REQUIRE(reasons_total(stats) == stats.dropped);
  REQUIRE(failures > 0);             // flips in pointers and segment tables are caught
  REQUIRE(failures < attempts);      // flips in plain data fields still decode
}

TEST_CASE("a 100-tuple batch round trips in 40 bytes per tuple plus fixed framing", "[codec]") {
  TupleBatch batch{12, {}, false, false};
  for (std::uint64_t i = 1; i <= 100; ++i) batch.tuples.push_back(sample_tuple(i));
  const Envelope sample = envelope_of(batch);
  const Bytes bytes = encode(sample);
  // Segment table, root pointer, envelope, batch struct (3 data words), list tag: 11 words of framing.
  REQUIRE(bytes.size() == 100 * 40 + 11 * 8);
  REQUIRE(u32_at(bytes, 0) == 0);
  DecodeStats stats;
  const auto decoded = decode(bytes, stats);
  REQUIRE(decoded.has_value());
  REQUIRE(*decoded == sample);
}

TEST_CASE("a 4 MiB checkpoint payload round trips in one segment", "[codec]") {
  const Envelope sample = envelope_of(Checkpoint{7, false, 0, 0, 1, pattern_bytes(4u << 20, 77)});
  const Bytes bytes = encode(sample);
  REQUIRE(u32_at(bytes, 0) == 0);
  REQUIRE(bytes.size() < (4u << 20) + 128);
  DecodeStats stats;
  const auto decoded = decode(bytes, stats);
  REQUIRE(decoded.has_value());
  REQUIRE(*decoded == sample);
  // Through the aligned copy as well.
  Bytes shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  const auto from_unaligned = decode(shifted.data() + 1, bytes.size(), stats);
  REQUIRE(from_unaligned.has_value());
  REQUIRE(*from_unaligned == sample);
}

TEST_CASE("a message that exceeds the traversal limit is dropped and counted", "[codec]") {
  TupleBatch batch{1, {}, false, false};
  for (std::uint64_t i = 1; i <= 100; ++i) batch.tuples.push_back(sample_tuple(i));
  const Bytes bytes = encode(envelope_of(batch));
  DecodeStats stats;
  DecodeLimits small;
  small.traversal_limit_words = 64;  // the tuple list alone is 500 words
  REQUIRE_FALSE(decode(bytes, stats, small).has_value());
  REQUIRE(stats.dropped == 1);
  REQUIRE(stats.dropped_by_reason["traversal limit exceeded"] == 1);
  small.traversal_limit_words = 1024;
  REQUIRE(decode(bytes, stats, small).has_value());
  REQUIRE(stats.decoded == 1);
}

TEST_CASE("a message nested deeper than the nesting limit is dropped and counted", "[codec]") {
  // Envelope -> DeliveryBatch -> List(MergeOrder) -> MergeOrder -> List(MergeRun) -> MergeRun:
  // six levels (the deliveries' Tuple is at five).
  const Bytes bytes = encode(envelope_of(*sample_body(Message(DeliveryBatch{}).index())));
  DecodeStats stats;
  DecodeLimits shallow;
  shallow.nesting_limit = 4;
  REQUIRE_FALSE(decode(bytes, stats, shallow).has_value());
  REQUIRE(stats.dropped_by_reason["nesting limit exceeded"] == 1);
  shallow.nesting_limit = 5;
  REQUIRE_FALSE(decode(bytes, stats, shallow).has_value());
  shallow.nesting_limit = 6;
  REQUIRE(decode(bytes, stats, shallow).has_value());
}

TEST_CASE("forwarded restart points are read two levels deep and no deeper", "[codec]") {
  // Upstream backup forwards a downstream's restart points one hop; an offer therefore nests two
  // levels of points. A peer that nests more gets the extra levels ignored, not followed.
  auto level = [](std::uint64_t generation, std::vector<DownstreamRestartPoints> below) {
    return StoredRestartPoint{generation, generation * 10, pattern_bytes(3, generation), std::move(below)};
  };
  const StoredRestartPoint third = level(3, {DownstreamRestartPoints{2, kNoFragment, 29, {}}});
  const StoredRestartPoint second = level(2, {DownstreamRestartPoints{1, 2, 19, {third}}});
  const StoredRestartPoint first = level(1, {DownstreamRestartPoints{0, 1, 9, {second}}});
  DecodeStats stats;
  const auto decoded = decode(encode(envelope_of(RestartPoints{0, 5, {first}})), stats);
  REQUIRE(decoded.has_value());
  const auto& offer = std::get<RestartPoints>(decoded->body);
  REQUIRE(offer.points.size() == 1);
  const auto& below_first = offer.points[0].forwarded.at(0);
  CHECK(below_first.trimmed_up_to == 9);
  REQUIRE(below_first.points.size() == 1);
  const auto& below_second = below_first.points[0].forwarded.at(0);
  CHECK(below_second.trimmed_up_to == 19);  // the trim position of the second level is read
  CHECK(below_second.points.empty());       // its points are not
}

TEST_CASE("input larger than max_message_bytes is dropped before parsing", "[codec]") {
  const Bytes bytes = encode(envelope_of(Heartbeat{1}));
  DecodeStats stats;
  DecodeLimits limits;
  limits.max_message_bytes = bytes.size() - 8;
  REQUIRE_FALSE(decode(bytes, stats, limits).has_value());
  REQUIRE(stats.dropped_by_reason["too large"] == 1);
  limits.max_message_bytes = bytes.size();
  REQUIRE(decode(bytes, stats, limits).has_value());
}

TEST_CASE("empty input and lengths that are not whole words are dropped with their reason", "[codec]") {
  DecodeStats stats;
  REQUIRE_FALSE(decode(nullptr, 0, stats).has_value());
  REQUIRE(stats.dropped_by_reason["empty"] == 1);
  REQUIRE(stats.last_error.rfind("empty", 0) == 0);
  const Bytes thirteen(13, 0);
  REQUIRE_FALSE(decode(thirteen, stats).has_value());
  REQUIRE(stats.dropped_by_reason["not word aligned length"] == 1);
  REQUIRE(stats.dropped == 2);
  REQUIRE(stats.decoded == 0);
}

TEST_CASE("bytes after the message are dropped as trailing bytes", "[codec]") {
  Bytes bytes = encode(envelope_of(Heartbeat{1}));
  bytes.resize(bytes.size() + 8, 0);
  DecodeStats stats;
  REQUIRE_FALSE(decode(bytes, stats).has_value());
  REQUIRE(stats.dropped_by_reason["trailing bytes"] == 1);
}

TEST_CASE("an unknown union member is dropped as an unknown message kind", "[codec]") {
  // CheckpointAck and Heartbeat have the same layout, so their encodings differ only in the
  // union discriminant; patch it to a kind this schema does not know.
  const Bytes ack = encode(envelope_of(CheckpointAck{42}));
  Bytes heartbeat = encode(envelope_of(Heartbeat{42}));
  REQUIRE(ack.size() == heartbeat.size());
  std::vector<std::size_t> differing;
  for (std::size_t i = 0; i < ack.size(); ++i) {
    if (ack[i] != heartbeat[i]) differing.push_back(i);
  }
  REQUIRE(differing.size() == 1);
  heartbeat[differing[0]] = 200;
  DecodeStats stats;
  REQUIRE_FALSE(decode(heartbeat, stats).has_value());
  REQUIRE(stats.dropped_by_reason["unknown message kind"] == 1);
}

TEST_CASE("a checkpoint chunk index outside its chunk count is dropped as out of range", "[codec]") {
  // chunkCount has schema default 1, and capnp stores a field XOR its default; find the stored
  // count by a value that occurs nowhere else in the message.
  constexpr std::uint32_t kIndex = 0x11223344;
  constexpr std::uint32_t kCount = 0x55667788;
  const Bytes valid = encode(envelope_of(Checkpoint{1, false, 0, kIndex, kCount, {}}));
  const std::size_t at = find_unique(valid, kCount ^ 1u, 4);
  for (std::uint32_t bad_count : {0u, 5u, kIndex}) {
    INFO("chunk_count " << bad_count);
    Bytes bad = valid;
    write_le(bad, at, bad_count ^ 1u, 4);
    DecodeStats stats;
    REQUIRE_FALSE(decode(bad, stats).has_value());
    REQUIRE(stats.dropped_by_reason["value out of range"] == 1);
  }
  DecodeStats stats;
  REQUIRE(decode(valid, stats).has_value());
}

TEST_CASE("a list of zero-sized elements longer than the message is refused, not allocated", "[codec]") {
  // Capnp lets a list of zero-sized structs claim any length without carrying data; a naive
  // decoder would allocate that many tuples. Rewrite the empty tuple list's tag word (struct
  // pointer: element count in bits 2..31, data words in 32..47) to a million empty elements.
  const Bytes empty_batch = encode(envelope_of(TupleBatch{1, {}, true, false}));
  const std::uint64_t tag_of_empty_tuple_list = std::uint64_t{5} << 32;  // 0 elements of 5 data words
  const std::size_t at = find_unique(empty_batch, tag_of_empty_tuple_list, 8);
  Bytes crafted = empty_batch;
  write_le(crafted, at, std::uint64_t{1'000'000} << 2, 8);
  DecodeStats stats;
  REQUIRE_FALSE(decode(crafted, stats).has_value());
  REQUIRE(stats.dropped_by_reason["list longer than message"] == 1);
}


TEST_CASE("an epoch above kEpochMax in a header or a takeover is dropped as out of range", "[codec]") {
  // Found by envelope_fuzz: a node that followed a takeover announced in epoch 2^64 - 1 aborted
  // on its next own takeover (the epoch could not grow). Epochs grow by one per takeover, so
  // one near 2^64 is never a peer's honest epoch.
  for (Epoch bad : {kEpochMax + 1, std::numeric_limits<Epoch>::max()}) {
    INFO("epoch " << bad);
    Envelope header_epoch = envelope_of(Heartbeat{7});
    header_epoch.header.epoch = bad;
    DecodeStats stats;
    REQUIRE_FALSE(decode(encode(header_epoch), stats).has_value());
    REQUIRE(stats.dropped_by_reason["value out of range"] == 1);

    DecodeStats takeover_stats;
    REQUIRE_FALSE(decode(encode(envelope_of(Takeover{1, 2, bad, {{3, 4}}})), takeover_stats).has_value());
    REQUIRE(takeover_stats.dropped_by_reason["value out of range"] == 1);
  }
  Envelope highest = envelope_of(Takeover{1, 2, kEpochMax, {{3, 4}}});
  highest.header.epoch = kEpochMax;
  DecodeStats stats;
  REQUIRE(decode(encode(highest), stats).has_value());
  REQUIRE(stats.dropped == 0);
}

TEST_CASE("a takeover whose standby names no node is written as one without a standby", "[codec]") {
  // Found by envelope_fuzz: {kNoNode, incarnation 5} went on the wire with its incarnation, was
  // read back as no standby, and re-encoded with incarnation 0, so an accepted envelope changed
  // on its way through the codec. No node means no standby, and its incarnation says nothing.
  const Bytes odd = encode(envelope_of(Takeover{1, 2, 3, {{kNoNode, 5}}}));
  const Bytes none = encode(envelope_of(Takeover{1, 2, 3, {}}));
  REQUIRE(odd == none);
  DecodeStats stats;
  auto decoded = decode(odd, stats);
  REQUIRE(decoded.has_value());
  REQUIRE(std::get<Takeover>(decoded->body).standbys.empty());
  REQUIRE(encode(*decoded) == odd);
}

TEST_CASE("the global checkpoints' messages are data-plane kinds, before hello", "[codec]") {
  // They are HA overhead, counted like the pairs' checkpoints (docs/CHECKPOINT.md).
  for (const char* kind : {"checkpoint_trigger", "checkpoint_barrier", "checkpoint_complete", "rollback", "restored"}) {
    INFO(kind);
    std::size_t index = std::variant_size_v<Message>;
    for (std::size_t k = 0; k < std::variant_size_v<Message>; ++k)
      if (std::string(kMessageKindNames[k]) == kind) index = k;
    REQUIRE(index < kFirstControlKind);
    const Message body = *sample_body(index);
    CHECK_FALSE(is_control_message(body));
  }
  CHECK(std::string(kMessageKindNames[kFirstControlKind]) == "hello");
}

TEST_CASE("a rollback naming every fragment a plan may have round trips", "[codec]") {
  Rollback r{1, 0, kNoFragment, {}};
  for (FragmentId f = 0; f < 300; ++f) r.fragments.push_back(f);
  const Envelope sample = envelope_of(r);
  DecodeStats stats;
  const auto decoded = decode(encode(sample), stats);
  REQUIRE(decoded.has_value());
  CHECK(*decoded == sample);
  const auto& got = std::get<Rollback>(decoded->body);
  CHECK(got.failed == kNoFragment);
  CHECK(got.to == 0);
  CHECK(got.fragments.size() == 300);
}

}  // namespace hapair
