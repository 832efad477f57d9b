// The simulator's event loop (simulator_impl.h): a node's input FIFO and the cost model around
// each handle() call, the effects applied when the computation ends, sends over the simulated
// network and their arrivals, wake-ups, the dispatch of every queued event in time order, and
// the public Simulator built from a plan, its options and a core factory.
//
// Paper: the servers of Hwang et al. (ICDE 2005), section 2, each a single machine that handles
// one message at a time, connected by a network with latency and bandwidth.
//
// Invariant: virtual time starts at 0 and never goes back (checked at every pop); a core sees
// non-decreasing `now`; at most one Tick waits in a node's FIFO.
#include "sim/simulator.h"

#include <algorithm>
#include <utility>

#include "driver/operator_cost.h"
#include "protocols/check.h"
#include "protocols/rng.h"
#include "sim/faults.h"
#include "sim/message_size.h"
#include "sim/simulator_impl.h"

namespace hapair {

using namespace simhost;

// ---- inputs of a node --------------------------------------------------------------------

// Queues an input for a node and lets it work through its FIFO as far as it can now.
void Simulator::Impl::offer(SimNode& n, Event ev) {
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

void Simulator::Impl::work(SimNode& n) {
  while (!n.busy && !n.paused && !n.crashed && !n.fifo.empty() && !fatal) {
    Event ev = std::move(n.fifo.front());
    n.fifo.pop_front();
    --fifo_events;
    if (std::holds_alternative<Tick>(ev)) n.tick_in_fifo = false;
    step(n, ev);
  }
}

// One handle() call and the cost model around it.
void Simulator::Impl::step(SimNode& n, const Event& ev) {
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
  n.busy_since_us = now_us;
  n.busy_until_us = now_us + cost_us;
  queue.push(n.busy_until_us, Release{n.id, n.incarnation, std::move(effects)});
}

void Simulator::Impl::on_release(Release& r) {
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

// ---- effects and the network -------------------------------------------------------------

struct Simulator::Impl::NodeEffects final : EffectsDriver {
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
    if (n.is_sink && --sim.sinks_unfinished == 0) sim.sinks_finished_us = sim.now_us;
  }
  void fatal_error(std::string&& message) override {
    sim.errors.push_back("node '" + n.name + "': fatal error at " + format_s(sim.now_us) + ": " + message);
    sim.fatal = true;
  }
};

void Simulator::Impl::apply(SimNode& n, Effects&& e) {
  NodeEffects driver(*this, n);
  n.applier.apply(now_us, std::move(e), driver);
}

void Simulator::Impl::send(SimNode& n, Outgoing&& o) {
  HAPAIR_CHECK_MSG(o.to < nodes.size(), "node " << n.name << " sends to node id " << o.to << " of " << nodes.size());
  if (is_control_message(o.envelope.body)) {
    ++n.c.dropped_control;
    return;
  }
  const std::size_t bytes = sim::wire_bytes(o.envelope);
  if (LinkQueue<Envelope>* link = n.links.find(o.to)) {
    // An emulated link (docs/LINKS.md): the message waits at the sender until its release time.
    const std::size_t kind = o.envelope.body.index();
    const std::size_t before = link->messages();
    const LinkFate fate = link->push(now_us, bytes, std::move(o.envelope), [](const Envelope& e) { return e; });
    if (fate == LinkFate::overflow) return;
    n.c.bytes_sent[kind] += static_cast<std::int64_t>(bytes);
    ++n.c.messages_sent[kind];
    // What waits at the sender is not an arrival pending: a run whose sinks are done ends with
    // messages still in delay queues, as a real run stops its nodes with theirs (link_unsent).
    // Counting them kept a run with latency_ms >= heartbeat_interval_ms from ever ending: a
    // heartbeat is always waiting.
    if (link->messages() > before) queue.push(link->last_release_us(), LinkDue{n.id, n.incarnation});
    return;
  }
  const std::size_t kind = o.envelope.body.index();
  n.c.bytes_sent[kind] += static_cast<std::int64_t>(bytes);
  ++n.c.messages_sent[kind];
  transmit(n, o.to, std::move(o.envelope), bytes);
}

void Simulator::Impl::release_links(SimNode& n) {
  n.links.release_due(now_us, [&](NodeId to, Envelope&& envelope) {
    const std::size_t bytes = sim::wire_bytes(envelope);
    transmit(n, to, std::move(envelope), bytes);
  });
}

void Simulator::Impl::transmit(SimNode& n, NodeId to, Envelope&& envelope, std::size_t bytes) {
  // Counted as sent by send(), when the node handed it over (before its emulated link, if any).
  const std::size_t kind = envelope.body.index();
  const sim::Transmission t = network.send(now_us, n.id, to, kind, bytes);
  if (options.on_send) options.on_send(SentMessage{now_us, n.id, to, &envelope, bytes, t.dropped, t.arrival_us});
  switch (t.dropped) {
    case sim::DropReason::none: break;
    case sim::DropReason::loss: ++n.c.dropped_loss; return;
    case sim::DropReason::partition: ++n.c.dropped_partition; return;
    case sim::DropReason::rule: ++n.c.dropped_rule; return;
  }
  if (t.duplicated) {
    ++n.c.duplicated;
    ++arrivals_pending;
    queue.push(t.duplicate_arrival_us, Arrival{n.id, to, n.incarnation, t.cut_generation, t.tx_start_us, envelope});
  }
  ++arrivals_pending;
  queue.push(t.arrival_us, Arrival{n.id, to, n.incarnation, t.cut_generation, t.tx_start_us, std::move(envelope)});
}

void Simulator::Impl::on_arrival(Arrival& a) {
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

void Simulator::Impl::on_tick(const TickDue& t) {
  SimNode& n = nodes[t.node];
  if (t.incarnation != n.incarnation || !n.applier.wake().take(now_us)) return;  // superseded by an earlier wish
  offer(n, Tick{});
}

// ---- the loop ----------------------------------------------------------------------------

void Simulator::Impl::dispatch(Payload& p) {
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
        } else if constexpr (std::is_same_v<T, LinkDue>) {
          // A paused process releases nothing: its loop is stopped (resume() releases what came due).
          SimNode& n = nodes[e.node];
          if (e.incarnation == n.incarnation && !n.crashed && !n.paused) release_links(n);
        } else {
          on_fault(e);
        }
      },
      p);
}

