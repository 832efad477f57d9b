// The fault actions of a real run (launch_run.h): a crash is a SIGKILL of the node's process (a
// Kill message in manual mode), a pause a SIGSTOP and its resume a SIGCONT, a restart a new
// process that rejoins the fragment as the standby, bound to the node's old data endpoint, and a
// partition nftables DROP rules between the two nodes' network namespaces until its heal.
//
// Paper: Hwang et al. (ICDE 2005) assume fail-stop crashes (section 2) and restore nothing; the
// pause, the partition and the restart are the failures docs/FAULTS.md adds.
//
// Invariant: the failure event of a crash carries the instant of the SIGKILL on the nodes' clock,
// and a restarted node keeps the driver counters of its earlier incarnations.
#include <signal.h>

#include <algorithm>
#include <cmath>

#include "launch/launch_run.h"
#include "protocols/check.h"

namespace hapair::launcher {
namespace {

// Counters that the driver fills and that add up over a node's incarnations (a restarted process
// starts them from zero), as the simulator keeps its own counters across restarts. The core's
// counters describe the current incarnation only, in both drivers.
bool adds_up_over_incarnations(const std::string& name) {
  return name.rfind("bytes_sent.", 0) == 0 || name.rfind("messages_sent.", 0) == 0 || name == "cpu_us" ||
         name.rfind("cpu_us.", 0) == 0 ||
         name == "decode_dropped";
}

}  // namespace

// A signal sent on the node's host over its ssh master, while the run goes on (a remote
// command costs some 100 ms on a loaded machine); the event gets the instant it happened there,
// put on the run's clock with the host's clock offset and cut to the launcher's own window
// (remote_instant).
void Launch::signal_remote(NodeId id, const std::string& signal_name, std::optional<TraceEvent> event) {
  collect_remote_signals(true, id);  // one at a time per node: a CONT never overtakes its STOP
  SignalUnderWay s;
  s.node = id;
  s.pending = remote_->begin_signal(nodes_[id].host, nodes_[id].name, signal_name);
  s.event = std::move(event);
  signals_under_way_.push_back(std::move(s));
}

void Launch::lose_host(std::size_t loss) {
  const std::size_t host = loss_hosts_.at(loss);
  SignalUnderWay s;
  const TimeUs now = clock_->now_us();
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    NodeState& node = nodes_[id];
    if (node.host != host || node.killed) continue;
    node.killed = true;
    quiet_.set_down(id, true);
    if (s.node == kNoNode) s.node = id;
    else s.also.push_back(id);
  }
  if (s.node == kNoNode) {
    say("hapair: loss of host " + options_.hosts.losses[loss].host + " skipped: no node of the run runs there");
    return;
  }
  collect_remote_signals(true);
  s.event = TraceEvent(now, s.node, TraceKind::failure).with(TraceKey::fault, FaultKind::crash);
  s.pending = remote_->begin_host_loss(host);
  signals_under_way_.push_back(std::move(s));
}

void Launch::pause_host(std::size_t pause, bool stop) {
  if (!(stop ? host_pauses_begun_ : host_pauses_ended_).insert(pause).second) return;  // done with its first node
  const std::size_t host = pause_hosts_.at(pause);
  const TimeUs now = clock_->now_us();
  const std::int64_t duration_us = std::llround(options_.hosts.pauses.at(pause).duration_s * 1e6);
  SignalUnderWay s;
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    NodeState& node = nodes_[id];
    // A node crashed (or lost with another fault) meanwhile is neither stopped nor continued;
    // its resume is still recorded, as for a paused node killed while paused.
    if (node.host != host) continue;
    if (node.killed || !node.process.running()) {
      if (!stop && node.paused) {
        node.paused = false;
        result_.events.push_back(TraceEvent(now, id, TraceKind::resume).with(TraceKey::fault, FaultKind::pause));
      }
      continue;
    }
    if (!stop && !node.paused) continue;
    node.paused = stop;
    if (s.node == kNoNode) s.node = id;
    else s.also.push_back(id);
  }
  if (s.node == kNoNode) {
    say("hapair: " + std::string(stop ? "pause" : "end of the pause") + " of host " + options_.hosts.pauses[pause].host +
        " skipped: no node of the run runs there");
    return;
  }
  collect_remote_signals(true);  // a CONT never overtakes its STOP
  s.event = stop ? TraceEvent(now, s.node, TraceKind::failure).with(TraceKey::fault, FaultKind::pause).with(TraceKey::duration_us, duration_us)
                 : TraceEvent(now, s.node, TraceKind::resume).with(TraceKey::fault, FaultKind::pause);
  s.pending = remote_->begin_host_signal(host, stop ? "STOP" : "CONT");
  signals_under_way_.push_back(std::move(s));
}

