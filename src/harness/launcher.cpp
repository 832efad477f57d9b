#include "harness/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "driver/fault_schedule.h"
#include "driver/gauges.h"
#include "harness/child_process.h"
#include "harness/topology_file.h"
#include "protocols/check.h"
#include "protocols/quiet_drain.h"
#include "runtime/control_server.h"
#include "runtime/node_host.h"
#include "runtime/run_clock.h"
#include "sim/faults.h"

namespace hapair {
namespace {

// The one piece of process-wide state: a signal handler can only talk to the program through a
// variable like this. The handler only sets it; the launcher's loops check it.
volatile sig_atomic_t g_interrupt_signal = 0;

extern "C" void on_interrupt_signal(int signal_number) { g_interrupt_signal = signal_number; }

// Installs the SIGINT/SIGTERM handlers for the duration of a run and restores the old ones.
// The launcher defers the signal only to kill and reap every node and remove its temporary
// folder; then the signal does what it would have done without the launcher: when the old
// disposition was the default (a `hapair` command), it is raised again and ends the process, so
// Ctrl-C stops `compare`, `experiment` or `soak` instead of only the run under way. A caller
// with a handler of its own (a test framework) gets the result that says "interrupted".
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupt_signal = 0;
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = on_interrupt_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    const int sig = g_interrupt_signal;
    const struct sigaction& old = sig == SIGTERM ? old_term_ : old_int_;
    if (sig != 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) raise(sig);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_;
  struct sigaction old_term_;
};

// Removes a run's temporary folder when the launcher dies without doing it (kill -9, a test
// framework's timeout, a chaos run killed as hung): a small child process that is not a node,
// does not die with the launcher and waits for the end of a pipe the launcher holds. When the
// launcher finishes, it says so through the pipe and the child just exits; when the pipe closes
// without a word, the launcher is gone (its nodes went with it, PR_SET_PDEATHSIG) and the child
// becomes `rm -rf FOLDER`.
class TempDirWatch {
 public:
  explicit TempDirWatch(const std::string& dir) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    // Prepared before fork(): the launcher has threads (ZeroMQ's), so the child may only make
    // async-signal-safe calls until it execs.
    std::vector<std::string> args = {"/bin/rm", "-rf", "--", dir};
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      return;
    }
    if (pid == 0) {
      // A Ctrl-C reaches the whole process group; the launcher handles it and cleans up itself,
      // and this child must outlive it in any case.
      struct sigaction ignore;
      std::memset(&ignore, 0, sizeof ignore);
      ignore.sa_handler = SIG_IGN;
      sigaction(SIGINT, &ignore, nullptr);
      sigaction(SIGTERM, &ignore, nullptr);
      dup2(fds[0], STDIN_FILENO);
      close_range(3, ~0U, 0);
      char byte = 0;
      ssize_t n = 0;
      do n = read(STDIN_FILENO, &byte, 1);
      while (n < 0 && errno == EINTR);
      if (n == 1) _exit(0);  // the launcher finished and took care of the folder
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[0]);
    pid_ = pid;
    write_fd_ = fds[1];
  }
  // The launcher is done with the folder (removed or kept on purpose): the child exits.
  ~TempDirWatch() {
    if (pid_ < 0) return;
    const char done = 'd';
    [[maybe_unused]] const ssize_t ignored = write(write_fd_, &done, 1);
    close(write_fd_);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  TempDirWatch(const TempDirWatch&) = delete;
  TempDirWatch& operator=(const TempDirWatch&) = delete;

 private:
  pid_t pid_ = -1;
  int write_fd_ = -1;
};

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=*@") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The last `bytes_max` bytes of a file, for echoing a failed node's output.
std::string file_tail(const std::string& path, std::size_t bytes_max) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(bytes_max) ? size - static_cast<std::streamoff>(bytes_max) : 0;
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return start > 0 ? "...\n" + text : text;
}

// Counters that the driver fills and that add up over a node's incarnations (a restarted process
// starts them from zero), as the simulator keeps its own counters across restarts. The core's
// counters describe the current incarnation only, in both drivers.
bool adds_up_over_incarnations(const std::string& name) {
  return name.rfind("bytes_sent.", 0) == 0 || name.rfind("messages_sent.", 0) == 0 || name == "cpu_us" ||
         name == "decode_dropped";
}

