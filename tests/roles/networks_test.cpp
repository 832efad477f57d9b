// The approaches on the Union and Join example networks (experiments/networks/), on the loop
// network, checked against the failure-free reference.
#include <catch2/catch.hpp>

#include "judge/checker.h"
#include "judge/reference.h"
#include "config/topology_file.h"
#include "roles/loop_network.h"

using namespace hapair;

namespace {

std::shared_ptr<const Plan> example(const std::string& file, HaMode ha, double duration_s = 2.0) {
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/" + file);
  INFO(load.problems.size() << " problems");
  REQUIRE(load.topology.has_value());
  RunOverrides o;
  o.ha = ha;
  o.duration_s = duration_s;
  auto problems = apply_overrides(*load.topology, o);
  REQUIRE(problems.empty());
  return std::make_shared<Plan>(make_plan(*load.topology));
}

SemanticsReport run_and_check(const std::shared_ptr<const Plan>& plan, const std::string& victim, TimeUs at,
                              test::LoopNetwork** out_net = nullptr) {
  static std::unique_ptr<test::LoopNetwork> keep;
  keep = std::make_unique<test::LoopNetwork>(plan);
  if (!victim.empty()) keep->crash_at(victim, at);
  REQUIRE(keep->run(60'000'000));
  if (out_net) *out_net = keep.get();
  return check_semantics(reference_output(*plan), keep->deliveries(), arbitrary_operators(*plan));
}

}  // namespace

TEST_CASE("the union network without failure matches the reference as a multiset", "[roles]") {
  for (HaMode ha : {HaMode::none, HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO("ha=" << to_string(ha));
    auto report = run_and_check(example("union.toml", ha), "", 0);
    CHECK(report.multiset_compare);
    CHECK(report.verdict == "precise");
    CHECK(report.reference_tuples > 500);
  }
}

TEST_CASE("passive and active standby recover the Union fragment precisely", "[roles]") {
  for (HaMode ha : {HaMode::passive, HaMode::active}) {
    INFO("ha=" << to_string(ha));
    test::LoopNetwork* net = nullptr;
    auto report = run_and_check(example("union.toml", ha), "merge", 1'000'000, &net);
    CHECK(report.verdict == "precise");
    CHECK(report.lost == 0);
    CHECK(report.duplicates == 0);
    CHECK(net->has_trace("takeover"));
  }
}

TEST_CASE("upstream backup of the Union fragment loses nothing, regenerated tuples are duplicates", "[roles]") {
  test::LoopNetwork* net = nullptr;
  auto report = run_and_check(example("union.toml", HaMode::upstream), "merge", 1'000'000, &net);
  CHECK(report.lost == 0);
  CHECK((report.verdict == "precise" || report.verdict == "rollback"));
  CHECK(net->has_trace("rebased"));
}

TEST_CASE("active standby without determinants diverges on the Union fragment, and the checker says so", "[roles]") {
  auto plan = example("union.toml", HaMode::active);
  auto topo = plan->topology;
  topo.settings.determinants = false;
  auto p2 = std::make_shared<Plan>(make_plan(topo));
  test::LoopNetwork* net = nullptr;
  auto report = run_and_check(p2, "merge", 1'000'000, &net);
  CHECK(report.verdict == "rollback");
  CHECK(report.lost == 0);
  CHECK(report.duplicates > 0);
}

TEST_CASE("every approach but amnesia recovers the Join fragment precisely", "[roles]") {
  for (HaMode ha : {HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO("ha=" << to_string(ha));
    auto report = run_and_check(example("join.toml", ha), "pair", 1'000'000);
    CHECK(report.verdict == "precise");
    CHECK(report.lost == 0);
    CHECK(report.duplicates == 0);
    CHECK(report.reference_tuples > 100);
  }
}
