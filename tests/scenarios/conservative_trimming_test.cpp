// Upstream backup under the conservative trimming rule (trimming = "conservative"): no cause
// functions, so a recovery node restarts from the oldest input its upstreams retained.
// - A repeatable fragment (Filter, Map, Project, Lookup) keeps its input's ids, so the replay
//   regenerates exactly the ids its consumers saw: the run stays precise. (It used to rebase
//   them, and the Aggregate downstream counted the replayed tuples twice: "lost 80".)
// - A fragment with state restarts empty and renumbers its output; a consumer with state counts
//   the replayed tuples again under their new ids. That is beyond what the rule can promise, and
//   the run says so (never "within the guarantee" with lost output, never GUARANTEE BROKEN).
#include <catch2/catch.hpp>

#include <memory>

#include "config/topology_file.h"
#include "judged_run.h"

using namespace hapair;

namespace {

Topology trimming_network(const std::string& name) {
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/" + name + ".toml");
  REQUIRE(load.topology.has_value());
  Topology t = *load.topology;
  t.settings.ha = HaMode::upstream;
  t.settings.trimming = TrimmingRule::conservative;
  t.settings.duration_s = 3.0;
  return t;
}

using TrimRun = test::JudgedRun;

TrimRun run_sim(const Topology& t, const std::string& victim, double at_s) {
  return test::judged_sim_run(t, {FaultSpec{FaultKind::crash, victim, "", at_s, 0.0}});
}

}  // namespace

TEST_CASE("conservative trimming: a crashed filter before an aggregate is recovered precisely (its ids are its input's)",
          "[scenarios][conservative]") {
  for (double at_s : {1.0, 2.0}) {
    INFO("crash of filter at " << at_s << " s");
    const TrimRun r = run_sim(trimming_network("default"), "filter", at_s);
    CHECK(r.outcome.semantics.verdict == "precise");
    CHECK(r.outcome.semantics.lost == 0);
    CHECK(r.outcome.semantics.duplicates == 0);
    CHECK(r.check.status == RunStatus::result);
    CHECK_FALSE(r.check.beyond);
  }
}

TEST_CASE("conservative trimming: an aggregate feeding the sink loses nothing, duplicates are the promise",
          "[scenarios][conservative]") {
  const TrimRun r = run_sim(trimming_network("default"), "aggregate", 2.0);
  CHECK(r.outcome.semantics.lost == 0);
  CHECK(r.outcome.semantics.duplicates > 0);  // renumbered: the sink sees the replayed windows again
  CHECK(r.check.status == RunStatus::result);
  CHECK_FALSE(r.check.beyond);
}

TEST_CASE("conservative trimming: a renumbered merge before a stateful join is beyond the guarantee, and says why",
          "[scenarios][conservative]") {
  const TrimRun r = run_sim(trimming_network("merge_join"), "merge", 0.654);
  REQUIRE(r.outcome.semantics.lost > 0);  // the join counted replayed tuples twice
  CHECK(r.check.status == RunStatus::result);
  CHECK(r.check.beyond);
  CHECK_THAT(r.check.reason, Catch::Contains("conservative trimming rule") && Catch::Contains("holds state") &&
                                 Catch::Contains("trimming = \"exact\""));
  // Under the exact rule the same crash is recovered precisely.
  Topology exact = trimming_network("merge_join");
  exact.settings.trimming = TrimmingRule::exact;
  const TrimRun e = run_sim(exact, "merge", 0.654);
  CHECK(e.outcome.semantics.verdict == "precise");
  CHECK(e.check.status == RunStatus::result);
}
