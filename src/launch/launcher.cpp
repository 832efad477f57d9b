// Setup and the run loop of a real run (launch_run.h): the fault schedule checked, the log folder
// and effective topology written, every node started (or, in manual mode, its command printed),
// their Hellos awaited, the Directory sent with the run epoch, and the loop that performs the
// fault actions on time and ends the run when every sink reported end of output or the output
// went quiet.
//
// Paper: section 6's experiments, one process per server, with faults on a schedule.
//
// Invariant: nothing starts before the whole fault schedule was checked (every problem at once),
// and the run ends at the latest duration_s + drain_timeout_s after the epoch.
#include "launch/launcher.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "launch/launch_run.h"
#include "config/topology_file.h"
#include "hosts/host_faults.h"
#include "runtime/crash_line.h"
#include "sim/faults.h"

namespace hapair {
namespace launcher {

RunResult Launch::run() {
  InterruptGuard interrupt_guard;
  if (!place_on_hosts() || !check_faults() || !make_keys() || !prepare_files() || !isolate_nodes() || !open_hosts())
    return finish_result();
  // With the nodes in namespaces of their own, they reach the launcher at its end of their bridge.
  std::string control_bind = options_.control_bind;
  if (isolation_ && control_bind == LaunchOptions{}.control_bind)
    control_bind = "tcp://" + isolation_->launcher_address() + ":*";
  // On other hosts they reach it at the address their sshd saw our connection come from: that
  // one address, never 0.0.0.0 (nothing else may reach the control socket).
  if (remote_ && control_bind == LaunchOptions{}.control_bind) {
    const std::string& address = remote_->control_address();
    if (address.empty()) {
      error(remote_->control_address_problem());
      return finish_result();
    }
    control_bind = "tcp://" + (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":*";
  }
  try {
    control_ = std::make_unique<ControlServer>(control_bind, keys_);
  } catch (const std::exception& e) {
    error(e.what());
    return finish_result();
  }
  // Told to listen beyond this machine (--control, or the address the hosts reach us at): said.
  if (!is_loopback_endpoint(control_->endpoint()) && (remote_ || control_bind == options_.control_bind))
    say("hapair: warning: the control socket listens on " + control_->endpoint() + ", reachable from the network; " +
        (keys_.on() ? "CURVE lets in only the run's own processes"
                    : "anyone who reaches it can send it messages (--secure lets in only the run's own processes)"));
  advertised_ = options_.control_advertise.empty() ? control_->endpoint() : options_.control_advertise;
  if (options_.manual) {
    print_manual_instructions();
  } else if (!spawn_all()) {
    stop_all();
    return finish_result();
  }
  if (wait_for_hellos() && probe_clocks_at_start() && send_directory()) run_until_done();
  stop_all();
  report_refusals();
  return finish_result();
}

// ---- setup ------------------------------------------------------------------------------

// Every problem of the fault schedule at once (the simulator's rules: known nodes, times,
// durations, restarts only of crashed nodes), plus what real processes cannot do here.
bool Launch::check_faults() {
  bool ok = true;
  if (options_.hosts.hosts && options_.manual) {
    error("--manual and --hosts exclude each other: with a hosts file the launcher starts every node itself");
    ok = false;
  }
  if (options_.secure && options_.manual) {
    error("--secure and --manual exclude each other: the launcher hands the run's keys only to the nodes it starts");
    ok = false;
  }
  if (!add_host_losses()) ok = false;
  if (!add_host_pauses()) ok = false;
  if (!add_host_limits()) ok = false;
  if (!add_host_cut_companions()) ok = false;
  for (const FaultSpec& fault : result_.faults) {
    if (fault.kind == FaultKind::partition && options_.hosts.hosts) {
      continue;  // the hosts' link is cut (add_host_cut_companions)
    } else if (fault.kind == FaultKind::partition && !wants_isolation_) {
      wants_isolation_ = true;
      if (options_.manual) {
        error("fault kind partition is not supported in manual mode: the launcher places only the processes it "
              "starts in network namespaces (cut the links by hand, as tests/e2e/netns_test.cpp does)");
        ok = false;
      } else if (const std::string reason = net_isolation_unavailable(); !reason.empty()) {
        error(real_partition_refusal(reason));
        ok = false;
      }
    } else if (fault.kind == FaultKind::restart && options_.manual) {
      error("fault restart of " + fault.node + " is not supported in manual mode: the launcher can only restart "
            "a process it started (restart it by hand with `hapair node ... --rejoin --bind ENDPOINT`)");
      ok = false;
    }
  }
  for (const std::string& problem : validate_faults(plan_, result_.faults)) {
    error(problem);
    ok = false;
  }
  if (!ok) return false;
  // Equal times keep the list order, as in the simulator (driver/fault_schedule.h). The resume
  // of a pause is scheduled when the pause really happens (run_until_done()), so the process is
  // stopped for the whole duration even when the pause runs a little late.
  actions_ = fault_actions(plan_, result_.faults, false);
  return true;
}

bool Launch::make_keys() {
  if (!options_.secure && !options_.hosts.hosts) return true;
  if (const std::string why = curve_unavailable(); !why.empty()) {
    error(why);
    return false;
  }
  try {
    keys_ = options_.keys.on() ? options_.keys : make_run_keys();
  } catch (const std::exception& e) {
    error(std::string("cannot make the run's CURVE keys: ") + e.what());
    return false;
  }
  return true;
}

void Launch::report_refusals() {
  if (!keys_.on()) return;
  std::int64_t at_nodes = 0;
  for (const auto& [name, metrics] : result_.counters) {
    const auto it = metrics.find("curve.refused");
    if (it != metrics.end()) at_nodes += it->second;
  }
  const std::int64_t at_launcher = control_ ? control_->curve_counts().refused : 0;
  if (at_nodes + at_launcher > 0)
    say("hapair: CURVE refused " + std::to_string(at_nodes) + " connections at the nodes' data sockets and " +
        std::to_string(at_launcher) + " at the control socket (no CURVE, or not the run's keys)");
}

bool Launch::prepare_files() {
  if (options_.log_dir.empty()) {
    // $TMPDIR when set (an absolute path), else /tmp.
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && tmp[0] == '/' ? tmp : "/tmp") + "/hapair-run-XXXXXX";
    if (!mkdtemp(pattern.data())) {
      error("cannot create a temporary directory for node logs in " + pattern + ": " + std::strerror(errno));
      return false;
    }
    log_dir_ = pattern;
    log_dir_is_temp_ = true;
    temp_dir_watch_.emplace(std::vector<std::string>{"/bin/rm", "-rf", "--", log_dir_});
  } else {
    log_dir_ = options_.log_dir;
    std::error_code ec;
    std::filesystem::create_directories(log_dir_, ec);
    if (ec) {
      error("cannot create the log directory " + log_dir_ + ": " + ec.message());
      return false;
    }
  }
  for (NodeState& node : nodes_) node.log_path = log_dir_ + "/" + node.name + ".log";
  topology_path_ = options_.topology_path;
  if (topology_path_.empty()) {
    topology_path_ = log_dir_ + "/topology.conf";
    // On several hosts the nodes learn where everyone runs ([placement]): [[link]] tables by host
    // then match the placement, not only the pins (docs/LINKS.md).
    Topology effective = plan_.topology;
    if (placement_)
      for (NodeId id = 0; id < nodes_.size(); ++id)
        effective.placement[nodes_[id].name] = options_.hosts.hosts->hosts[nodes_[id].host].name;
    std::ofstream out(topology_path_);
    out << write_topology(effective);
    if (!out.good()) {
      error("cannot write the effective topology to " + topology_path_);
      return false;
    }
  }
  return true;
}

// A schedule with a partition: the namespaces, links and nftables sets its cuts need, and a
// watcher that removes them should the launcher die before remove_isolation().
bool Launch::isolate_nodes() {
  if (!wants_isolation_) return true;
  std::string why;
  isolation_ = NetIsolation::create(nodes_.size(), why);
  if (!isolation_) {
    error(why);
    return false;
  }
  isolation_watch_.emplace(isolation_->cleanup_command());
  return true;
}

// After every node was reaped (finish_result()).
void Launch::remove_isolation() {
  isolation_.reset();
  isolation_watch_.reset();
}

// Several hosts: every node placed (hosts/placement.h); every problem at once.
bool Launch::place_on_hosts() {
  if (!options_.hosts.hosts) {
    if (!options_.hosts.losses.empty()) {
      error("a host loss needs --hosts: on one machine, crash the nodes instead");
      return false;
    }
    if (!options_.hosts.pauses.empty()) {
      error("a host pause needs --hosts: on one machine, pause the nodes instead (--pause NODE@S+D)");
      return false;
    }
    if (!options_.hosts.limits.empty()) {
      error("a bandwidth limit between hosts needs --hosts: on one machine, emulate the link (--links "
            "bandwidth_bytes_per_s=..., docs/LINKS.md)");
      return false;
    }
    return true;
  }
  PlacementResult placed = place_nodes(plan_, *options_.hosts.hosts);
  for (const std::string& p : placed.problems) error(p);
  if (!placed.placement) return false;
  placement_ = std::move(*placed.placement);
  for (const std::string& w : placement_->warnings) say("hapair: " + w);
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    nodes_[id].host = placement_->of(id).host;
    nodes_[id].bind = placement_->of(id).endpoint;
  }
  return true;
}

// The nodes placed on the host a host fault names (a host of the list or host-of:NODE); the
// host in `host` (0 when it names none: an error then, and false).
bool Launch::nodes_of_named_host(const std::string& name, const std::string& what, std::size_t& host,
                                 std::vector<NodeId>& nodes) {
  std::string problem;
  const std::optional<std::size_t> found = lost_host(name, plan_, *placement_, *options_.hosts.hosts, problem, what);
  host = found.value_or(0);
  if (!found) {
    error(problem);
    return false;
  }
  for (NodeId id = 0; id < nodes_.size(); ++id)
    if (nodes_[id].host == *found) nodes.push_back(id);
  return true;
}

// A host loss is a crash of every node placed on the host, all at its time, performed together
// (lose_host); validate_faults then checks them with the rest of the schedule.
bool Launch::add_host_losses() {
  bool ok = true;
  const std::vector<HostLossSpec>& losses = options_.hosts.losses;
  for (std::size_t l = 0; l < losses.size(); ++l) {
    std::vector<NodeId> on_host;
    ok = nodes_of_named_host(losses[l].host, "host loss", loss_hosts_.emplace_back(), on_host) && ok;
    for (NodeId id : on_host) {
      for (const FaultSpec& f : options_.faults)
        if (f.kind == FaultKind::restart && f.node == nodes_[id].name) {
          error("restart of " + f.node + " with the loss of its host " + losses[l].host +
                " is not supported (its host stays cut off until the end of the run)");
          ok = false;
        }
      FaultSpec crash;
      crash.kind = FaultKind::crash;
      crash.node = nodes_[id].name;
      crash.at_s = losses[l].at_s;
      loss_of_fault_[result_.faults.size()] = l;
      result_.faults.push_back(crash);
    }
  }
  return ok;
}

// A host pause is a pause of every node placed on the host, all at its time for its duration,
// performed together (pause_host); validate_faults then checks them with the rest.
bool Launch::add_host_pauses() {
  bool ok = true;
  const std::vector<HostPauseSpec>& pauses = options_.hosts.pauses;
  for (std::size_t p = 0; p < pauses.size(); ++p) {
    std::vector<NodeId> on_host;
    ok = nodes_of_named_host(pauses[p].host, "host pause", pause_hosts_.emplace_back(), on_host) && ok;
    for (NodeId id : on_host) {
      FaultSpec pause;
      pause.kind = FaultKind::pause;
      pause.node = nodes_[id].name;
      pause.at_s = pauses[p].at_s;
      pause.duration_s = pauses[p].duration_s;
      host_pause_of_fault_[result_.faults.size()] = p;
      result_.faults.push_back(pause);
    }
  }
  return ok;
}

bool Launch::add_host_limits() {
  bool ok = true;
  const std::vector<HostLinkLimitSpec>& limits = options_.hosts.limits;
  for (std::size_t l = 0; l < limits.size(); ++l) {
    std::string problem;
    const auto link = named_link(limits[l].link, plan_, *placement_, *options_.hosts.hosts, problem);
    limit_links_.push_back(link.value_or(std::make_pair(std::size_t{0}, std::size_t{0})));
    if (!link) {
      error("bandwidth limit: " + problem);
      ok = false;
      continue;
    }
    limit_steps_.push_back(LimitStep{static_cast<TimeUs>(std::llround(limits[l].at_s * 1e6)), l, true});
  }
  std::stable_sort(limit_steps_.begin(), limit_steps_.end(),
                   [](const LimitStep& a, const LimitStep& b) { return a.at_us < b.at_us; });
  return ok;
}

bool Launch::add_host_cut_companions() {
  if (!placement_) return true;
  const HostCuts cuts = host_cuts(plan_, *placement_, *options_.hosts.hosts, options_.faults);
  for (const std::string& p : cuts.problems) error(p);
  result_.faults.insert(result_.faults.end(), cuts.companions.begin(), cuts.companions.end());
  return cuts.problems.empty();
}

bool Launch::prepare_host_cuts() {
  std::set<std::size_t> involved;
  for (const FaultSpec& f : result_.faults)
    if (f.kind == FaultKind::partition) {
      involved.insert(nodes_[plan_.node_id(f.node)].host);
      involved.insert(nodes_[plan_.node_id(f.peer)].host);
    }
  if (involved.empty()) return true;
  const std::vector<std::string> problems = remote_->prepare_cuts({involved.begin(), involved.end()});
  for (const std::string& p : problems) error(p);
  return problems.empty();
}

// Several hosts: every host reached, set up and checked (remote_hosts.h); every problem at once.
bool Launch::open_hosts() {
  if (!options_.hosts.hosts) return true;
  std::vector<std::string> problems;
  remote_ = RemoteHosts::open(*options_.hosts.hosts, options_.hosts, options_.hapair_binary, topology_path_, log_dir_,
                              problems);
  for (const std::string& p : problems) error(p);
  if (!remote_ || !prepare_host_cuts()) return false;
  if (!limit_links_.empty()) {
    std::vector<RemoteHosts::LimitSetup> setups;
    for (std::size_t l = 0; l < limit_links_.size(); ++l) {
      const auto [a, b] = limit_links_[l];
      const std::int64_t rate = options_.hosts.limits[l].rate_bits_per_s;
      setups.push_back({a, b, limit_slot(l), rate});
      setups.push_back({b, a, limit_slot(l), rate});
    }
    const std::vector<std::string> limit_problems = remote_->prepare_limits(setups);
    for (const std::string& p : limit_problems) error(p);
    if (!limit_problems.empty()) return false;
  }
  say("hapair: " + std::to_string(options_.hosts.hosts->hosts.size()) + " hosts ready (" + remote_->setup_timing() +
      "); control socket on " + remote_->control_address());
  return true;
}

// After every node was reaped: each host's keeper kills what is left and removes the run
// folder, the masters close; hosts.json records where everything ran and the clock offsets.
void Launch::close_hosts() {
  if (!placement_) return;
  if (remote_) {
    collect_remote_signals(true);
    hosts_json_ = hosts_json();
    for (const std::string& p : remote_->close()) error(p);
    remote_.reset();
  }
  if (!hosts_json_.empty() && !log_dir_.empty()) {
    std::ofstream out(log_dir_ + "/hosts.json");
    out << hosts_json_ << "\n";
  }
}

void Launch::print_manual_instructions() {
  std::ostringstream text;
  text << "hapair: manual mode. Copy " << topology_path_ << " to every host and start these "
       << nodes_.size() << " node processes within " << options_.manual_hello_timeout_s << " s:\n";
  for (const NodeState& node : nodes_)
    text << "  " << node_command_line("hapair", topology_path_, node.name, advertised_) << "\n";
  say(text.str());
}

bool Launch::spawn_all() {
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    if (!spawn(id)) return false;
  }
  return true;
}

