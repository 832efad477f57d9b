// Node hosting in the simulator (simulator_impl.h): each plan node's core created through the
// core factory, and the faults applied to it on schedule: a crash (the core is dropped, its
// queued work and unsent messages with it, and its pair partner's connection detector told one
// link latency later), a restart (a fresh core that rejoins as the standby), a pause that
// stretches the computation in progress, and the partition and heal of a link.
//
// Paper: Hwang et al. (ICDE 2005), section 2: a fail-stop crash loses the server's state; the
// pause, partition and restart are the failures docs/FAULTS.md adds.
//
// Invariant: a crash bumps the node's incarnation, so every event and release meant for the old
// one is ignored; a paused node handles nothing until it resumes.
#include "protocols/check.h"
#include "sim/simulator_impl.h"

namespace hapair {

using namespace simhost;

void Simulator::Impl::create_core(SimNode& n) {
  n.core = factory(plan, n.id);
  HAPAIR_CHECK_MSG(n.core != nullptr, "the core factory made no core for node " << n.name);
  if (links_emulated) n.links = OutgoingLinks<Envelope>(*plan, n.id);
  n.crashed_at_us.push_back(kNever);
}

void Simulator::Impl::crash(SimNode& n) {
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
  // What waited on its emulated links dies with the process.
  const std::size_t unsent = n.links.clear();
  n.c.dropped_unsent += static_cast<std::int64_t>(unsent);
  n.links_before = total_counters(n.links, n.links_before);
  n.links = OutgoingLinks<Envelope>();
  quiet.set_down(n.id, true);
  trace(n.id, TraceKind::failure).with(TraceKey::fault, FaultKind::crash);
  close_connections_of(n);
}

// A crashed process's kernel closes its connections; its pair partner's connection detector
// sees that one link latency later (a partition in between keeps the news from it).
void Simulator::Impl::close_connections_of(const SimNode& n) {
  if (plan->settings().detector != DetectorKind::connection_heartbeat) return;
  // A node of no fragment (the coordinator of global checkpoints) has no replicas to tell.
  if (!plan->runs_fragment(n.id)) return;
  const PlanFragment& f = plan->fragments.at(plan->nodes.at(n.id).fragment);
  std::vector<NodeId> watchers = f.replicas();
  // The coordinator watches the fragments whose approach it coordinates.
  if (plan->coordinator != kNoNode && plan->traits(f.id).coordinator) watchers.push_back(plan->coordinator);
  for (const NodeId partner : watchers) {
    if (partner == kNoNode || partner == n.id || nodes[partner].crashed) continue;
    queue.push(now_us + network.latency_us(), ConnectionClosed{partner, nodes[partner].incarnation, n.id});
  }
}

void Simulator::Impl::on_connection_closed(const ConnectionClosed& c) {
  SimNode& to = nodes[c.to];
  if (to.crashed || to.incarnation != c.to_incarnation || network.is_cut(c.lost, c.to)) return;
  // The runtime reads its partner watch between two messages: the report does not wait
  // behind the node's queued input.
  if (to.fifo.size() >= options.node_fifo_events_max) return;
  to.fifo.push_front(PeerLost{c.lost, Detector::connection});
  ++fifo_events;
  work(to);
}

void Simulator::Impl::restart(SimNode& n) {
  HAPAIR_CHECK_MSG(n.crashed, "restart of running node " << n.name);
  n.crashed = false;
  create_core(n);
  if (n.is_sink && n.applier.finished()) ++sinks_unfinished;
  n.applier.reset();
  quiet.set_down(n.id, false);
  trace(n.id, TraceKind::restart).with(TraceKey::fault, FaultKind::restart);
  offer(n, Start{true});
}

void Simulator::Impl::pause(SimNode& n, TimeUs duration_us) {
  if (n.crashed) return;  // validate_faults rejects this; a restart in between cannot happen
  n.paused = true;
  n.paused_at_us = now_us;
  trace(n.id, TraceKind::failure).with(TraceKey::fault, FaultKind::pause).with(TraceKey::duration_us, duration_us);
}

void Simulator::Impl::resume(SimNode& n) {
  if (n.crashed || !n.paused) return;  // crashed while paused: the crash ended the pause
  n.paused = false;
  trace(n.id, TraceKind::resume).with(TraceKey::fault, FaultKind::pause);
  release_links(n);
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

void Simulator::Impl::on_fault(const FaultEdge& edge) {
  const FaultAction& a = edge.action;
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
      trace(n.id, TraceKind::failure)
          .with(TraceKey::fault, FaultKind::partition)
          .with(TraceKey::peer, a.peer)
          .with(TraceKey::duration_us, a.duration_us);
      break;
    case FaultAction::Kind::heal:
      network.heal(n.id, a.peer);
      trace(n.id, TraceKind::heal).with(TraceKey::fault, FaultKind::partition).with(TraceKey::peer, a.peer);
      break;
  }
}

}  // namespace hapair
