// Result collection of a real run (launch_run.h): the control messages every node sends (Hello,
// trace batches, stats, sink deliveries), stopping and reaping every node at the end, and the
// RunResult with its events and deliveries in time order.
//
// Paper: section 6 measures each run from what the servers report; here the nodes' reports
// become the same RunResult the simulator gives, so one checker judges both drivers.
//
// Invariant: no child outlives the run (StopRun, then SIGKILL of what is left, then reap), and a
// child that exits without the launcher killing it is an error and, during the run, a "crash"
// event.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "driver/gauges.h"
#include "launch/launch_run.h"
#include "runtime/node_host.h"

namespace hapair::launcher {

void Launch::on_message(const ControlServer::Incoming& incoming, bool stopping) {
  const Message& body = incoming.envelope.body;
  if (const auto* hello = std::get_if<Hello>(&body)) {
    on_hello(incoming.peer, *hello);
    return;
  }
  auto it = by_peer_.find(incoming.peer);
  if (it == by_peer_.end()) {
    ++unknown_messages_;
    if (unknown_messages_ == 1)
      say("hapair: ignoring a " + std::string(message_kind_name(body)) + " message from an unknown peer");
    return;
  }
  const NodeId id = it->second;
  NodeState& node = nodes_[id];
  if (const auto* reply = std::get_if<ClockReply>(&body)) {
    if (clock_probes_) clock_probes_->on_reply(id, *reply, probe_clock_us());
    return;
  }
  // A node on another host reports times by its host's clock: put on ours when the host's offset
  // is known to differ from 0 (RemoteHosts::correction_us).
  const TimeUs shift_us = remote_ && node.host != kThisMachine ? remote_->correction_us(node.host) : 0;
  if (const auto* traces = std::get_if<TraceBatch>(&body)) {
    for (const TraceEvent& event : traces->events) {
      result_.events.push_back(event);
      result_.events.back().at_us -= shift_us;
      if (event.kind == TraceKind::fatal) {
        node.fatal = true;
        node.fatal_traced = true;
        error("node " + node.name + " stopped with a fatal error: " + event.text);
      }
    }
  } else if (const auto* stats = std::get_if<NodeStats>(&body)) {
    Metrics& metrics = result_.counters[node.name];
    metrics = node.earlier_incarnations;
    for (const Counter& counter : stats->counters) {
      metrics[counter.name] += counter.value;
      if (is_sampled_gauge(counter.name))
        result_.samples.push_back(MetricSample{stats->at_us - shift_us, node.name, counter.name, counter.value});
    }
    quiet_.report(now_or_zero(), id, metrics);
    if (stats->final) node.final_stats = true;
  } else if (const auto* batch = std::get_if<DeliveryBatch>(&body)) {
    if (!batch->deliveries.empty()) quiet_.activity(now_or_zero());
    for (const Delivery& delivery : batch->deliveries) {
      result_.deliveries.push_back(delivery);
      result_.deliveries.back().at_us -= shift_us;
    }
    result_.merge_orders.insert(result_.merge_orders.end(), batch->merge_orders.begin(), batch->merge_orders.end());
    if (batch->end_of_output && sinks_.count(id)) ended_sinks_.insert(id);
  } else if (!stopping) {
    say("hapair: ignoring an unexpected " + std::string(message_kind_name(body)) + " message from " + node.name);
  }
}

void Launch::on_hello(const std::string& peer, const Hello& hello) {
  const NodeId id = plan_.node_id(hello.node_name);
  if (id == kNoNode) {
    say("hapair: ignoring a hello from unknown node '" + hello.node_name + "'");
    return;
  }
  NodeState& node = nodes_[id];
  if (node.hello) {
    say("hapair: ignoring a second hello from node " + node.name);
    return;
  }
  if (node.restarted_at_us != kNever) {
    on_restarted_hello(id, peer, hello);
    return;
  }
  node.hello = true;
  node.peer = peer;
  node.endpoint = hello.endpoint;
  node.crash_line = hello.crash_line_endpoint;
  by_peer_[peer] = id;
}

// The second Hello of a restarted node: it gets the run's Directory and runs from now on.
void Launch::on_restarted_hello(NodeId id, const std::string& peer, const Hello& hello) {
  NodeState& node = nodes_[id];
  if (hello.endpoint != node.endpoint) {
    // Every peer knows only the first endpoint; a node elsewhere would be unreachable.
    error("restarted node " + node.name + " announced the data endpoint " + hello.endpoint + " instead of " +
          node.endpoint + ", which every peer knows it by");
    abort_run_ = true;
    return;
  }
  if (hello.crash_line_endpoint != node.crash_line) {
    // Its partner reconnects its crash line to the first address only: without it, a second
    // crash would be found by heartbeats alone. Said, not fatal.
    say("hapair: restarted node " + node.name + " announced the crash line " + hello.crash_line_endpoint +
        " instead of " + node.crash_line + "; its partner detects its next crash by heartbeats");
  }
  node.hello = true;
  node.peer = peer;
  by_peer_[peer] = id;
  if (!control_->send(peer, Envelope{Header{kNoNode, 0, now_or_zero()}, directory_})) {
    error("cannot send the directory to restarted node " + node.name + " (it disconnected)");
    abort_run_ = true;
  }
}

// ---- the end ----------------------------------------------------------------------------

// Stops every node that still runs: StopRun, wait for final stats and exits, SIGKILL what is
// left, reap everything.
void Launch::stop_all() {
  if (interrupted()) {
    result_.interrupted = true;
    error(std::string("interrupted by ") + (interrupt_signal() == SIGTERM ? "SIGTERM" : "SIGINT") +
          "; every node process was killed");
    kill_and_reap_all();
    return;
  }
  if (control_) {
    for (NodeId id = 0; id < nodes_.size(); ++id) {
      NodeState& node = nodes_[id];
      if (node.paused && node.process.running()) {
        if (node.host != kThisMachine) signal_remote(id, "CONT", std::nullopt);
        else node.process.signal(SIGCONT);
        node.paused = false;
      }
      if (node.restarted_at_us != kNever && !node.hello && node.process.running()) {
        // Every sink saw the end of its input while the restarted process was still starting (a
        // late restart on a loaded machine: cases 258 and 936 of the real campaign). Nothing of
        // the output depended on it, and check_restarted_hellos gives it hello_timeout_s during
        // the run: said, not an error. A run that did not complete keeps it as an error.
        const std::string what = "restarted node " + node.name + " had not said hello when the run ended (" +
                                 format_seconds(static_cast<double>(now_or_zero() - node.restarted_at_us) / 1e6) +
                                 " s after its restart); it was killed";
        if (result_.completed) say("hapair: " + what);
        else error(what);
      }
      if (!node.hello || node.killed || (!options_.manual && !node.process.running())) continue;
      node.stop_sent = control_->send(node.peer, Envelope{Header{kNoNode, 0, now_or_zero()}, StopRun{false}});
    }
    const RunClock stopping = RunClock::starting_now();
    const TimeUs timeout_us = static_cast<TimeUs>(options_.stop_timeout_s * 1e6);
    while (stopping.now_us() < timeout_us && !interrupted()) {
      bool waiting = false;
      for (NodeId id = 0; id < nodes_.size(); ++id) {
        NodeState& node = nodes_[id];
        if (!node.stop_sent) continue;
        if (!options_.manual) reap(id, true);
        // The final stats can arrive after the exit is seen: both are awaited.
        if (node.process.running() || !node.final_stats) waiting = true;
      }
      if (!waiting) break;
      receive_burst(10'000, true);
    }
    // Final messages that arrived together with the exits.
    receive_burst(0, true);
    for (NodeId id = 0; id < nodes_.size(); ++id) {
      const NodeState& node = nodes_[id];
      if (options_.manual && node.stop_sent && !node.final_stats)
        error("node " + node.name + " sent no final stats within " + format_seconds(options_.stop_timeout_s) +
              " s of StopRun");
    }
  }
  kill_and_reap_all();
}

void Launch::kill_and_reap_all() {
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    NodeState& node = nodes_[id];
    if (!node.process.running()) continue;
    if (!interrupted() && !node.killed && node.stop_sent)
      error("node " + node.name + " did not exit within " + format_seconds(options_.stop_timeout_s) +
            " s of StopRun and was killed");
    node.process.signal(SIGKILL);
    node.process.wait();
  }
}

// Collects the exit of child `id` if it has exited; true when it did just now. An exit the
// launcher did not cause is an error (and, during the run, a "crash" event).
bool Launch::reap(NodeId id, bool stopping) {
  NodeState& node = nodes_[id];
  if (!node.process.running()) return false;
  const std::optional<ChildExit> exit = node.process.try_wait();
  if (!exit) return false;
  if (node.killed) return true;
  if (stopping && node.stop_sent && exit->clean()) return true;
  // A fatal error ends the run; its reason arrives as a "fatal" trace event (possibly after
  // the exit is seen here) and becomes its own error.
  if (exit->exited_with(kNodeExitFatal)) {
    node.fatal = true;
    echo_log(id);
    return true;
  }
  std::string how = exit->describe();
  if (node.host != kThisMachine) {
    // The child is the node's ssh session: its exit code is the node's, except 255.
    const std::string host = options_.hosts.hosts->hosts[node.host].name;
    how += exit->exited_with(255) ? " (from ssh: the node was killed by a signal on host " + host +
                                        ", or ssh lost the connection to it)"
                                  : " (on host " + host + ")";
  }
  if (stopping && node.stop_sent) {
    error("node " + node.name + " exited with " + how + " after StopRun");
  } else {
    error("node " + node.name + " exited unexpectedly with " + how);
    quiet_.set_down(id, true);
    result_.events.push_back(TraceEvent(now_or_zero(), id, TraceKind::exited).with_text(how));
  }
  echo_log(id);
  return true;
}

RunResult Launch::finish_result() {
  remove_isolation();  // every node was reaped (stop_all)
  close_hosts();
  if (clock_probes_) result_.clock_error_bound_us = clock_probes_->run_error_bound_us();
  for (const NodeState& node : nodes_)
    if (node.fatal && !node.fatal_traced)
      error("node " + node.name + " exited with a fatal error (exit code " + std::to_string(kNodeExitFatal) +
            ") whose reason never reached the launcher");
  std::stable_sort(result_.events.begin(), result_.events.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.at_us < b.at_us; });
  std::stable_sort(result_.deliveries.begin(), result_.deliveries.end(),
                   [](const Delivery& a, const Delivery& b) { return a.at_us < b.at_us; });
  if (result_.end_us == 0) result_.end_us = now_or_zero();
  if (control_ && control_->decode_dropped() > 0)
    say("hapair: dropped " + std::to_string(control_->decode_dropped()) + " malformed control messages");
  if (!log_dir_.empty()) {
    // An interrupted run's logs are of no use: the folder goes too.
    if (log_dir_is_temp_ && (result_.errors.empty() || interrupted())) {
      for (const NodeState& node : nodes_) unlink(node.log_path.c_str());
      if (options_.topology_path.empty()) unlink(topology_path_.c_str());
      if (options_.hosts.hosts) {
        unlink((log_dir_ + "/hosts.json").c_str());
        for (const HostSpec& host : options_.hosts.hosts->hosts) unlink((log_dir_ + "/host-" + host.name + ".log").c_str());
      }
      rmdir(log_dir_.c_str());
    } else if (!result_.errors.empty()) {
      std::fprintf(stderr, "hapair: node logs are in %s\n", log_dir_.c_str());
    }
  }
  return std::move(result_);
}