// Starts the node's process. A restarted node (`rejoin`) binds the endpoint its first
// incarnation announced, so the peers' connections to it come back by themselves, and appends
// to the same log.
bool Launch::spawn(NodeId id, bool rejoin) {
  NodeState& node = nodes_[id];
  std::string why;
  if (node.host != kThisMachine) {
    std::vector<std::string> args{"--control", advertised_, "--bind", rejoin ? node.endpoint : node.bind};
    if (rejoin) args.push_back("--rejoin");
    if (rejoin && !node.crash_line.empty()) args.insert(args.end(), {"--crash-line", node.crash_line});
    if (id == plan_.coordinator && !options_.checkpoint_dir.empty())
      args.insert(args.end(), {"--checkpoint-dir", options_.checkpoint_dir});
    args.push_back("--keys-from-stdin");  // a run on several hosts is always secure
    node.process = remote_->start_node(node.host, node.name, args, node.log_path, rejoin, key_line(keys_), why);
    if (!node.process.running()) {
      error("cannot start node " + node.name + " on host " + options_.hosts.hosts->hosts[node.host].name + ": " + why);
      return false;
    }
    return true;
  }
  ExecSpec spec;
  spec.argv = {options_.hapair_binary, "node",    "--topology", topology_path_,
               "--name",               node.name, "--control",  advertised_};
  if (rejoin) spec.argv.insert(spec.argv.end(), {"--rejoin", "--bind", node.endpoint});
  if (!rejoin && isolation_) spec.argv.insert(spec.argv.end(), {"--bind", isolated_bind(id)});
  if (rejoin && !node.crash_line.empty()) spec.argv.insert(spec.argv.end(), {"--crash-line", node.crash_line});
  if (id == plan_.coordinator && !options_.checkpoint_dir.empty())
    spec.argv.insert(spec.argv.end(), {"--checkpoint-dir", options_.checkpoint_dir});
  spec.output_path = node.log_path;
  spec.append_output = rejoin;
  // Nothing else of the launcher's leaks into the node (open result files, a caller's lock): a
  // node's lowest descriptors are its crash line slots (runtime/crash_line.h).
  spec.close_other_descriptors = true;
  // The child dies with the launcher, whatever kills the launcher.
  spec.die_with_parent = true;
  if (isolation_) spec.network_namespace = isolation_->node_namespace_path(id);
  // The keys on stdin, then its end (a local node does not watch its stdin).
  int keys[2] = {-1, -1};
  if (keys_.on()) {
    spec.argv.push_back("--keys-from-stdin");
    if (!pipe_holding(key_line(keys_), keys, why)) {
      error("cannot start node " + node.name + ": " + why);
      return false;
    }
    spec.stdin_fd = keys[0];
  }
  node.process = ChildProcess::spawn(spec, why);
  for (const int fd : keys)
    if (fd >= 0) ::close(fd);
  if (!node.process.running()) {
    error("cannot start node " + node.name + ": " + why);
    return false;
  }
  return true;
}

