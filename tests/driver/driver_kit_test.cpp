// The driver kit (src/driver): the effects contract and wake rule every driver applies, fault
// schedules as timed actions, the sampled gauges and the operator cost.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "driver/effects.h"
#include "driver/fault_schedule.h"
#include "driver/gauges.h"
#include "driver/operator_cost.h"

using namespace hapair;

namespace {

// Records every call, in order, as a short line.
struct RecordingDriver final : EffectsDriver {
  std::vector<std::string> calls;
  std::vector<TraceEvent> traces;
  void send(Outgoing&& o) override { calls.push_back("send to=" + std::to_string(o.to)); }
  void deliver(std::vector<Delivery>& d) override { calls.push_back("deliver n=" + std::to_string(d.size())); }
  void record_trace(TraceEvent&& t) override {
    calls.push_back(std::string("trace ") + to_string(t.kind));
    traces.push_back(std::move(t));
  }
  void record_merge_order(MergeOrder&&) override { calls.push_back("merge_order"); }
  void schedule_wake(TimeUs at) override { calls.push_back("wake at=" + std::to_string(at)); }
  void finished() override { calls.push_back("finished"); }
  void fatal_error(std::string&& m) override { calls.push_back("fatal " + m); }
};

Envelope heartbeat() { return Envelope{Header{0, 0, 0}, Heartbeat{1}}; }

}  // namespace

TEST_CASE("wake rule: the earliest outstanding wish is kept and a later one is covered by it", "[driver]") {
  WakeTimer wake;
  CHECK(wake.at_us() == kNever);
  CHECK_FALSE(wake.wish(kNever, 0));
  CHECK(wake.wish(500, 0));
  CHECK(wake.at_us() == 500);
  CHECK_FALSE(wake.wish(700, 10));  // covered: the Tick at 500 comes early, which is allowed
  CHECK_FALSE(wake.wish(500, 10));
  CHECK(wake.at_us() == 500);
  CHECK(wake.wish(300, 20));  // earlier: replaces the outstanding one
  CHECK(wake.at_us() == 300);
}

TEST_CASE("wake rule: a wish in the past is due at the time of the call that made it", "[driver]") {
  WakeTimer wake;
  CHECK(wake.wish(5, 100));
  CHECK(wake.at_us() == 100);
  CHECK(wake.due(100));
  CHECK_FALSE(wake.due(99));
}

TEST_CASE("wake rule: serving the outstanding Tick clears it and a superseded Tick is ignored", "[driver]") {
  WakeTimer wake;
  REQUIRE(wake.wish(500, 0));
  REQUIRE(wake.wish(300, 0));
  CHECK(wake.take(300));  // the outstanding one: served, cleared
  CHECK(wake.at_us() == kNever);
  CHECK_FALSE(wake.take(500));  // scheduled before the earlier wish replaced it
  REQUIRE(wake.wish(800, 300));
  wake.clear();
  CHECK(wake.at_us() == kNever);
  CHECK_FALSE(wake.take(800));
}

TEST_CASE("effects are applied in the documented order with traces stamped with the node", "[driver]") {
  EffectsApplier applier(7);
  RecordingDriver driver;
  Effects e;
  e.sends.push_back(Outgoing{2, heartbeat()});
  e.sends.push_back(Outgoing{3, heartbeat()});
  e.deliveries.resize(2);
  e.traces.push_back(TraceEvent(10, kNoNode, TraceKind::start));
  e.traces.push_back(TraceEvent(10, 4, TraceKind::role));
  e.merge_orders.resize(1);
  e.wake_at_us = 50;
  e.finished = true;
  e.fatal_error = "queue full";
  applier.apply(10, std::move(e), driver);
  const std::vector<std::string> expected = {"deliver n=2",  "trace start", "trace role", "merge_order", "send to=2",
                                             "send to=3",    "wake at=50",  "finished",    "fatal queue full"};
  CHECK(driver.calls == expected);
  REQUIRE(driver.traces.size() == 2);
  CHECK(driver.traces[0].node == 7);  // left kNoNode by the core
  CHECK(driver.traces[1].node == 4);  // the core's own
  CHECK(applier.wake().at_us() == 50);
  CHECK(applier.finished());
}

TEST_CASE("effects applier reports finished once per incarnation and nothing for empty effects", "[driver]") {
  EffectsApplier applier(0);
  RecordingDriver driver;
  Effects done;
  done.finished = true;
  applier.apply(0, Effects{}, driver);
  CHECK(driver.calls.empty());
  applier.apply(1, Effects(done), driver);
  applier.apply(2, Effects(done), driver);
  CHECK(driver.calls == std::vector<std::string>{"finished"});
  applier.reset();  // a restarted node
  CHECK_FALSE(applier.finished());
  applier.apply(3, Effects(done), driver);
  CHECK(driver.calls == std::vector<std::string>{"finished", "finished"});
}

