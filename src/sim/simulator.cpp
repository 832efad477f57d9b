#include "sim/simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <sstream>
#include <string_view>
#include <utility>
#include <variant>

#include "driver/effects.h"
#include "driver/fault_schedule.h"
#include "driver/gauges.h"
#include "driver/operator_cost.h"
#include "protocols/check.h"
#include "protocols/quiet_drain.h"
#include "protocols/rng.h"
#include "sim/event_queue.h"
#include "sim/faults.h"
#include "sim/message_size.h"

namespace hapair {
namespace {

constexpr std::size_t kKinds = std::variant_size_v<Message>;
// The data-plane kinds come first in Message; is_control_message() starts at "hello".
constexpr std::size_t kDataPlaneKinds = kFirstControlKind;
static_assert(std::string_view(kMessageKindNames[kDataPlaneKinds]) == "hello");

TimeUs us_from_s(double s) { return static_cast<TimeUs>(std::llround(s * 1e6)); }

std::string format_s(TimeUs us) {
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
using Payload = std::variant<SampleDue, StartDue, TickDue, Arrival, Release, FaultEdge, ConnectionClosed>;

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
};

}  // namespace

// ---- the simulator -----------------------------------------------------------------------

struct Simulator::Impl {
  std::shared_ptr<const Plan> plan;
  SimOptions options;
  CoreFactory factory;
  std::uint64_t seed = 0;
  SimSettings sim;
  sim::Network network;
  sim::EventQueue<Payload> queue;
  std::vector<SimNode> nodes;
  TimeUs now_us = 0;
  TimeUs limit_us = 0;
  TimeUs sample_interval_us = 0;
  TimeUs next_progress_us = kNever;

  // Quiet detection without scanning every node.
  std::size_t sinks_total = 0;
  std::size_t sinks_unfinished = 0;
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
        quiet(plan->settings(), plan->nodes.size()) {}

  NodeId node_id(const std::string& name) const {
    for (const auto& n : plan->nodes)
      if (n.name == name) return n.id;
    return kNoNode;
  }

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }

  // -- inputs of a node --

  // Queues an input for a node and lets it work through its FIFO as far as it can now.
  void offer(SimNode& n, Event ev) {
    if (n.crashed) {
      ++n.c.dropped_while_down;
      return;
    }
    const bool tick = std::holds_alternative<Tick>(ev);
    if (tick && n.tick_in_fifo) return;  // one waiting Tick does what two would
    if (n.fifo.size() >= options.node_fifo_events_max) {
      if (n.c.fifo_overflow++ == 0)
        errors.push_back("node '" + n.name + "': input FIFO overflow at " + format_s(now_us) + " (" +
                         std::to_string(options.node_fifo_events_max) +
                         " events waiting); events dropped, which flow control should prevent");
      return;
    }
    if (tick) n.tick_in_fifo = true;
    n.fifo.push_back(std::move(ev));
    ++fifo_events;
    n.c.fifo_events_max_seen = std::max<std::int64_t>(n.c.fifo_events_max_seen, static_cast<std::int64_t>(n.fifo.size()));
    work(n);
  }

  void work(SimNode& n) {
    while (!n.busy && !n.paused && !n.crashed && !n.fifo.empty() && !fatal) {
      Event ev = std::move(n.fifo.front());
      n.fifo.pop_front();
      --fifo_events;
      if (std::holds_alternative<Tick>(ev)) n.tick_in_fifo = false;
      step(n, ev);
    }
  }

  // One handle() call and the cost model around it.
  void step(SimNode& n, const Event& ev) {
    Effects effects = n.core->handle(now_us, ev);
    double cost = sim.cpu_us_per_message;
    cost += sim.cpu_us_per_tuple * static_cast<double>(effects.tuples_processed);
    cost += operator_cost_us(plan->settings().operator_cost_us_per_tuple, effects);
    const TimeUs cost_us = static_cast<TimeUs>(std::llround(cost / sim.node_capacity));
    n.c.cpu_us += cost_us;
    if (cost_us <= 0) {
      apply(n, std::move(effects));
      return;
    }
    n.busy = true;
    ++busy_nodes;
    n.busy_until_us = now_us + cost_us;
    queue.push(n.busy_until_us, Release{n.id, n.incarnation, std::move(effects)});
  }

