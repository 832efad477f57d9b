// The simulator ends a run that cannot complete once its output went quiet
// (protocols/quiet_drain.h), the same rule as the launcher, instead of running to its time limit.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/simulator.h"

using namespace hapair;

namespace {

// The built-in network without HA, sources emitting for 1 s.
std::shared_ptr<const Plan> default_plan_without_ha() {
  Topology t = default_topology();
  t.settings.ha = HaMode::none;
  t.settings.duration_s = 1.0;
  t.settings.drain_timeout_s = 20.0;
  REQUIRE(validate(t).empty());
  return std::make_shared<const Plan>(make_plan(t));
}

}  // namespace

TEST_CASE("a simulated run without HA whose crash stops the output ends when the output went quiet, not at the time limit", "[sim][run]") {
  auto plan = default_plan_without_ha();
  SimOptions o;
  o.faults = {FaultSpec{FaultKind::crash, "aggregate", "", 0.5, 0.0}};
  const RunResult r = run_simulation(plan, o);

  CHECK_FALSE(r.completed);
  REQUIRE(r.errors.size() == 1);
  CHECK_THAT(r.errors[0], Catch::Contains("the output went quiet") && Catch::Contains("1 of 1 sinks"));
  // The source's queue changes until the duration; the quiet window (drain_quiet_s, at least the
  // longest retransmission back-off) follows, checked at the next 100 ms sample.
  const Settings& s = plan->settings();
  const TimeUs window_us = std::max<TimeUs>(static_cast<TimeUs>(s.drain_quiet_s * 1e6), retransmit_backoff_max_ms(s) * 1000);
  CHECK(r.end_us >= 1'000'000 + window_us);
  CHECK(r.end_us <= 1'000'000 + window_us + 200'000);
}

TEST_CASE("a pause that ends after the quiet window would have passed keeps a simulated run going until it completes", "[sim][run]") {
  auto plan = default_plan_without_ha();
  SimOptions o;
  // The filter stops at 0.5 s and comes back at 6.5 s, long after duration + window.
  o.faults = {FaultSpec{FaultKind::pause, "filter", "", 0.5, 6.0}};
  const RunResult r = run_simulation(plan, o);
  for (const auto& e : r.errors) UNSCOPED_INFO("error: " << e);
  CHECK(r.errors.empty());
  CHECK(r.completed);
  CHECK(r.end_us > 6'500'000);
}
