// Implied takeovers through a whole node core: which message in a newer epoch may stand for a
// lost (or not yet read) Takeover, and which may not (docs/FAULTS.md, "Who may act as primary").
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "node/node_factory.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {
namespace {

TupleBatch input_batch(const Plan& plan, TupleId first, TupleId last) {
  TupleBatch b;
  b.stream = plan.stream_id("raw");
  for (TupleId id = first; id <= last; ++id) b.tuples.push_back(Tuple{id, static_cast<TimeUs>(id) * 1000, 1, 1.0});
  return b;
}

std::vector<NodeId> batch_receivers(const Effects& eff) {
  std::vector<NodeId> out;
  for (const Outgoing& o : eff.sends)
    if (std::holds_alternative<TupleBatch>(o.envelope.body)) out.push_back(o.to);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::int64_t metric(const NodeCore& core, const std::string& name) {
  const auto m = core.metrics();
  const auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

TEST_CASE("a producer that missed two epochs of an active fragment reads the standby's ack first and still follows the primary (real campaign case 604)", "[roles][route_table]") {
  // Real campaign case 604: while the producer was paused, the consumer fragment's primary
  // declared its standby lost (epoch 1) and took it back (epoch 2). On resuming, the producer read
  // the standby's level-0 ack (epoch 2) before the primary's two Takeovers (ZeroMQ queues each
  // peer's messages apart), took it for the standby's lost Takeover, followed it as primary, and
  // answered the real epoch-2 Takeover as a competing claim: the primary got nothing more, the
  // output stopped.
  Topology t = default_topology();
  t.settings.ha = HaMode::active;
  const auto plan = std::make_shared<const Plan>(make_plan(t));
  const NodeId filter = plan->node_id("filter");
  const NodeId source = plan->node_id("source");
  const NodeId primary = plan->node_id("aggregate");
  const NodeId standby = plan->node_id("aggregate.backup");
  const FragmentId agg = plan->fragment_id("aggregate");
  const StreamId small = plan->stream_id("small");
  auto core = make_node_core(plan, filter);
  core->handle(0, Start{});
  const Effects before = core->handle(1000, Received{Envelope{Header{source, 0, 1000}, input_batch(*plan, 1, 50)}});
  REQUIRE(batch_receivers(before) == std::vector<NodeId>{primary, standby});

  core->handle(2000, Received{Envelope{Header{standby, 2, 2000}, Level0Ack{small, 10, false}}});
  core->handle(2001, Received{Envelope{Header{primary, 1, 2001}, Takeover{agg, primary, 1, kNoNode, 0}}});
  core->handle(2002, Received{Envelope{Header{primary, 2, 2002}, Takeover{agg, primary, 2, standby, 1500}}});
  CHECK(metric(*core, "implied_takeovers") == 0);
  const Effects after = core->handle(3000, Received{Envelope{Header{source, 0, 3000}, input_batch(*plan, 51, 100)}});
  const Effects tick = core->handle(4000, Tick{});
  auto receivers = batch_receivers(after);
  const auto more = batch_receivers(tick);
  receivers.insert(receivers.end(), more.begin(), more.end());
  CHECK(std::count(receivers.begin(), receivers.end(), primary) >= 1);
}

}  // namespace
}  // namespace hapair
