// Passive-standby checkpoints (primary/checkpoint.h, primary/checkpoint_state.h): the payload
// written in chunks straight from the output queues, its reassembly from chunks in any order,
// and a delta applied on the installed copy. Paper: section 4.1 (the primary checkpoints its
// operators' state and its queues; the backup installs only whole checkpoints).
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>

#include "primary/checkpoint.h"
#include "primary/checkpoint_state.h"
#include "roles/role_test_support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

CheckpointContent sample_content() {
  CheckpointContent c;
  c.id = 7;
  c.delta = true;
  c.base_id = 6;
  c.epoch = 3;
  c.fragment_state = {1, 2, 3, 250};
  c.inputs = {{1, 100, false}, {4, 42, true}};
  CheckpointOutput a;
  a.stream = 2;
  a.offset = 5;
  a.trimmed_up_to = 10;
  a.last_id = 13;
  a.tuples = {Tuple{11, -5, -1, -0.0, 1}, Tuple{12, 0, 9, 1e300, ~0ULL}, Tuple{13, 77, 0, -2.5, 3}};
  CheckpointOutput b;
  b.stream = 3;
  b.ended = true;
  c.outputs = {a, b};
  return c;
}

Bytes joined(const std::vector<Bytes>& chunks) {
  Bytes out;
  for (const Bytes& c : chunks) out.insert(out.end(), c.begin(), c.end());
  return out;
}

Checkpoint chunk_of(std::uint64_t id, std::uint32_t index, std::uint32_t count, Bytes payload) {
  Checkpoint c;
  c.checkpoint_id = id;
  c.chunk_index = index;
  c.chunk_count = count;
  c.payload = std::move(payload);
  return c;
}

// A passive primary filter whose output stream "small" holds ids first..last.
void append(Server& s, StreamId stream, TupleId first, TupleId last) {
  for (TupleId id = first; id <= last; ++id)
    s.outputs().append(stream, Tuple{id, static_cast<TimeUs>(id) * 10, static_cast<std::int64_t>(id % 3), 0.5 * id, id});
}

CheckpointContent parsed(const CapturedCheckpoint& captured) {
  auto c = parse_checkpoint(joined(captured.chunks));
  REQUIRE(c.has_value());
  return *c;
}

}  // namespace

TEST_CASE("a checkpoint payload written in chunks is the serialized payload cut at the chunk size", "[roles][checkpoint]") {
  const CheckpointContent c = sample_content();
  const Bytes whole = serialize_checkpoint(c);
  for (std::size_t chunk_bytes : {std::size_t{1}, std::size_t{7}, std::size_t{40}, whole.size(), whole.size() + 100}) {
    CheckpointPayloadWriter w(chunk_bytes);
    w.head(c);
    for (const auto& o : c.outputs) {
      w.output_head(o, o.tuples.size());
      // In runs of one tuple: a run may end anywhere in a chunk.
      for (const Tuple& t : o.tuples) w.tuples(&t, 1);
    }
    CHECK(w.bytes() == whole.size());
    const std::vector<Bytes> chunks = w.take_chunks();
    CHECK(chunks.size() == (whole.size() + chunk_bytes - 1) / chunk_bytes);
    for (std::size_t i = 0; i + 1 < chunks.size(); ++i) CHECK(chunks[i].size() == chunk_bytes);
    CHECK(joined(chunks) == whole);
  }
  const auto back = parse_checkpoint(whole);
  REQUIRE(back.has_value());
  CHECK(*back == c);
  CHECK(std::signbit(back->outputs[0].tuples[0].value));
  // The tuples are packed (20 + 20 + 21 bytes, before b's head): the first one is id 11, ts -5
  // and key -1 zigzagged, -0.0 as the raw marker and its 8 bytes, then lineage 1.
  const std::size_t first_tuple = whole.size() - 41 - 61;
  const Bytes first(whole.begin() + static_cast<std::ptrdiff_t>(first_tuple),
                    whole.begin() + static_cast<std::ptrdiff_t>(first_tuple + 20));
  CHECK(first == Bytes{11, 9, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0, 0, 0, 0, 0, 0, 0});
  // A truncated payload does not parse.
  CHECK_FALSE(parse_checkpoint(Bytes(whole.begin(), whole.end() - 1)).has_value());
}