// hosts.json: the hosts (address, run folder, binary, clock offset and bound), where each node
// ran, and every signal sent on a host with its instant on the run's clock and that bound.
std::string Launch::hosts_json() const {
  nlohmann::ordered_json doc;
  doc["hosts_file"] = options_.hosts.hosts->source_file;
  doc["control_endpoint"] = advertised_;
  doc["hosts"] = nlohmann::ordered_json::parse(remote_->describe_json());
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    nlohmann::ordered_json n;
    n["node"] = nodes_[id].name;
    n["host"] = options_.hosts.hosts->hosts[nodes_[id].host].name;
    n["endpoint"] = nodes_[id].bind;
    nodes.push_back(std::move(n));
  }
  doc["nodes"] = std::move(nodes);
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  for (const RemoteFaultRecord& r : remote_faults_) {
    nlohmann::ordered_json f;
    f["node"] = r.node;
    f["host"] = r.host;
    f["signal"] = r.signal == "LOSS"   ? std::string("host loss: links dropped, then SIGKILL")
                  : r.signal == "CUT"  ? std::string("link cut (nftables drops the peer's address)")
                  : r.signal == "HEAL" ? std::string("link healed")
                  : r.signal == "LIMIT" ? std::string("bandwidth limit put (tc tbf on the traffic to the peer)")
                  : r.signal == "UNLIMIT" ? std::string("bandwidth limit lifted")
                  : r.signal == "HOSTSTOP" ? std::string("host pause: SIGSTOP to every node there")
                  : r.signal == "HOSTCONT" ? std::string("host pause ends: SIGCONT to every node there")
                                       : "SIG" + r.signal;
    f["at_us"] = r.at_us;
    f["error_bound_us"] = r.error_bound_us;
    f["ssh_round_trip_us"] = r.launcher_window_us;
    faults.push_back(std::move(f));
  }
  doc["signals"] = std::move(faults);
  // The clock probes over the control channel: every round's estimate per host, what was
  // applied and the error that remains (hosts/clock_probes.h).
  if (clock_probes_) {
    nlohmann::ordered_json clocks;
    clocks["method"] = "NTP probes over the control channel (t1 launcher, t2/t3 node, t4 launcher)";
    clocks["probes_per_node_and_round"] = options_.hosts.clock_probes.probes_per_target;
    clocks["round_interval_s"] = options_.hosts.clock_probe_interval_s;
    const std::optional<std::int64_t> run_bound = clock_probes_->run_error_bound_us();
    clocks["cross_host_error_bound_us"] = run_bound ? nlohmann::ordered_json(*run_bound) : nlohmann::ordered_json(nullptr);
    clocks["stray_replies"] = clock_probes_->stray_replies();
    nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
    for (std::size_t h = 0; h < options_.hosts.hosts->hosts.size(); ++h) {
      const HostClockSummary summary = clock_probes_->host_summary(h);
      nlohmann::ordered_json host;
      host["host"] = options_.hosts.hosts->hosts[h].name;
      host["offset_us"] = summary.first ? nlohmann::ordered_json(summary.first->offset_us()) : nlohmann::ordered_json(nullptr);
      host["error_bound_us"] = summary.first ? nlohmann::ordered_json(summary.first->error_bound_us()) : nlohmann::ordered_json(nullptr);
      host["round_trip_us"] = summary.first ? nlohmann::ordered_json(summary.first->round_trip_us()) : nlohmann::ordered_json(nullptr);
      host["time_correction_us"] = summary.correction_us;
      host["remaining_error_bound_us"] =
          summary.error_bound_us ? nlohmann::ordered_json(*summary.error_bound_us) : nlohmann::ordered_json(nullptr);
      nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
      for (const ClockRound& r : clock_probes_->rounds()) {
        const HostClockRound& hr = r.hosts[h];
        nlohmann::ordered_json round;
        round["at_us"] = r.began_us - directory_.epoch_realtime_us;
        round["offset_us"] = hr.estimate ? nlohmann::ordered_json(hr.estimate->offset_us()) : nlohmann::ordered_json(nullptr);
        round["error_bound_us"] = hr.estimate ? nlohmann::ordered_json(hr.estimate->error_bound_us()) : nlohmann::ordered_json(nullptr);
        round["probes_used"] = hr.used;
        round["probes_dropped"] = hr.dropped;
        round["probes_lost"] = hr.lost;
        rounds.push_back(std::move(round));
      }
      host["rounds"] = std::move(rounds);
      hosts.push_back(std::move(host));
    }
    clocks["hosts"] = std::move(hosts);
    doc["clocks"] = std::move(clocks);
  }
  return doc.dump(2);
}

}  // namespace hapair::launcher
