// The exit status of the commands that run something (run/guarantee.h): a run that gave a
// result (ha none stopping at the crash included) is 0, a run that broke its approach's
// guarantee or whose harness failed is 1. Simulated runs of the built-in default network.
#include <catch2/catch.hpp>

#include <memory>

#include "run/guarantee.h"
#include "run/run_once.h"
#include "config/topology_file.h"

using namespace hapair;

namespace {

struct Ran {
  std::shared_ptr<const Plan> plan;
  Reference reference;
  RunOutcome outcome;
};

Ran run_sim(HaMode ha, std::vector<FaultSpec> faults) {
  Topology t = default_topology();
  t.settings.ha = ha;
  t.settings.duration_s = 2.0;
  Ran r;
  r.plan = std::make_shared<const Plan>(make_plan(t));
  Topology none = t;
  none.settings.ha = HaMode::none;
  r.reference = compute_reference(make_plan(none));
  RunRequest request;
  request.driver = "sim";
  request.faults = std::move(faults);
  r.outcome = run_once(r.plan, request, r.reference);
  return r;
}

const FaultSpec kCrashAggregate{FaultKind::crash, "aggregate", "", 1.0, 0.0};

}  // namespace

TEST_CASE("a none run that stops at the crash gave its result: exit status 0", "[guarantee]") {
  const Ran r = run_sim(HaMode::none, {kCrashAggregate});
  REQUIRE_FALSE(r.outcome.result.completed);
  REQUIRE_FALSE(r.outcome.result.stall.empty());  // the run ended because its output stopped
  CHECK(harness_errors(r.outcome.result).empty());
  CHECK(r.outcome.semantics.verdict == "gap");
  const GuaranteeCheck c = check_guarantee(*r.plan, r.outcome, r.reference);
  CHECK(c.status == RunStatus::result);
  CHECK(c.stopped);
  CHECK(c.beyond);
  CHECK_THAT(c.reason, Catch::Contains("fragment aggregate has no standby (ha none)"));
  CHECK_THAT(guarantee_line(c), Catch::StartsWith("outcome: the output stopped at the failure, the expected result"));
  CHECK(exit_status({c}) == kExitResults);
}

TEST_CASE("a standby approach whose output stopped because both nodes of a pair died is beyond its guarantee, not the expected result",
          "[guarantee]") {
  for (HaMode ha : {HaMode::passive, HaMode::active}) {
    INFO(to_string(ha));
    const Ran r = run_sim(ha, {kCrashAggregate, FaultSpec{FaultKind::crash, "aggregate.backup", "", 1.0, 0.0}});
    REQUIRE_FALSE(r.outcome.result.completed);
    const GuaranteeCheck c = check_guarantee(*r.plan, r.outcome, r.reference);
    CHECK(c.status == RunStatus::result);
    CHECK(c.beyond);
    CHECK(c.stopped);
    CHECK_FALSE(c.promises_nothing);
    CHECK_THAT(guarantee_line(c), Catch::StartsWith("outcome: a result beyond the approach's guarantee (the output stopped): "));
    CHECK_THAT(guarantee_line(c), !Catch::Contains("expected result"));
  }
}

TEST_CASE("precise approaches that recover precisely, and amnesia's gap, are results", "[guarantee]") {
  for (HaMode ha : {HaMode::amnesia, HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO(to_string(ha));
    const Ran r = run_sim(ha, {kCrashAggregate});
    const GuaranteeCheck c = check_guarantee(*r.plan, r.outcome, r.reference);
    CHECK(c.status == RunStatus::result);
    CHECK_FALSE(c.stopped);
    CHECK_FALSE(c.beyond);
    if (ha == HaMode::amnesia) CHECK(c.reason == "gap expected (amnesia)");
  }
}

TEST_CASE("a precise approach that loses a tuple broke its guarantee: exit status 1", "[guarantee]") {
  Ran r = run_sim(HaMode::passive, {kCrashAggregate});
  REQUIRE(r.outcome.semantics.verdict == "precise");
  // As a broken passive standby would: one output tuple never arrives.
  r.outcome.result.deliveries.pop_back();
  r.outcome.semantics = check_semantics(r.reference.run.deliveries, r.outcome.result.deliveries, r.reference.arbitrary_operators);
  const GuaranteeCheck c = check_guarantee(*r.plan, r.outcome, r.reference);
  CHECK(c.status == RunStatus::broken);
  CHECK_THAT(c.reason, Catch::Contains("passive standby gave gap"));
  CHECK_THAT(guarantee_line(c), Catch::StartsWith("outcome: GUARANTEE BROKEN: passive standby gave gap"));
  const Ran ok = run_sim(HaMode::none, {});
  const GuaranteeCheck fine = check_guarantee(*ok.plan, ok.outcome, ok.reference);
  CHECK(exit_status({fine}) == kExitResults);
  CHECK(exit_status({fine, c}) == kExitBroken);
}

TEST_CASE("a failure of the harness is exit status 1 under every approach, ha none included", "[guarantee]") {
  Ran r = run_sim(HaMode::none, {kCrashAggregate});
  r.outcome.result.errors.push_back("node filter exited unexpectedly with signal 11");
  const GuaranteeCheck c = check_guarantee(*r.plan, r.outcome, r.reference);
  CHECK(c.status == RunStatus::harness_failed);
  CHECK(c.reason == "node filter exited unexpectedly with signal 11");
  CHECK(exit_status({c}) == kExitBroken);

  Ran w = run_sim(HaMode::passive, {});
  w.outcome.write_error = "cannot create /nope";
  CHECK(check_guarantee(*w.plan, w.outcome, w.reference).status == RunStatus::harness_failed);
}

TEST_CASE("a failure-free run must complete, ha none included", "[guarantee]") {
  Ran r = run_sim(HaMode::none, {});
  REQUIRE(r.outcome.result.completed);
  CHECK(check_guarantee(*r.plan, r.outcome, r.reference).status == RunStatus::result);
  r.outcome.result.completed = false;  // as if the output had gone quiet
  r.outcome.result.stall = "the output went quiet";
  r.outcome.result.errors = {r.outcome.result.stall};
  const GuaranteeCheck c = check_guarantee(*r.plan, r.outcome, r.reference);
  CHECK(c.status == RunStatus::broken);
  CHECK_THAT(c.reason, Catch::Contains("a failure-free run must complete"));
}

TEST_CASE("a run is judged by the approach of the fragment its fault hit, the weakest when several", "[guarantee]") {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  for (FragmentSpec& f : t.fragments)
    if (f.name == "filter") f.ha = HaMode::amnesia;
  const Plan plan = make_plan(t);
  CHECK(judged_approach(plan, {kCrashAggregate}) == HaMode::passive);
  CHECK(judged_approach(plan, {{FaultKind::crash, "filter", "", 1.0, 0.0}}) == HaMode::amnesia);
  CHECK(judged_approach(plan, {}) == HaMode::amnesia);  // failure-free: every operator fragment
  CHECK(judged_approach(plan, {{FaultKind::crash, "source", "", 1.0, 0.0}}) == HaMode::amnesia);
}
