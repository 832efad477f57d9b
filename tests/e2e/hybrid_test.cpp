// Hybrid standby (ha = hybrid, src/hybrid) under a real SIGKILL of the primary process: while its
// standby is passive, while it is active (switched by command) and in the middle of a switch,
// each checked against the failure-free reference.
#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

HaMode hybrid() { return ApproachCatalog::builtin().find("hybrid")->mode; }

void check_precise_hybrid_takeover(const RunOutcome& o) {
  check_precise(o);
  CHECK(count_events(o.result, "takeover") > 0);
}

}  // namespace

TEST_CASE("hybrid standby: SIGKILL of the primary while its standby is passive is recovered precisely", "[e2e][hybrid]") {
  auto plan = plan_of("", hybrid(), 3.0, [](Topology& t) {
    t.settings.hybrid_stall_ms = 0;  // no switch: a loaded machine's late ticks would make one
    t.settings.hybrid_input_queue_tuples = 0;
  });
  auto o = run_real(plan, {crash("aggregate", 1.5)});
  check_precise_hybrid_takeover(o);
  CHECK(count_events(o.result, "hybrid_switch") == 0);
}

TEST_CASE("hybrid standby: SIGKILL of the primary while its standby is active is recovered precisely", "[e2e][hybrid]") {
  auto plan = plan_of("", hybrid(), 3.0, [](Topology& t) {
    t.settings.hybrid_switch_at_ms = 500;
    t.settings.hybrid_calm_ms = 100'000;
  });
  auto o = run_real(plan, {crash("aggregate", 1.5)});
  check_precise_hybrid_takeover(o);
  CHECK(count_events(*plan, o.result, "hybrid_switch", "aggregate") >= 1);
  CHECK(count_events(*plan, o.result, "bootstrap_installed", "aggregate.backup") >= 1);
}

TEST_CASE("hybrid standby: SIGKILL of the primary in the middle of a switch is recovered precisely", "[e2e][hybrid]") {
  auto plan = plan_of("", hybrid(), 3.0, [](Topology& t) {
    t.settings.hybrid_switch_at_ms = 1500;
    t.settings.hybrid_calm_ms = 100'000;
  });
  check_precise_hybrid_takeover(run_real(plan, {crash("aggregate", 1.5)}));
  check_precise_hybrid_takeover(run_real(plan, {crash("aggregate", 1.501)}));
}