TEST_CASE("a checkpoint packs its tuples and gives every one back bit for bit", "[roles][checkpoint]") {
  CheckpointContent c;
  c.id = 1;
  CheckpointOutput gap_free;  // a source's stream: consecutive ids and times, integer values
  gap_free.stream = 1;
  for (TupleId id = 1; id <= 1000; ++id)
    gap_free.tuples.push_back(Tuple{id, static_cast<TimeUs>(id / 3), static_cast<std::int64_t>(id % 8),
                                    static_cast<double>(id % 100), mix64(id)});
  gap_free.last_id = 1000;
  CheckpointOutput odd;  // every awkward field
  odd.stream = 2;
  const double nan_bits = [] {
    const std::uint64_t bits = 0x7ff8'0000'dead'beefULL;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }();
  odd.tuples = {Tuple{1, INT64_MAX, INT64_MIN, 9007199254740991.0, 0},
                Tuple{2, INT64_MIN, INT64_MAX, -9007199254740991.0, 1},
                Tuple{1ULL << 63, -1, -1, 9007199254740992.0, ~0ULL},
                Tuple{~0ULL - 1, 0, 0, -0.0, 2},
                Tuple{~0ULL, 5, 0, 0.5, 3}};
  CheckpointOutput nan_out;
  nan_out.stream = 3;
  nan_out.tuples = {Tuple{7, 7, 7, nan_bits, 7}, Tuple{8, 8, 8, std::numeric_limits<double>::infinity(), 8},
                    Tuple{9, 9, 9, -1e-300, 9}};
  c.outputs = {gap_free, odd, nan_out};
  const Bytes whole = serialize_checkpoint(c);
  const auto back = parse_checkpoint(whole);
  REQUIRE(back.has_value());
  REQUIRE(back->outputs.size() == 3);
  for (std::size_t o = 0; o < 3; ++o) {
    REQUIRE(back->outputs[o].tuples.size() == c.outputs[o].tuples.size());
    for (std::size_t i = 0; i < c.outputs[o].tuples.size(); ++i) {
      const Tuple& a = c.outputs[o].tuples[i];
      const Tuple& b = back->outputs[o].tuples[i];
      std::uint64_t va, vb;
      std::memcpy(&va, &a.value, sizeof va);
      std::memcpy(&vb, &b.value, sizeof vb);
      CHECK((a.id == b.id && a.ts_us == b.ts_us && a.key == b.key && va == vb && a.lineage == b.lineage));
    }
  }
  // The gap-free stream: 1 byte each for id, time, key and a value below 64, 2 above, and the
  // lineage's 8: 12 or 13 bytes a tuple, not 40.
  const Bytes alone = serialize_checkpoint(CheckpointContent{1, false, 0, 0, {}, {}, {gap_free}});
  CHECK(alone.size() < 100 + 13 * 1000);
  CHECK(alone.size() > 100 + 12 * 1000 - 100);
}

TEST_CASE("a checkpoint whose packed tuples are malformed does not parse", "[roles][checkpoint]") {
  CheckpointContent c;
  c.id = 1;
  CheckpointOutput o;
  o.stream = 1;
  o.tuples = {Tuple{5, 5, 5, 4.0, 5}};
  o.last_id = 5;
  c.outputs = {o};
  const Bytes whole = serialize_checkpoint(c);
  const std::size_t tuple = whole.size() - 12;  // id, ts, key, value (8: 4.0 zigzagged, doubled = 16), lineage
  REQUIRE(whole[tuple] == 5);
  REQUIRE(whole[tuple + 3] == 16);
  REQUIRE(parse_checkpoint(whole).has_value());
  Bytes odd_value = whole;
  odd_value[tuple + 3] = 3;  // odd and not the raw marker
  CHECK_FALSE(parse_checkpoint(odd_value).has_value());
  Bytes raw_short = whole;
  raw_short[tuple + 3] = 1;  // the raw marker with 8 bytes (the lineage) and nothing after
  CHECK_FALSE(parse_checkpoint(raw_short).has_value());
  Bytes long_varint = whole;  // an id's varint that never ends
  for (std::size_t i = tuple; i < whole.size(); ++i) long_varint[i] = 0xff;
  CHECK_FALSE(parse_checkpoint(long_varint).has_value());
  Bytes more_tuples = whole;  // a count above what the bytes can hold (12 at least each)
  more_tuples[tuple - 8] = 2;
  CHECK_FALSE(parse_checkpoint(more_tuples).has_value());
  CHECK_FALSE(parse_checkpoint(Bytes(whole.begin(), whole.end() - 1)).has_value());
}

TEST_CASE("checking a checkpoint's tuples accepts exactly the payloads unpacking them accepts", "[roles][checkpoint]") {
  // Tuples of every packing (one-byte varints far from the end, long varints, raw values), then
  // every byte replaced by values that end a varint or not, mark a raw value, or make it odd,
  // and every truncation: TupleParsing::check must agree with unpacking on each.
  CheckpointContent c = sample_content();
  c.delta = false;
  c.base_id = 0;
  for (TupleId id = 14; id < 140; ++id)
    c.outputs[0].tuples.push_back(Tuple{id, static_cast<TimeUs>(id), static_cast<std::int64_t>(id % 5), id % 7 == 0 ? 0.25 : 3.0, id});
  c.outputs[0].tuples.push_back(Tuple{1000000, -1, std::numeric_limits<std::int64_t>::min(), 1e18, 5});
  c.outputs[0].last_id = 1000000;
  const Bytes whole = serialize_checkpoint(c);
  const auto both = [](const Bytes& payload) {
    const auto unpacked = parse_checkpoint(payload);
    const auto checked = parse_checkpoint(payload, TupleParsing::check);
    REQUIRE(unpacked.has_value() == checked.has_value());
    if (unpacked) {
      CheckpointContent without_tuples = *unpacked;
      for (CheckpointOutput& o : without_tuples.outputs) o.tuples.clear();
      REQUIRE(*checked == without_tuples);  // everything else read, no tuple stored
    }
    return unpacked.has_value();
  };
  REQUIRE(both(whole));
  std::size_t accepted = 0;
  std::size_t refused = 0;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    for (const std::uint8_t v : {0x00, 0x01, 0x02, 0x03, 0x7f, 0x80, 0xff}) {
      Bytes changed = whole;
      changed[i] = v;
      (both(changed) ? accepted : refused) += 1;
    }
    (both(Bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(i))) ? accepted : refused) += 1;
  }
  CHECK(accepted > 1000);  // both ways of parsing were tried on payloads that parse and that do not
  CHECK(refused > 1000);
}