  void on_release(Release& r) {
    SimNode& n = nodes[r.node];
    if (r.incarnation != n.incarnation) return;  // computed by an incarnation that crashed
    HAPAIR_CHECK_MSG(n.busy, "release for idle node " << n.name);
    if (n.paused) {
      n.held = std::move(r.effects);
      n.held_remaining_us = n.busy_until_us - n.paused_at_us;
      return;
    }
    if (n.release_postpone_us > 0) {
      const TimeUs postpone = n.release_postpone_us;
      n.release_postpone_us = 0;
      n.busy_until_us = now_us + postpone;
      queue.push(n.busy_until_us, std::move(r));
      return;
    }
    n.busy = false;
    --busy_nodes;
    apply(n, std::move(r.effects));
    work(n);
  }

  // -- effects --

  // The simulator's side of the effects (driver/effects.h), for one node at now_us.
  struct NodeEffects final : EffectsDriver {
    Impl& sim;
    SimNode& n;
    NodeEffects(Impl& s, SimNode& node) : sim(s), n(node) {}
    void send(Outgoing&& o) override { sim.send(n, std::move(o)); }
    void deliver(std::vector<Delivery>& batch) override {
      sim.quiet.activity(sim.now_us);
      for (auto& d : batch) {
        d.at_us = sim.now_us;  // the client application gets it when the effects leave the node
        sim.deliveries.push_back(std::move(d));
      }
    }
    void record_trace(TraceEvent&& t) override { sim.events.push_back(std::move(t)); }
    void record_merge_order(MergeOrder&& o) override { sim.merge_orders.push_back(std::move(o)); }
    void schedule_wake(TimeUs at_us) override { sim.queue.push(at_us, TickDue{n.id, n.incarnation}); }
    void finished() override {
      if (n.is_sink) --sim.sinks_unfinished;
    }
    void fatal_error(std::string&& message) override {
      sim.errors.push_back("node '" + n.name + "': fatal error at " + format_s(sim.now_us) + ": " + message);
      sim.fatal = true;
    }
  };

  void apply(SimNode& n, Effects&& e) {
    NodeEffects driver(*this, n);
    n.applier.apply(now_us, std::move(e), driver);
  }

  void send(SimNode& n, Outgoing&& o) {
    HAPAIR_CHECK_MSG(o.to < nodes.size(), "node " << n.name << " sends to node id " << o.to << " of " << nodes.size());
    if (is_control_message(o.envelope.body)) {
      ++n.c.dropped_control;
      return;
    }
    const std::size_t kind = o.envelope.body.index();
    const std::size_t bytes = sim::wire_bytes(o.envelope);
    n.c.bytes_sent[kind] += static_cast<std::int64_t>(bytes);
    ++n.c.messages_sent[kind];
    const sim::Transmission t = network.send(now_us, n.id, o.to, kind, bytes);
    if (options.on_send) options.on_send(SentMessage{now_us, n.id, o.to, &o.envelope, bytes, t.dropped});
    switch (t.dropped) {
      case sim::DropReason::none: break;
      case sim::DropReason::loss: ++n.c.dropped_loss; return;
      case sim::DropReason::partition: ++n.c.dropped_partition; return;
      case sim::DropReason::rule: ++n.c.dropped_rule; return;
    }
    if (t.duplicated) {
      ++n.c.duplicated;
      ++arrivals_pending;
      queue.push(t.duplicate_arrival_us, Arrival{n.id, o.to, n.incarnation, t.cut_generation, t.tx_start_us, o.envelope});
    }
    ++arrivals_pending;
    queue.push(t.arrival_us, Arrival{n.id, o.to, n.incarnation, t.cut_generation, t.tx_start_us, std::move(o.envelope)});
  }

