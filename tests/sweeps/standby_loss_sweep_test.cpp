// The standby-loss sweep (docs/FAULTS.md, issue 13 item 3): a standby's crash, crash and restart
// or long pause at random instants under random network conditions never costs output and never
// stalls the run. Each run is checked against its failure-free reference. The targeted cases are
// in tests/scenarios/standby_loss_test.cpp; this sweep runs in the Release build (label sweeps).
#include <catch2/catch.hpp>

#include "judge/checker.h"
#include "judge/reference.h"
#include "config/topology_file.h"
#include "protocols/rng.h"
#include "sim/simulator.h"

using namespace hapair;

namespace {

FaultSpec fault(FaultKind kind, const std::string& node, double at_s, double duration_s = 0) {
  FaultSpec f;
  f.kind = kind;
  f.node = node;
  f.at_s = at_s;
  f.duration_s = duration_s;
  return f;
}

}  // namespace

TEST_CASE("100 seeds of a random standby's crash, crash and restart, or long pause: every run completes, nothing lost", "[sweeps]") {
  // Random network conditions and detector per seed, as the crash sweep (seed_sweep_test.cpp).
  // A standby fault alone never costs output: precise wherever the approach claims precise
  // recovery of a primary crash (upstream backup on the Union network: nothing lost).
  for (const char* file : {"", "join.toml", "union.toml"})
  for (HaMode ha : {HaMode::upstream, HaMode::passive, HaMode::active}) {
    int lost_declared = 0, restored = 0;
    std::vector<std::string> failures;
    for (int seed = 1; seed <= 100; ++seed) {
      Topology t;
      if (std::string(file).empty()) {
        t = default_topology();
      } else {
        auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/" + file);
        REQUIRE(load.topology.has_value());
        t = *load.topology;
      }
      t.settings.ha = ha;
      for (auto& f : t.fragments)
        if (f.kind == FragmentKind::operators) f.ha.reset();
      t.settings.seed = static_cast<std::uint64_t>(seed);
      t.settings.duration_s = 1.5;
      Rng rng = Rng::derive(static_cast<std::uint64_t>(seed), hash_name("standby loss sweep"));
      t.sim.link_latency_ms = rng.uniform(0.05, 2.0);
      t.sim.link_jitter_ms = rng.uniform(0.0, 1.0);
      t.settings.detector = rng.chance(0.5) ? DetectorKind::heartbeat : DetectorKind::connection_heartbeat;
      auto plan = std::make_shared<const Plan>(make_plan(t));
      std::vector<std::string> standbys;
      for (const auto& f : plan->fragments)
        if (f.kind == FragmentKind::operators)
          for (NodeId s : f.standbys) standbys.push_back(plan->nodes[s].name);
      REQUIRE_FALSE(standbys.empty());
      const std::string victim = standbys[rng.below(standbys.size())];
      const double at_s = 0.3 + 0.5 * rng.next_unit();
      std::vector<FaultSpec> faults;
      const std::uint64_t kind = rng.below(3);
      if (kind == 0) {
        faults = {fault(FaultKind::crash, victim, at_s)};
      } else if (kind == 1) {
        faults = {fault(FaultKind::crash, victim, at_s), fault(FaultKind::restart, victim, at_s + rng.uniform(0.01, 0.4))};
      } else {
        faults = {fault(FaultKind::pause, victim, at_s, rng.uniform(0.1, 0.5))};
      }
      SimOptions options;
      options.faults = faults;
      const RunResult r = run_simulation(plan, options);
      const auto report = check_semantics(reference_output(*plan), r.deliveries, arbitrary_operators(*plan));
      for (const auto& e : r.events) {
        lost_declared += e.kind == TraceKind::standby_lost;
        restored += e.kind == TraceKind::pair_restored;
      }
      const bool claim_precise = !(ha == HaMode::upstream && std::string(file) == "union.toml");
      if (!r.completed || report.lost > 0 || (claim_precise && report.verdict != "precise")) {
        std::string f = "seed " + std::to_string(seed) + " " + report.verdict + " lost " + std::to_string(report.lost) +
                        (r.completed ? "" : " (incomplete)") + ":";
        for (const auto& x : faults) f += " " + std::string(to_string(x.kind)) + " " + x.node + "@" + std::to_string(x.at_s);
        failures.push_back(f);
      }
    }
    INFO("network " << (std::string(file).empty() ? "default" : file) << " ha " << to_string(ha) << ": standby_lost "
                    << lost_declared << " pair_restored " << restored);
    for (const auto& f : failures) UNSCOPED_INFO(f);
    CHECK(failures.empty());
    CHECK(lost_declared > 50);  // the branch under test really ran
  }
}