TEST_CASE("a full checkpoint installed packed unpacks to what installing it unpacked gives, and a delta applies on it",
          "[roles][checkpoint]") {
  auto plan = default_plan(HaMode::passive, [](Settings& s) { s.checkpoint_mode = CheckpointMode::delta; });
  Server primary(plan, plan->node_id("filter"));
  const StreamId small = plan->stream_id("small");
  const FragmentId filter = plan->fragment_id("filter");
  append(primary, small, 1, 5000);
  const CapturedCheckpoint full = capture_checkpoint(primary, 1, nullptr, 1000);
  const Bytes payload = joined(full.chunks);

  InstalledCheckpoint unpacked;
  REQUIRE(apply_checkpoint(*plan, filter, parsed(full), unpacked));
  CHECK(unpacked.packed.empty());

  auto head = parse_checkpoint(payload, TupleParsing::check);
  REQUIRE(head.has_value());
  InstalledCheckpoint packed;
  REQUIRE(apply_checkpoint(*plan, filter, std::move(*head), packed, payload));
  CHECK(packed.id == 1);
  CHECK(packed.packed == payload);
  CHECK(packed.full.outputs.at(0).tuples.empty());  // nothing unpacked yet

  SECTION("unpacked at takeover") {
    packed.unpack();
    CHECK(packed.packed.empty());
    CHECK(packed.full == unpacked.full);
    packed.unpack();  // a second time: nothing left to do
    CHECK(packed.full == unpacked.full);
  }
  SECTION("a delta unpacks its base first") {
    append(primary, small, 5001, 5100);
    const CheckpointBase base = base_of(full.summary, primary.workload().fragment()->state_versions());
    CheckpointContent delta = parsed(capture_checkpoint(primary, 2, &base, 1 << 20));
    delta.outputs[0].trimmed_up_to = 4990;
    REQUIRE(apply_checkpoint(*plan, filter, delta, packed));
    CHECK(packed.id == 2);
    CHECK(packed.packed.empty());
    const Tuples& kept = packed.full.outputs[0].tuples;
    REQUIRE(kept.size() == 110);
    for (std::size_t i = 0; i < kept.size(); ++i) REQUIRE(kept[i] == primary.outputs().at(small).queue().at(4990 + i));
  }
  SECTION("the next full checkpoint replaces the packed one") {
    append(primary, small, 5001, 5002);
    auto next = parse_checkpoint(joined(capture_checkpoint(primary, 2, nullptr, 1000).chunks));
    REQUIRE(next.has_value());
    REQUIRE(apply_checkpoint(*plan, filter, *next, packed));
    CHECK(packed.packed.empty());
    CHECK(packed.full.outputs[0].tuples.size() == 5002);
  }
}