  void on_arrival(Arrival& a) {
    --arrivals_pending;
    SimNode& from = nodes[a.from];
    if (a.from_incarnation != from.incarnation && a.tx_start_us > from.crashed_at_us[a.from_incarnation]) {
      ++from.c.dropped_unsent;  // still in the crashed sender's queue: it never left
      return;
    }
    if (!network.arrives(a.from, a.to, a.cut_generation)) {
      ++from.c.dropped_partition;
      return;
    }
    SimNode& to = nodes[a.to];
    if (!to.crashed) ++to.c.messages_received;
    offer(to, Received{std::move(a.envelope)});
  }

  void on_tick(const TickDue& t) {
    SimNode& n = nodes[t.node];
    if (t.incarnation != n.incarnation || !n.applier.wake().take(now_us)) return;  // superseded by an earlier wish
    offer(n, Tick{});
  }

  // -- faults --

  void trace(NodeId node, const char* event, const std::string& details) {
    events.push_back(TraceEvent{now_us, node, event, details});
  }

  void create_core(SimNode& n) {
    n.core = factory(plan, n.id);
    HAPAIR_CHECK_MSG(n.core != nullptr, "the core factory made no core for node " << n.name);
    n.crashed_at_us.push_back(kNever);
  }

  void crash(SimNode& n) {
    HAPAIR_CHECK_MSG(!n.crashed, "crash of crashed node " << n.name);
    n.last_core_metrics = n.core->metrics();
    n.core.reset();
    n.crashed = true;
    n.crashed_at_us[n.incarnation] = now_us;
    ++n.incarnation;
    if (n.busy) --busy_nodes;
    n.busy = false;
    n.release_postpone_us = 0;
    n.held.reset();
    n.paused = false;
    fifo_events -= n.fifo.size();
    n.fifo.clear();
    n.tick_in_fifo = false;
    n.applier.wake().clear();
    network.sender_crashed(n.id, now_us);
    quiet.set_down(n.id, true);
    trace(n.id, "failure", "kind=crash node=" + n.name);
    close_connections_of(n);
  }

  // A crashed process's kernel closes its connections; its pair partner's connection detector
  // sees that one link latency later (a partition in between keeps the news from it).
  void close_connections_of(const SimNode& n) {
    if (plan->settings().detector != DetectorKind::connection_heartbeat) return;
    const PlanFragment& f = plan->fragments.at(plan->nodes.at(n.id).fragment);
    for (const NodeId partner : {f.primary, f.standby}) {
      if (partner == kNoNode || partner == n.id || nodes[partner].crashed) continue;
      queue.push(now_us + network.latency_us(), ConnectionClosed{partner, nodes[partner].incarnation, n.id});
    }
  }

  void on_connection_closed(const ConnectionClosed& c) {
    SimNode& to = nodes[c.to];
    if (to.crashed || to.incarnation != c.to_incarnation || network.is_cut(c.lost, c.to)) return;
    // The runtime reads its partner watch between two messages: the report does not wait
    // behind the node's queued input.
    if (to.fifo.size() >= options.node_fifo_events_max) return;
    to.fifo.push_front(PeerLost{c.lost, Detector::connection});
    ++fifo_events;
    work(to);
  }

  void restart(SimNode& n) {
    HAPAIR_CHECK_MSG(n.crashed, "restart of running node " << n.name);
    n.crashed = false;
    create_core(n);
    if (n.is_sink && n.applier.finished()) ++sinks_unfinished;
    n.applier.reset();
    quiet.set_down(n.id, false);
    trace(n.id, "restart", "kind=restart node=" + n.name);
    offer(n, Start{true});
  }

  void pause(SimNode& n, TimeUs duration_us) {
    if (n.crashed) return;  // validate_faults rejects this; a restart in between cannot happen
    n.paused = true;
    n.paused_at_us = now_us;
    trace(n.id, "pause", "kind=pause node=" + n.name + " duration_ms=" + std::to_string(duration_us / 1000));
  }

