// Restoring the pair with real processes (issue 8, DESIGN.md section 6): the primary is
// SIGKILLed, its process is started again and rejoins as the standby of the node that took over,
// and a second SIGKILL — of that new primary — is recovered as precisely as the first, checked
// against the failure-free reference.
#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

TimeUs first_event_us(const RunResult& r, const std::string& event) {
  for (const auto& e : r.events)
    if (e.event == event) return e.at_us;
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
    CHECK(restored_us > 1'500'000);
    CHECK(restored_us < 2'500'000);
    CHECK(o.semantics.verdict == "precise");
    CHECK(o.semantics.lost == 0);
    CHECK(o.semantics.duplicates == 0);
    CHECK(o.semantics.differing == 0);
  }
}
