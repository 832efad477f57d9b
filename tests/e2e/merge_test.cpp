// Merges on real processes (experiments/networks/merge_join.toml: a Union of two sources joined
// with a third, the join counted per key). A Union in arrival order feeding the Join: failure free,
// the counts are "not judged" with the reason and the run is never called a gap. A Union in
// timestamp order (the serializing Union, with boundaries on the wire): failure free precise, and
// a SIGKILL of either fragment is recovered precisely under upstream backup, passive and active
// standby.
#include <catch2/catch.hpp>

#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

void arrival(Topology& t) {
  for (auto& f : t.fragments)
    for (auto& o : f.operators)
      if (o.kind == OperatorKind::union_op) o.union_order = UnionOrder::arrival;
}

}  // namespace

TEST_CASE("real processes: a Union in arrival order feeding a Join is not judged, and says why, never gap", "[e2e][merge]") {
  const auto o = run_real(plan_of("merge_join.toml", HaMode::none, 2.0, &arrival), {});
  INFO(o.summary);
  REQUIRE(o.result.completed);
  REQUIRE(o.semantics.not_judged.size() == 1);
  CHECK(o.semantics.not_judged.front().stream == "counts");
  CHECK(o.semantics.not_judged.front().reason.find("interleaved on arrival") != std::string::npos);
  CHECK(o.semantics.verdict != "gap");
  CHECK(o.summary.find("not judged") != std::string::npos);
}

TEST_CASE("real processes: a Union in timestamp order feeding a Join is precise failure free and after a SIGKILL",
          "[e2e][merge]") {
  const auto free = run_real(plan_of("merge_join.toml", HaMode::none, 2.0), {});
  check_precise(free);
  CHECK(free.semantics.not_judged.empty());
  CHECK(free.result.counters.at("merge").at("bytes_sent.tuples") > 0);
  // Each approach once, the victims alternating (the simulator crosses every pair:
  // tests/scenarios/merge_verdict_test.cpp).
  const std::vector<std::pair<HaMode, const char*>> cases = {
      {HaMode::upstream, "merge"}, {HaMode::passive, "enrich"}, {HaMode::active, "merge"}};
  for (const auto& [ha, victim] : cases) {
    INFO("ha " << to_string(ha) << ", SIGKILL of " << victim);
    const auto o = run_real(plan_of("merge_join.toml", ha, 2.5), {crash(victim, 1.2)});
    check_precise(o);
    CHECK(o.semantics.not_judged.empty());
    CHECK(count_events(o.result, "takeover") >= 1);
  }
}

TEST_CASE("real processes: an idle spare found its primary's crash by the crash line, not after the run's whole length of silence",
          "[e2e][detection]") {
  // Upstream backup's spare hears nothing from its primary: the driver watches the pair. Its
  // detection used to report as silence the time since the run started (2 s here).
  const auto plan = plan_of("", HaMode::upstream, 3.0);
  const auto o = run_real(plan, {crash("aggregate", 2.0)});
  check_precise(o);
  bool found = false;
  for (const TraceEvent& e : o.result.events) {
    if (e.kind != TraceKind::detection || plan->nodes.at(e.node).name != "aggregate.spare") continue;
    found = true;
    const std::optional<Detector> detector = e.enum_of<Detector>(TraceKey::detector);
    REQUIRE(detector.has_value());
    INFO("detector " << to_string(*detector) << ", silent " << e.get(TraceKey::silent_us).value_or(-1));
    if (*detector == Detector::connection) {
      CHECK(e.get(TraceKey::silent_us) == 0);
    } else {
      CHECK(e.get(TraceKey::silent_us) == us_from_ms(static_cast<double>(plan->settings().hang_timeout_ms)));
    }
  }
  CHECK(found);
}