  void resume(SimNode& n) {
    if (n.crashed || !n.paused) return;  // crashed while paused: the crash ended the pause
    n.paused = false;
    trace(n.id, "resume", "kind=pause node=" + n.name);
    if (n.held) {
      // The computation was cut short by the pause; its remaining time runs from now.
      n.busy_until_us = now_us + n.held_remaining_us;
      queue.push(n.busy_until_us, Release{n.id, n.incarnation, std::move(*n.held)});
      n.held.reset();
    } else if (n.busy) {
      n.release_postpone_us += now_us - n.paused_at_us;
    } else {
      work(n);
    }
  }

  void on_fault(const FaultEdge& edge) {
    const FaultAction& a = edge.action;
    const FaultSpec& f = options.faults[a.fault];
    SimNode& n = nodes[a.node];
    --fault_edges_pending;
    quiet.activity(now_us);
    switch (a.kind) {
      case FaultAction::Kind::crash: crash(n); break;
      case FaultAction::Kind::restart: restart(n); break;
      case FaultAction::Kind::pause: pause(n, a.duration_us); break;
      case FaultAction::Kind::resume: resume(n); break;
      case FaultAction::Kind::partition:
        network.cut(n.id, a.peer);
        trace(n.id, "partition",
              "kind=partition node=" + f.node + " peer=" + f.peer + " duration_ms=" + std::to_string(a.duration_us / 1000));
        break;
      case FaultAction::Kind::heal:
        network.heal(n.id, a.peer);
        trace(n.id, "heal", "kind=partition node=" + f.node + " peer=" + f.peer);
        break;
    }
  }

  // -- samples and progress --

  void on_sample() {
    for (auto& n : nodes) {
      if (n.crashed) continue;
      const Metrics metrics = n.core->metrics();
      for (const auto& [name, value] : metrics)
        if (is_sampled_gauge(name)) samples.push_back(MetricSample{now_us, n.name, name, value});
      quiet.report(now_us, n.id, metrics);
    }
    if (sinks_unfinished > 0 && quiet.quiet(now_us, fault_edges_pending > 0)) went_quiet = true;
    if (now_us >= next_progress_us) {
      std::ostringstream os;
      os << "sim: t=" << format_s(now_us) << " deliveries=" << deliveries.size() << " events_pending=" << queue.size()
         << " sinks_unfinished=" << sinks_unfinished;
      log(os.str());
      next_progress_us += us_from_s(options.progress_interval_s);
    }
    queue.push(now_us + sample_interval_us, SampleDue{});
  }

