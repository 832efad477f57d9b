// The simulator and the real driver host the same cores: on the default network they must give
// the same failure-free output, tuple for tuple, and the same verdict for amnesia after a crash.
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