void Launch::perform_limit(std::size_t limit, bool on) {
  const auto [a, b] = limit_links_.at(limit);
  const HostLinkLimitSpec& spec = options_.hosts.limits.at(limit);
  collect_remote_signals(true);  // an end never overtakes its start
  for (const std::size_t host : {a, b}) {
    SignalUnderWay s;
    s.pending = remote_->begin_limit(host, host == a ? b : a, limit_slot(limit), spec.rate_bits_per_s, on);
    if (host == a && on && spec.duration_s > 0) s.limit_begun = limit;
    signals_under_way_.push_back(std::move(s));
  }
}

void Launch::collect_remote_signals(bool wait, NodeId only) {
  for (std::size_t i = 0; i < signals_under_way_.size();) {
    SignalUnderWay& s = signals_under_way_[i];
    if (only != kNoNode && s.node != only) {
      ++i;
      continue;
    }
    const std::optional<RemoteSignal> done = wait ? remote_->wait_signal(s.pending) : remote_->poll_signal(s.pending);
    if (!done) {
      ++i;
      continue;
    }
    if (!done->ok) {
      error(done->error);
      abort_run_ = true;
    } else {
      const bool link = s.pending.signal == "CUT" || s.pending.signal == "HEAL" || s.pending.signal == "LIMIT" ||
                        s.pending.signal == "UNLIMIT";
      const RemoteInstant instant = remote_instant(*done, remote_->offset(s.pending.host));
      RemoteFaultRecord record;
      record.node = link || s.node == kNoNode ? s.pending.node : nodes_[s.node].name;
      record.host = options_.hosts.hosts->hosts[s.pending.host].name;
      record.signal = s.pending.signal;
      record.at_us = instant.at_us - directory_.epoch_realtime_us;
      record.error_bound_us = instant.error_bound_us;
      record.launcher_window_us = done->answered_us - done->sent_us;
      remote_faults_.push_back(record);
      if (s.event) {
        s.event->at_us = record.at_us;
        result_.events.push_back(*s.event);
      }
      for (TraceEvent& e : s.more_events) {
        e.at_us = record.at_us;
        result_.events.push_back(e);
      }
      // The heals of a cut run from when it was in place, so the link is down for the whole
      // duration however long ssh took.
      for (const FaultAction& cut : s.ends) insert_in_time_order(actions_, next_action_, end_action(cut, record.at_us));
      // A bandwidth limit lasts its duration from when it was in place.
      if (s.limit_begun) {
        const LimitStep end{record.at_us + static_cast<TimeUs>(std::llround(options_.hosts.limits[*s.limit_begun].duration_s * 1e6)),
                            *s.limit_begun, false};
        const auto at = std::upper_bound(limit_steps_.begin() + static_cast<std::ptrdiff_t>(next_limit_step_), limit_steps_.end(),
                                         end, [](const LimitStep& a, const LimitStep& b) { return a.at_us < b.at_us; });
        limit_steps_.insert(at, end);
      }
      // A host loss or pause: the same instant for every node that was on the host.
      for (NodeId other : s.also) {
        RemoteFaultRecord also = record;
        also.node = nodes_[other].name;
        remote_faults_.push_back(also);
        if (!s.event) continue;
        TraceEvent e = *s.event;
        e.node = other;
        result_.events.push_back(e);
      }
    }
    signals_under_way_.erase(signals_under_way_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void Launch::perform(const FaultAction& action) {
  NodeState& node = nodes_[action.node];
  // Only a planned pause has a duration (a live fault is a crash: LaunchOptions::live_faults).
  const std::int64_t pause_ms =
      action.kind == FaultAction::Kind::pause ? std::llround(result_.faults.at(action.fault).duration_s * 1e3) : 0;
  const TimeUs now = clock_->now_us();
  quiet_.activity(now);
  switch (action.kind) {
    case FaultAction::Kind::crash:
      if (const auto loss = loss_of_fault_.find(action.fault); loss != loss_of_fault_.end()) {
        if (losses_done_.insert(loss->second).second) lose_host(loss->second);
        return;  // the other crashes of the loss were performed with the first
      }
      if (node.killed || (!options_.manual && !node.process.running())) {
        say("hapair: crash fault of " + node.name + " skipped: the node is not running");
        return;
      }
      if (node.host != kThisMachine) {
        node.killed = true;
        quiet_.set_down(action.node, true);
        signal_remote(action.node, "KILL", TraceEvent(now, action.node, TraceKind::failure).with(TraceKey::fault, FaultKind::crash));
        return;
      }
      if (options_.manual) {
        control_->send(node.peer, Envelope{Header{kNoNode, 0, now}, Kill{0}});
      } else {
        node.process.signal(SIGKILL);
      }
      node.killed = true;
      quiet_.set_down(action.node, true);
      result_.events.push_back(TraceEvent(now, action.node, TraceKind::failure).with(TraceKey::fault, FaultKind::crash));
      return;
    case FaultAction::Kind::pause:
      if (const auto p = host_pause_of_fault_.find(action.fault); p != host_pause_of_fault_.end()) {
        pause_host(p->second, true);
        return;
      }
      if (node.killed || (!options_.manual && !node.process.running())) return;
      if (node.host != kThisMachine) {
        node.paused = true;
        signal_remote(action.node, "STOP",
                      TraceEvent(now, action.node, TraceKind::failure)
                          .with(TraceKey::fault, FaultKind::pause)
                          .with(TraceKey::duration_us, pause_ms * 1000));
        return;
      }
      if (options_.manual) {
        control_->send(node.peer, Envelope{Header{kNoNode, 0, now}, Kill{pause_ms}});
      } else {
        node.process.signal(SIGSTOP);
        node.paused = true;
      }
      result_.events.push_back(TraceEvent(now, action.node, TraceKind::failure)
                                   .with(TraceKey::fault, FaultKind::pause)
                                   .with(TraceKey::duration_us, pause_ms * 1000));
      return;
    case FaultAction::Kind::resume:
      if (const auto p = host_pause_of_fault_.find(action.fault); p != host_pause_of_fault_.end()) {
        pause_host(p->second, false);
        return;
      }
      if (options_.manual) {
        result_.events.push_back(TraceEvent(now, action.node, TraceKind::resume).with(TraceKey::fault, FaultKind::pause));
        return;
      }
      if (!node.paused) return;
      node.paused = false;
      if (node.host != kThisMachine) {
        const TraceEvent resumed = TraceEvent(now, action.node, TraceKind::resume).with(TraceKey::fault, FaultKind::pause);
        // A node killed while paused (a crash, or the loss of its host) is gone on its host
        // even while its ssh session here has not ended yet: nothing to continue.
        if (node.process.running() && !node.killed) signal_remote(action.node, "CONT", resumed);
        else result_.events.push_back(resumed);
        return;
      }
      if (node.process.running()) node.process.signal(SIGCONT);
      result_.events.push_back(TraceEvent(now, action.node, TraceKind::resume).with(TraceKey::fault, FaultKind::pause));
      return;
    case FaultAction::Kind::restart:
      restart(action.node, now);
      return;
    case FaultAction::Kind::partition:
      if (placement_) cut_hosts(action, true);
      else partition(action, true);
      return;
    case FaultAction::Kind::heal:
      if (placement_) cut_hosts(action, false);
      else partition(action, false);
      return;
  }
}

// A partition between two nodes, or its heal: nftables drops in both nodes' network namespaces
// (net_isolation.h), whether the processes run, are paused or crashed (a restarted node comes
// back into the same namespace, still cut off until the heal). The trace events are the
// simulator's, at the instant the rules are in place (nft takes some milliseconds).
void Launch::partition(const FaultAction& action, bool cut) {
  std::string why;
  const bool done = cut ? isolation_->cut(action.node, action.peer, why) : isolation_->heal(action.node, action.peer, why);
  const TimeUs now = clock_->now_us();
  if (!done) {
    error(std::string(cut ? "cannot cut " : "cannot heal ") + nodes_[action.node].name + "<->" +
          nodes_[action.peer].name + ": " + why);
    abort_run_ = true;
    return;
  }
  if (cut) {
    result_.events.push_back(TraceEvent(now, action.node, TraceKind::failure)
                                 .with(TraceKey::fault, FaultKind::partition)
                                 .with(TraceKey::peer, action.peer)
                                 .with(TraceKey::duration_us, action.duration_us));
  } else {
    result_.events.push_back(
        TraceEvent(now, action.node, TraceKind::heal).with(TraceKey::fault, FaultKind::partition).with(TraceKey::peer, action.peer));
  }
}

// Across hosts a partition cuts the link between the two nodes' hosts: on each host its
// nftables set drops the other's address (remote_hosts.h, cut_command). The failure (or heal)
// events carry the instant the first host's rule was in place, read there (the other host's
// follows within the same ssh round trip; both are in hosts.json). Cuts of one link nest: the
// link is cut by the first and healed by the heal of the last.
void Launch::cut_hosts(const FaultAction& action, bool cut) {
  const std::size_t a = nodes_[action.node].host;
  const std::size_t b = nodes_[action.peer].host;
  const std::pair<std::size_t, std::size_t> link{std::min(a, b), std::max(a, b)};
  TraceEvent event = cut ? TraceEvent(clock_->now_us(), action.node, TraceKind::failure)
                               .with(TraceKey::fault, FaultKind::partition)
                               .with(TraceKey::peer, action.peer)
                               .with(TraceKey::duration_us, action.duration_us)
                         : TraceEvent(clock_->now_us(), action.node, TraceKind::heal)
                               .with(TraceKey::fault, FaultKind::partition)
                               .with(TraceKey::peer, action.peer);
  int& in_force = cut_links_[link];
  in_force += cut ? 1 : -1;
  HAPAIR_CHECK_MSG(in_force >= 0, "link " << link.first << "-" << link.second << " healed more often than cut");
  // A command for this link still under way (the cut of a pair that shares it at the same
  // instant, or the heal): this one happens with it.
  for (SignalUnderWay& s : signals_under_way_)
    if (s.link == link && s.event && s.pending.signal == (cut ? "CUT" : "HEAL")) {
      s.more_events.push_back(event);
      if (cut) s.ends.push_back(action);
      return;
    }
  if (cut && in_force > 1) {
    // The link is already cut: this pair is cut from now on, nothing to do on the hosts.
    result_.events.push_back(event);
    insert_in_time_order(actions_, next_action_, end_action(action, event.at_us));
    return;
  }
  if (!cut && in_force > 0) {
    // The link stays cut for another partition, so this pair too: its heal comes with the link's.
    heals_waiting_[link].push_back(event);
    return;
  }
  collect_remote_signals(true);  // a heal never overtakes its cut
  SignalUnderWay first;
  first.node = action.node;
  first.event = event;
  first.link = link;
  if (cut) first.ends.push_back(action);
  else first.more_events = std::move(heals_waiting_[link]);
  heals_waiting_.erase(link);
  first.pending = remote_->begin_cut(a, b, cut);
  signals_under_way_.push_back(std::move(first));
  SignalUnderWay second;
  second.link = link;
  second.pending = remote_->begin_cut(b, a, cut);
  signals_under_way_.push_back(std::move(second));
}

// A restart fault: a new process for a node whose crash fault killed it, bound to the same data
// endpoint, started with --rejoin so that its core rejoins the fragment as the standby. Its
// Hello is answered with the run's Directory (the same epoch: it starts at once).
void Launch::restart(NodeId id, TimeUs now) {
  NodeState& node = nodes_[id];
  if (!node.killed) {
    // validate_faults accepts only restarts after a crash; the crash itself was skipped.
    say("hapair: restart of " + node.name + " skipped: its crash fault did not kill it");
    return;
  }
  if (node.process.running()) {
    // SIGKILLed but not reaped yet: the old process must be gone before its port is bound again.
    // On another host the child is its ssh session, which ends when the remote process is gone;
    // it gets the ssh timeout (it ends within milliseconds unless the connection broke).
    if (node.host != kThisMachine) {
      collect_remote_signals(true, id);  // its SIGKILL is done
      const RunClock waiting = RunClock::starting_now();
      while (node.process.running() && !node.process.try_wait() &&
             waiting.now_us() < static_cast<TimeUs>(options_.hosts.ssh_timeout_s * 1e6))
        waiting.sleep_until(waiting.now_us() + 2'000);
    }
    node.process.kill_and_wait();
  }
  // A fresh state, keeping only what outlives a process: its name, log, endpoint and routing
  // id, and the counters of its earlier incarnations.
  NodeState fresh;
  fresh.name = node.name;
  fresh.log_path = node.log_path;
  fresh.host = node.host;
  fresh.bind = node.bind;
  fresh.endpoint = node.endpoint;
  fresh.crash_line = node.crash_line;
  fresh.peer = node.peer;
  fresh.earlier_incarnations = std::move(node.earlier_incarnations);
  for (const auto& [name, value] : result_.counters[node.name])
    if (adds_up_over_incarnations(name)) fresh.earlier_incarnations[name] = value;
  fresh.restarted_at_us = now;
  node = std::move(fresh);
  if (!spawn(id, true)) {
    abort_run_ = true;
    return;
  }
  quiet_.set_down(id, false);
  result_.events.push_back(TraceEvent(now, id, TraceKind::restart).with(TraceKey::fault, FaultKind::restart));
}

}  // namespace hapair::launcher