TEST_CASE("a checkpoint payload writer refuses parts out of order or short of what it announced", "[roles][checkpoint]") {
  const CheckpointContent c = sample_content();
  CHECK(aborts([&] {
    CheckpointPayloadWriter w(64);
    w.output_head(c.outputs[0], 1);  // before the head
  }));
  CHECK(aborts([&] {
    CheckpointPayloadWriter w(64);
    w.head(c);
    w.output_head(c.outputs[0], 1);
    w.tuples(c.outputs[0].tuples.data(), 2);  // more than announced
  }));
  CHECK(aborts([&] {
    CheckpointPayloadWriter w(64);
    w.head(c);
    w.output_head(c.outputs[0], 0);
    (void)w.take_chunks();  // output b missing
  }));
  CHECK_FALSE(aborts([&] {
    CheckpointPayloadWriter w(64);
    w.head(c);
    w.output_head(c.outputs[0], 0);
    w.output_head(c.outputs[1], 0);
    (void)w.take_chunks();
  }));
}

TEST_CASE("a checkpoint's chunks are reassembled in any order, duplicates and stale chunks ignored", "[roles][checkpoint]") {
  const Bytes a{1, 2, 3}, b{4, 5}, c{6};
  const Bytes whole{1, 2, 3, 4, 5, 6};
  {
    CheckpointAssembler in_order;
    CHECK_FALSE(in_order.add(chunk_of(1, 0, 3, a)));
    CHECK_FALSE(in_order.add(chunk_of(1, 1, 3, b)));
    CHECK(in_order.add(chunk_of(1, 2, 3, c)) == whole);
  }
  {
    CheckpointAssembler shuffled;
    CHECK_FALSE(shuffled.add(chunk_of(1, 2, 3, c)));
    CHECK_FALSE(shuffled.add(chunk_of(1, 2, 3, c)));  // a duplicate of an early chunk
    CHECK_FALSE(shuffled.add(chunk_of(1, 0, 3, a)));
    CHECK_FALSE(shuffled.add(chunk_of(1, 0, 3, a)));  // a duplicate of an appended chunk
    CHECK(shuffled.add(chunk_of(1, 1, 3, b)) == whole);
    CHECK_FALSE(shuffled.add(chunk_of(1, 1, 3, b)));  // late: its checkpoint is complete
    CHECK(shuffled.rejected() == 1);
    // The next checkpoint, a single chunk.
    CHECK(shuffled.add(chunk_of(2, 0, 1, b)) == b);
  }
  {
    CheckpointAssembler newer;
    CHECK_FALSE(newer.add(chunk_of(1, 0, 2, a)));
    CHECK_FALSE(newer.add(chunk_of(2, 1, 2, b)));  // checkpoint 1 is given up
    CHECK(newer.discarded_incomplete() == 1);
    CHECK_FALSE(newer.add(chunk_of(1, 1, 2, b)));  // older than the one in assembly
    CHECK_FALSE(newer.add(chunk_of(2, 0, 3, a)));  // a count that disagrees
    CHECK(newer.rejected() == 2);
    CHECK(newer.add(chunk_of(2, 0, 2, a)) == Bytes{1, 2, 3, 4, 5});
  }
  {
    // A huge claimed count with one chunk: nothing is allocated for the missing ones.
    CheckpointAssembler huge;
    CHECK_FALSE(huge.add(chunk_of(1, 4000000000U, 4000000001U, a)));
    CHECK_FALSE(huge.add(chunk_of(1, 0, 4000000001U, a)));
  }
}

