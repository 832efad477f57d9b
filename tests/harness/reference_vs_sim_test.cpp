// The reference run against the real pipeline: a failure-free simulated run of a network must
// deliver exactly its reference output (docs/EXPERIMENTS.md, "How we measure": "a run that claims precise and
// loses a tuple is a failed test"), and a crash under amnesia must be measured as a gap.
#include <catch2/catch.hpp>

#include <memory>

#include "judge/checker.h"
#include "judge/metrics.h"
#include "judge/reference.h"
#include "sim/simulator.h"

using namespace hapair;

namespace {

std::shared_ptr<const Plan> reference_default_plan(HaMode ha, double duration_s) {
  Topology t = default_topology();
  t.settings.ha = ha;
  t.settings.duration_s = duration_s;
  return std::make_shared<const Plan>(make_plan(t));
}

}  // namespace

TEST_CASE("a failure-free simulated run of the default network delivers exactly the reference output",
          "[reference][sim]") {
  const auto plan = reference_default_plan(HaMode::none, 1.0);
  const RunResult run = run_simulation(plan, SimOptions{});
  INFO("reproduce with: " << reproduce_command(*plan, plan->settings().seed));
  REQUIRE(run.errors.empty());
  REQUIRE(run.completed);
  const ReferenceRun ref = reference_run(*plan);
  const SemanticsReport s = check_semantics(ref.deliveries, run.deliveries, arbitrary_operators(*plan));
  CHECK(s.verdict == "precise");
  CHECK(s.lost == 0);
  CHECK(s.duplicates == 0);
  CHECK(s.differing == 0);
  CHECK(s.order_matches);
  CHECK(s.delivered_tuples == ref.deliveries.size());

  const RunMetrics m = compute_metrics(run, ref.deliveries, ref.input_tuples);
  CHECK(m.tuples_in == ref.input_tuples);
  CHECK(m.tuples_out == ref.deliveries.size());
  CHECK_FALSE(m.recovery.has_value());
  CHECK(m.latency.p50_ms > 0.0);
}

TEST_CASE("a crash of the aggregate under amnesia is measured as a gap", "[reference][sim]") {
  const auto plan = reference_default_plan(HaMode::amnesia, 2.0);
  SimOptions options;
  options.faults.push_back(FaultSpec{FaultKind::crash, "aggregate", "", 1.0, 0.0});
  const RunResult run = run_simulation(plan, options);
  INFO("reproduce with: " << reproduce_command(*plan, plan->settings().seed));
  const ReferenceRun ref = reference_run(*plan);
  const SemanticsReport s = check_semantics(ref.deliveries, run.deliveries, arbitrary_operators(*plan));
  CHECK(s.verdict == "gap");
  CHECK(s.lost > 0);

  const RunMetrics m = compute_metrics(run, ref.deliveries, ref.input_tuples);
  REQUIRE(m.recovery.has_value());
  CHECK(m.recovery->failure_from_event);
  CHECK(m.recovery->failure_us == 1000000);
  CHECK(m.recovery->recovered);
  REQUIRE(m.recovery->detection_ms.has_value());
  CHECK(*m.recovery->detection_ms > 0.0);
}
