// Whole simulated runs with test cores: determinism per seed, the end of a run, the CPU cost
// model, samples, the time limit, fatal errors and the bound of a node's FIFO.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "sim/message_size.h"
#include "sim/simulator.h"
#include "sim/test_cores.h"

namespace hapair::simtest {
namespace {

void require_identical(const RunResult& a, const RunResult& b) {
  REQUIRE(a.deliveries.size() == b.deliveries.size());
  CHECK(a.deliveries == b.deliveries);
  CHECK(a.events == b.events);
  CHECK(a.counters == b.counters);
  REQUIRE(a.samples.size() == b.samples.size());
  for (std::size_t i = 0; i < a.samples.size(); ++i) {
    CHECK(a.samples[i].at_us == b.samples[i].at_us);
    CHECK(a.samples[i].node == b.samples[i].node);
    CHECK(a.samples[i].name == b.samples[i].name);
    CHECK(a.samples[i].value == b.samples[i].value);
  }
  CHECK(a.end_us == b.end_us);
  CHECK(a.completed == b.completed);
  CHECK(a.errors == b.errors);
}

std::shared_ptr<Plan> noisy_chain() {
  auto plan = make_chain_plan(6);
  plan->topology.sim.link_latency_ms = 0.2;
  plan->topology.sim.link_jitter_ms = 0.15;
  plan->topology.sim.duplication_ratio = 0.02;
  plan->topology.sim.reorder_ratio = 0.05;
  plan->topology.sim.bandwidth_bytes_per_s = 1e7;
  return plan;
}

RunResult run_noisy_chain(std::uint64_t seed) {
  SimOptions o;
  o.seed = seed;
  o.faults = {{FaultKind::pause, "n2", "", 0.004, 0.003}, {FaultKind::partition, "n4", "n3", 0.010, 0.001}};
  return run_simulation(noisy_chain(), o, chain_factory(ChainSpec{5000, 50, 200}));
}

TEST_CASE("the same seed twice gives identical run results", "[sim][determinism]") {
  const RunResult first = run_noisy_chain(77);
  const RunResult second = run_noisy_chain(77);
  REQUIRE(first.completed);
  // The partition cost some batches and duplication added some.
  CHECK(first.counters.at("n3").at("sim.dropped_partition") > 0);
  CHECK(first.counters.at("n0").at("sim.duplicated") > 0);
  CHECK(first.deliveries.size() > 4000);
  require_identical(first, second);
}

TEST_CASE("a different seed gives a different run", "[sim][determinism]") {
  const RunResult a = run_noisy_chain(77);
  const RunResult b = run_noisy_chain(78);
  CHECK(a.deliveries != b.deliveries);
  CHECK(a.plan->settings().seed == 77);
  CHECK(b.plan->settings().seed == 78);
}

TEST_CASE("a run ends as soon as every sink has finished and nothing is in flight", "[sim][run]") {
  auto plan = make_chain_plan(4);
  const RunResult r = run_simulation(plan, SimOptions{}, chain_factory(ChainSpec{1000, 100, 1000}));
  CHECK(r.completed);
  CHECK(r.errors.empty());
  CHECK(r.driver == "sim");
  REQUIRE(r.deliveries.size() == 1000);
  CHECK(r.end_us == r.deliveries.back().at_us);
  for (std::size_t i = 0; i < r.deliveries.size(); ++i) CHECK(r.deliveries[i].tuple.id == i + 1);
}

TEST_CASE("a node is busy for the cost of the messages and tuples it handles", "[sim][run][cpu]") {
  auto plan = make_chain_plan(3);
  plan->topology.sim = exact_network(0.1, 1e9);
  plan->topology.sim.cpu_us_per_message = 5.0;
  plan->topology.sim.cpu_us_per_tuple = 2.0;
  const RunResult r = run_simulation(plan, SimOptions{}, chain_factory(ChainSpec{100, 100, 1000}));
  REQUIRE(r.completed);
  REQUIRE(r.deliveries.size() == 100);

  Envelope batch;
  TupleBatch b;
  b.tuples.resize(100);
  batch.body = b;
  const TimeUs hop_us = static_cast<TimeUs>((sim::wire_bytes(batch) + 999) / 1000) + 100;
  const TimeUs work_us = 5 + 2 * 100;
  // n0 works on the batch from 0, n1 gets it one hop later and works, n2 likewise; the client
  // gets the tuples when n2's work is done.
  CHECK(r.deliveries.front().at_us == work_us + hop_us + work_us + hop_us + work_us);
  CHECK(r.counters.at("n0").at("cpu_us") == work_us);
  CHECK(r.counters.at("n1").at("cpu_us") == 5 + work_us);
  CHECK(r.counters.at("n2").at("cpu_us") == 5 + work_us);
}

TEST_CASE("node capacity scales the cost of work", "[sim][run][cpu]") {
  auto plan = make_chain_plan(3);
  plan->topology.sim.cpu_us_per_message = 5.0;
  plan->topology.sim.cpu_us_per_tuple = 2.0;
  plan->topology.sim.node_capacity = 2.0;
  const RunResult r = run_simulation(plan, SimOptions{}, chain_factory(ChainSpec{100, 100, 1000}));
  REQUIRE(r.completed);
  CHECK(r.counters.at("n0").at("cpu_us") == 103);  // (5 + 2 * 100) / 2, rounded
}

TEST_CASE("a run that cannot finish stops at the time limit and says how to reproduce it", "[sim][run]") {
  auto plan = make_chain_plan(3);
  std::vector<std::string> lines;
  SimOptions o;
  o.faults = {{FaultKind::crash, "n1", "", 0.002, 0.0}};
  o.max_virtual_time_s = 0.5;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  const RunResult r = run_simulation(plan, o, chain_factory(ChainSpec{1000, 100, 1000}));
  CHECK_FALSE(r.completed);
  CHECK(r.end_us == 500'000);
  REQUIRE(r.errors.size() == 1);
  CHECK_THAT(r.errors[0], Catch::Contains("time limit") && Catch::Contains("1 of 1 sinks"));
  CHECK(r.stall == r.errors[0]);  // the run stopped; nothing else failed
  REQUIRE(lines.size() >= 2);
  CHECK(lines.front() == "sim: seed 1");
  // The faults (and the duration, which differs from the built-in default) are part of the run.
  CHECK(lines.back() == "reproduce with: hapair run --driver sim --seed 1 --duration-s 1 --fail n1@0.002");
}

TEST_CASE("queue gauges are sampled every 100 ms of virtual time", "[sim][run][samples]") {
  auto plan = make_chain_plan(3);
  const RunResult r = run_simulation(plan, SimOptions{}, chain_factory(ChainSpec{1000, 10, 4000}));
  REQUIRE(r.completed);
  REQUIRE(r.end_us > 350'000);
  std::set<TimeUs> times;
  for (const auto& s : r.samples) {
    CHECK(s.name == "retained_tuples");
    CHECK(s.at_us % 100'000 == 0);
    times.insert(s.at_us);
  }
  CHECK(times == std::set<TimeUs>{100'000, 200'000, 300'000});
  CHECK(r.samples.size() == 3 * 3);
}

TEST_CASE("progress lines follow the seed line at the requested interval of virtual time", "[sim][run]") {
  auto plan = make_chain_plan(3);
  plan->topology.source_file = "nets/chain.toml";
  std::vector<std::string> lines;
  SimOptions o;
  o.seed = 4;
  o.progress_interval_s = 0.2;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  const RunResult r = run_simulation(plan, o, chain_factory(ChainSpec{1000, 10, 4000}));
  REQUIRE(r.completed);
  REQUIRE(lines.size() == 2);  // the run lasts about 0.4 s: progress at 0.2 s only
  CHECK(lines[0] == "sim: seed 4");
  CHECK_THAT(lines[1], Catch::StartsWith("sim: t=0.2 s deliveries="));
  CHECK_THAT(reproduce_command(*r.plan, 4), Catch::StartsWith("hapair run --driver sim --seed 4 --topology nets/chain.toml "));
}

TEST_CASE("a fatal error from a core stops the run and is reported", "[sim][run]") {
  auto plan = make_test_plan({{"a", FragmentKind::operators}, {"sink", FragmentKind::sink}});
  plan->topology.sim = exact_network(0.1, 1e9);
  Script a;
  a.tick_every_us = 1000;
  a.fatal_at_us = 5000;
  auto journal = std::make_shared<Journal>();
  const RunResult r = run_simulation(plan, SimOptions{}, script_factory(journal, {{"a", a}}));
  CHECK_FALSE(r.completed);
  CHECK(r.end_us == 5000);
  REQUIRE(r.errors.size() == 1);
  CHECK_THAT(r.errors[0], Catch::Contains("node 'a'") && Catch::Contains("scripted fatal error"));
}

TEST_CASE("a node FIFO beyond its bound drops the event and reports an error", "[sim][run]") {
  auto plan = make_test_plan({{"a", FragmentKind::operators}, {"b", FragmentKind::operators}});
  plan->topology.sim = exact_network(0.1, 1e9);
  plan->topology.sim.cpu_us_per_message = 1000.0;  // b is far slower than what arrives
  Script a;
  for (std::uint64_t i = 1; i <= 50; ++i) a.sends.push_back({0, 1, Heartbeat{i}});
  SimOptions o;
  o.node_fifo_events_max = 10;
  auto journal = std::make_shared<Journal>();
  Simulator sim(plan, o, script_factory(journal, {{"a", a}}));
  sim.run_until(1'000'000);
  const RunResult r = sim.result();
  REQUIRE(r.errors.size() == 1);
  CHECK_THAT(r.errors[0], Catch::Contains("node 'b'") && Catch::Contains("FIFO overflow"));
  const std::int64_t overflow = r.counters.at("b").at("sim.fifo_overflow");
  CHECK(overflow > 0);
  CHECK(static_cast<std::int64_t>(journal->received("b").size()) + overflow == 50);
  CHECK(r.counters.at("b").at("sim.fifo_events_max_seen") == 10);
}

TEST_CASE("a chain of a hundred nodes carries every tuple to the sink", "[sim][run][scale]") {
  auto plan = make_chain_plan(100);
  const RunResult r = run_simulation(plan, SimOptions{}, chain_factory(ChainSpec{20'000, 100, 500}));
  CHECK(r.completed);
  CHECK(r.deliveries.size() == 20'000);
  CHECK(r.counters.at("n50").at("tuples_processed") == 20'000);
}

TEST_CASE("the reproduce command names every setting hapair run can override and every fault", "[sim][run][reproduce]") {
  // The built-in default network with overrides: only what differs from the default is written.
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  for (FragmentSpec& f : t.fragments)
    if (f.kind == FragmentKind::source) f.source.rate_tps = 500.0;
  t.settings.duration_s = 2.5;
  const std::vector<FaultSpec> faults = {{FaultKind::crash, "aggregate", "", 1.25, 0.0},
                                         {FaultKind::pause, "filter", "", 0.5, 0.1}};
  CHECK(reproduce_command(make_plan(t), 7, faults) ==
        "hapair run --driver sim --seed 7 --ha passive --duration-s 2.5 --rate-tps 500 --fail aggregate@1.25 "
        "--pause filter@0.5+0.1");
  CHECK(reproduce_command(make_plan(default_topology()), 1) == "hapair run --driver sim --seed 1");

  // From a file: the file's values are not known here, so every overridable setting is written;
  // --ha only when no fragment has its own mode (an --ha override would clear them).
  Topology from_file = default_topology();
  from_file.source_file = "nets/mine.toml";
  CHECK(reproduce_command(make_plan(from_file), 3) ==
        "hapair run --driver sim --seed 3 --topology nets/mine.toml --ha none --duration-s 6 --rate-tps 2000 "
        "--operator-cost-us 0");
  for (FragmentSpec& f : from_file.fragments)
    if (f.name == "aggregate") f.ha = HaMode::active;
  CHECK(reproduce_command(make_plan(from_file), 3).find("--ha") == std::string::npos);
}

}  // namespace
}  // namespace hapair::simtest
