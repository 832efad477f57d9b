// The scripted scenario API and swarm mode.
#include <catch2/catch.hpp>

#include <set>

#include "protocols/plan.h"
#include "sim/faults.h"
#include "sim/scenario.h"
#include "sim/test_cores.h"

namespace hapair::simtest {
namespace {

TEST_CASE("a scenario's kind drop, sent counts and observers report what the cores sent", "[sim][scenario]") {
  auto journal = std::make_shared<Journal>();
  Script a;
  a.sends.push_back({0, 1, Heartbeat{1}});
  a.sends.push_back({0, 1, CheckpointAck{1}});
  a.sends.push_back({0, 2, CheckpointAck{2}});
  a.sends.push_back({3000, 1, CheckpointAck{3}});
  Scenario sc(three_nodes(exact_network(0.1, 1e9)), script_factory(journal, {{"a", a}}));
  std::vector<TimeUs> observed_us;
  sc.drop_kind("checkpoint_ack", "a", kAnyNode, 0.0, 0.001).observe([&](const SentMessage& m) { observed_us.push_back(m.at_us); });
  sc.run_until(0.010);
  CHECK(sc.sent_count("checkpoint_ack") == 3);
  CHECK(sc.sent_count("checkpoint_ack", "a", "b") == 2);
  CHECK(sc.sent_count("heartbeat", kAnyNode, "b") == 1);
  CHECK(sc.sent_count("tuples") == 0);
  CHECK(observed_us == std::vector<TimeUs>{0, 0, 0, 3000});
  CHECK(sc.metrics("a").at("sim.dropped_rule") == 2);
  REQUIRE(journal->received("b").size() == 2);
  CHECK(journal->received("c").empty());
}

TEST_CASE("a scenario runs on from where run_until stopped", "[sim][scenario]") {
  auto journal = std::make_shared<Journal>();
  Script a;
  a.heartbeat_every_us = 1000;
  a.heartbeat_to = 1;
  Scenario sc(three_nodes(exact_network(0.1, 1e9)), script_factory(journal, {{"a", a}}));
  sc.crash("b", 0.0105).restart("b", 0.0155);
  CHECK(sc.run_until(0.010).end_us == 10'000);
  CHECK(sc.metrics("b").at("received") == 10);
  const RunResult& later = sc.run_until(0.020);
  CHECK(later.end_us == 20'000);
  CHECK(journal->cores_made.at("b") == 2);
  // Heartbeats sent at 16..19 ms reached the restarted core.
  CHECK(sc.metrics("b").at("received") == 4);
  CHECK(sc.metrics("b").at("sim.dropped_while_down") == 5);
}

TEST_CASE("a scenario over a chain runs until quiet and completes", "[sim][scenario]") {
  Scenario sc(make_chain_plan(5), chain_factory(ChainSpec{2000, 100, 500}));
  std::vector<std::string> lines;
  sc.seed(9).log([&](const std::string& l) { lines.push_back(l); });
  const RunResult& r = sc.run_until_quiet();
  CHECK(r.completed);
  CHECK(r.deliveries.size() == 2000);
  CHECK(sc.sent_count("tuples", "n3", "n4") == 20);
  CHECK(sc.effective_seed() == 9);
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.front() == "sim: seed 9");
}

bool same_faults(const std::vector<FaultSpec>& a, const std::vector<FaultSpec>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].node != b[i].node || a[i].peer != b[i].peer || a[i].at_s != b[i].at_s ||
        a[i].duration_s != b[i].duration_s)
      return false;
  return true;
}

TEST_CASE("swarm mode picks the same legal case for the same seed", "[sim][swarm]") {
  SwarmOptions o;
  o.duration_s = 2.0;
  std::set<std::string> descriptions;
  std::set<std::string> crashed;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    const SwarmCase c = swarm_case(seed, o);
    const SwarmCase again = swarm_case(seed, o);
    CHECK(c.topology == again.topology);
    CHECK(same_faults(c.faults, again.faults));
    CHECK(c.description == again.description);
    descriptions.insert(c.description);

    INFO(c.description);
    CHECK(validate(c.topology).empty());
    CHECK(c.topology.settings.seed == seed);
    CHECK(c.topology.sim.loss_ratio == 0.0);
    CHECK(c.topology.sim.duplication_ratio == 0.0);
    CHECK(c.topology.sim.reorder_ratio == 0.0);
    REQUIRE(c.faults.size() == 1);
    CHECK(c.faults[0].kind == FaultKind::crash);
    CHECK(c.faults[0].at_s >= 0.4);
    CHECK(c.faults[0].at_s <= 1.6);
    crashed.insert(c.faults[0].node);
    const Plan plan = make_plan(c.topology);
    CHECK(validate_faults(plan, c.faults).empty());
  }
  CHECK(descriptions.size() == 200);
  // Only operator-fragment primaries crash: never the source or the sink.
  CHECK(crashed == std::set<std::string>{"aggregate", "filter"});
}

TEST_CASE("swarm mode picks the HA mode from the given list and can skip the crash", "[sim][swarm]") {
  SwarmOptions o;
  o.ha_modes = {HaMode::passive, HaMode::upstream};
  o.crash = false;
  o.loss_ratio_max = 0.01;
  std::set<HaMode> modes;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const SwarmCase c = swarm_case(seed, o);
    modes.insert(c.topology.settings.ha);
    CHECK(c.faults.empty());
    CHECK(c.topology.sim.loss_ratio <= 0.01);
    for (const auto& f : c.topology.fragments) CHECK_FALSE(f.ha.has_value());
  }
  CHECK(modes == std::set<HaMode>{HaMode::passive, HaMode::upstream});
}

}  // namespace
}  // namespace hapair::simtest
