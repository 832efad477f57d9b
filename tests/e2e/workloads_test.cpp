// The workload networks on real processes (docs/WORKLOADS.md): a SIGKILL of the fragment with
// state is recovered precisely, one approach per network (the simulator crosses every approach
// with every workload: tests/scenarios/workload_networks_test.cpp).
#include <catch2/catch.hpp>

#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

TEST_CASE("real processes: NEXMark q5 and q8 and YSB recover precisely from a SIGKILL of their fragment with state",
          "[e2e][workloads]") {
  struct Case {
    const char* file;
    HaMode ha;
    const char* victim;
  };
  for (const Case& c : {Case{"nexmark_q5.toml", HaMode::active, "aggregate"}, Case{"nexmark_q8.toml", HaMode::upstream, "join"},
                        Case{"ysb.toml", HaMode::passive, "aggregate"}}) {
    INFO(c.file << ", ha " << to_string(c.ha) << ", SIGKILL of " << c.victim);
    const auto o = run_real(plan_of(c.file, c.ha, 2.5), {crash(c.victim, 1.3)});
    check_precise(o);
    CHECK(o.semantics.reference_tuples > 0);
    CHECK(count_events(o.result, "takeover") >= 1);
  }
}
