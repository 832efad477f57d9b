// Tests of the typed trace events (protocols/trace.h, trace_text.h): names and key types are one
// table each, details are typed and read back by key, the text form reads back into the same
// event, and the codec refuses kinds and keys it does not know.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "protocols/codec.h"
#include "protocols/core.h"
#include "protocols/plan.h"
#include "protocols/trace.h"
#include "protocols/trace_text.h"
#include "support/trace_read.h"

namespace hapair {
namespace {

Envelope trace_envelope_of(Message body) {
  Envelope e;
  e.header = Header{1, 0, 0};
  e.body = std::move(body);
  return e;
}

TEST_CASE("every trace kind and key has a unique name that reads back to it", "[trace]") {
  std::set<std::string> kinds;
  for (std::size_t i = 0; i < kTraceKindCount; ++i) {
    const auto k = static_cast<TraceKind>(i);
    INFO("kind " << i);
    CHECK(kinds.insert(to_string(k)).second);
    CHECK(trace_kind_from(to_string(k)) == k);
  }
  std::set<std::string> keys;
  for (std::size_t i = 0; i < kTraceKeyCount; ++i) {
    const auto k = static_cast<TraceKey>(i);
    INFO("key " << i);
    CHECK(keys.insert(to_string(k)).second);
    CHECK(trace_key_from(to_string(k)) == k);
  }
  CHECK_FALSE(trace_kind_from("takeover ").has_value());
  CHECK_FALSE(trace_key_from("kind").has_value());
}

TEST_CASE("only batches, acks and trims are data-plane kinds", "[trace]") {
  std::set<std::string> data;
  for (std::size_t i = 0; i < kTraceKindCount; ++i)
    if (is_data_plane(static_cast<TraceKind>(i))) data.insert(to_string(static_cast<TraceKind>(i)));
  CHECK(data == std::set<std::string>{"batch_sent", "batch_received", "duplicates_dropped", "level0_ack", "level1_ack",
                                      "trimmed"});
}

TEST_CASE("a trace event keeps its details typed and in the order they were added", "[trace]") {
  const TraceEvent e = TraceEvent(1500, 3, TraceKind::detection)
                           .with(TraceKey::failed, NodeId{2})
                           .with(TraceKey::detector, Detector::connection)
                           .with(TraceKey::silent_us, TimeUs{812});
  CHECK(e.detail_count == 3);
  CHECK(e.details[0].key == TraceKey::failed);
  CHECK(e.node_of(TraceKey::failed) == 2);
  CHECK(e.enum_of<Detector>(TraceKey::detector) == Detector::connection);
  CHECK(e.get(TraceKey::silent_us) == 812);
  CHECK_FALSE(e.has(TraceKey::stream));
  CHECK(e.stream() == kNoStream);
  CHECK(e.node_of(TraceKey::standby) == kNoNode);
  CHECK(e.id_of(TraceKey::first_id) == 0);
}

TEST_CASE("the text form names nodes, streams and enums and reads back into the same event", "[trace]") {
  const Plan plan = make_plan(default_topology());
  const StreamId small = plan.stream_id("small");
  const TraceEvent e = TraceEvent(7, plan.node_id("aggregate"), TraceKind::batch_received)
                           .with(TraceKey::peer, plan.node_id("filter"))
                           .with(TraceKey::stream, small)
                           .with(TraceKey::first_id, TupleId{41})
                           .with(TraceKey::last_id, TupleId{140})
                           .with(TraceKey::replay, true)
                           .with(TraceKey::partner, kNoNode)
                           .with_text("a note -- with dashes");
  const std::string text = trace_details_text(&plan, e);
  CHECK(text == "peer=filter stream=small first_id=41 last_id=140 replay=true partner=none -- a note -- with dashes");
  const auto back = parse_trace_event(&plan, 7, plan.node_id("aggregate"), "batch_received", text);
  REQUIRE(back.has_value());
  CHECK(*back == e);
}

TEST_CASE("text that is not a typed event is refused with the reason", "[trace]") {
  const Plan plan = make_plan(default_topology());
  std::string why;
  CHECK_FALSE(parse_trace_event(&plan, 0, 0, "tookover", "", &why));
  CHECK(why == "unknown trace kind 'tookover'");
  CHECK_FALSE(parse_trace_event(&plan, 0, 0, "takeover", "approach=passive", &why));
  CHECK(why == "unknown trace key 'approach'");
  CHECK_FALSE(parse_trace_event(&plan, 0, 0, "detection", "failed=nobody", &why));
  CHECK(why == "value 'nobody' of 'failed'");
  CHECK_FALSE(parse_trace_event(&plan, 0, 0, "detection", "detector=smoke", &why));
  CHECK_FALSE(parse_trace_event(&plan, 0, 0, "detection", "epoch=1 epoch=2", &why));
  CHECK(why == "trace key 'epoch' twice");
}

TEST_CASE("the codec carries typed trace events and drops unknown kinds and keys", "[trace][codec]") {
  TraceBatch batch{{TraceEvent(5, 1, TraceKind::checkpoint)
                        .with(TraceKey::checkpoint, 29)
                        .with(TraceKey::mode, CheckpointMode::delta)
                        .with(TraceKey::bytes, 4096),
                    TraceEvent(6, 2, TraceKind::fatal).with_text("queue full")}};
  const Bytes bytes = encode(trace_envelope_of(batch));
  DecodeStats stats;
  const auto back = decode(bytes, stats);
  REQUIRE(back.has_value());
  CHECK(std::get<TraceBatch>(back->body) == batch);

  // The kind is the only byte that holds pair_restored's value (the last kind): patch it to one
  // past the last.
  Bytes bad = encode(trace_envelope_of(TraceBatch{{TraceEvent(5, 1, TraceKind::pair_restored)}}));
  std::size_t at = bad.size();
  int found = 0;
  for (std::size_t i = 0; i < bad.size(); ++i)
    if (bad[i] == static_cast<std::uint8_t>(TraceKind::pair_restored)) at = i, ++found;
  REQUIRE(found == 1);
  bad[at] = static_cast<std::uint8_t>(kTraceKindCount);
  DecodeStats refused;
  CHECK_FALSE(decode(bad, refused).has_value());
  CHECK(refused.dropped_by_reason["value out of range"] == 1);
}

}  // namespace
}  // namespace hapair