  void dispatch(Payload& p) {
    std::visit(
        [&](auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, SampleDue>) {
            on_sample();
          } else if constexpr (std::is_same_v<T, StartDue>) {
            if (e.incarnation == nodes[e.node].incarnation) offer(nodes[e.node], Start{});
          } else if constexpr (std::is_same_v<T, TickDue>) {
            on_tick(e);
          } else if constexpr (std::is_same_v<T, Arrival>) {
            on_arrival(e);
          } else if constexpr (std::is_same_v<T, Release>) {
            on_release(e);
          } else if constexpr (std::is_same_v<T, ConnectionClosed>) {
            on_connection_closed(e);
          } else {
            on_fault(e);
          }
        },
        p);
  }

  // -- the loop --

  bool done() const {
    return sinks_total > 0 && sinks_unfinished == 0 && arrivals_pending == 0 && busy_nodes == 0 && fifo_events == 0;
  }

  void end_run() {
    if (ended) return;
    ended = true;
    if (!completed()) log("reproduce with: " + reproduce_command(*plan, seed, options.faults));
  }

  bool completed() const { return sinks_total > 0 && sinks_unfinished == 0 && !fatal; }

  // Handles events up to `until_us`; `until_quiet` also ends the run as soon as it is done.
  void run(TimeUs until_us, bool until_quiet) {
    while (!ended) {
      if (fatal || (until_quiet && done())) {
        end_run();
        return;
      }
      if (until_quiet && went_quiet) {
        errors.push_back("the output went quiet: no sink delivery, fault or change of any live node's output queues for " +
                         format_s(quiet.window_us()) + " after the sources stopped at " +
                         format_s(us_from_s(plan->settings().duration_s)) + " (drain_quiet_s, at least the longest " +
                         "retransmission back-off), so " + std::to_string(sinks_unfinished) + " of " +
                         std::to_string(sinks_total) + " sinks can never see the end of every input");
        stall = errors.back();
        end_run();
        return;
      }
      // When only the sampler is left nothing can ever happen again: waiting for the limit
      // would change nothing but the clock, so the run jumps there.
      const bool idle = queue.empty() || (queue.size() == 1 && std::holds_alternative<SampleDue>(queue.next_payload()));
      if (idle || queue.next_time() > until_us) {
        now_us = std::max(now_us, until_us);
        if (until_quiet) {
          if (sinks_total > 0)
            errors.push_back("time limit: the run reached " + format_s(until_us) + " of virtual time before " +
                             std::to_string(sinks_unfinished) + " of " + std::to_string(sinks_total) +
                             " sinks saw the end of every input");
          if (sinks_total > 0) stall = errors.back();
          end_run();
        }
        return;
      }
      auto popped = queue.pop();
      HAPAIR_CHECK_MSG(popped.at_us >= now_us, "time went back from " << now_us << " to " << popped.at_us);
      now_us = popped.at_us;
      dispatch(popped.payload);
    }
  }


  Metrics merged_metrics(const SimNode& n) const {
    Metrics m = n.core ? n.core->metrics() : n.last_core_metrics;
    m["cpu_us"] = n.c.cpu_us;
    m["decode_dropped"] = 0;  // nothing is decoded in the simulator
    for (std::size_t k = 0; k < kDataPlaneKinds; ++k) {
      m[std::string("bytes_sent.") + kMessageKindNames[k]] = n.c.bytes_sent[k];
      m[std::string("messages_sent.") + kMessageKindNames[k]] = n.c.messages_sent[k];
    }
    m["sim.messages_received"] = n.c.messages_received;
    m["sim.dropped_loss"] = n.c.dropped_loss;
    m["sim.dropped_partition"] = n.c.dropped_partition;
    m["sim.dropped_rule"] = n.c.dropped_rule;
    m["sim.dropped_unsent"] = n.c.dropped_unsent;
    m["sim.dropped_while_down"] = n.c.dropped_while_down;
    m["sim.dropped_control"] = n.c.dropped_control;
    m["sim.duplicated"] = n.c.duplicated;
    m["sim.fifo_overflow"] = n.c.fifo_overflow;
    m["sim.fifo_events_max_seen"] = n.c.fifo_events_max_seen;
    m["sim.incarnations"] = static_cast<std::int64_t>(n.crashed_at_us.size());
    return m;
  }

  RunResult make_result() const {
    RunResult r = result_without_records();
    r.deliveries = deliveries;
    r.merge_orders = merge_orders;
    r.events = events;
    r.samples = samples;
    sort_events(r);
    return r;
  }

  // For take_result: the big vectors are moved, not copied (a million deliveries in a scale run).
  RunResult move_result() {
    RunResult r = result_without_records();
    r.deliveries = std::move(deliveries);
    r.merge_orders = std::move(merge_orders);
    r.events = std::move(events);
    r.samples = std::move(samples);
    sort_events(r);
    return r;
  }

  static void sort_events(RunResult& r) {
    std::stable_sort(r.events.begin(), r.events.end(),
                     [](const TraceEvent& a, const TraceEvent& b) { return a.at_us < b.at_us; });
  }

  RunResult result_without_records() const {
    RunResult r;
    r.plan = plan;
    r.driver = "sim";
    r.faults = options.faults;
    for (const auto& n : nodes) r.counters[n.name] = merged_metrics(n);
    r.end_us = now_us;
    r.completed = completed();
    r.errors = errors;
    r.stall = stall;
    return r;
  }
};