void Simulator::Impl::end_run() {
  if (ended) return;
  ended = true;
  if (!completed()) log("reproduce with: " + reproduce_command(*plan, seed, options.faults));
}

// Handles events up to `until_us`; `until_quiet` also ends the run as soon as it is done.
void Simulator::Impl::run(TimeUs until_us, bool until_quiet) {
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
        // Every sink saw the end of every input shortly before the limit (less than a drain
        // window ago, done()): the output is complete, only the pairs' traffic went on.
        if (sinks_total > 0 && sinks_unfinished > 0)
          errors.push_back("time limit: the run reached " + format_s(until_us) + " of virtual time before " +
                           std::to_string(sinks_unfinished) + " of " + std::to_string(sinks_total) +
                           " sinks saw the end of every input");
        if (sinks_total > 0 && sinks_unfinished > 0) stall = errors.back();
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

// ---- the public face ---------------------------------------------------------------------

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

std::vector<std::string> Simulator::add_fault(const FaultSpec& fault) {
  Impl& m = *impl_;
  if (us_from_s(fault.at_s) < m.now_us) {
    return {"the fault starts at " + std::to_string(fault.at_s) + " s, before the simulator's now (" +
            std::to_string(static_cast<double>(m.now_us) / 1e6) + " s)"};
  }
  std::vector<FaultSpec> all = m.options.faults;
  all.push_back(fault);
  auto problems = validate_faults(*m.plan, all);
  if (!problems.empty()) return problems;
  m.options.faults = std::move(all);
  for (FaultAction action : fault_actions(*m.plan, {fault})) {
    action.fault = m.options.faults.size() - 1;
    m.queue.push(action.at_us, FaultEdge{action});
    ++m.fault_edges_pending;
  }
  return {};
}

const std::vector<TraceEvent>& Simulator::events() const { return impl_->events; }
const std::vector<Delivery>& Simulator::deliveries() const { return impl_->deliveries; }
bool Simulator::crashed(NodeId node) const { return impl_->nodes.at(node).crashed; }
bool Simulator::paused(NodeId node) const { return impl_->nodes.at(node).paused; }

TimeUs Simulator::settled_us() const {
  const Impl& m = *impl_;
  TimeUs settled = m.now_us + 1;
  for (const auto& n : m.nodes)
    if (!n.crashed && (n.busy || n.held)) settled = std::min(settled, n.busy_since_us);
  return settled;
}

TimeUs Simulator::next_event_us() const { return impl_->queue.empty() ? kNever : impl_->queue.next_time(); }

void Simulator::run_until_quiet() { impl_->run(impl_->limit_us, true); }
void Simulator::run_until(TimeUs t_us) { impl_->run(t_us, false); }
bool Simulator::ended() const { return impl_->ended; }
bool Simulator::can_end() const {
  const Impl& m = *impl_;
  return m.fatal || m.done() || m.went_quiet || m.now_us >= m.limit_us;
}
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

}  // namespace hapair
