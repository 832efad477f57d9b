// Tests of the node process host (runtime/node_host.h) in one process: each node runs
// run_node_process() in its own thread with a small test core, and the test plays the launcher
// on a ControlServer. They check the control-plane contract: Hello, Directory, deliveries before
// end_of_output, periodic and final stats with transport and core counters, fatal errors, and a
// clear failure when no Directory comes.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/coordinator_node.h"
#include "protocols/plan.h"
#include "protocols/topology_builders.h"
#include "runtime/control_server.h"
#include "runtime/node_host.h"
#include "runtime/run_clock.h"

namespace hapair {
namespace {

constexpr TimeUs kWaitUs = 10'000'000;  // only reached when something went missing

// source -> sink, no HA: two nodes, one stream.
std::shared_ptr<const Plan> two_node_plan() {
  Topology t;
  t.name = "node-host-test";
  FragmentSpec source;
  source.name = "source";
  source.kind = FragmentKind::source;
  source.source.stream = "numbers";
  FragmentSpec sink;
  sink.name = "sink";
  sink.kind = FragmentKind::sink;
  sink.sink_inputs = {"numbers"};
  t.fragments = {source, sink};
  REQUIRE(validate(t).empty());
  return std::make_shared<const Plan>(make_plan(t));
}

// Sends `count` tuples to `to` in batches of `batch`, one batch per wake-up, then end of stream.
class BurstSource : public NodeCore {
 public:
  BurstSource(NodeId self, NodeId to, StreamId stream, int count, int batch)
      : self_(self), to_(to), stream_(stream), count_(count), batch_(batch) {}
  Effects handle(TimeUs now, const Event& event) override {
    Effects e;
    if (std::holds_alternative<Received>(event)) return e;
    if (sent_ <= count_ && !ended_) {
      TupleBatch b;
      b.stream = stream_;
      for (int i = 0; i < batch_ && sent_ < count_; ++i) {
        ++sent_;
        b.tuples.push_back(Tuple{static_cast<TupleId>(sent_), now, sent_ % 3, 1.5 * sent_, mix64(sent_)});
      }
      b.end_of_stream = sent_ == count_;
      ended_ = b.end_of_stream;
      e.sends.push_back(Outgoing{to_, Envelope{Header{self_, 0, now}, std::move(b)}});
      e.traces.push_back(TraceEvent(now, kNoNode, TraceKind::batch_sent).with(TraceKey::last_id, sent_));
    }
    if (!ended_) e.wake_at(now + 1'000);
    e.finished = ended_;
    return e;
  }
  Metrics metrics() const override { return {{"tuples_emitted", sent_}}; }

 private:
  NodeId self_, to_;
  StreamId stream_;
  int count_, batch_;
  int sent_ = 0;
  bool ended_ = false;
};

// Delivers every tuple it receives and finishes at end of stream.
class DeliveringSink : public NodeCore {
 public:
  Effects handle(TimeUs now, const Event& event) override {
    Effects e;
    if (const auto* r = std::get_if<Received>(&event)) {
      if (const auto* b = std::get_if<TupleBatch>(&r->envelope.body)) {
        for (const Tuple& t : b->tuples) e.deliveries.push_back(Delivery{now, b->stream, t});
        processed_ += static_cast<std::int64_t>(b->tuples.size());
        ended_ = ended_ || b->end_of_stream;
      }
    }
    e.finished = ended_;
    return e;
  }
  Metrics metrics() const override { return {{"tuples_processed", processed_}, {"output_queue_tuples", 0}}; }

 private:
  std::int64_t processed_ = 0;
  bool ended_ = false;
};

// Reports a fatal error 20 ms after it starts.
class FailingCore : public NodeCore {
 public:
  Effects handle(TimeUs now, const Event& event) override {
    Effects e;
    if (std::holds_alternative<Start>(event)) e.wake_at(now + 20'000);
    if (std::holds_alternative<Tick>(event)) e.fatal_error = "output queue of stream 0 is full (policy error)";
    return e;
  }
  Metrics metrics() const override { return {}; }
};

// The launcher's side, played by the test.
struct FakeLauncher {
  ControlServer control{"tcp://127.0.0.1:*"};
  std::map<std::string, std::string> peer_of;  // node name -> routing id
  std::map<std::string, std::string> endpoint_of;
  std::vector<Delivery> deliveries;
  std::vector<TraceEvent> traces;
  std::map<std::string, NodeStats> last_stats;
  std::map<std::string, int> stats_count;
  bool end_of_output = false;
  std::size_t deliveries_at_end = 0;