TEST_CASE("effects applier schedules a wake-up only when it becomes the outstanding one", "[driver]") {
  EffectsApplier applier(0);
  RecordingDriver driver;
  Effects a;
  a.wake_at_us = 100;
  Effects b;
  b.wake_at_us = 200;
  Effects c;
  c.wake_at_us = 40;
  applier.apply(0, Effects(a), driver);
  applier.apply(1, Effects(b), driver);
  applier.apply(2, Effects(c), driver);
  CHECK(driver.calls == std::vector<std::string>{"wake at=100", "wake at=40"});
}

namespace {

Plan two_node_plan() { return make_plan(default_topology()); }

FaultSpec fault(FaultKind kind, std::string node, double at_s, double duration_s = 0, std::string peer = "") {
  return FaultSpec{kind, std::move(node), std::move(peer), at_s, duration_s};
}

}  // namespace

TEST_CASE("fault schedule: actions in time order, ties in schedule order, a fault's end after its start", "[driver]") {
  const Plan plan = two_node_plan();
  const std::vector<FaultSpec> faults = {
      fault(FaultKind::pause, "aggregate", 1.0, 1.0),
      fault(FaultKind::crash, "filter", 2.0),
      fault(FaultKind::partition, "filter", 0.5, 0.25, "aggregate"),
      fault(FaultKind::crash, "aggregate", 3.0),
      fault(FaultKind::restart, "aggregate", 3.5),
  };
  const std::vector<FaultAction> actions = fault_actions(plan, faults);
  using K = FaultAction::Kind;
  std::vector<std::pair<TimeUs, K>> got;
  for (const FaultAction& a : actions) got.emplace_back(a.at_us, a.kind);
  const std::vector<std::pair<TimeUs, K>> expected = {
      {500'000, K::partition}, {750'000, K::heal}, {1'000'000, K::pause}, {2'000'000, K::resume},
      {2'000'000, K::crash},   {3'000'000, K::crash}, {3'500'000, K::restart}};
  CHECK(got == expected);
  CHECK(actions[0].fault == 2);
  CHECK(actions[0].node == plan.node_id("filter"));
  CHECK(actions[0].peer == plan.node_id("aggregate"));
  CHECK(actions[0].duration_us == 250'000);
  CHECK(actions[3].fault == 0);  // the resume of the pause comes before the crash at the same time
  CHECK(actions[4].fault == 1);
}

TEST_CASE("fault schedule: without ends, the end is timed from when the start really happened", "[driver]") {
  const Plan plan = two_node_plan();
  const std::vector<FaultSpec> faults = {fault(FaultKind::pause, "aggregate", 1.0, 0.5),
                                         fault(FaultKind::crash, "filter", 1.6), fault(FaultKind::crash, "aggregate", 1.7)};
  std::vector<FaultAction> actions = fault_actions(plan, faults, false);
  REQUIRE(actions.size() == 3);
  CHECK(actions[0].kind == FaultAction::Kind::pause);
  // The pause ran 0.2 s late: it still lasts its whole duration.
  const FaultAction resume = end_action(actions[0], 1'200'000);
  CHECK(resume.kind == FaultAction::Kind::resume);
  CHECK(resume.at_us == 1'700'000);
  CHECK(resume.node == actions[0].node);
  insert_in_time_order(actions, 1, resume);
  REQUIRE(actions.size() == 4);
  CHECK(actions[1].at_us == 1'600'000);
  CHECK(actions[2].at_us == 1'700'000);
  CHECK(actions[2].kind == FaultAction::Kind::crash);  // at the same time: after what was there
  CHECK(actions[3].kind == FaultAction::Kind::resume);
}

TEST_CASE("sampled gauges are the queue lengths and nothing else", "[driver]") {
  CHECK(is_sampled_gauge("output_queue_tuples"));
  CHECK(is_sampled_gauge("output_queue_tuples.s0"));
  CHECK(is_sampled_gauge("input_queue_tuples"));
  CHECK_FALSE(is_sampled_gauge("bytes_sent.tuple_batch"));
  CHECK_FALSE(is_sampled_gauge("output"));
  CHECK_FALSE(is_sampled_gauge("cpu_us"));
}

TEST_CASE("operator cost charges only the tuples an operator fragment processed", "[driver]") {
  Effects e;
  e.tuples_processed = 30;
  e.operator_tuples = 20;
  CHECK(operator_cost_us(100.0, e) == 2000.0);
  CHECK(operator_cost_us(0.0, e) == 0.0);
  e.operator_tuples = 0;
  CHECK(operator_cost_us(100.0, e) == 0.0);
}
