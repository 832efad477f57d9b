// The simulator and the real driver host the same cores: on the default network they must give
// the same failure-free output, tuple for tuple, and the same verdict for amnesia after a crash.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "e2e/e2e_support.h"
#include "sim/simulator.h"

using namespace hapair;
using namespace hapair::e2e;

TEST_CASE("the simulator and real processes deliver identical failure-free output on the default network", "[e2e][sim]") {
  auto plan = plan_of("", HaMode::none, 2.0);
  auto real = run_real(plan, {});
  REQUIRE(real.result.completed);
  RunResult sim = run_simulation(plan, SimOptions{});
  REQUIRE(sim.completed);
  REQUIRE(real.result.deliveries.size() == sim.deliveries.size());
  for (std::size_t i = 0; i < sim.deliveries.size(); ++i) {
    INFO("delivery " << i);
    CHECK(real.result.deliveries[i].stream == sim.deliveries[i].stream);
    CHECK(real.result.deliveries[i].tuple == sim.deliveries[i].tuple);  // id, ts, key, value, lineage
  }
}

TEST_CASE("the simulator and real processes agree that amnesia after a crash is a gap", "[e2e][sim]") {
  auto plan = plan_of("", HaMode::amnesia, 2.0);
  auto real = run_real(plan, {crash("aggregate", 1.0)});
  SimOptions o;
  o.faults = {crash("aggregate", 1.0)};
  RunResult sim = run_simulation(plan, o);
  REQUIRE(real.result.completed);
  REQUIRE(sim.completed);
  const Reference reference = compute_reference(*plan);
  auto sim_report = check_semantics(reference.run.deliveries, sim.deliveries, reference.arbitrary_operators);
  CHECK(real.semantics.verdict == "gap");
  CHECK(sim_report.verdict == "gap");
  CHECK(real.semantics.lost > 0);
  CHECK(sim_report.lost > 0);
}

namespace {

// What a failure-free run's typed trace says, in terms both drivers must agree on: which node
// recorded which kind of event (heartbeat_missed is timing, not protocol, and left out), the
// first event of every node with its details (its start), and per (node, peer, stream) the
// lowest and highest id sent and received, the tuples accepted from batches and the last level-0
// ack. Batching, times and the number of acks depend on timing; these do not.
struct TraceFacts {
  std::set<std::pair<NodeId, TraceKind>> kinds;
  std::map<NodeId, TraceEvent> first;
  std::map<std::tuple<NodeId, NodeId, StreamId, TraceKind>, std::pair<TupleId, TupleId>> ids;
  std::map<std::tuple<NodeId, NodeId, StreamId>, std::int64_t> accepted;
  std::map<std::tuple<NodeId, NodeId, StreamId>, TupleId> acked;
};

TraceFacts facts_of(const RunResult& r) {
  TraceFacts f;
  for (const TraceEvent& e : r.events) {
    if (e.kind == TraceKind::heartbeat_missed) continue;
    f.kinds.insert({e.node, e.kind});
    if (!f.first.count(e.node)) {
      TraceEvent start = e;
      start.at_us = 0;
      f.first.emplace(e.node, start);
    }
    if (e.kind == TraceKind::batch_sent || e.kind == TraceKind::batch_received) {
      auto [it, fresh] = f.ids.try_emplace({e.node, e.node_of(TraceKey::peer), e.stream(), e.kind},
                                           e.id_of(TraceKey::first_id), e.id_of(TraceKey::last_id));
      it->second.first = std::min(it->second.first, e.id_of(TraceKey::first_id));
      it->second.second = std::max(it->second.second, e.id_of(TraceKey::last_id));
      if (e.kind == TraceKind::batch_received)
        f.accepted[{e.node, e.node_of(TraceKey::peer), e.stream()}] += e.get(TraceKey::count).value_or(0);
    }
    if (e.kind == TraceKind::level0_ack) {
      TupleId& a = f.acked[{e.node, e.node_of(TraceKey::peer), e.stream()}];
      a = std::max(a, e.id_of(TraceKey::position));
    }
  }
  return f;
}

}  // namespace

TEST_CASE("the simulator and real processes record the same typed trace events for a failure-free run", "[e2e][sim][trace]") {
  auto plan = plan_of("", HaMode::passive, 1.5, [](Topology& t) { t.settings.trace_level = TraceLevel::data; });
  auto real = run_real(plan, {});
  REQUIRE(real.result.completed);
  RunResult sim = run_simulation(plan, SimOptions{});
  REQUIRE(sim.completed);
  const TraceFacts a = facts_of(real.result);
  const TraceFacts b = facts_of(sim);
  auto kinds_text = [&](const TraceFacts& f) {
    std::string s;
    for (const auto& [node, kind] : f.kinds) s += plan->nodes[node].name + ":" + to_string(kind) + " ";
    return s;
  };
  INFO("real: " << kinds_text(a));
  INFO("sim:  " << kinds_text(b));
  CHECK(a.kinds == b.kinds);
  CHECK(a.first == b.first);
  // Every stream was sent and received from its first tuple to its last, by the same nodes, and
  // every tuple accepted once, in both.
  CHECK(a.ids == b.ids);
  CHECK(a.accepted == b.accepted);
  CHECK(a.acked == b.acked);
  // The data plane really was traced: batches, acks, trims and checkpoints.
  for (TraceKind k : {TraceKind::batch_sent, TraceKind::batch_received, TraceKind::level0_ack, TraceKind::level1_ack,
                      TraceKind::trimmed, TraceKind::checkpoint, TraceKind::checkpoint_installed})
    CHECK(std::any_of(a.kinds.begin(), a.kinds.end(), [&](const auto& p) { return p.second == k; }));
}
