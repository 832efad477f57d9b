// Failures the paper assumed away, with real processes (issue 8): a primary frozen with SIGSTOP
// until its standby has taken over and then resumed with SIGCONT, and a second SIGKILL — of the
// upstream server — while the first takeover is still being recovered. Every run is checked
// against the failure-free reference.
#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

const HaMode kPrecise[] = {HaMode::upstream, HaMode::passive, HaMode::active};

}  // namespace

TEST_CASE("a SIGSTOPped primary resumed after its standby took over is fenced, and not one tuple breaks the guarantee", "[e2e][faults]") {
  for (HaMode ha : kPrecise) {
    INFO("ha=" << to_string(ha));
    // Frozen for 600 ms against a 150 ms failure timeout: the standby takes over while the old
    // primary still holds its sockets, its queues and whatever it was about to send.
    const auto plan = plan_of("", ha, 3.0);
    auto o = run_real(plan, {pause("aggregate", 1.0, 0.6)});
    check_precise(o);
    CHECK(count_events(o.result, "takeover") == 1);
    CHECK(count_events(*plan, o.result, "fenced", "aggregate") == 1);  // it learned of the newer epoch
  }
}

TEST_CASE("a second SIGKILL, of the upstream server, just after the first takeover is still recovered precisely", "[e2e][faults]") {
  for (HaMode ha : kPrecise) {
    INFO("ha=" << to_string(ha));
    // The filter dies 170 ms after the aggregate: about when the aggregate's standby has detected
    // the first failure (150 ms timeout) and asks the filter to replay.
    auto o = run_real(plan_of("", ha, 3.0), {crash("aggregate", 1.0), crash("filter", 1.17)});
    check_precise(o);
    CHECK(count_events(o.result, "takeover") == 2);
  }
}