TEST_CASE("a primary's checkpoint holds its output queues' retained tuples, a delta only those appended since",
          "[roles][checkpoint]") {
  auto plan = default_plan(HaMode::passive, [](Settings& s) { s.checkpoint_mode = CheckpointMode::delta; });
  Server primary(plan, plan->node_id("filter"));
  const StreamId small = plan->stream_id("small");
  append(primary, small, 1, 5000);  // more than one of the queue's storage chunks (4096)

  const CapturedCheckpoint full = capture_checkpoint(primary, 1, nullptr, 1000);
  CHECK(full.chunks.size() == (full.payload_bytes + 999) / 1000);
  CHECK(full.summary.outputs.size() == 1);
  CHECK(full.summary.outputs[0].tuples.empty());  // the summary keeps positions only
  CHECK(full.summary.fragment_state.empty());
  const CheckpointContent full_content = parsed(full);
  REQUIRE(full_content.outputs.size() == 1);
  const CheckpointOutput& out = full_content.outputs[0];
  CHECK(out.last_id == 5000);
  REQUIRE(out.tuples.size() == 5000);
  for (std::size_t i = 0; i < out.tuples.size(); ++i) REQUIRE(out.tuples[i] == primary.outputs().at(small).queue().at(i));

  InstalledCheckpoint installed;
  REQUIRE(apply_checkpoint(*plan, plan->fragment_id("filter"), full_content, installed));
  CHECK(installed.id == 1);

  append(primary, small, 5001, 5100);
  const CheckpointBase base = base_of(full.summary, primary.workload().fragment()->state_versions());
  const CapturedCheckpoint delta = capture_checkpoint(primary, 2, &base, 1 << 20);
  CheckpointContent delta_content = parsed(delta);
  CHECK(delta_content.delta);
  CHECK(delta_content.base_id == 1);
  REQUIRE(delta_content.outputs[0].tuples.size() == 100);
  CHECK(delta_content.outputs[0].tuples.front().id == 5001);

  SECTION("applied on the installed copy: the base's tuples after the new trim point, then the new ones") {
    delta_content.outputs[0].trimmed_up_to = 4990;  // downstream acknowledged up to 4990 meanwhile
    REQUIRE(apply_checkpoint(*plan, plan->fragment_id("filter"), delta_content, installed));
    CHECK(installed.id == 2);
    CHECK_FALSE(installed.full.delta);
    const Tuples& kept = installed.full.outputs[0].tuples;
    REQUIRE(kept.size() == 110);
    for (std::size_t i = 0; i < kept.size(); ++i) REQUIRE(kept[i] == primary.outputs().at(small).queue().at(4990 + i));
  }
  SECTION("a delta whose tuples do not follow the installed ones leaves the installed copy as it was") {
    delta_content.outputs[0].tuples.front().id = 4999;
    const CheckpointContent before = installed.full;
    CHECK_FALSE(apply_checkpoint(*plan, plan->fragment_id("filter"), delta_content, installed));
    CHECK(installed.id == 1);
    CHECK(installed.full == before);
  }
  SECTION("a delta whose own ids do not grow does not apply, even at id 0") {
    delta_content.outputs[0].trimmed_up_to = 5000;  // nothing of the base kept
    delta_content.outputs[0].tuples.resize(2);
    delta_content.outputs[0].tuples[0].id = 0;
    delta_content.outputs[0].tuples[1].id = 0;
    CHECK_FALSE(apply_checkpoint(*plan, plan->fragment_id("filter"), delta_content, installed));
    CHECK(installed.id == 1);
  }
  SECTION("a delta on another base, or naming a stream twice, does not apply") {
    CheckpointContent other_base = delta_content;
    other_base.base_id = 9;
    CHECK_FALSE(apply_checkpoint(*plan, plan->fragment_id("filter"), other_base, installed));
    CheckpointContent twice = delta_content;
    twice.outputs.push_back(twice.outputs[0]);
    twice.outputs[1].tuples.clear();
    const CheckpointContent before = installed.full;
    CHECK_FALSE(apply_checkpoint(*plan, plan->fragment_id("filter"), twice, installed));
    CHECK(installed.full == before);
  }
}
