// Outbox (primary/outbox.h): every message a node sends carries its node and its fragment's
// current epoch; data-plane traces only at trace_level data. Paper: a takeover starts a new
// epoch (docs/FAULTS.md), so receivers can drop what a fenced primary still sends.
#include <catch2/catch.hpp>

#include "primary/outbox.h"
#include "roles/role_test_support.h"

using namespace hapair;
using namespace hapair::test;

TEST_CASE("an outbox stamps every message with my node and my fragment's epoch at the time it is sent",
          "[roles][outbox]") {
  const auto plan = default_plan(HaMode::passive);
  const NodeIdentity node(plan, plan->node_id("aggregate.backup"));
  RouteTable routes(*plan, node.self());
  Outbox outbox(node, routes);
  Effects eff;
  outbox.send(eff, 5, plan->node_id("sink"), Heartbeat{1});
  routes.claim_as_primary();  // a takeover: epoch 1
  outbox.send(eff, 6, plan->node_id("sink"), Heartbeat{2});
  REQUIRE(eff.sends.size() == 2);
  CHECK(eff.sends[0].envelope.header.sender == node.self());
  CHECK(eff.sends[0].envelope.header.epoch == 0);
  CHECK(eff.sends[0].envelope.header.sent_us == 5);
  CHECK(eff.sends[1].envelope.header.epoch == 1);
  CHECK(eff.sends[1].to == plan->node_id("sink"));
}

TEST_CASE("an outbox records data-plane traces only at trace_level data", "[roles][outbox]") {
  const auto control = default_plan(HaMode::none);
  const NodeIdentity node(control, control->node_id("filter"));
  RouteTable routes(*control, node.self());
  Outbox quiet(node, routes);
  Effects eff;
  quiet.send(eff, 0, control->node_id("aggregate"), batch_after(control->stream_id("small"), 0, 3));
  quiet.trace(eff, 0, TraceKind::trimmed).with(TraceKey::count, 3);  // dropped, details and all
  quiet.trace(eff, 0, TraceKind::rebased);
  CHECK_FALSE(quiet.traces_data_plane());
  REQUIRE(eff.traces.size() == 1);
  CHECK(eff.traces[0].kind == TraceKind::rebased);
  CHECK(eff.traces[0].node == node.self());

  const auto data = default_plan(HaMode::none, [](Settings& s) { s.trace_level = TraceLevel::data; });
  const NodeIdentity traced(data, data->node_id("filter"));
  RouteTable traced_routes(*data, traced.self());
  Outbox loud(traced, traced_routes);
  Effects sent;
  loud.send(sent, 0, data->node_id("aggregate"), batch_after(data->stream_id("small"), 0, 3));
  loud.send(sent, 0, data->node_id("source"), Level0Ack{data->stream_id("raw"), 3, false});
  REQUIRE(sent.traces.size() == 2);
  CHECK(sent.traces[0].kind == TraceKind::batch_sent);
  CHECK(sent.traces[0].get(TraceKey::count) == 3);
  CHECK(sent.traces[1].kind == TraceKind::level0_ack);
}

TEST_CASE("an outbox counts, and refuses to send to its own node", "[roles][outbox]") {
  const auto plan = default_plan(HaMode::none);
  const NodeIdentity node(plan, plan->node_id("filter"));
  RouteTable routes(*plan, node.self());
  Outbox outbox(node, routes);
  outbox.count("fencing_notices_sent");
  outbox.count("fencing_notices_sent", 2);
  CHECK(outbox.counters().at("fencing_notices_sent") == 3);
  CHECK(aborts([&] {
    Effects eff;
    outbox.send(eff, 0, node.self(), Heartbeat{0});
  }));
  CHECK(aborts([&] {
    Effects eff;
    outbox.send(eff, 0, static_cast<NodeId>(plan->nodes.size()), Heartbeat{0});
  }));
}