struct NodeState {
  std::string name;
  std::string log_path;
  ChildProcess process;    // our child (spawned mode); running(): spawned and not yet reaped
  bool hello = false;
  std::string peer;        // control routing id
  std::string endpoint;    // data endpoint from Hello
  std::string crash_line;  // crash line endpoint from Hello (empty: none)
  bool killed = false;     // by a crash fault
  bool paused = false;     // SIGSTOPped by a pause fault
  bool fatal = false;      // reported a fatal error (trace) or exited with kNodeExitFatal
  bool fatal_traced = false;  // its "fatal" trace event (with the reason) arrived
  bool final_stats = false;
  bool stop_sent = false;
  // Restart faults: when the current incarnation was spawned (kNever: the first one, started
  // before the run), and the driver counters of the earlier incarnations.
  TimeUs restarted_at_us = kNever;
  Metrics earlier_incarnations;
};

class Launch {
 public:
  Launch(const Plan& plan, const LaunchOptions& options)
      : plan_(plan), options_(options), quiet_(plan.settings(), plan.nodes.size()) {
    result_.plan = std::make_shared<const Plan>(plan);
    result_.driver = "real";
    result_.faults = options.faults;
    for (const PlanNode& node : plan.nodes) {
      NodeState state;
      state.name = node.name;
      nodes_.push_back(std::move(state));
    }
    for (const PlanFragment& fragment : plan.fragments)
      if (fragment.kind == FragmentKind::sink && fragment.primary != kNoNode) sinks_.insert(fragment.primary);
  }

  RunResult run() {
    InterruptGuard interrupt_guard;
    if (!check_faults() || !prepare_files()) return finish_result();
    try {
      control_ = std::make_unique<ControlServer>(options_.control_bind);
    } catch (const std::exception& e) {
      error(e.what());
      return finish_result();
    }
    advertised_ = options_.control_advertise.empty() ? control_->endpoint() : options_.control_advertise;
    if (options_.manual) {
      print_manual_instructions();
    } else if (!spawn_all()) {
      stop_all();
      return finish_result();
    }
    if (wait_for_hellos() && send_directory()) run_until_done();
    stop_all();
    return finish_result();
  }

 private:
  // ---- setup ------------------------------------------------------------------------------

  // Every problem of the fault schedule at once (the simulator's rules: known nodes, times,
  // durations, restarts only of crashed nodes), plus what real processes cannot do.
  bool check_faults() {
    bool ok = true;
    for (const FaultSpec& fault : options_.faults) {
      if (fault.kind == FaultKind::partition) {
        error("fault kind partition is not supported with real processes (crash, pause and restart are; the "
              "simulator has partitions)");
        ok = false;
      } else if (fault.kind == FaultKind::restart && options_.manual) {
        error("fault restart of " + fault.node + " is not supported in manual mode: the launcher can only restart "
              "a process it started (restart it by hand with `hapair node ... --rejoin --bind ENDPOINT`)");
        ok = false;
      }
    }
    for (const std::string& problem : validate_faults(plan_, options_.faults)) {
      error(problem);
      ok = false;
    }
    if (!ok) return false;
    // Equal times keep the list order, as in the simulator (driver/fault_schedule.h). The resume
    // of a pause is scheduled when the pause really happens (run_until_done()), so the process is
    // stopped for the whole duration even when the pause runs a little late.
    actions_ = fault_actions(plan_, options_.faults, false);
    return true;
  }