Simulator::Simulator(std::shared_ptr<const Plan> plan, SimOptions options, CoreFactory factory) {
  HAPAIR_CHECK(plan != nullptr);
  HAPAIR_CHECK(factory != nullptr);
  const std::uint64_t seed = options.seed.value_or(plan->settings().seed);
  if (seed != plan->settings().seed) {
    // The seed drives the sources too, so every core must see the same one.
    auto reseeded = std::make_shared<Plan>(*plan);
    reseeded->topology.settings.seed = seed;
    plan = std::move(reseeded);
  }
  const SimSettings& s = plan->topology.sim;
  HAPAIR_CHECK_MSG(s.node_capacity > 0.0 && s.cpu_us_per_tuple >= 0.0 && s.cpu_us_per_message >= 0.0,
                   "node_capacity=" << s.node_capacity << " cpu_us_per_tuple=" << s.cpu_us_per_tuple
                                    << " cpu_us_per_message=" << s.cpu_us_per_message);
  HAPAIR_CHECK_MSG(s.loss_ratio >= 0.0 && s.loss_ratio <= 1.0 && s.duplication_ratio >= 0.0 &&
                       s.duplication_ratio <= 1.0 && s.reorder_ratio >= 0.0 && s.reorder_ratio <= 1.0,
                   "loss_ratio=" << s.loss_ratio << " duplication_ratio=" << s.duplication_ratio
                                 << " reorder_ratio=" << s.reorder_ratio);
  HAPAIR_CHECK_MSG(options.sample_interval_ms > 0, "sample_interval_ms=" << options.sample_interval_ms);
  HAPAIR_CHECK(options.node_fifo_events_max > 0);
  {
    const auto problems = validate_faults(*plan, options.faults);
    std::string all;
    for (const auto& p : problems) all += "\n  " + p;
    HAPAIR_CHECK_MSG(problems.empty(), "invalid fault schedule:" << all);
  }

  impl_ = std::make_unique<Impl>(plan, std::move(options), std::move(factory), seed);
  Impl& m = *impl_;
  m.log("sim: seed " + std::to_string(seed));
  const Settings& settings = plan->settings();
  m.limit_us = us_from_s(m.options.max_virtual_time_s.value_or(settings.duration_s + settings.drain_timeout_s));
  m.sample_interval_us = m.options.sample_interval_ms * 1000;
  if (m.options.progress_interval_s > 0.0) m.next_progress_us = us_from_s(m.options.progress_interval_s);

  for (const auto& drop : m.options.kind_drops) {
    sim::KindDropRule rule;
    rule.kind_index = sim::message_kind_index(drop.kind);
    HAPAIR_CHECK_MSG(rule.kind_index < kKinds, "kind drop of unknown message kind '" << drop.kind << "'");
    rule.from = drop.from.empty() ? kNoNode : m.node_id(drop.from);
    rule.to = drop.to.empty() ? kNoNode : m.node_id(drop.to);
    HAPAIR_CHECK_MSG(drop.from.empty() || rule.from != kNoNode, "kind drop from unknown node '" << drop.from << "'");
    HAPAIR_CHECK_MSG(drop.to.empty() || rule.to != kNoNode, "kind drop to unknown node '" << drop.to << "'");
    rule.from_us = us_from_s(drop.from_s);
    rule.until_us = us_from_s(drop.until_s);
    m.network.add_drop_rule(rule);
  }

  m.nodes.resize(plan->nodes.size());
  for (std::size_t i = 0; i < plan->nodes.size(); ++i) {
    const PlanNode& pn = plan->nodes[i];
    HAPAIR_CHECK_MSG(pn.id == i, "plan node " << i << " has id " << pn.id);
    SimNode& n = m.nodes[i];
    n.id = pn.id;
    n.applier = EffectsApplier(pn.id);
    n.name = pn.name;
    const bool sink_fragment = pn.fragment < plan->fragments.size() && plan->fragments[pn.fragment].kind == FragmentKind::sink;
    n.is_sink = sink_fragment && !pn.standby;
    if (n.is_sink) ++m.sinks_total;
    m.create_core(n);
  }
  m.sinks_unfinished = m.sinks_total;
  for (const auto& n : m.nodes) m.queue.push(0, StartDue{n.id, n.incarnation});
  for (const FaultAction& action : fault_actions(*plan, m.options.faults)) {
    m.queue.push(action.at_us, FaultEdge{action});
    ++m.fault_edges_pending;
  }
  m.queue.push(m.sample_interval_us, SampleDue{});
}