bool Launch::wait_for_hellos() {
  const double timeout_s = options_.manual ? options_.manual_hello_timeout_s : options_.hello_timeout_s;
  const TimeUs timeout_us = static_cast<TimeUs>(timeout_s * 1e6);
  const RunClock waiting = RunClock::starting_now();
  for (;;) {
    if (interrupted()) return false;
    std::vector<std::string> missing;
    for (const NodeState& node : nodes_)
      if (!node.hello) missing.push_back(node.name);
    if (missing.empty()) return true;
    // A node that died before its Hello will never send one.
    for (NodeId id = 0; id < nodes_.size(); ++id) {
      if (!nodes_[id].hello && reap(id, false)) return false;
    }
    if (waiting.now_us() >= timeout_us) {
      std::string names;
      for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
      error("timed out after " + format_seconds(timeout_s) + " s waiting for hello from: " + names);
      for (NodeId id = 0; id < nodes_.size(); ++id)
        if (!nodes_[id].hello) echo_log(id);
      return false;
    }
    if (auto incoming = control_->receive(50'000)) on_message(*incoming, false);
  }
}

std::int64_t Launch::probe_clock_us() const {
  return clock_ ? directory_.epoch_realtime_us + clock_->now_us() : RunClock::realtime_us();
}

bool Launch::probe_clocks_at_start() {
  if (!remote_) return true;
  std::vector<std::size_t> host_of;
  for (const NodeState& node : nodes_) host_of.push_back(node.host);
  const std::size_t hosts = options_.hosts.hosts->hosts.size();
  clock_probes_.emplace(host_of, hosts, options_.hosts.clock_probes);
  clock_probes_->begin_round(probe_clock_us());
  // Bounded: every probe is answered or written off within reply_timeout_us.
  while (clock_probes_->round_under_way()) {
    if (interrupted()) return false;
    send_clock_probes(0);
    receive_burst(1'000, false);
    for (NodeId id = 0; id < nodes_.size(); ++id)
      if (reap(id, false)) return false;
  }
  std::string text;
  for (std::size_t h = 0; h < hosts; ++h) {
    const HostClockSummary clock = clock_probes_->host_summary(h);
    remote_->set_offset(h, clock.first);
    text += (text.empty() ? "" : ", ") + options_.hosts.hosts->hosts[h].name + " " +
            (clock.first ? fmt::format("{:+} us +- {} us", clock.first->offset_us(), clock.first->error_bound_us())
                         : std::string("not measured"));
  }
  say("hapair: clock offsets (NTP probes over the control channel): " + text);
  next_clock_round_us_ = static_cast<TimeUs>(options_.hosts.clock_probe_interval_s * 1e6);
  return true;
}

void Launch::send_clock_probes(TimeUs now) {
  if (!clock_probes_) return;
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    const NodeState& n = nodes_[id];
    clock_probes_->set_reachable(id, n.hello && !n.killed && !n.paused && n.process.running());
  }
  if (clock_ && !clock_probes_->round_under_way() && now >= next_clock_round_us_) {
    clock_probes_->begin_round(probe_clock_us());
    next_clock_round_us_ = now + static_cast<TimeUs>(options_.hosts.clock_probe_interval_s * 1e6);
  }
  for (const ClockProbes::Send& probe : clock_probes_->due(probe_clock_us()))
    control_->send(nodes_[probe.target].peer, Envelope{Header{kNoNode, 0, now_or_zero()}, probe.request});
}

bool Launch::send_directory() {
  Directory& directory = directory_;
  for (const NodeState& node : nodes_) directory.endpoints.push_back(node.endpoint);
  const bool any_line = std::any_of(nodes_.begin(), nodes_.end(), [](const NodeState& n) { return !n.crash_line.empty(); });
  for (const NodeState& node : nodes_)
    if (any_line) directory.crash_line_endpoints.push_back(node.crash_line);
  directory.epoch_realtime_us = RunClock::realtime_us() + static_cast<TimeUs>(options_.epoch_delay_s * 1e6);
  clock_ = RunClock::from_realtime_epoch(directory.epoch_realtime_us);
  bool ok = true;
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    if (!control_->send(nodes_[id].peer, Envelope{Header{kNoNode, 0, clock_->now_us()}, directory})) {
      error("cannot send the directory to node " + nodes_[id].name + " (it disconnected)");
      ok = false;
    }
  }
  return ok;
}

// ---- the run ----------------------------------------------------------------------------

void Launch::run_until_done() {
  const Settings& settings = plan_.settings();
  const TimeUs duration_us = static_cast<TimeUs>(settings.duration_s * 1e6);
  const TimeUs deadline_us = static_cast<TimeUs>((settings.duration_s + settings.drain_timeout_s) * 1e6);
  TimeUs next_progress_us = 0;
  for (;;) {
    if (interrupted()) return;
    TimeUs now = clock_->now_us();
    while (next_action_ < actions_.size() && actions_[next_action_].at_us <= now) {
      const FaultAction action = actions_[next_action_++];
      perform(action);
      // Across hosts a cut's heal is scheduled once the cut is in place (cut_hosts).
      if (action.kind == FaultAction::Kind::pause || (action.kind == FaultAction::Kind::partition && !placement_))
        insert_in_time_order(actions_, next_action_, end_action(action, clock_->now_us()));
    }
    while (next_limit_step_ < limit_steps_.size() && limit_steps_[next_limit_step_].at_us <= now) {
      const LimitStep step = limit_steps_[next_limit_step_++];
      perform_limit(step.limit, step.on);
    }
    if (options_.live_faults) perform_live_faults(now);
    if (!signals_under_way_.empty()) collect_remote_signals(false);
    send_clock_probes(now);

    TimeUs wait_us = 5'000;
    if (next_action_ < actions_.size()) wait_us = std::min(wait_us, actions_[next_action_].at_us - now);
    if (next_limit_step_ < limit_steps_.size()) wait_us = std::min(wait_us, limit_steps_[next_limit_step_].at_us - now);
    receive_burst(wait_us, false);
    for (NodeId id = 0; id < nodes_.size(); ++id) reap(id, false);

    now = clock_->now_us();
    if (options_.progress && now >= next_progress_us) {
      options_.progress(static_cast<double>(std::max<TimeUs>(now, 0)) / 1e6, settings.duration_s);
      next_progress_us = now + 100'000;
    }
    if (ended_sinks_.size() == sinks_.size()) {
      result_.completed = true;
      result_.end_us = now;
      return;
    }
    if (abort_run_ || std::any_of(nodes_.begin(), nodes_.end(), [](const NodeState& n) { return n.fatal; })) {
      result_.end_us = now;
      return;
    }
    check_restarted_hellos(now);
    if (now >= duration_us && output_quiet(now)) {
      error("the run did not complete: the output went quiet (no sink delivery, fault or change of any live "
            "node's output queues for " + format_seconds(static_cast<double>(quiet_.window_us()) / 1e6) +
            " s after the sources stopped: drain_quiet_s, at least the longest retransmission back-off), so sink " +
            unfinished_sinks() + " can never see the end of its input");
      result_.stall = result_.errors.back();
      result_.end_us = now;
      return;
    }
    if (now >= deadline_us) {
      error("the run did not complete: sink " + unfinished_sinks() +
            " did not report end of output within duration_s + drain_timeout_s = " +
            format_seconds(settings.duration_s + settings.drain_timeout_s) + " s");
      result_.stall = result_.errors.back();
      result_.end_us = now;
      return;
    }
  }
}

void Launch::perform_live_faults(TimeUs now) {
  for (FaultSpec fault : options_.live_faults()) {
    const NodeId id = plan_.node_id(fault.node);
    if (fault.kind != FaultKind::crash || id == kNoNode) {
      say("hapair: live fault " + std::string(to_string(fault.kind)) + " of '" + fault.node +
          "' refused: only crashes of nodes of the plan");
      continue;
    }
    fault.at_s = static_cast<double>(now) / 1e6;
    result_.faults.push_back(fault);
    FaultAction action;
    action.at_us = now;
    action.kind = FaultAction::Kind::crash;
    action.fault = result_.faults.size() - 1;
    action.node = id;
    perform(action);
  }
}

std::string Launch::unfinished_sinks() const {
  std::string names;
  for (NodeId sink : sinks_)
    if (!ended_sinks_.count(sink)) names += (names.empty() ? "" : ", ") + nodes_[sink].name;
  return names;
}

// The quiet-drain rule (protocols/quiet_drain.h). Queues are compared as the nodes report
// them (every stats interval), so a node that still works through its input keeps the run
// going however slowly it drains.
bool Launch::output_quiet(TimeUs now) const {
  bool pending = next_action_ < actions_.size();
  for (const NodeState& node : nodes_) pending |= node.restarted_at_us != kNever && !node.hello && node.process.running();
  return quiet_.quiet(now, pending);
}

// A restarted node that does not say hello in time (hello_timeout_s) ends the run with an
// error, as a node that never said hello at the start would.
void Launch::check_restarted_hellos(TimeUs now) {
  const TimeUs timeout_us = static_cast<TimeUs>(options_.hello_timeout_s * 1e6);
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    const NodeState& node = nodes_[id];
    if (node.restarted_at_us == kNever || node.hello || node.killed || !node.process.running()) continue;
    if (now - node.restarted_at_us < timeout_us) continue;
    error("timed out after " + format_seconds(options_.hello_timeout_s) + " s waiting for hello from restarted node " +
          node.name);
    echo_log(id);
    abort_run_ = true;
  }
}

