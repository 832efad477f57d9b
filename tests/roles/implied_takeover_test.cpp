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

// The default network under active standby, and the core of one of its nodes, started.
struct ActiveNode {
  std::shared_ptr<const Plan> plan;
  std::unique_ptr<NodeCore> core;
  FragmentId agg = kNoFragment;
  NodeId source = kNoNode, filter = kNoNode, primary = kNoNode, standby = kNoNode;
  StreamId small = kNoStream;
};

ActiveNode active_node(const std::string& name, bool driver_watches_partner = false) {
  Topology t = default_topology();
  t.settings.ha = HaMode::active;
  ActiveNode a;
  a.plan = std::make_shared<const Plan>(make_plan(t));
  a.agg = a.plan->fragment_id("aggregate");
  a.source = a.plan->node_id("source");
  a.filter = a.plan->node_id("filter");
  a.primary = a.plan->node_id("aggregate");
  a.standby = a.plan->node_id("aggregate.backup");
  a.small = a.plan->stream_id("small");
  a.core = make_node_core(a.plan, a.plan->node_id(name));
  Start start;
  start.driver_watches_partner = driver_watches_partner;
  a.core->handle(0, start);
  return a;
}

// Whom the filter sends batches to once the source gave it more input (and a tick later).
std::vector<NodeId> receivers_of_more_input(ActiveNode& a) {
  const Effects after = a.core->handle(3000, Received{Envelope{Header{a.source, 0, 3000}, input_batch(*a.plan, 51, 100)}});
  auto receivers = batch_receivers(after);
  const auto more = batch_receivers(a.core->handle(4000, Tick{}));
  receivers.insert(receivers.end(), more.begin(), more.end());
  return receivers;
}

// The Takeovers among the sends to node n.
std::vector<Takeover> takeovers_to(const Effects& eff, NodeId n) {
  std::vector<Takeover> out;
  for (const Outgoing& o : eff.sends)
    if (const auto* t = std::get_if<Takeover>(&o.envelope.body); t && o.to == n) out.push_back(*t);
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
  ActiveNode a = active_node("filter");
  const Effects before = a.core->handle(1000, Received{Envelope{Header{a.source, 0, 1000}, input_batch(*a.plan, 1, 50)}});
  REQUIRE(batch_receivers(before) == std::vector<NodeId>{a.primary, a.standby});

  a.core->handle(2000, Received{Envelope{Header{a.standby, 2, 2000}, Level0Ack{a.small, 10, false}}});
  a.core->handle(2001, Received{Envelope{Header{a.primary, 1, 2001}, Takeover{a.agg, a.primary, 1, {}}}});
  a.core->handle(2002, Received{Envelope{Header{a.primary, 2, 2002}, Takeover{a.agg, a.primary, 2, {{a.standby, 1500}}}}});
  CHECK(metric(*a.core, "implied_takeovers") == 0);
  const auto receivers = receivers_of_more_input(a);
  CHECK(std::count(receivers.begin(), receivers.end(), a.primary) >= 1);
}

TEST_CASE("a producer that missed an active fragment's takeover asks the new primary that acked it for its route and follows the answer", "[roles][route_table]") {
  // Without an implied takeover from an active standby's ack (case 604 above), a producer whose
  // every copy of the Takeover was lost would follow the dead primary: it asks the sender instead.
  ActiveNode a = active_node("filter");
  const NodeId old_primary = a.primary;
  const NodeId new_primary = a.standby;
  a.core->handle(1000, Received{Envelope{Header{a.source, 0, 1000}, input_batch(*a.plan, 1, 50)}});

  // The new primary's level-0 ack in epoch 1: the producer asks it, once per retransmit timeout.
  const Effects ask = a.core->handle(2000, Received{Envelope{Header{new_primary, 1, 2000}, Level0Ack{a.small, 10, false}}});
  const Effects again = a.core->handle(2001, Received{Envelope{Header{new_primary, 1, 2001}, Level0Ack{a.small, 20, false}}});
  CHECK(metric(*a.core, "implied_takeovers") == 0);
  CHECK(metric(*a.core, "route_queries_sent") == 1);
  const auto asked = takeovers_to(ask, new_primary);
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].fragment == a.agg);
  CHECK(asked[0].epoch == 0);  // the route it follows: the old one
  CHECK(takeovers_to(again, new_primary).empty());

  // The answer names the new primary, alone: the producer follows it and stops sending to the
  // dead one.
  a.core->handle(2100, Received{Envelope{Header{new_primary, 1, 2100}, Takeover{a.agg, new_primary, 1, {}}}});
  const auto receivers = receivers_of_more_input(a);
  CHECK(std::count(receivers.begin(), receivers.end(), new_primary) >= 1);
  CHECK(std::count(receivers.begin(), receivers.end(), old_primary) == 0);
}

TEST_CASE("a primary told an older route of its own fragment by a neighbour answers with its own", "[roles][route_table]") {
  ActiveNode a = active_node("aggregate", true);
  a.core->handle(1000, PeerLost{a.standby, Detector::connection});  // epoch 1: the pair dissolved
  const Effects answer =
      a.core->handle(2000, Received{Envelope{Header{a.filter, 0, 2000}, Takeover{a.agg, a.primary, 0, {{a.standby, 0}}}}});
  CHECK(metric(*a.core, "old_statements_answered") == 1);
  const auto told = takeovers_to(answer, a.filter);
  REQUIRE(told.size() == 1);
  CHECK(told[0].new_primary == a.primary);
  CHECK(told[0].epoch == 1);
  CHECK(told[0].standbys.empty());
  // The current route itself is no question: nothing more.
  a.core->handle(3'000'000, Received{Envelope{Header{a.filter, 0, 3'000'000}, Takeover{a.agg, a.primary, 1, {}}}});
  CHECK(metric(*a.core, "old_statements_answered") == 1);
}

}  // namespace
}  // namespace hapair
