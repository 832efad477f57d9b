// Live switching of a fragment's approach (docs/ARCHITECTURE.md "Live switching") on real
// processes: passive -> active -> upstream backup mid-run, then a SIGKILL of the primary, checked
// against the failure-free reference.
#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {
HaMode mode(const char* name) { return ApproachCatalog::builtin().find(name)->mode; }
}  // namespace

TEST_CASE("live switch passive to active to upstream backup mid-run, then SIGKILL of the primary: precise", "[e2e][live_switch]") {
  auto plan = plan_of("", mode("passive"), 2.5, [](Topology& t) {
    t.switches.push_back(SwitchSpec{"aggregate", mode("active"), 0.6, ""});
    t.switches.push_back(SwitchSpec{"aggregate", mode("upstream"), 1.2, ""});
  });
  auto o = run_real(plan, {crash("aggregate", 1.6)});
  check_precise(o);
  CHECK(count_events(*plan, o.result, "approach_switch", "aggregate") == 2);
  CHECK(count_events(*plan, o.result, "approach_switch", "aggregate.backup") == 2);
  CHECK(count_events(*plan, o.result, "bootstrap_installed", "aggregate.backup") == 1);
  CHECK(count_events(*plan, o.result, "takeover", "aggregate.backup") == 1);
}
