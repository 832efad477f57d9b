// Passive standby checkpoints with large state: delta checkpoints are smaller than full ones, and
// a crash in the middle of a checkpoint transfer is still recovered precisely (the standby never
// installs a checkpoint it did not receive whole).
#include <catch2/catch.hpp>

#include "judge/checker.h"
#include "judge/reference.h"
#include "sim/simulator.h"

using namespace hapair;

namespace {

// A keyed aggregate with a large state: many keys, long windows.
Topology large_state(CheckpointMode mode) {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  t.settings.duration_s = 3.0;
  t.settings.checkpoint_mode = mode;
  t.settings.checkpoint_interval_ms = 100;
  t.fragments[0].source.rate_tps = 5000;
  t.fragments[0].source.key_count = 20000;
  auto& agg = t.fragments[2].operators[0];
  agg.window_ms = 2000;
  agg.slide_ms = 1000;
  return t;
}

std::int64_t counter(const RunResult& r, const std::string& node, const std::string& name) {
  auto n = r.counters.find(node);
  if (n == r.counters.end()) return 0;
  auto c = n->second.find(name);
  return c == n->second.end() ? 0 : c->second;
}

}  // namespace

TEST_CASE("delta checkpoints of a large keyed aggregate are much smaller than full ones", "[scenarios]") {
  auto full_plan = std::make_shared<const Plan>(make_plan(large_state(CheckpointMode::full)));
  auto delta_plan = std::make_shared<const Plan>(make_plan(large_state(CheckpointMode::delta)));
  SimOptions o;
  RunResult full = run_simulation(full_plan, o);
  RunResult delta = run_simulation(delta_plan, o);
  REQUIRE(full.completed);
  REQUIRE(delta.completed);
  const auto full_bytes = counter(full, "aggregate", "checkpoint_full_payload_bytes");
  const auto full_count = counter(full, "aggregate", "checkpoints_full");
  const auto delta_bytes = counter(delta, "aggregate", "checkpoint_delta_payload_bytes");
  const auto delta_count = counter(delta, "aggregate", "checkpoints_delta");
  INFO("full: " << full_count << " checkpoints, " << full_bytes << " bytes; delta: " << delta_count << " deltas, "
                << delta_bytes << " bytes");
  REQUIRE(full_count > 10);
  REQUIRE(delta_count > 10);
  const double full_avg = static_cast<double>(full_bytes) / static_cast<double>(full_count);
  const double delta_avg = static_cast<double>(delta_bytes) / static_cast<double>(delta_count);
  CHECK(delta_avg * 3 < full_avg);
  // Both still recover nothing-lost output when nothing fails.
  auto ref = reference_output(*full_plan);
  CHECK(check_semantics(ref, full.deliveries, {}).verdict == "precise");
  CHECK(check_semantics(ref, delta.deliveries, {}).verdict == "precise");
}

TEST_CASE("a primary killed in the middle of a checkpoint transfer is recovered precisely from the previous checkpoint", "[scenarios]") {
  for (CheckpointMode mode : {CheckpointMode::full, CheckpointMode::delta}) {
    INFO("mode=" << to_string(mode));
    Topology t = large_state(mode);
    // A slow link: a checkpoint of a few hundred kB takes a good part of a second to transfer.
    t.sim.bandwidth_bytes_per_s = 1e6;
    t.settings.checkpoint_chunk_bytes = 16 * 1024;
    auto plan = std::make_shared<const Plan>(make_plan(t));
    // Find a moment when a checkpoint is on the wire: run once, take the middle of a transfer.
    SimOptions probe;
    RunResult free_run = run_simulation(plan, probe);
    TimeUs sent = kNever;
    std::int64_t sent_id = 0;
    for (const auto& e : free_run.events)
      if (e.kind == TraceKind::checkpoint && e.at_us > 1'200'000 && plan->nodes[e.node].name == "aggregate") {
        sent = e.at_us;
        sent_id = e.get(TraceKey::checkpoint).value_or(0);
        break;
      }
    REQUIRE(sent != kNever);
    FaultSpec crash{FaultKind::crash, "aggregate", "", static_cast<double>(sent + 20'000) / 1e6, 0};
    SimOptions o;
    o.faults = {crash};
    RunResult r = run_simulation(plan, o);
    REQUIRE(r.completed);
    // The crash really hit a transfer: the standby took over from an older checkpoint than the
    // one on the wire when the primary died.
    std::int64_t installed_id = 0;
    for (const auto& e : r.events)
      if (e.kind == TraceKind::takeover) installed_id = e.get(TraceKey::checkpoint).value_or(0);
    INFO("on the wire: " << sent_id << ", taken over from: " << installed_id);
    REQUIRE(installed_id > 0);
    CHECK(installed_id < sent_id);
    auto report = check_semantics(reference_output(*plan), r.deliveries, {});
    INFO("verdict " << report.verdict << " lost " << report.lost << " dups " << report.duplicates);
    CHECK(report.verdict == "precise");
  }
}
