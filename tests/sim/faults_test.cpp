// Faults in the simulator: crash (the paper's fail-stop server), pause (SIGSTOP/SIGCONT),
// restart, and the validation of a fault schedule.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/faults.h"
#include "sim/message_size.h"
#include "sim/simulator.h"
#include "sim/test_cores.h"

namespace hapair::simtest {
namespace {

ScriptedRun run(std::shared_ptr<Plan> plan, std::map<std::string, Script> scripts, std::vector<FaultSpec> faults,
               TimeUs until_us) {
  SimOptions o;
  o.faults = std::move(faults);
  return run_scripted(std::move(plan), std::move(scripts), std::move(o), until_us);
}

TimeUs wire_us_at_1_byte_per_us(Message body) {
  Envelope e;
  e.header.sender = 0;
  e.body = std::move(body);
  return static_cast<TimeUs>(sim::wire_bytes(e));
}

TEST_CASE("a crash drops what the node had not yet put on the wire and records the failure", "[sim][faults][crash]") {
  // 1 byte/us: the 1 MB checkpoint is on the wire for about a second, the heartbeat queues behind it.
  auto plan = three_nodes(exact_network(0.1, 1e6));
  Script a;
  a.sends.push_back({0, 1, checkpoint_of_bytes(1'000'000)});
  a.sends.push_back({0, 1, Heartbeat{1}});
  auto r = run(plan, {{"a", a}}, {FaultSpec{FaultKind::crash, "a", "", 0.5, 0.0}}, 3'000'000);
  auto at_b = r.journal->received("b");
  REQUIRE(at_b.size() == 1);
  CHECK(std::holds_alternative<Checkpoint>(at_b[0].envelope->body));
  CHECK(at_b[0].now_us == wire_us_at_1_byte_per_us(checkpoint_of_bytes(1'000'000)) + 100);
  CHECK(r.result.counters.at("a").at("sim.dropped_unsent") == 1);
  const auto& ev = r.result.events;
  auto failure = std::find_if(ev.begin(), ev.end(), [](const TraceEvent& e) { return e.kind == TraceKind::failure; });
  REQUIRE(failure != ev.end());
  CHECK(failure->at_us == 500'000);
  CHECK(failure->node == 0);
  CHECK(failure->enum_of<FaultKind>(TraceKey::fault) == FaultKind::crash);
  CHECK(failure->detail_count == 1);
}

TEST_CASE("a crashed node handles nothing and messages to it are dropped", "[sim][faults][crash]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  Script c;
  c.sends.push_back({5000, 0, Heartbeat{1}});
  c.sends.push_back({15000, 0, Heartbeat{2}});
  Script a;
  a.tick_every_us = 1000;
  auto r = run(plan, {{"a", a}, {"c", c}}, {FaultSpec{FaultKind::crash, "a", "", 0.010, 0.0}}, 30'000);
  const auto& seen = r.journal->seen.at("a");
  CHECK(std::all_of(seen.begin(), seen.end(), [](const Seen& s) { return s.now_us <= 10'000; }));
  auto got = r.journal->received("a");
  REQUIRE(got.size() == 1);
  CHECK(std::get<Heartbeat>(got[0].envelope->body).seq == 1);
  CHECK(r.result.counters.at("a").at("sim.dropped_while_down") == 1);
  // The crashed node's last counters are kept.
  CHECK(r.result.counters.at("a").at("received") == 1);
}

TEST_CASE("a paused node handles nothing during the pause, then catches up at the real time", "[sim][faults][pause]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  Script a;
  a.sends.push_back({15'000, 1, Heartbeat{1}});
  Script b;
  b.tick_every_us = 1000;
  auto r = run(plan, {{"a", a}, {"b", b}}, {FaultSpec{FaultKind::pause, "b", "", 0.010, 0.020}}, 40'000);
  const auto& seen = r.journal->seen.at("b");
  CHECK(std::none_of(seen.begin(), seen.end(), [](const Seen& s) { return s.now_us > 10'000 && s.now_us < 30'000; }));
  auto got = r.journal->received("b");
  REQUIRE(got.size() == 1);
  CHECK(got[0].now_us == 30'000);
  // Ticks that came due during the pause are handled once, at the resume, not once each.
  const auto ticks_at_resume = std::count_if(seen.begin(), seen.end(), [](const Seen& s) {
    return s.kind == SeenKind::tick && s.now_us == 30'000;
  });
  CHECK(ticks_at_resume == 1);
  // It carries on ticking afterwards.
  CHECK(std::any_of(seen.begin(), seen.end(), [](const Seen& s) { return s.kind == SeenKind::tick && s.now_us == 31'000; }));
  const auto& ev = r.result.events;
  CHECK(std::any_of(ev.begin(), ev.end(), [](const TraceEvent& e) {
    return e.kind == TraceKind::failure && e.enum_of<FaultKind>(TraceKey::fault) == FaultKind::pause &&
           e.get(TraceKey::duration_us) == 20'000 && e.at_us == 10'000;
  }));
  CHECK(std::any_of(ev.begin(), ev.end(), [](const TraceEvent& e) { return e.kind == TraceKind::resume && e.at_us == 30'000; }));
}

TEST_CASE("a pause stretches the computation in progress by the time it was stopped", "[sim][faults][pause][cpu]") {
  // b takes 1 ms per message and forwards what it gets to c.
  SimSettings s = exact_network(0.1, 1e9);
  s.cpu_us_per_message = 1000.0;
  auto plan = three_nodes(s);
  Script a;
  a.sends.push_back({10'000, 1, Heartbeat{1}});
  Script b;
  b.forward_to = 2;
  const TimeUs tiny_us = (wire_us_at_1_byte_per_us(Heartbeat{1}) + 999) / 1000;  // at 1 GB/s
  // a's own handle() calls cost 1 ms too: the heartbeat leaves a at 11 ms and reaches b at
  // 11.1 ms + tx; b's forward would leave at 12.1 ms + tx without a pause.
  const TimeUs b_gets_us = 11'000 + tiny_us + 100;

  SECTION("the pause ends before the computation would have") {
    auto r = run(plan, {{"a", a}, {"b", b}}, {FaultSpec{FaultKind::pause, "b", "", (b_gets_us + 200) / 1e6, 300 / 1e6}}, 50'000);
    auto at_c = r.journal->received("c");
    REQUIRE(at_c.size() == 1);
    CHECK(at_c[0].now_us == b_gets_us + 1000 + 300 + tiny_us + 100);
  }
  SECTION("the computation would have ended during the pause") {
    auto r = run(plan, {{"a", a}, {"b", b}}, {FaultSpec{FaultKind::pause, "b", "", (b_gets_us + 500) / 1e6, 2000 / 1e6}}, 50'000);
    auto at_c = r.journal->received("c");
    REQUIRE(at_c.size() == 1);
    CHECK(at_c[0].now_us == b_gets_us + 1000 + 2000 + tiny_us + 100);
  }
}

TEST_CASE("a restart gives the crashed node a fresh core that starts at the restart time", "[sim][faults][restart]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  Script a;
  a.heartbeat_every_us = 1000;
  a.heartbeat_to = 1;
  auto r = run(plan, {{"a", a}},
               {FaultSpec{FaultKind::crash, "b", "", 0.010, 0.0}, FaultSpec{FaultKind::restart, "b", "", 0.020, 0.0}}, 30'000);
  CHECK(r.journal->cores_made.at("b") == 2);
  const auto& seen = r.journal->seen.at("b");
  auto first_of_second = std::find_if(seen.begin(), seen.end(), [](const Seen& s) { return s.incarnation == 1; });
  REQUIRE(first_of_second != seen.end());
  CHECK(first_of_second->kind == SeenKind::start);
  CHECK(first_of_second->now_us == 20'000);
  CHECK(std::none_of(seen.begin(), seen.end(), [](const Seen& s) { return s.now_us > 10'000 && s.now_us < 20'000; }));
  // The fresh core counts from zero: it got the heartbeats sent at 20..29 ms only.
  CHECK(r.result.counters.at("b").at("received") == 10);
  CHECK(r.result.counters.at("b").at("sim.incarnations") == 2);
  CHECK(r.result.counters.at("b").at("sim.dropped_while_down") == 10);
  const auto& ev = r.result.events;
  CHECK(std::any_of(ev.begin(), ev.end(), [](const TraceEvent& e) { return e.kind == TraceKind::restart && e.at_us == 20'000 && e.node == 1; }));
}

TEST_CASE("validate_faults lists every bad fault with what is wrong", "[sim][faults][validate]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  const std::vector<FaultSpec> faults = {
      {FaultKind::crash, "nosuch", "", 1.0, 0.0},        // 1 unknown node
      {FaultKind::crash, "a", "", -1.0, 0.0},            // 2 negative time
      {FaultKind::partition, "b", "b", 1.0, 0.5},        // 3 partition with itself
      {FaultKind::restart, "c", "", 2.0, 0.0},           // 4 restart of a running node
      {FaultKind::partition, "a", "ghost", 1.0, 0.5},    // 5 unknown peer
      {FaultKind::pause, "b", "", 1.0, -0.5},            // 6 negative duration
      {FaultKind::crash, "b", "", 3.0, 0.0},             // fine
      {FaultKind::restart, "b", "", 4.0, 0.0},           // fine: b crashed at 3 s
      {FaultKind::restart, "b", "", 5.0, 0.0},           // 9 restart again: not crashed any more
      {FaultKind::pause, "c", "", 1.0, 1.0},             // fine
      {FaultKind::pause, "c", "", 1.5, 1.0},             // 11 overlaps the pause before
  };
  const auto problems = validate_faults(*plan, faults);
  REQUIRE(problems.size() == 8);
  CHECK_THAT(problems[0], Catch::Contains("fault 1") && Catch::Contains("unknown node 'nosuch'"));
  CHECK_THAT(problems[1], Catch::Contains("fault 2") && Catch::Contains("negative time"));
  CHECK_THAT(problems[2], Catch::Contains("fault 3") && Catch::Contains("partitioned from itself"));
  CHECK_THAT(problems[3], Catch::Contains("fault 5") && Catch::Contains("unknown peer node 'ghost'"));
  CHECK_THAT(problems[4], Catch::Contains("fault 6") && Catch::Contains("duration must be positive"));
  // The time-ordered replay reports in time order.
  CHECK_THAT(problems[5], Catch::Contains("fault 11") && Catch::Contains("still paused"));
  CHECK_THAT(problems[6], Catch::Contains("fault 4") && Catch::Contains("not crashed"));
  CHECK_THAT(problems[7], Catch::Contains("fault 9") && Catch::Contains("not crashed"));
}

TEST_CASE("validate_faults accepts a legal schedule", "[sim][faults][validate]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  const std::vector<FaultSpec> faults = {{FaultKind::crash, "a", "", 1.0, 0.0},
                                         {FaultKind::restart, "a", "", 2.0, 0.0},
                                         {FaultKind::crash, "a", "", 3.0, 0.0},
                                         {FaultKind::partition, "b", "c", 0.5, 1.0},
                                         {FaultKind::partition, "c", "b", 1.0, 1.0},
                                         {FaultKind::pause, "b", "", 0.0, 1.0},
                                         {FaultKind::pause, "b", "", 1.0, 1.0}};
  CHECK(validate_faults(*plan, faults).empty());
}

TEST_CASE("run_simulation refuses a bad fault schedule without running", "[sim][faults][validate]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  auto journal = std::make_shared<Journal>();
  SimOptions o;
  o.faults = {{FaultKind::restart, "a", "", 1.0, 0.0}};
  const RunResult r = run_simulation(plan, o, script_factory(journal, {}));
  REQUIRE(r.errors.size() == 1);
  CHECK_THAT(r.errors[0], Catch::Contains("not crashed"));
  CHECK_FALSE(r.completed);
  CHECK(r.driver == "sim");
  CHECK(journal->cores_made.empty());
}

TEST_CASE("validate_faults leaves names and start times to a caller that checks them itself", "[sim][faults][validate]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  const std::vector<FaultSpec> faults = {
      {FaultKind::crash, "nosuch", "", 1.0, 0.0},      // unknown node: the caller's
      {FaultKind::crash, "a", "", -1.0, 0.0},          // negative time: the caller's
      {FaultKind::partition, "a", "ghost", 1.0, 0.5},  // unknown peer: the caller's
      {FaultKind::pause, "b", "", 1.0, -0.5},          // negative duration: still reported here
      {FaultKind::restart, "nosuch", "", 2.0, 0.0},    // not in the replay: its crash was left out
  };
  FaultChecks checks;
  checks.node_names = false;
  checks.start_times = false;
  const auto problems = validate_faults(*plan, faults, checks);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("fault 4") && Catch::Contains("duration must be positive"));
}

TEST_CASE("fault_options writes the faults as hapair run options that read back exactly", "[sim][faults]") {
  const std::vector<FaultSpec> faults = {{FaultKind::crash, "aggregate", "", 2.5, 0.0},
                                         {FaultKind::pause, "filter", "", 1.0 / 3.0, 0.25},
                                         {FaultKind::restart, "aggregate", "", 3.0, 0.0},
                                         {FaultKind::partition, "filter", "aggregate", 1.0, 0.5}};
  CHECK(fault_options(faults) ==
        " --fail aggregate@2.5 --pause filter@0.3333333333333333+0.25 --restart aggregate@3 --partition "
        "filter-aggregate@1+0.5");
  CHECK(fault_options({}).empty());
}

}  // namespace
}  // namespace hapair::simtest
