// The simulator is deterministic: the same plan, faults and seed give byte-identical result files
// (docs/STYLE: the simulator with the same seed gives the same result, byte for byte).
#include <catch2/catch.hpp>

#include "judge/checker.h"
#include "judge/reference.h"
#include "judge/metrics.h"
#include "report/results.h"
#include "config/topology_file.h"
#include "sim/simulator.h"

using namespace hapair;

namespace {

Topology network(const std::string& file) {
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/" + file);
  REQUIRE(load.topology.has_value());
  return *load.topology;
}

}  // namespace

TEST_CASE("the simulator with the same seed writes byte-identical summary.json, output.csv and events.csv", "[scenarios]") {
  Topology t = network("union_join.toml");
  t.settings.ha = HaMode::passive;
  t.settings.duration_s = 1.0;
  auto plan = std::make_shared<const Plan>(make_plan(t));
  FaultSpec crash{FaultKind::crash, "merge", "", 0.5, 0};
  SimOptions options;
  options.faults = {crash};
  const auto reference = reference_run(*plan);
  auto files = [&] {
    RunResult r = run_simulation(plan, options);
    auto sem = check_semantics(reference.deliveries, r.deliveries, arbitrary_operators(*plan));
    auto m = compute_metrics(r, reference.deliveries, reference.input_tuples);
    return std::vector<std::string>{summary_json(r, sem, m, 1, "test"), output_csv(r), events_csv(r), metrics_csv(r)};
  };
  const auto a = files();
  const auto b = files();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].size() > 100);
    CHECK(a[i] == b[i]);
  }
}

TEST_CASE("the simulator with the same seed gives byte-identical files across live switches and a crash right after one", "[scenarios]") {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  t.settings.duration_s = 2.0;
  t.switches = {SwitchSpec{"aggregate", HaMode::active, 0.5, ""}, SwitchSpec{"aggregate", HaMode::upstream, 1.0, ""}};
  auto plan = std::make_shared<const Plan>(make_plan(t));
  SimOptions options;
  options.faults = {FaultSpec{FaultKind::crash, "aggregate", "", 1.05, 0}};
  auto files = [&] {
    RunResult r = run_simulation(plan, options);
    return std::vector<std::string>{output_csv(r), events_csv(r), metrics_csv(r)};
  };
  const auto a = files();
  const auto b = files();
  REQUIRE(a.size() == b.size());
  CHECK(a[1].find("approach_switch") != std::string::npos);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].size() > 100);
    CHECK(a[i] == b[i]);
  }
}