Simulator::~Simulator() = default;

void Simulator::run_until_quiet() { impl_->run(impl_->limit_us, true); }
void Simulator::run_until(TimeUs t_us) { impl_->run(t_us, false); }
bool Simulator::ended() const { return impl_->ended; }
TimeUs Simulator::now_us() const { return impl_->now_us; }
std::uint64_t Simulator::seed() const { return impl_->seed; }
const std::shared_ptr<const Plan>& Simulator::plan() const { return impl_->plan; }
RunResult Simulator::result() const { return impl_->make_result(); }

RunResult Simulator::take_result() {
  RunResult r = impl_->move_result();
  impl_.reset();
  return r;
}

Metrics Simulator::node_metrics(const std::string& node_name) const {
  const NodeId id = impl_->node_id(node_name);
  HAPAIR_CHECK_MSG(id != kNoNode, "unknown node '" << node_name << "'");
  return impl_->merged_metrics(impl_->nodes[id]);
}

NodeCore* Simulator::core(const std::string& node_name) {
  const NodeId id = impl_->node_id(node_name);
  HAPAIR_CHECK_MSG(id != kNoNode, "unknown node '" << node_name << "'");
  return impl_->nodes[id].core.get();
}

RunResult run_simulation(std::shared_ptr<const Plan> plan, const SimOptions& options, const CoreFactory& factory) {
  HAPAIR_CHECK(plan != nullptr);
  auto problems = validate_faults(*plan, options.faults);
  if (!problems.empty()) {
    RunResult r;
    r.plan = plan;
    r.driver = "sim";
    r.faults = options.faults;
    r.errors = std::move(problems);
    return r;
  }
  Simulator sim(std::move(plan), options, factory);
  sim.run_until_quiet();
  return sim.take_result();
}

std::string reproduce_command(const Plan& plan, std::uint64_t seed, const std::vector<FaultSpec>& faults) {
  const Topology& t = plan.topology;
  std::string cmd = "hapair run --driver sim --seed " + std::to_string(seed);
  // `hapair run` builds the network from a file or the built-in default, then applies its
  // overrides (--ha, --duration-s, --rate-tps, --operator-cost-us). The file's own values are not
  // known here, so with a file every override that can be written is; without one, those that
  // differ from the built-in default.
  const bool from_file = !t.source_file.empty();
  const Topology base = default_topology();
  if (from_file) cmd += " --topology " + t.source_file;
  // An --ha override clears the per-fragment modes; a network whose fragments have their own
  // modes got them from its file, and --ha would change them.
  const bool own_modes = std::any_of(t.fragments.begin(), t.fragments.end(), [](const FragmentSpec& f) {
    return f.kind == FragmentKind::operators && f.ha.has_value();
  });
  if (!own_modes && (from_file || t.settings.ha != base.settings.ha)) cmd += std::string(" --ha ") + to_string(t.settings.ha);
  if (from_file || t.settings.duration_s != base.settings.duration_s)
    cmd += " --duration-s " + exact_number(t.settings.duration_s);
  std::vector<double> rates;
  for (const FragmentSpec& f : t.fragments)
    if (f.kind == FragmentKind::source) rates.push_back(f.source.rate_tps);
  std::vector<double> base_rates;
  for (const FragmentSpec& f : base.fragments)
    if (f.kind == FragmentKind::source) base_rates.push_back(f.source.rate_tps);
  const bool one_rate = !rates.empty() && std::all_of(rates.begin(), rates.end(), [&](double r) { return r == rates.front(); });
  if (one_rate && (from_file || rates != base_rates)) cmd += " --rate-tps " + exact_number(rates.front());
  if (from_file || t.settings.operator_cost_us_per_tuple != base.settings.operator_cost_us_per_tuple)
    cmd += " --operator-cost-us " + exact_number(t.settings.operator_cost_us_per_tuple);
  return cmd + fault_options(faults);
}

}  // namespace hapair