// Handles the messages waiting now (waiting up to wait_us for the first one), bounded so that
// fault actions and exits are noticed on time.
void Launch::receive_burst(TimeUs wait_us, bool stopping) {
  for (int i = 0; i < 1'000; ++i) {
    std::optional<ControlServer::Incoming> incoming = control_->receive(i == 0 ? wait_us : 0);
    if (!incoming) return;
    on_message(*incoming, stopping);
  }
}

// ---- helpers ----------------------------------------------------------------------------

// Node id's data endpoint in its namespace: the topology's port when it names one.
std::string Launch::isolated_bind(NodeId id) const {
  std::string host;
  std::string port;
  const std::string& wanted = plan_.nodes[id].endpoint;
  if (wanted.empty() || !split_tcp_endpoint(wanted, host, port) || port.empty()) port = "*";
  return "tcp://" + isolation_->node_address(id) + ":" + port;
}

void Launch::echo_log(NodeId id) {
  const NodeState& node = nodes_[id];
  if (node.log_path.empty() || options_.manual) return;
  const std::string tail = file_tail(node.log_path, 4'000);
  std::fprintf(stderr, "---- output of node %s (%s) ----\n%s%s---- end of output of node %s ----\n",
               node.name.c_str(), node.log_path.c_str(), tail.c_str(),
               tail.empty() || tail.back() == '\n' ? "" : "\n", node.name.c_str());
}

void Launch::say(const std::string& text) const {
  if (options_.print) {
    options_.print(text);
  } else {
    std::fputs(text.c_str(), stdout);
    if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
    std::fflush(stdout);
  }
}

}  // namespace launcher

std::string node_command_line(const std::string& hapair_binary, const std::string& topology_path,
                              const std::string& node_name, const std::string& control_endpoint) {
  using launcher::shell_quote;
  return shell_quote(hapair_binary) + " node --topology " + shell_quote(topology_path) + " --name " +
         shell_quote(node_name) + " --control " + shell_quote(control_endpoint);
}

RunResult launch_real_run(const Plan& plan, const LaunchOptions& options) { return launcher::Launch(plan, options).run(); }

}  // namespace hapair
