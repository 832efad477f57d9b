// The simulator hosting the production cores (make_node_core) on the built-in default network:
// runs complete, are identical for the same seed, and a crashed primary is taken over.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "protocols/codec.h"
#include "protocols/plan.h"
#include "sim/scenario.h"
#include "sim/sim_bench.h"
#include "sim/simulator.h"

namespace hapair {
namespace {

std::shared_ptr<const Plan> default_plan(HaMode mode, double duration_s) {
  Topology t = default_topology();
  t.settings.ha = mode;
  t.settings.duration_s = duration_s;
  t.sim.link_jitter_ms = 0.05;
  return std::make_shared<const Plan>(make_plan(t));
}

// The sink output as a sorted multiset of (identity, value), as the semantics checker compares it.
std::vector<std::pair<std::uint64_t, double>> output_multiset(const RunResult& r) {
  std::vector<std::pair<std::uint64_t, double>> out;
  for (const auto& d : r.deliveries) out.emplace_back(d.tuple.lineage, d.tuple.value);
  std::sort(out.begin(), out.end());
  return out;
}

bool has_event(const RunResult& r, const std::string& event) {
  return std::any_of(r.events.begin(), r.events.end(), [&](const TraceEvent& e) { return to_string(e.kind) == event; });
}

TEST_CASE("the default network completes in the simulator under every HA mode, with the same output", "[sim][real]") {
  const RunResult reference = run_simulation(default_plan(HaMode::none, 1.0), SimOptions{});
  REQUIRE(reference.completed);
  REQUIRE(reference.errors.empty());
  REQUIRE_FALSE(reference.deliveries.empty());
  for (HaMode mode : {HaMode::amnesia, HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO("ha " << to_string(mode));
    const RunResult r = run_simulation(default_plan(mode, 1.0), SimOptions{});
    CHECK(r.completed);
    CHECK(r.errors.empty());
    CHECK(output_multiset(r) == output_multiset(reference));
    CHECK(r.counters.at("source").at("messages_sent.tuples") > 0);
    CHECK(r.counters.at("aggregate").at("cpu_us") > 0);
    CHECK_FALSE(r.samples.empty());
  }
}

TEST_CASE("the simulator charges operator_cost_us_per_tuple for every tuple an operator fragment processes", "[sim][real]") {
  // Whole microseconds everywhere, so every node's CPU time is exact: each processed or
  // emitted tuple costs cpu_us_per_tuple, each tuple an operator takes costs the operator cost
  // on top, and the source and the sink (no operators) are not charged it.
  auto run = [](double operator_cost_us) {
    Topology t = default_topology();
    t.settings.duration_s = 0.5;
    t.settings.operator_cost_us_per_tuple = operator_cost_us;
    t.sim.cpu_us_per_message = 0;
    t.sim.cpu_us_per_tuple = 2;
    return run_simulation(std::make_shared<const Plan>(make_plan(t)), SimOptions{});
  };
  const RunResult cheap = run(0);
  const RunResult costly = run(40);
  REQUIRE(cheap.completed);
  REQUIRE(costly.completed);
  CHECK(output_multiset(costly) == output_multiset(cheap));
  for (const char* op : {"filter", "aggregate"}) {
    INFO(op);
    const std::int64_t processed = costly.counters.at(op).at("tuples_processed");
    REQUIRE(processed > 0);
    CHECK(processed == cheap.counters.at(op).at("tuples_processed"));
    CHECK(costly.counters.at(op).at("cpu_us") - cheap.counters.at(op).at("cpu_us") == 40 * processed);
  }
  for (const char* edge : {"source", "sink"}) {
    INFO(edge);
    CHECK(costly.counters.at(edge).at("cpu_us") == cheap.counters.at(edge).at("cpu_us"));
  }
}

TEST_CASE("the same seed twice gives identical results with the real cores and a crash", "[sim][real][determinism]") {
  auto once = [] {
    SimOptions o;
    o.seed = 31;
    o.faults = {{FaultKind::crash, "aggregate", "", 0.5, 0.0}};
    return run_simulation(default_plan(HaMode::passive, 1.0), o);
  };
  const RunResult a = once();
  const RunResult b = once();
  REQUIRE(a.completed);
  CHECK(has_event(a, "takeover"));
  CHECK(a.deliveries == b.deliveries);
  CHECK(a.events == b.events);
  CHECK(a.counters == b.counters);
  CHECK(a.end_us == b.end_us);
  REQUIRE(a.samples.size() == b.samples.size());
  for (std::size_t i = 0; i < a.samples.size(); ++i)
    CHECK(std::tie(a.samples[i].at_us, a.samples[i].node, a.samples[i].name, a.samples[i].value) ==
          std::tie(b.samples[i].at_us, b.samples[i].node, b.samples[i].name, b.samples[i].value));
}

TEST_CASE("swarm cases on the default network detect the crash, take over and complete", "[sim][real][swarm]") {
  SwarmOptions o;
  o.ha_modes = {HaMode::amnesia, HaMode::upstream, HaMode::passive, HaMode::active};
  o.duration_s = 1.5;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const SwarmCase c = swarm_case(seed, o);
    INFO(c.description);
    Scenario sc(c.topology);
    for (const auto& f : c.faults) sc.fault(f);
    const RunResult& r = sc.run_until_quiet();
    CHECK(r.completed);
    CHECK(r.errors.empty());
    CHECK(has_event(r, "failure"));
    CHECK(has_event(r, "detection"));
    CHECK(has_event(r, "takeover"));
    CHECK(sc.sent_count("takeover") > 0);
  }
}

TEST_CASE("the scale bench chain carries exactly the requested tuples through every filter", "[sim][real][bench]") {
  SimBenchOptions o;
  o.nodes = 6;
  o.tuples = 3000;
  o.rate_tps = 20'000.0;
  const Topology t = sim_bench_topology(o);
  CHECK(t.fragments.size() == 6);
  const SimBenchReport r = run_sim_scale_bench(o);
  INFO(format_sim_bench_report(r));
  CHECK(r.completed);
  CHECK(r.errors.empty());
  CHECK(r.tuples == 3000);
  CHECK(r.tuples_delivered == 3000);
  CHECK(r.simulated_s >= 0.15);
  CHECK(r.messages > 0);
  CHECK(r.wall_s > 0.0);
}

// The digests were printed by `hapair bench --sim --nodes 10 --tuples 100000` at 9128557, before
// the simulator's speed-up (operators taking whole input runs, docs/PERFORMANCE.md): a change that
// alters them changed the simulation, not only its speed, and must say why. The counters digest
// changed once since, with the deliveries, events and messages unchanged: the global
// checkpoints' five message kinds (docs/CHECKPOINT.md) add bytes_sent.* and messages_sent.*
// counters, at 0, to every node (0x28ec5a33ac0c8519 before).
TEST_CASE("the scale bench chain runs the same simulation as before the speed-up, by its digests", "[sim][real][bench]") {
  SimBenchOptions o;
  o.nodes = 10;
  o.tuples = 100'000;
  const SimBenchReport r = run_sim_scale_bench(o);
  INFO(format_sim_bench_report(r));
  REQUIRE(r.completed);
  CHECK(r.tuples_delivered == 100'000);
  CHECK(r.messages == 9'900);
  CHECK(r.deliveries_digest == 0x7caad4bf94d8e4cdULL);
  CHECK(r.counters_digest == 0x4e7fb149d232816eULL);
  CHECK(r.events_digest == 0xed422ad84b94f828ULL);
  CHECK(r.events == 11);
}

TEST_CASE("every message of simulated runs is charged the bytes encode would write", "[sim][real]") {
  // Upstream backup with a crash (level-1 acks with forwarded restart points, restart points),
  // passive standby (checkpoints), active standby on a Union (determinants).
  for (const HaMode mode : {HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO("ha " << to_string(mode));
    SimOptions o;
    o.faults = {FaultSpec{FaultKind::crash, "aggregate", "", 0.5, 0.0}};
    std::size_t checked = 0, wrong = 0;
    o.on_send = [&](const SentMessage& m) {
      ++checked;
      if (m.bytes != encode(*m.envelope).size()) ++wrong;
    };
    const RunResult r = run_simulation(default_plan(mode, 1.0), o);
    REQUIRE(r.completed);
    CHECK(checked > 1000);
    CHECK(wrong == 0);
  }
}

}  // namespace
}  // namespace hapair
