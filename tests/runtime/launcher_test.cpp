// Tests of the launcher of real runs (launch/launcher.h) with real `hapair node` processes:
// every node says hello and a run completes; a crash fault's SIGKILL is a failure event; a
// restart fault starts the crashed node again (--rejoin, on its old endpoint) and the pair is
// restored; a run whose output went quiet ends soon after its duration; a child that dies on
// its own is an error and a crash event; SIGINT kills every child; setup failures name the nodes
// concerned; manual mode runs nodes started by someone else. After every run no child process
// may remain (checked with kill(pid, 0)).
#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "proc/net_isolation.h"
#include "protocols/plan.h"
#include "protocols/trace_text.h"

namespace hapair {
namespace {

// The built-in network (source -> filter -> aggregate -> sink), short and slow enough for tests.
Plan small_plan(HaMode ha, double duration_s, double drain_timeout_s) {
  Topology t = default_topology();
  t.settings.ha = ha;
  t.settings.duration_s = duration_s;
  t.settings.drain_timeout_s = drain_timeout_s;
  t.fragments[0].source.rate_tps = 1000.0;
  REQUIRE(validate(t).empty());
  return make_plan(t);
}

// A directory for one test's files (node logs, scripts), removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/hapair-launcher-test-XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

LaunchOptions test_options(const TempDir& dir) {
  LaunchOptions o;
  o.hapair_binary = HAPAIR_BINARY;
  o.log_dir = dir.path + "/logs";
  o.print = [](const std::string&) {};
  return o;
}

bool process_gone(pid_t pid) { return kill(pid, 0) == -1 && errno == ESRCH; }

// Empty when the file cannot be read: a /proc file of a process that exits while it is read
// fails with ESRCH, which libstdc++ throws from the stream buffer (CI saw it once); that process
// is gone, which is what the callers look for.
std::string read_file(const std::string& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return std::string();
  }
}

// The live children of this process, with their command lines (from /proc).
std::map<pid_t, std::string> children() {
  std::map<pid_t, std::string> out;
  DIR* proc = opendir("/proc");
  if (!proc) return out;
  const std::string self = std::to_string(getpid());
  while (dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file("/proc/" + name + "/stat");
    // pid (comm) state ppid ...: comm may hold spaces, so parse after its closing parenthesis.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid != self || state == "Z") continue;
    std::string cmdline = read_file("/proc/" + name + "/cmdline");
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    out[static_cast<pid_t>(std::stol(name))] = cmdline;
  }
  closedir(proc);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

bool has_event(const RunResult& r, const std::string& event, NodeId node, const std::string& details_part) {
  for (const TraceEvent& e : r.events)
    if (to_string(e.kind) == event && e.node == node &&
        trace_details_text(r.plan.get(), e).find(details_part) != std::string::npos)
      return true;
  return false;
}

// Every node's process (from its reported pid counter and from what the test saw) is gone.
void check_no_child_remains(const RunResult& r, const std::set<pid_t>& seen) {
  for (const auto& [node, counters] : r.counters) {
    auto it = counters.find("pid");
    REQUIRE(it != counters.end());
    INFO("node " << node << " pid " << it->second);
    CHECK(process_gone(static_cast<pid_t>(it->second)));
  }
  for (pid_t pid : seen) {
    INFO("child pid " << pid);
    CHECK(process_gone(pid));
  }
  CHECK(children().empty());
}

// Records every child the launcher has at each progress call into `seen`.
void watch_children(LaunchOptions& o, std::set<pid_t>& seen) {
  o.progress = [&seen](double, double) {
    for (const auto& [pid, cmd] : children()) seen.insert(pid);
  };
}

std::string write_script(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.path + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

}  // namespace

TEST_CASE("launcher spawns every node, every node says hello, a failure-free run completes, and no child remains") {
  const Plan plan = small_plan(HaMode::none, 1.0, 10.0);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  std::set<pid_t> seen;
  int progress_calls = 0;
  double last_total_s = 0;
  o.progress = [&](double, double total_s) {
    ++progress_calls;
    last_total_s = total_s;
    for (const auto& [pid, cmd] : children()) seen.insert(pid);
  };
  const RunResult r = launch_real_run(plan, o);

  INFO(joined(r.errors));
  REQUIRE(r.errors.empty());
  CHECK(r.completed);
  CHECK(r.driver == "real");
  REQUIRE(r.plan != nullptr);
  CHECK(r.plan->nodes.size() == plan.nodes.size());
  CHECK_FALSE(r.deliveries.empty());
  CHECK(r.end_us > 0);
  // Every node said hello and reported: the launcher has counters for each, with transport counters.
  for (const PlanNode& node : plan.nodes) {
    INFO("node " << node.name);
    REQUIRE(r.counters.count(node.name) == 1);
    CHECK(r.counters.at(node.name).count("cpu_us") == 1);
    CHECK(r.counters.at(node.name).count("bytes_sent.tuples") == 1);
  }
  CHECK(r.counters.at("source").at("bytes_sent.tuples") > 0);
  CHECK(seen.size() == plan.nodes.size());
  CHECK(progress_calls > 0);
  CHECK(last_total_s == 1.0);
  for (std::size_t i = 1; i < r.events.size(); ++i) REQUIRE(r.events[i - 1].at_us <= r.events[i].at_us);
  for (std::size_t i = 1; i < r.deliveries.size(); ++i) REQUIRE(r.deliveries[i - 1].at_us <= r.deliveries[i].at_us);
  check_no_child_remains(r, seen);
}

TEST_CASE("launcher records the SIGKILL of a crash fault as a failure event of that node, not as an unexpected exit") {
  // Without HA the crashed filter stops the flow, so the run ends at its drain timeout.
  const Plan plan = small_plan(HaMode::none, 0.6, 0.6);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.faults.push_back(FaultSpec{FaultKind::crash, "filter", "", 0.3, 0.0});
  std::set<pid_t> seen;
  watch_children(o, seen);
  const RunResult r = launch_real_run(plan, o);

  const NodeId filter = plan.node_id("filter");
  REQUIRE(has_event(r, "failure", filter, "fault=crash"));
  for (const TraceEvent& e : r.events) {
    if (e.kind != TraceKind::failure) continue;
    // On the nodes' clock, at (not before) the fault's time, within the run.
    CHECK(e.at_us >= 300'000);
    CHECK(e.at_us <= r.end_us);
  }
  CHECK_FALSE(has_event(r, "exited", filter, ""));
  CHECK_FALSE(r.completed);
  INFO(joined(r.errors));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("did not complete") != std::string::npos);
  CHECK(r.faults.size() == 1);
  check_no_child_remains(r, seen);
}

TEST_CASE("launcher pauses a node with SIGSTOP and resumes it with SIGCONT, and the run still completes") {
  const Plan plan = small_plan(HaMode::none, 1.0, 10.0);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.faults.push_back(FaultSpec{FaultKind::pause, "filter", "", 0.2, 0.3});
  std::set<pid_t> seen;
  bool saw_stopped = false;
  o.progress = [&](double, double) {
    for (const auto& [pid, cmd] : children()) {
      seen.insert(pid);
      // /proc/PID/stat's state is T while the process is stopped.
      if (cmd.find("--name filter ") != std::string::npos) {
        const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
        const auto close = stat.rfind(')');
        saw_stopped = saw_stopped || (close != std::string::npos && stat.substr(close + 2, 1) == "T");
      }
    }
  };
  const RunResult r = launch_real_run(plan, o);

  INFO(joined(r.errors));
  CHECK(r.errors.empty());
  CHECK(r.completed);
  CHECK(saw_stopped);
  const NodeId filter = plan.node_id("filter");
  REQUIRE(has_event(r, "failure", filter, "fault=pause duration_us=300000"));
  REQUIRE(has_event(r, "resume", filter, "fault=pause"));
  TimeUs paused_at = 0, resumed_at = 0;
  for (const TraceEvent& e : r.events) {
    if (e.node != filter) continue;
    if (e.kind == TraceKind::failure) paused_at = e.at_us;
    if (e.kind == TraceKind::resume) resumed_at = e.at_us;
  }
  CHECK(resumed_at - paused_at >= 300'000);
  check_no_child_remains(r, seen);
}

TEST_CASE("hapair node without its required options says which is missing and exits 2") {
  const TempDir dir;
  const std::string out = dir.path + "/out";
  const int status = std::system((std::string(HAPAIR_BINARY) + " node --name filter > " + out + " 2>&1").c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(read_file(out).find("'--control' is required") != std::string::npos);
}

TEST_CASE("launcher reports a node that dies without being killed as an error and a crash event") {
  const Plan plan = small_plan(HaMode::none, 0.6, 0.6);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  std::set<pid_t> seen;
  bool killed = false;
  o.progress = [&](double elapsed_s, double) {
    for (const auto& [pid, cmd] : children()) {
      seen.insert(pid);
      // Someone else's kill -9, as the launcher sees it.
      if (!killed && elapsed_s >= 0.2 && cmd.find("--name aggregate ") != std::string::npos) {
        kill(pid, SIGKILL);
        killed = true;
      }
    }
  };
  const RunResult r = launch_real_run(plan, o);

  REQUIRE(killed);
  INFO(joined(r.errors));
  bool reported = false;
  for (const std::string& e : r.errors)
    reported = reported || e.find("node aggregate exited unexpectedly with signal 9") != std::string::npos;
  CHECK(reported);
  CHECK(has_event(r, "exited", plan.node_id("aggregate"), "-- "));
  CHECK_FALSE(has_event(r, "failure", plan.node_id("aggregate"), ""));
  CHECK_FALSE(r.completed);
  check_no_child_remains(r, seen);
}

TEST_CASE("launcher kills every child when SIGINT arrives during a run") {
  const Plan plan = small_plan(HaMode::none, 5.0, 5.0);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  std::set<pid_t> seen;
  bool raised = false;
  o.progress = [&](double elapsed_s, double) {
    for (const auto& [pid, cmd] : children()) seen.insert(pid);
    if (!raised && elapsed_s >= 0.2) {
      raised = true;
      raise(SIGINT);
    }
  };
  const RunResult r = launch_real_run(plan, o);

  REQUIRE(raised);
  CHECK(seen.size() == plan.nodes.size());
  CHECK_FALSE(r.completed);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("interrupted by SIGINT") != std::string::npos);
  check_no_child_remains(r, seen);
}

TEST_CASE("launcher names the nodes that never said hello and leaves no child behind") {
  const Plan plan = small_plan(HaMode::none, 1.0, 1.0);
  const TempDir dir;
  const std::string pids = dir.path + "/pids";
  LaunchOptions o = test_options(dir);
  o.hapair_binary = write_script(dir, "silent-node", "echo $$ >> " + pids + "\nexec sleep 30");
  o.hello_timeout_s = 0.5;
  const RunResult r = launch_real_run(plan, o);

  CHECK_FALSE(r.completed);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0] == "timed out after 0.5 s waiting for hello from: source, filter, aggregate, sink");
  std::istringstream in(read_file(pids));
  std::set<pid_t> seen;
  for (pid_t pid; in >> pid;) seen.insert(pid);
  CHECK(seen.size() == plan.nodes.size());
  check_no_child_remains(r, seen);
}

TEST_CASE("launcher fails fast when a node exits before its hello, naming the node and its status") {
  const Plan plan = small_plan(HaMode::none, 1.0, 1.0);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.hapair_binary = write_script(dir, "broken-node", "echo 'cannot start' >&2\nexit 7");
  o.hello_timeout_s = 20.0;
  const RunResult r = launch_real_run(plan, o);

  CHECK_FALSE(r.completed);
  REQUIRE_FALSE(r.errors.empty());
  CHECK(r.errors[0].find("exited unexpectedly with exit code 7") != std::string::npos);
  check_no_child_remains(r, {});
}

TEST_CASE("launcher refuses faults it cannot inject with real processes, before starting anything") {
  const Plan plan = small_plan(HaMode::none, 1.0, 1.0);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.faults.push_back(FaultSpec{FaultKind::crash, "no-such-node", "", 0.5, 0.0});
  o.faults.push_back(FaultSpec{FaultKind::partition, "filter", "aggregate", 0.5, 1.0});
  o.faults.push_back(FaultSpec{FaultKind::pause, "filter", "", 0.5, 0.0});
  // A restart of a node that is not crashed at that time (its crash comes later).
  o.faults.push_back(FaultSpec{FaultKind::restart, "aggregate", "", 0.4, 0.0});
  o.faults.push_back(FaultSpec{FaultKind::crash, "aggregate", "", 0.6, 0.0});
  const RunResult r = launch_real_run(plan, o);

  INFO(joined(r.errors));
  // A partition needs root, ip and nft (proc/net_isolation.h); elsewhere it is refused too.
  const bool partitions_here = net_isolation_unavailable().empty();
  REQUIRE(r.errors.size() == (partitions_here ? 3u : 4u));
  auto reported = [&](const std::string& part) {
    return std::any_of(r.errors.begin(), r.errors.end(), [&](const std::string& e) { return e.find(part) != std::string::npos; });
  };
  CHECK(reported("unknown node 'no-such-node'"));
  if (!partitions_here) CHECK(reported("partition with real processes needs network namespaces"));
  CHECK(reported("pause filter at 0.5 s for 0 s): the duration must be positive"));
  CHECK(reported("restart aggregate at 0.4 s): 'aggregate' is not crashed at that time"));
  CHECK(r.counters.empty());
  CHECK(children().empty());
}

TEST_CASE("launcher refuses a restart fault in manual mode, where it starts no process it could restart") {
  const Plan plan = small_plan(HaMode::passive, 1.0, 1.0);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.manual = true;
  o.faults.push_back(FaultSpec{FaultKind::crash, "aggregate", "", 0.3, 0.0});
  o.faults.push_back(FaultSpec{FaultKind::restart, "aggregate", "", 0.5, 0.0});
  std::string printed;
  o.print = [&](const std::string& text) { printed += text; };
  const RunResult r = launch_real_run(plan, o);

  INFO(joined(r.errors));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("restart of aggregate is not supported in manual mode") != std::string::npos);
  CHECK(printed.empty());  // refused before any instruction was printed
  CHECK_FALSE(r.completed);
}

