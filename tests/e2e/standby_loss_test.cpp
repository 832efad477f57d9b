// A lost standby never stalls the pipeline, with real processes (issue 13 item 3): the standby
// of a fragment whose output waits for it (a Union under passive or active standby) is
// SIGKILLed; its primary declares it lost, releases what it held and runs unprotected; the
// process is started again, rejoins, and the pair is re-formed. Checked against the failure-free
// reference.
#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

TEST_CASE("a SIGKILLed standby of a Union's fragment does not stall it, and its restarted process re-forms the pair", "[e2e][restore]") {
  for (HaMode ha : {HaMode::passive, HaMode::active}) {
    INFO("ha=" << to_string(ha));
    auto plan = plan_of("union.toml", ha, 3.0);
    auto o = run_real(plan, {crash("merge.backup", 1.0), restart("merge.backup", 1.8)});
    INFO("summary:\n" << o.summary);
    REQUIRE(o.result.errors.empty());
    REQUIRE(o.result.completed);
    CHECK(count_events(*plan, o.result, "standby_lost", "merge") >= 1);
    CHECK(count_events(*plan, o.result, "pair_restored", "merge") >= 1);
    CHECK(o.semantics.verdict == "precise");
    CHECK(o.semantics.lost == 0);
  }
}