  std::string name_of(const std::string& peer) const {
    for (const auto& [name, p] : peer_of)
      if (p == peer) return name;
    return "?";
  }

  // Handles messages until `done()` or the timeout; returns done().
  template <typename Done>
  bool pump(Done done) {
    const RunClock clock = RunClock::starting_now();
    while (!done() && clock.now_us() < kWaitUs) {
      std::optional<ControlServer::Incoming> in = control.receive(20'000);
      if (!in) continue;
      if (const auto* hello = std::get_if<Hello>(&in->envelope.body)) {
        peer_of[hello->node_name] = in->peer;
        endpoint_of[hello->node_name] = hello->endpoint;
      } else if (const auto* batch = std::get_if<DeliveryBatch>(&in->envelope.body)) {
        deliveries.insert(deliveries.end(), batch->deliveries.begin(), batch->deliveries.end());
        if (batch->end_of_output && !end_of_output) {
          end_of_output = true;
          deliveries_at_end = deliveries.size();
        }
      } else if (const auto* stats = std::get_if<NodeStats>(&in->envelope.body)) {
        last_stats[name_of(in->peer)] = *stats;
        stats_count[name_of(in->peer)] += 1;
      } else if (const auto* batch = std::get_if<TraceBatch>(&in->envelope.body)) {
        traces.insert(traces.end(), batch->events.begin(), batch->events.end());
      }
    }
    return done();
  }

  void send_directory(const Plan& plan) {
    Directory d;
    for (const PlanNode& node : plan.nodes) d.endpoints.push_back(endpoint_of.at(node.name));
    d.epoch_realtime_us = RunClock::realtime_us() + 100'000;
    for (const auto& [name, peer] : peer_of) REQUIRE(control.send(peer, Envelope{Header{}, d}));
  }

  void stop(const std::string& node) { REQUIRE(control.send(peer_of.at(node), Envelope{Header{}, StopRun{}})); }

  std::int64_t counter(const std::string& node, const std::string& name) const {
    for (const Counter& c : last_stats.at(node).counters)
      if (c.name == name) return c.value;
    FAIL("node " << node << " reported no counter " << name);
    return 0;
  }
};

NodeProcessOptions options_for(std::shared_ptr<const Plan> plan, const std::string& name, const std::string& control,
                               CoreFactory factory) {
  NodeProcessOptions o;
  o.plan = std::move(plan);
  o.topology_path = "(built in test plan)";
  o.node_name = name;
  o.control_endpoint = control;
  o.core_factory = std::move(factory);
  o.directory_timeout_s = 10.0;
  return o;
}

}  // namespace

TEST_CASE("node host: hello, directory, every delivery before end_of_output, stats, then exit 0 on StopRun") {
  const auto plan = two_node_plan();
  const NodeId source = plan->node_id("source");
  const NodeId sink = plan->node_id("sink");
  const StreamId stream = plan->stream_id("numbers");
  constexpr int kTuples = 2'500;  // more than one DeliveryBatch (1000 each)
  FakeLauncher launcher;
  const CoreFactory factory = [&](std::shared_ptr<const Plan>, NodeId id) -> std::unique_ptr<NodeCore> {
    if (id == source) return std::make_unique<BurstSource>(source, sink, stream, kTuples, 50);
    return std::make_unique<DeliveringSink>();
  };
  int source_status = -1;
  int sink_status = -1;
  std::thread source_thread(
      [&] { source_status = run_node_process(options_for(plan, "source", launcher.control.endpoint(), factory)); });
  std::thread sink_thread(
      [&] { sink_status = run_node_process(options_for(plan, "sink", launcher.control.endpoint(), factory)); });

  REQUIRE(launcher.pump([&] { return launcher.peer_of.size() == 2; }));
  CHECK(launcher.endpoint_of.at("sink").rfind("tcp://127.0.0.1:", 0) == 0);
  launcher.send_directory(*plan);
  REQUIRE(launcher.pump([&] { return launcher.end_of_output; }));
  // Let a few periodic stats arrive, then stop both nodes and wait for their final stats.
  REQUIRE(launcher.pump([&] { return launcher.stats_count["source"] >= 2 && launcher.stats_count["sink"] >= 2; }));
  launcher.stop("source");
  launcher.stop("sink");
  REQUIRE(launcher.pump([&] {
    return launcher.last_stats.count("source") && launcher.last_stats["source"].final &&
           launcher.last_stats.count("sink") && launcher.last_stats["sink"].final;
  }));
  source_thread.join();
  sink_thread.join();

  CHECK(source_status == kNodeExitOk);
  CHECK(sink_status == kNodeExitOk);
  REQUIRE(launcher.deliveries_at_end == static_cast<std::size_t>(kTuples));
  REQUIRE(launcher.deliveries.size() == static_cast<std::size_t>(kTuples));
  for (int i = 0; i < kTuples; ++i) REQUIRE(launcher.deliveries[i].tuple.id == static_cast<TupleId>(i + 1));
  // Times are on the run clock: after the epoch.
  CHECK(launcher.deliveries.front().at_us >= 0);

  CHECK(launcher.counter("source", "tuples_emitted") == kTuples);
  CHECK(launcher.counter("source", "messages_sent.tuples") == kTuples / 50);
  CHECK(launcher.counter("source", "bytes_sent.tuples") > kTuples * 8);
  CHECK(launcher.counter("sink", "tuples_processed") == kTuples);
  CHECK(launcher.counter("sink", "deliveries_reported") == kTuples);
  CHECK(launcher.counter("sink", "decode_dropped") == 0);
  CHECK(launcher.counter("sink", "finished") == 1);
  CHECK(launcher.counter("sink", "output_queue_tuples") == 0);
  CHECK(launcher.counter("source", "cpu_us") >= 0);
  // Traces carry the node that made them.
  REQUIRE_FALSE(launcher.traces.empty());
  CHECK(launcher.traces.front().kind == TraceKind::batch_sent);
  CHECK(launcher.traces.front().node == source);
}

TEST_CASE("node host: a fatal core error is reported as a fatal trace and final stats, and the node exits non-zero") {
  const auto plan = two_node_plan();
  FakeLauncher launcher;
  const CoreFactory factory = [](std::shared_ptr<const Plan>, NodeId) -> std::unique_ptr<NodeCore> {
    return std::make_unique<FailingCore>();
  };
  int status = -1;
  std::thread node([&] { status = run_node_process(options_for(plan, "source", launcher.control.endpoint(), factory)); });
  REQUIRE(launcher.pump([&] { return launcher.peer_of.size() == 1; }));
  launcher.endpoint_of["sink"] = "tcp://127.0.0.1:1";  // never used by this core
  launcher.send_directory(*plan);
  REQUIRE(launcher.pump([&] { return launcher.last_stats.count("source") && launcher.last_stats["source"].final; }));
  node.join();

  CHECK(status == kNodeExitFatal);
  REQUIRE(launcher.traces.size() == 1);
  CHECK(launcher.traces[0].kind == TraceKind::fatal);
  CHECK(launcher.traces[0].text == "output queue of stream 0 is full (policy error)");
  CHECK(launcher.traces[0].node == plan->node_id("source"));
}

TEST_CASE("node host: without a directory the node gives up after its timeout with a setup error") {
  const auto plan = two_node_plan();
  FakeLauncher launcher;
  NodeProcessOptions o = options_for(plan, "sink", launcher.control.endpoint(),
                                     [](std::shared_ptr<const Plan>, NodeId) -> std::unique_ptr<NodeCore> {
                                       return std::make_unique<DeliveringSink>();
                                     });
  o.directory_timeout_s = 0.2;
  int status = -1;
  std::thread node([&] { status = run_node_process(o); });
  REQUIRE(launcher.pump([&] { return launcher.peer_of.size() == 1; }));  // it did say hello
  node.join();
  CHECK(status == kNodeExitSetupError);
}

TEST_CASE("node host: a node name the plan does not have is a setup error") {
  const auto plan = two_node_plan();
  NodeProcessOptions o;
  o.plan = plan;
  o.node_name = "no-such-node";
  o.control_endpoint = "tcp://127.0.0.1:1";
  CHECK(run_node_process(o) == kNodeExitSetupError);
}

TEST_CASE("node host: a directory whose size does not match the plan is a setup error") {
  const auto plan = two_node_plan();
  FakeLauncher launcher;
  int status = -1;
  std::thread node([&] {
    status = run_node_process(options_for(plan, "sink", launcher.control.endpoint(),
                                          [](std::shared_ptr<const Plan>, NodeId) -> std::unique_ptr<NodeCore> {
                                            return std::make_unique<DeliveringSink>();
                                          }));
  });
  REQUIRE(launcher.pump([&] { return launcher.peer_of.size() == 1; }));
  REQUIRE(launcher.control.send(launcher.peer_of.at("sink"), Envelope{Header{}, Directory{{"tcp://127.0.0.1:1"}, 0, {}}}));
  node.join();
  CHECK(status == kNodeExitSetupError);
}

TEST_CASE("node host: the coordinator of global checkpoints, a node of no fragment, runs as a process and triggers checkpoints") {
  // A test's approach that needs a coordinator (no built-in one does yet): the plan's node
  // `coordinator` runs CoordinatorNode; its fragments' endpoints are never reached.
  Topology t = default_topology();
  t.settings.ha = static_cast<HaMode>(205);
  t.settings.failure_timeout_ms = 60'000;  // no fragment heartbeats the coordinator yet
  const auto plan = std::make_shared<const Plan>(make_plan(t, hapair::testing::coordinated_catalog(static_cast<HaMode>(205))));
  REQUIRE(plan->coordinator != kNoNode);
  MemoryCheckpointStore store;
  CoordinatorNodeOptions options;
  options.checkpoints.interval_us = 20'000;
  options.checkpoints.timeout_us = 40'000;
  const CoreFactory factory = [&](std::shared_ptr<const Plan> p, NodeId n) -> std::unique_ptr<NodeCore> {
    return std::make_unique<CoordinatorNode>(std::move(p), n, options, store);
  };
  FakeLauncher launcher;
  int status = -1;
  std::thread node(
      [&] { status = run_node_process(options_for(plan, kCoordinatorNodeName, launcher.control.endpoint(), factory)); });
  REQUIRE(launcher.pump([&] { return launcher.peer_of.size() == 1; }));
  for (const PlanNode& n : plan->nodes)
    if (n.id != plan->coordinator) launcher.endpoint_of[n.name] = "tcp://127.0.0.1:1";  // never answers
  launcher.send_directory(*plan);
  auto count = [&](TraceKind kind) {
    std::size_t k = 0;
    for (const TraceEvent& e : launcher.traces) k += e.kind == kind && e.node == plan->coordinator;
    return k;
  };
  REQUIRE(launcher.pump([&] { return count(TraceKind::checkpoint_abandoned) >= 1; }));
  launcher.stop(kCoordinatorNodeName);
  REQUIRE(launcher.pump([&] {
    return launcher.last_stats.count(kCoordinatorNodeName) && launcher.last_stats[kCoordinatorNodeName].final;
  }));
  node.join();
  CHECK(status == kNodeExitOk);
  CHECK(count(TraceKind::start) == 1);
  CHECK(count(TraceKind::checkpoint_triggered) >= 2);
  CHECK(launcher.counter(kCoordinatorNodeName, "checkpoints_triggered") >= 2);
  CHECK(launcher.counter(kCoordinatorNodeName, "messages_sent.checkpoint_trigger") >= 2);
  CHECK(store.completed().empty());
}

}  // namespace hapair
