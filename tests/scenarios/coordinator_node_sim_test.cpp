// The coordinator of global checkpoints (docs/CHECKPOINT.md) as a node of a simulated run: the
// plan's node of no fragment goes through the simulator and the judge (metrics, disturbance, the
// guarantee rules, the checker) like any node. ha = checkpoint is not registered yet, so the
// fragments run a test's approach that needs a coordinator with amnesia's ends: they never
// answer a trigger, so every checkpoint is abandoned at its timeout; what is checked is that
// the coordinator runs, decides and is judged, and that the output is the reference's.
#include <catch2/catch.hpp>

#include <algorithm>

#include "checkpoint/coordinator_node.h"
#include "judge/checker.h"
#include "judge/guarantee_rules.h"
#include "judge/metrics.h"
#include "judge/reference.h"
#include "node/node_factory.h"
#include "report/run_json.h"
#include "run/run_once.h"
#include "protocols/topology_builders.h"
#include "sim/simulator.h"
#include "upstream_backup/approaches.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

constexpr HaMode kCoordinated = static_cast<HaMode>(203);

std::size_t count_of(const RunResult& r, TraceKind kind, NodeId node) {
  std::size_t n = 0;
  for (const TraceEvent& e : r.events) n += e.kind == kind && e.node == node;
  return n;
}

}  // namespace

TEST_CASE("a plan's coordinator node runs in the simulator and goes through the judge like any node",
          "[scenarios][checkpoint]") {
  Topology t = default_topology();
  t.settings.ha = kCoordinated;
  t.settings.duration_s = 2.0;
  // No fragment sends the coordinator heartbeats yet (their end is not built), so its heartbeat
  // detector would find them all failed: it waits longer than the run.
  t.settings.failure_timeout_ms = 60'000;
  // An emulated link (docs/LINKS.md): resolving it matches every pair of nodes, the coordinator's too.
  LinkSpec slow;
  slow.from = "filter";
  slow.to = "aggregate";
  slow.settings.latency_ms = 2.0;
  t.links.links.push_back(slow);
  const auto plan = std::make_shared<const Plan>(make_plan(t, coordinated_catalog(kCoordinated)));
  REQUIRE(plan->coordinator != kNoNode);
  Approach ends = amnesia_approach();
  ends.mode = kCoordinated;
  const ApproachRegistry registry = ApproachRegistry::builtin().with(ends);
  // The store outlives the coordinator's incarnations, as the simulator's would.
  MemoryCheckpointStore store;
  CoordinatorNodeOptions options;
  options.checkpoints.interval_us = 100'000;
  options.checkpoints.timeout_us = 300'000;
  const CoreFactory factory = [&](std::shared_ptr<const Plan> p, NodeId n) -> std::unique_ptr<NodeCore> {
    if (n == p->coordinator) return std::make_unique<CoordinatorNode>(std::move(p), n, options, store);
    return make_node_core_from(registry, std::move(p), n);
  };

  SimOptions sim;
  bool crashed = false;
  SECTION("failure free") {}
  SECTION("a crash of the coordinator") {
    sim.faults = {FaultSpec{FaultKind::crash, kCoordinatorNodeName, "", 1.0, 0.0}};
    crashed = true;
  }
  const RunResult r = run_simulation(plan, sim, factory);
  REQUIRE(r.completed);
  const Reference reference = compute_reference(*plan);
  const Judgement judgement = judge_against(*plan, reference, r);
  const SemanticsReport semantics = judge_run(judgement, reference);
  INFO(semantics.note);
  CHECK(semantics.verdict == "precise");
  CHECK_FALSE(beyond_guarantee(*plan, r).has_value());
  const RunMetrics metrics = compute_metrics(r, judgement.reference, judgement.input_tuples);
  CHECK(metrics.overhead.messages_by_kind.at("checkpoint_trigger") > 0);

  // The coordinator triggered checkpoints at the filter (the fragment reading the source), and
  // abandoned them: no fragment answers yet.
  const NodeId coordinator = plan->coordinator;
  CHECK(count_of(r, TraceKind::start, coordinator) == 1);
  CHECK(count_of(r, TraceKind::checkpoint_triggered, coordinator) > 2);
  CHECK(count_of(r, TraceKind::checkpoint_abandoned, coordinator) > 1);
  CHECK(count_of(r, TraceKind::checkpoint_completed, coordinator) == 0);
  CHECK(r.counters.at("filter").at("unexpected_checkpoint_trigger_dropped") > 0);
  CHECK(store.completed().empty());
  // The pages give it a lane of its own.
  const auto nodes = nodes_json(*plan);
  REQUIRE(nodes.size() == plan->nodes.size());
  CHECK(nodes.back()["name"] == kCoordinatorNodeName);
  CHECK(nodes.back()["fragment"] == kCoordinatorNodeName);
  // A crashed coordinator triggers nothing more; the fragments go on without it.
  TimeUs last_trigger_us = 0;
  for (const TraceEvent& e : r.events)
    if (e.kind == TraceKind::checkpoint_triggered) last_trigger_us = std::max(last_trigger_us, e.at_us);
  if (crashed) CHECK(last_trigger_us < 1'000'000);
  else CHECK(last_trigger_us > 1'500'000);
}
