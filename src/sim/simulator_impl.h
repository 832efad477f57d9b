// The simulator's inside (simulator.h), shared by the three files it is defined in along its
// seams: simulator.cpp (the event queue, a node's input FIFO and cost model, the simulated
// network's sends and arrivals, the loop), simulator_nodes.cpp (node hosting: creating cores,
// crashes, restarts, pauses, partitions, closed connections) and simulator_result.cpp (samples,
// progress, merged counters and the RunResult).
//
// Paper: Hwang et al. (ICDE 2005), section 2's fail-stop servers and the network between them,
// in virtual time; the pause, partition and restart are the faults docs/FAULTS.md adds.
//
// Invariant: virtual time never goes back; every event is stamped with the incarnation it was
// meant for, so nothing computed or sent by a crashed incarnation reaches its successor; only
// ordered containers are iterated. Internal to src/sim: only simulator*.cpp include it.
#pragma once

#include <array>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "driver/effects.h"
#include "driver/fault_schedule.h"
#include "driver/link_model.h"
#include "protocols/quiet_drain.h"
#include "sim/event_queue.h"
#include "sim/simulator.h"

namespace hapair::simhost {

constexpr std::size_t kKinds = std::variant_size_v<Message>;
// The data-plane kinds come first in Message; is_control_message() starts at "hello".
constexpr std::size_t kDataPlaneKinds = kFirstControlKind;
static_assert(std::string_view(kMessageKindNames[kDataPlaneKinds]) == "hello");

inline TimeUs us_from_s(double s) { return static_cast<TimeUs>(std::llround(s * 1e6)); }

inline std::string format_s(TimeUs us) {
  std::ostringstream os;
  os << static_cast<double>(us) / 1e6 << " s";
  return os.str();
}

// ---- events ------------------------------------------------------------------------------

struct SampleDue {};
struct StartDue {
  NodeId node;
  std::uint32_t incarnation;
};
struct TickDue {
  NodeId node;
  std::uint32_t incarnation;
};
struct Arrival {
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  std::uint32_t from_incarnation = 0;
  std::uint64_t cut_generation = 0;
  TimeUs tx_start_us = 0;
  Envelope envelope;
};
struct Release {
  NodeId node = kNoNode;
  std::uint32_t incarnation = 0;
  Effects effects;
};
struct FaultEdge {
  FaultAction action;
};
// The crash of `lost` closes its connection to its pair partner `to` (detector =
// connection+heartbeat): the partner's driver reports it one link latency later.
struct ConnectionClosed {
  NodeId to = kNoNode;
  std::uint32_t to_incarnation = 0;
  NodeId lost = kNoNode;
};
// A message on the sender's emulated link is due (docs/LINKS.md): the sender hands what is due to
// the simulated network, as a real node's loop hands it to its socket.
struct LinkDue {
  NodeId node = kNoNode;
  std::uint32_t incarnation = 0;
};
using Payload = std::variant<SampleDue, StartDue, TickDue, Arrival, Release, FaultEdge, ConnectionClosed, LinkDue>;

// ---- nodes -------------------------------------------------------------------------------

// The simulator's own counters of one node, kept across its incarnations.
struct SimCounters {
  std::int64_t cpu_us = 0;
  std::array<std::int64_t, kKinds> bytes_sent{};
  std::array<std::int64_t, kKinds> messages_sent{};
  std::int64_t messages_received = 0;
  std::int64_t dropped_loss = 0;         // as sender: lost on the way
  std::int64_t dropped_partition = 0;    // as sender: sent on, or in flight over, a cut link
  std::int64_t dropped_rule = 0;         // as sender: a scripted kind drop
  std::int64_t dropped_unsent = 0;       // as sender: still queued when it crashed
  std::int64_t dropped_while_down = 0;   // as receiver: arrived while it was crashed
  std::int64_t dropped_control = 0;      // control-plane kinds do not exist in the simulator
  std::int64_t duplicated = 0;           // as sender: delivered twice
  std::int64_t fifo_overflow = 0;        // events dropped because the node's FIFO was full
  std::int64_t fifo_events_max_seen = 0;
};

struct SimNode {
  NodeId id = kNoNode;
  std::string name;
  bool is_sink = false;
  std::unique_ptr<NodeCore> core;
  std::uint32_t incarnation = 0;
  std::vector<TimeUs> crashed_at_us;  // per incarnation; kNever while it lives
  bool crashed = false;
  bool paused = false;
  TimeUs paused_at_us = 0;
  // A Release is pending: the node is computing until its effects leave.
  bool busy = false;
  TimeUs busy_since_us = 0;  // the `now` of the handle() whose effects are pending
  TimeUs busy_until_us = 0;
  // A pause stretches the computation in progress (SIGSTOP stops the process mid-way).
  TimeUs release_postpone_us = 0;
  std::optional<Effects> held;  // effects that came due during a pause
  TimeUs held_remaining_us = 0;
  std::deque<Event> fifo;
  bool tick_in_fifo = false;
  // Applies the node's effects; its wake timer is the one pending TickDue (driver/effects.h).
  EffectsApplier applier{kNoNode};
  Metrics last_core_metrics;  // of the last incarnation, kept when it crashes
  SimCounters c;
  // The node's emulated links ([links], [[link]]), rebuilt for every incarnation as a restarted
  // process rebuilds its own; the counters of the earlier incarnations' links.
  OutgoingLinks<Envelope> links;
  LinkCounters links_before;
};

}  // namespace hapair::simhost

