// Many seeds of random crash times and victims in the simulator, each run checked against its
// failure-free reference: the approaches must give the recovery they claim on every seed.
// A failing seed prints the command that reproduces it. These sweeps run in the Release build
// (label sweeps): minutes under the sanitizers, seconds with optimisation.
#include <catch2/catch.hpp>

#include "judge/checker.h"
#include "protocols/approach_traits.h"
#include "judge/reference.h"
#include "report/results.h"
#include "config/topology_file.h"
#include "protocols/rng.h"
#include "sim/simulator.h"

using namespace hapair;

namespace {

constexpr int kSeeds = 200;

Topology network(const std::string& file) {
  if (file.empty()) return default_topology();
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/" + file);
  REQUIRE(load.topology.has_value());
  return *load.topology;
}

struct SweepResult {
  int precise = 0, rollback = 0, gap = 0, incomplete = 0;
  std::uint64_t lost = 0, duplicates = 0;
  std::vector<std::string> failures;  // reproduce commands of seeds that broke the claim
};

// Crashes a random operator primary at a random time in the middle 60% of each run.
SweepResult sweep(const std::string& file, HaMode ha, bool claim_precise, bool hybrid_switches = false) {
  SweepResult out;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    Topology t = network(file);
    t.settings.ha = ha;
    for (auto& f : t.fragments)
      if (f.kind == FragmentKind::operators) f.ha.reset();
    t.settings.seed = static_cast<std::uint64_t>(seed);
    t.settings.duration_s = 1.5;
    Rng rng = Rng::derive(static_cast<std::uint64_t>(seed), hash_name("seed sweep"));
    // Different network conditions per seed: per-message latency and jitter, slower links.
    t.sim.link_latency_ms = rng.uniform(0.05, 3.0);
    t.sim.link_jitter_ms = rng.uniform(0.0, 2.0);
    t.sim.bandwidth_bytes_per_s = rng.chance(0.3) ? 2e7 : 1.25e9;
    // Hybrid standby: an explicit switch to active at a random instant before or after the crash,
    // so the crash finds the standby passive, in the middle of its bootstrap or active.
    if (hybrid_switches) t.settings.hybrid_switch_at_ms = static_cast<std::int64_t>(rng.uniform(0.1, 1.4) * 1000);
    auto plan = std::make_shared<const Plan>(make_plan(t));
    std::vector<std::string> victims;
    for (const auto& f : plan->fragments)
      if (f.kind == FragmentKind::operators) victims.push_back(plan->nodes[f.primary].name);
    FaultSpec crash;
    crash.kind = FaultKind::crash;
    crash.node = victims[rng.below(victims.size())];
    crash.at_s = t.settings.duration_s * (0.2 + 0.6 * rng.next_unit());
    SimOptions options;
    options.faults = {crash};
    RunResult r = run_simulation(plan, options);
    auto report = check_semantics(reference_output(*plan), r.deliveries, arbitrary_operators(*plan));
    if (!r.completed) ++out.incomplete;
    out.lost += report.lost;
    out.duplicates += report.duplicates;
    if (report.verdict == "precise") ++out.precise;
    if (report.verdict == "rollback") ++out.rollback;
    if (report.verdict == "gap") ++out.gap;
    const bool broken = !r.completed || report.lost > 0 || (claim_precise && report.verdict != "precise");
    if (broken && out.failures.size() < 5)
      out.failures.push_back("seed " + std::to_string(seed) + ": " + report.verdict + " lost " +
                             std::to_string(report.lost) + " dups " + std::to_string(report.duplicates) +
                             "; reproduce with: hapair run --driver sim --topology experiments/networks/" +
                             (file.empty() ? "default.toml" : file) + " --ha " + to_string(ha) + " --duration-s 1.5 --seed " +
                             std::to_string(seed) + " --fail " + crash.node + "@" + std::to_string(crash.at_s) +
                             " (with [sim] link_latency_ms=" + std::to_string(t.sim.link_latency_ms) +
                             " link_jitter_ms=" + std::to_string(t.sim.link_jitter_ms) +
                             " bandwidth_bytes_per_s=" + std::to_string(t.sim.bandwidth_bytes_per_s) +
                             (hybrid_switches ? " and [network] hybrid_switch_at_ms=" +
                                                    std::to_string(t.settings.hybrid_switch_at_ms)
                                              : std::string()) +
                             ")");
  }
  return out;
}

void require_claim(const std::string& file, HaMode ha, bool claim_precise, bool hybrid_switches = false) {
  auto s = sweep(file, ha, claim_precise, hybrid_switches);
  INFO("network " << (file.empty() ? "default" : file) << " ha " << to_string(ha) << ": precise " << s.precise
                  << " rollback " << s.rollback << " gap " << s.gap << " incomplete " << s.incomplete);
  for (const auto& f : s.failures) UNSCOPED_INFO(f);
  CHECK(s.incomplete == 0);
  CHECK(s.lost == 0);
  CHECK(s.gap == 0);
  if (claim_precise) CHECK(s.precise == kSeeds);
  CHECK(s.failures.empty());
}

}  // namespace

TEST_CASE("upstream backup: 200 seeds of random crashes, zero lost on the default, Join and Union networks, precise where deterministic", "[sweeps]") {
  require_claim("", HaMode::upstream, true);
  require_claim("join.toml", HaMode::upstream, true);
  require_claim("union.toml", HaMode::upstream, false);
}

TEST_CASE("passive standby: 200 seeds of random crashes, all precise on the default, Join and Union networks", "[sweeps]") {
  require_claim("", HaMode::passive, true);
  require_claim("join.toml", HaMode::passive, true);
  require_claim("union.toml", HaMode::passive, true);
}

TEST_CASE("active standby with determinants: 200 seeds of random crashes, all precise on the default, Join and Union networks", "[sweeps]") {
  require_claim("", HaMode::active, true);
  require_claim("join.toml", HaMode::active, true);
  require_claim("union.toml", HaMode::active, true);
}

TEST_CASE("hybrid standby: 200 seeds of random crashes and switches, all precise on the default, Join and Union networks", "[sweeps]") {
  const HaMode hybrid = ApproachCatalog::builtin().find("hybrid")->mode;
  require_claim("", hybrid, true, true);
  require_claim("join.toml", hybrid, true, true);
  require_claim("union.toml", hybrid, true, true);
}

TEST_CASE("amnesia: 200 seeds of random crashes lose output (gap), and the sweep reports it", "[sweeps]") {
  auto s = sweep("", HaMode::amnesia, false);
  CHECK(s.incomplete == 0);
  CHECK(s.gap > kSeeds / 2);
  CHECK(s.lost > 0);
}
