// Restoring the pair with real processes (issue 8, docs/FAULTS.md, "Who may act as primary"): the primary is
// SIGKILLed, its process is started again and rejoins as the standby of the node that took over,
// and a second SIGKILL — of that new primary — is recovered as precisely as the first, checked
// against the failure-free reference.
#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

TimeUs first_event_us(const RunResult& r, const std::string& event) {
  for (const auto& e : r.events)
    if (to_string(e.kind) == event) return e.at_us;
  return kNever;
}

}  // namespace

TEST_CASE("a restarted primary process rejoins as the standby, and the second SIGKILL is recovered precisely", "[e2e][restore]") {
  for (HaMode ha : {HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO("ha=" << to_string(ha));
    auto plan = plan_of("", ha, 3.5);
    const std::string standby = ha == HaMode::upstream ? "aggregate.spare" : "aggregate.backup";
    auto o = run_real(plan, {crash("aggregate", 1.0), restart("aggregate", 1.5), crash(standby, 2.5)});
    INFO("summary:\n" << o.summary);
    REQUIRE(o.result.errors.empty());
    REQUIRE(o.result.completed);
    // The standby took over from the first primary, then the restarted process from the standby.
    CHECK(count_events(o.result, "takeover") == 2);
    CHECK(count_events(o.result, "restart") == 1);
    // The pair was whole again before the second failure.
    const TimeUs restored_us = first_event_us(o.result, "pair_restored");
    REQUIRE(restored_us != kNever);
    // Ordered against the run's own events, not the clock: after the restart, before the
    // second crash.
    TimeUs restart_us = kNever, second_crash_us = kNever;
    for (const auto& e : o.result.events) {
      if (e.kind == TraceKind::restart && restart_us == kNever) restart_us = e.at_us;
      if (e.kind == TraceKind::failure && e.node == plan->node_id(standby) && second_crash_us == kNever)
        second_crash_us = e.at_us;
    }
    REQUIRE(restart_us != kNever);
    REQUIRE(second_crash_us != kNever);
    CHECK(restored_us > restart_us);
    CHECK(restored_us < second_crash_us);
    CHECK(o.semantics.verdict == "precise");
    CHECK(o.semantics.lost == 0);
    CHECK(o.semantics.duplicates == 0);
    CHECK(o.semantics.differing == 0);
  }
}