namespace hapair {

struct Simulator::Impl {
  using SimNode = simhost::SimNode;
  using Payload = simhost::Payload;
  using Release = simhost::Release;
  using Arrival = simhost::Arrival;
  using TickDue = simhost::TickDue;
  using FaultEdge = simhost::FaultEdge;
  using ConnectionClosed = simhost::ConnectionClosed;
  using LinkDue = simhost::LinkDue;

  std::shared_ptr<const Plan> plan;
  SimOptions options;
  CoreFactory factory;
  std::uint64_t seed = 0;
  SimSettings sim;
  sim::Network network;
  bool links_emulated = false;  // some pair of nodes has an emulated link
  sim::EventQueue<Payload> queue;
  std::vector<SimNode> nodes;
  TimeUs now_us = 0;
  TimeUs limit_us = 0;
  TimeUs sample_interval_us = 0;
  TimeUs next_progress_us = kNever;

  // Quiet detection without scanning every node.
  std::size_t sinks_total = 0;
  std::size_t sinks_unfinished = 0;
  TimeUs sinks_finished_us = 0;  // when the last sink finished
  std::size_t arrivals_pending = 0;
  std::size_t busy_nodes = 0;
  std::size_t fifo_events = 0;

  // The quiet-drain rule (protocols/quiet_drain.h), fed at every sample; fault edges still in
  // the queue hold it back.
  QuietDrain quiet;
  std::size_t fault_edges_pending = 0;
  bool went_quiet = false;

  bool ended = false;
  bool fatal = false;
  std::vector<Delivery> deliveries;
  std::vector<MergeOrder> merge_orders;  // as the nodes reported them, in time order
  std::vector<TraceEvent> events;
  std::vector<MetricSample> samples;
  std::vector<std::string> errors;
  std::string stall;  // RunResult::stall

  Impl(std::shared_ptr<const Plan> p, SimOptions o, CoreFactory f, std::uint64_t s)
      : plan(std::move(p)),
        options(std::move(o)),
        factory(std::move(f)),
        seed(s),
        sim(plan->topology.sim),
        network(plan->topology.sim, plan->nodes.size(), Rng::derive(s, hash_name("sim.network"))),
        links_emulated(has_emulated_links(*plan)),
        quiet(plan->settings(), plan->nodes.size()) {}

  NodeId node_id(const std::string& name) const {
    for (const auto& n : plan->nodes)
      if (n.name == name) return n.id;
    return kNoNode;
  }

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }
  // A fault event (protocols/trace.h), recorded for the node it hit.
  TraceEvent& trace(NodeId node, TraceKind kind) { return events.emplace_back(now_us, node, kind); }

  // ---- inputs, effects, the network and the loop (simulator.cpp) --------------------------
  // Queues an input for a node and lets it work through its FIFO as far as it can now.
  void offer(SimNode& n, Event ev);
  void work(SimNode& n);
  // One handle() call and the cost model around it.
  void step(SimNode& n, const Event& ev);
  void on_release(Release& r);
  void apply(SimNode& n, Effects&& e);
  void send(SimNode& n, Outgoing&& o);
  // Puts a message on the simulated network (from send, or when its emulated link releases it).
  void transmit(SimNode& n, NodeId to, Envelope&& envelope, std::size_t bytes);
  // Hands every message due on the node's emulated links to the network.
  void release_links(SimNode& n);
  void on_arrival(Arrival& a);
  void on_tick(const TickDue& t);
  void dispatch(Payload& p);
  void end_run();
  // Handles events up to `until_us`; `until_quiet` also ends the run as soon as it is done.
  void run(TimeUs until_us, bool until_quiet);
  // The simulator's side of the effects (driver/effects.h), for one node at now_us.
  struct NodeEffects;
  // Every sink saw the end of every input, and either nothing is in flight any more or that was
  // one drain window (drain_quiet_s) ago: the pairs' periodic traffic (heartbeats every few ms
  // to k standbys, checkpoints) need not ever leave the network empty at one instant (chaos
  // passive case 525 of seed 1 ran into the time limit with complete output).
  bool done() const {
    if (sinks_total == 0 || sinks_unfinished > 0) return false;
    return (arrivals_pending == 0 && busy_nodes == 0 && fifo_events == 0) || now_us - sinks_finished_us >= quiet.window_us();
  }
  bool completed() const { return sinks_total > 0 && sinks_unfinished == 0 && !fatal; }

  // ---- node hosting and faults (simulator_nodes.cpp) --------------------------------------
  void create_core(SimNode& n);
  void crash(SimNode& n);
  // A crashed process's kernel closes its connections; its pair partner's connection detector
  // sees that one link latency later (a partition in between keeps the news from it).
  void close_connections_of(const SimNode& n);
  void on_connection_closed(const ConnectionClosed& c);
  void restart(SimNode& n);
  void pause(SimNode& n, TimeUs duration_us);
  void resume(SimNode& n);
  void on_fault(const FaultEdge& edge);

  // ---- samples and the result (simulator_result.cpp) --------------------------------------
  void on_sample();
  Metrics merged_metrics(const SimNode& n) const;
  RunResult make_result() const;
  // For take_result: the big vectors are moved, not copied (a million deliveries in a scale run).
  RunResult move_result();
  static void sort_events(RunResult& r);
  RunResult result_without_records() const;
};

}  // namespace hapair