  bool prepare_files() {
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
      temp_dir_watch_.emplace(log_dir_);
    } else {
      log_dir_ = options_.log_dir;
      if (mkdir(log_dir_.c_str(), 0755) != 0 && errno != EEXIST) {
        error("cannot create the log directory " + log_dir_ + ": " + std::strerror(errno));
        return false;
      }
    }
    for (NodeState& node : nodes_) node.log_path = log_dir_ + "/" + node.name + ".log";
    topology_path_ = options_.topology_path;
    if (topology_path_.empty()) {
      topology_path_ = log_dir_ + "/topology.conf";
      std::ofstream out(topology_path_);
      out << write_topology(plan_.topology);
      if (!out.good()) {
        error("cannot write the effective topology to " + topology_path_);
        return false;
      }
    }
    return true;
  }

  void print_manual_instructions() {
    std::ostringstream text;
    text << "hapair: manual mode. Copy " << topology_path_ << " to every host and start these "
         << nodes_.size() << " node processes within " << options_.manual_hello_timeout_s << " s:\n";
    for (const NodeState& node : nodes_)
      text << "  " << node_command_line("hapair", topology_path_, node.name, advertised_) << "\n";
    say(text.str());
  }

  bool spawn_all() {
    for (NodeId id = 0; id < nodes_.size(); ++id) {
      if (!spawn(id)) return false;
    }
    return true;
  }

  // Starts the node's process. A restarted node (`rejoin`) binds the endpoint its first
  // incarnation announced, so the peers' connections to it come back by themselves, and appends
  // to the same log.
  bool spawn(NodeId id, bool rejoin = false) {
    NodeState& node = nodes_[id];
    ExecSpec spec;
    spec.argv = {options_.hapair_binary, "node",    "--topology", topology_path_,
                 "--name",               node.name, "--control",  advertised_};
    if (rejoin) spec.argv.insert(spec.argv.end(), {"--rejoin", "--bind", node.endpoint});
    if (rejoin && !node.crash_line.empty()) spec.argv.insert(spec.argv.end(), {"--crash-line", node.crash_line});
    spec.output_path = node.log_path;
    spec.append_output = rejoin;
    // Nothing else of the launcher's leaks into the node (open result files, a caller's lock): a
    // node's lowest descriptors are its crash line slots (runtime/crash_line.h).
    spec.close_other_descriptors = true;
    // The child dies with the launcher, whatever kills the launcher.
    spec.die_with_parent = true;
    std::string why;
    node.process = ChildProcess::spawn(spec, why);
    if (!node.process.running()) {
      error("cannot start node " + node.name + ": " + why);
      return false;
    }
    return true;
  }

  bool wait_for_hellos() {
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

  bool send_directory() {
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

  void run_until_done() {
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
        if (action.kind == FaultAction::Kind::pause)
          insert_in_time_order(actions_, next_action_, end_action(action, clock_->now_us()));
      }

      TimeUs wait_us = 5'000;
      if (next_action_ < actions_.size()) wait_us = std::min(wait_us, actions_[next_action_].at_us - now);
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

  std::string unfinished_sinks() const {
    std::string names;
    for (NodeId sink : sinks_)
      if (!ended_sinks_.count(sink)) names += (names.empty() ? "" : ", ") + nodes_[sink].name;
    return names;
  }

  // The quiet-drain rule (protocols/quiet_drain.h). Queues are compared as the nodes report
  // them (every stats interval), so a node that still works through its input keeps the run
  // going however slowly it drains.
  bool output_quiet(TimeUs now) const {
    bool pending = next_action_ < actions_.size();
    for (const NodeState& node : nodes_) pending |= node.restarted_at_us != kNever && !node.hello && node.process.running();
    return quiet_.quiet(now, pending);
  }

  // A restarted node that does not say hello in time (hello_timeout_s) ends the run with an
  // error, as a node that never said hello at the start would.
  void check_restarted_hellos(TimeUs now) {
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
  void receive_burst(TimeUs wait_us, bool stopping) {
    for (int i = 0; i < 1'000; ++i) {
      std::optional<ControlServer::Incoming> incoming = control_->receive(i == 0 ? wait_us : 0);
      if (!incoming) return;
      on_message(*incoming, stopping);
    }
  }

  void perform(const FaultAction& action) {
    NodeState& node = nodes_[action.node];
    const std::int64_t pause_ms = std::llround(options_.faults[action.fault].duration_s * 1e3);
    const TimeUs now = clock_->now_us();
    quiet_.activity(now);
    switch (action.kind) {
      case FaultAction::Kind::crash:
        if (node.killed || (!options_.manual && !node.process.running())) {
          say("hapair: crash fault of " + node.name + " skipped: the node is not running");
          return;
        }
        if (options_.manual) {
          control_->send(node.peer, Envelope{Header{kNoNode, 0, now}, Kill{0}});
        } else {
          node.process.signal(SIGKILL);
        }
        node.killed = true;
        quiet_.set_down(action.node, true);
        result_.events.push_back(TraceEvent{now, action.node, "failure", "kind=crash"});
        return;
      case FaultAction::Kind::pause:
        if (node.killed || (!options_.manual && !node.process.running())) return;
        if (options_.manual) {
          control_->send(node.peer, Envelope{Header{kNoNode, 0, now}, Kill{pause_ms}});
        } else {
          node.process.signal(SIGSTOP);
          node.paused = true;
        }
        result_.events.push_back(
            TraceEvent{now, action.node, "failure", "kind=pause duration_ms=" + std::to_string(pause_ms)});
        return;
      case FaultAction::Kind::resume:
        if (options_.manual) {
          result_.events.push_back(TraceEvent{now, action.node, "resume", "kind=pause"});
          return;
        }
        if (!node.paused) return;
        if (node.process.running()) node.process.signal(SIGCONT);
        node.paused = false;
        result_.events.push_back(TraceEvent{now, action.node, "resume", "kind=pause"});
        return;
      case FaultAction::Kind::restart:
        restart(action.node, now);
        return;
      case FaultAction::Kind::partition:
      case FaultAction::Kind::heal:
        return;  // refused by check_faults()
    }
  }

  // A restart fault: a new process for a node whose crash fault killed it, bound to the same data
  // endpoint, started with --rejoin so that its core rejoins the fragment as the standby. Its
  // Hello is answered with the run's Directory (the same epoch: it starts at once).
  void restart(NodeId id, TimeUs now) {
    NodeState& node = nodes_[id];
    if (!node.killed) {
      // validate_faults accepts only restarts after a crash; the crash itself was skipped.
      say("hapair: restart of " + node.name + " skipped: its crash fault did not kill it");
      return;
    }
    if (node.process.running()) {
      // SIGKILLed but not reaped yet: the old process must be gone before its port is bound again.
      node.process.wait();
    }
    // A fresh state, keeping only what outlives a process: its name, log, endpoint and routing
    // id, and the counters of its earlier incarnations.
    NodeState fresh;
    fresh.name = node.name;
    fresh.log_path = node.log_path;
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
    result_.events.push_back(TraceEvent{now, id, "restart", "kind=restart node=" + node.name});
  }

  void on_message(const ControlServer::Incoming& incoming, bool stopping) {
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
    if (const auto* traces = std::get_if<TraceBatch>(&body)) {
      for (const TraceEvent& event : traces->events) {
        result_.events.push_back(event);
        if (event.event == "fatal") {
          node.fatal = true;
          node.fatal_traced = true;
          error("node " + node.name + " stopped with a fatal error: " + event.details);
        }
      }
    } else if (const auto* stats = std::get_if<NodeStats>(&body)) {
      Metrics& metrics = result_.counters[node.name];
      metrics = node.earlier_incarnations;
      for (const Counter& counter : stats->counters) {
        metrics[counter.name] += counter.value;
        if (is_sampled_gauge(counter.name))
          result_.samples.push_back(MetricSample{stats->at_us, node.name, counter.name, counter.value});
      }
      quiet_.report(now_or_zero(), id, metrics);
      if (stats->final) node.final_stats = true;
    } else if (const auto* batch = std::get_if<DeliveryBatch>(&body)) {
      if (!batch->deliveries.empty()) quiet_.activity(now_or_zero());
      result_.deliveries.insert(result_.deliveries.end(), batch->deliveries.begin(), batch->deliveries.end());
      result_.merge_orders.insert(result_.merge_orders.end(), batch->merge_orders.begin(), batch->merge_orders.end());
      if (batch->end_of_output && sinks_.count(id)) ended_sinks_.insert(id);
    } else if (!stopping) {
      say("hapair: ignoring an unexpected " + std::string(message_kind_name(body)) + " message from " + node.name);
    }
  }

  void on_hello(const std::string& peer, const Hello& hello) {
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
  void on_restarted_hello(NodeId id, const std::string& peer, const Hello& hello) {
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
  void stop_all() {
    if (interrupted()) {
      error(std::string("interrupted by ") + (g_interrupt_signal == SIGTERM ? "SIGTERM" : "SIGINT") +
            "; every node process was killed");
      kill_and_reap_all();
      return;
    }
    if (control_) {
      for (NodeId id = 0; id < nodes_.size(); ++id) {
        NodeState& node = nodes_[id];
        if (node.paused && node.process.running()) {
          node.process.signal(SIGCONT);
          node.paused = false;
        }
        if (node.restarted_at_us != kNever && !node.hello && node.process.running())
          error("restarted node " + node.name + " had not said hello when the run ended; it was killed");
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

  void kill_and_reap_all() {
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
  bool reap(NodeId id, bool stopping) {
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
    if (stopping && node.stop_sent) {
      error("node " + node.name + " exited with " + exit->describe() + " after StopRun");
    } else {
      error("node " + node.name + " exited unexpectedly with " + exit->describe());
      quiet_.set_down(id, true);
      result_.events.push_back(TraceEvent{now_or_zero(), id, "crash", "status=" + exit->describe()});
    }
    echo_log(id);
    return true;
  }

  RunResult finish_result() {
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
        rmdir(log_dir_.c_str());
      } else if (!result_.errors.empty()) {
        std::fprintf(stderr, "hapair: node logs are in %s\n", log_dir_.c_str());
      }
    }
    return std::move(result_);
  }

  // ---- helpers ----------------------------------------------------------------------------

  void echo_log(NodeId id) {
    const NodeState& node = nodes_[id];
    if (node.log_path.empty() || options_.manual) return;
    const std::string tail = file_tail(node.log_path, 4'000);
    std::fprintf(stderr, "---- output of node %s (%s) ----\n%s%s---- end of output of node %s ----\n",
                 node.name.c_str(), node.log_path.c_str(), tail.c_str(),
                 tail.empty() || tail.back() == '\n' ? "" : "\n", node.name.c_str());
  }

  void error(const std::string& message) { result_.errors.push_back(message); }

  void say(const std::string& text) const {
    if (options_.print) {
      options_.print(text);
    } else {
      std::fputs(text.c_str(), stdout);
      if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
      std::fflush(stdout);
    }
  }

  static std::string format_seconds(double s) { return fmt::format("{:g}", s); }

  static bool interrupted() { return g_interrupt_signal != 0; }
  TimeUs now_or_zero() const { return clock_ ? clock_->now_us() : 0; }

  const Plan& plan_;
  const LaunchOptions& options_;
  RunResult result_;
  std::vector<NodeState> nodes_;
  std::set<NodeId> sinks_;
  std::set<NodeId> ended_sinks_;
  std::map<std::string, NodeId> by_peer_;
  std::vector<FaultAction> actions_;
  std::size_t next_action_ = 0;  // the first action of actions_ not yet performed
  Directory directory_;          // as sent at the start; restarted nodes get the same
  QuietDrain quiet_;
  bool abort_run_ = false;       // a setup failure during the run (a restarted node's)
  std::unique_ptr<ControlServer> control_;
  std::optional<RunClock> clock_;
  std::string advertised_;
  std::string log_dir_;
  bool log_dir_is_temp_ = false;
  std::optional<TempDirWatch> temp_dir_watch_;  // only for a temporary log_dir_
  std::string topology_path_;
  std::int64_t unknown_messages_ = 0;
};

}  // namespace

std::string node_command_line(const std::string& hapair_binary, const std::string& topology_path,
                              const std::string& node_name, const std::string& control_endpoint) {
  return shell_quote(hapair_binary) + " node --topology " + shell_quote(topology_path) + " --name " +
         shell_quote(node_name) + " --control " + shell_quote(control_endpoint);
}

RunResult launch_real_run(const Plan& plan, const LaunchOptions& options) { return Launch(plan, options).run(); }

}  // namespace hapair