TEST_CASE("launcher refuses --secure in manual mode, where it hands the run's keys to no node") {
  const Plan plan = small_plan(HaMode::passive, 1.0, 1.0);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.manual = true;
  o.secure = true;
  std::string printed;
  o.print = [&](const std::string& text) { printed += text; };
  const RunResult r = launch_real_run(plan, o);

  INFO(joined(r.errors));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("--secure and --manual exclude each other") != std::string::npos);
  CHECK(printed.empty());
  CHECK_FALSE(r.completed);
}

TEST_CASE("hapair node --keys-from-stdin refuses a first line that is not the run's keys, and stdin that ends first") {
  const TempDir dir;
  const std::string out = dir.path + "/out";
  const std::string node = std::string(HAPAIR_BINARY) + " node --topology " + HAPAIR_SOURCE_DIR +
                           "/experiments/networks/default.toml --name source --control tcp://127.0.0.1:1 "
                           "--keys-from-stdin";
  int status = std::system(("echo hello | " + node + " > " + out + " 2>&1").c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(read_file(out).find("the first line on stdin is not the run's keys") != std::string::npos);
  status = std::system((node + " < /dev/null > " + out + " 2>&1").c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(read_file(out).find("stdin ended before the run's keys") != std::string::npos);
}

TEST_CASE("launcher restarts a crashed node with --rejoin on its old endpoint, accepts its second hello, and the pair is restored") {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  t.settings.duration_s = 2.0;
  t.settings.drain_timeout_s = 10.0;
  // Detection speed is not what this test checks; a loaded machine must not suspect live nodes.
  t.settings.failure_timeout_ms = 150;
  t.fragments[0].source.rate_tps = 1000.0;
  REQUIRE(validate(t).empty());
  const Plan plan = make_plan(t);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.faults.push_back(FaultSpec{FaultKind::crash, "aggregate", "", 0.5, 0.0});
  o.faults.push_back(FaultSpec{FaultKind::restart, "aggregate", "", 1.0, 0.0});
  std::set<pid_t> seen;
  std::map<pid_t, std::string> aggregate_processes;
  o.progress = [&](double, double) {
    for (const auto& [pid, cmd] : children()) {
      seen.insert(pid);
      if (cmd.find("--name aggregate ") != std::string::npos) aggregate_processes[pid] = cmd;
    }
  };
  const RunResult r = launch_real_run(plan, o);

  INFO(joined(r.errors));
  REQUIRE(r.errors.empty());
  CHECK(r.completed);
  const NodeId aggregate = plan.node_id("aggregate");
  REQUIRE(has_event(r, "failure", aggregate, "fault=crash"));
  REQUIRE(has_event(r, "restart", aggregate, "fault=restart"));
  CHECK_FALSE(has_event(r, "exited", aggregate, ""));  // the SIGKILL was the launcher's own
  TimeUs crashed_at = 0, restarted_at = 0, restored_at = 0;
  for (const TraceEvent& e : r.events) {
    if (e.node == aggregate && e.kind == TraceKind::failure) crashed_at = e.at_us;
    if (e.node == aggregate && e.kind == TraceKind::restart) restarted_at = e.at_us;
    if (e.kind == TraceKind::pair_restored && restored_at == 0) restored_at = e.at_us;
  }
  CHECK(crashed_at >= 500'000);
  CHECK(restarted_at >= 1'000'000);
  // The restarted process ran: it said hello, got the directory, rejoined, and the backup (the
  // primary now) took it back as its standby.
  CHECK(has_event(r, "pair_restored", plan.node_id("aggregate.backup"), "standby=aggregate"));
  CHECK(restored_at > restarted_at);
  // Two processes were aggregate: the first without --rejoin, the second with --rejoin bound
  // to the endpoint the first announced (the data port every peer knows).
  REQUIRE(aggregate_processes.size() == 2);
  const std::string first = aggregate_processes.begin()->second;
  const std::string second = std::next(aggregate_processes.begin())->second;
  CHECK(first.find("--rejoin") == std::string::npos);
  CHECK(second.find("--rejoin --bind tcp://127.0.0.1:") != std::string::npos);
  // The counters of the restarted node come from its second process; the bytes it sent add up
  // over both.
  REQUIRE(r.counters.count("aggregate") == 1);
  CHECK(r.counters.at("aggregate").at("pid") == std::next(aggregate_processes.begin())->first);
  CHECK(r.counters.at("aggregate").at("bytes_sent.tuples") > 0);
  check_no_child_remains(r, seen);
}

TEST_CASE("a run without HA whose crash stops the output ends soon after its duration, saying the output went quiet") {
  // drain_timeout_s is long: the run must end by the quiet-drain rule, long before.
  const Plan plan = small_plan(HaMode::none, 1.0, 20.0);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.faults.push_back(FaultSpec{FaultKind::crash, "aggregate", "", 0.5, 0.0});
  std::set<pid_t> seen;
  watch_children(o, seen);
  const RunResult r = launch_real_run(plan, o);

  CHECK_FALSE(r.completed);
  INFO(joined(r.errors));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("the output went quiet") != std::string::npos);
  CHECK(r.errors[0].find("drain_timeout_s") == std::string::npos);  // not the hard cap
  // The quiet period is drain_quiet_s = 3 s, at least the longest retransmission back-off
  // (16 x 250 ms = 4 s); it starts when the source's queue stops growing, at the duration.
  const Settings& s = plan.settings();
  const TimeUs duration_us = static_cast<TimeUs>(s.duration_s * 1e6);
  const TimeUs window_us = std::max<TimeUs>(static_cast<TimeUs>(s.drain_quiet_s * 1e6), retransmit_backoff_max_ms(s) * 1000);
  CHECK(r.end_us >= duration_us + window_us);  // (no upper bound in wall-clock time: the
                                                // error above says which rule ended it)
  check_no_child_remains(r, seen);
}

TEST_CASE("launcher in manual mode prints a command per node, runs the nodes someone else started, and kills by message") {
  const Plan plan = small_plan(HaMode::none, 0.8, 0.6);
  const TempDir dir;
  LaunchOptions o = test_options(dir);
  o.manual = true;
  o.faults.push_back(FaultSpec{FaultKind::crash, "sink", "", 0.4, 0.0});
  std::vector<pid_t> started;
  std::string printed;
  o.print = [&](const std::string& text) {
    printed += text;
    if (!started.empty()) return;
    // Play the person at the other hosts: start every printed node ourselves.
    for (const PlanNode& node : plan.nodes) {
      const std::string marker = "--name " + node.name + " --control ";
      const auto at = text.find(marker);
      REQUIRE(at != std::string::npos);
      const auto topology_at = text.rfind("--topology ", at) + 11;
      const std::string topology = text.substr(topology_at, at - 1 - topology_at);
      const auto control_at = at + marker.size();
      const std::string control = text.substr(control_at, text.find('\n', control_at) - control_at);
      const pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        execl(HAPAIR_BINARY, HAPAIR_BINARY, "node", "--topology", topology.c_str(), "--name", node.name.c_str(),
              "--control", control.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      started.push_back(pid);
    }
  };
  const RunResult r = launch_real_run(plan, o);
  // The nodes were stopped (or killed) by the launcher; reap them, bounded in time.
  std::map<pid_t, int> status;
  for (pid_t pid : started) {
    bool reaped = false;
    for (int i = 0; i < 1'000 && !reaped; ++i) {
      reaped = waitpid(pid, &status[pid], WNOHANG) == pid;
      if (!reaped) usleep(10'000);
    }
    if (!reaped) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      FAIL("node process " << pid << " did not exit after the run");
    }
  }

  CHECK(printed.find("hapair node --topology ") != std::string::npos);
  REQUIRE(started.size() == plan.nodes.size());
  // The sink got Kill{0} and killed itself with SIGKILL; the others stopped cleanly.
  const NodeId sink = plan.node_id("sink");
  CHECK(has_event(r, "failure", sink, "fault=crash"));
  for (std::size_t i = 0; i < started.size(); ++i) {
    INFO("node " << plan.nodes[i].name);
    const int s = status[started[i]];
    if (plan.nodes[i].id == sink) {
      CHECK((WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL));
    } else {
      CHECK((WIFEXITED(s) && WEXITSTATUS(s) == 0));
      CHECK(r.counters.count(plan.nodes[i].name) == 1);
    }
  }
  CHECK_FALSE(r.completed);  // the sink died, so end of output never came
}

}  // namespace hapair
