// Real partitions, made by the launcher (issue 16): with a partition in the fault schedule every
// node process runs in a network namespace of its own and the partition is nftables DROP rules
// between two of them (proc/net_isolation.h). Passive and active standby on the default
// network, cut between a primary and its backup (the backup takes over while the primary lives
// on, and the old primary is fenced after the heal) and between a primary and its downstream
// primary; each run is checked against the failure-free reference, the trace must record the
// partition and its heal, and nothing of the namespaces may remain afterwards.
//
// Needs root, `ip` and `nft`; otherwise skipped with a message saying why.
#include "e2e/e2e_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>

#include "proc/net_isolation.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

FaultSpec partition(const std::string& a, const std::string& b, double at_s, double duration_s) {
  FaultSpec f = fault_spec(FaultKind::partition, a, at_s, duration_s);
  f.peer = b;
  return f;
}

// What `ip` lists of the naming scheme of launcher `pid` (namespaces, root links): empty when
// the run cleaned up.
std::string leftovers(pid_t pid = ::getpid()) {
  const std::string prefix = isolation_prefix(pid);
  std::string found;
  for (const char* command : {"ip netns list 2>/dev/null", "ip -o link show 2>/dev/null"}) {
    FILE* p = ::popen(command, "r");
    if (!p) continue;
    char line[1024];
    while (std::fgets(line, sizeof line, p)) {
      const std::string text = line;
      // A namespace line starts with its name; a link line has it after "N: ".
      const std::size_t colon = text.find(": ");
      const std::string name = text.rfind(prefix, 0) == 0 ? text : (colon == std::string::npos ? "" : text.substr(colon + 2));
      if (name.rfind(prefix, 0) == 0 && isolation_owner(name.substr(0, name.find_first_of(" @:\n"))))
        found += text;
    }
    ::pclose(p);
  }
  return found;
}

bool skipped() {
  const std::string why = net_isolation_unavailable();
  if (!why.empty()) WARN("real partition test skipped: " << why);
  return !why.empty();
}

bool has_fault_event(const Plan& plan, const RunResult& r, TraceKind kind, const std::string& node, const std::string& peer) {
  for (const TraceEvent& e : r.events) {
    if (e.kind != kind || plan.nodes.at(e.node).name != node) continue;
    const auto fault = e.get(TraceKey::fault);
    const auto other = e.get(TraceKey::peer);
    if (fault && other && *fault == static_cast<std::int64_t>(FaultKind::partition) &&
        plan.nodes.at(static_cast<NodeId>(*other)).name == peer)
      return true;
  }
  return false;
}

// Runs the plan with a real partition a-b from at_s for duration_s (and `more` faults), and
// checks what every run here must show: a precise result, the partition and its heal in the
// trace, and no namespace or link left behind.
RunOutcome run_partitioned(const std::shared_ptr<const Plan>& plan, const std::string& a, const std::string& b,
                           double at_s, double duration_s, std::vector<FaultSpec> more = {}) {
  more.insert(more.begin(), partition(a, b, at_s, duration_s));
  RunOutcome o = run_real(plan, std::move(more));
  check_precise(o);
  CHECK(has_fault_event(*plan, o.result, TraceKind::failure, a, b));
  CHECK(has_fault_event(*plan, o.result, TraceKind::heal, a, b));
  CHECK(leftovers().empty());
  return o;
}

// Whether process `pid` runs (exists and is no zombie).
bool alive(pid_t pid) {
  std::FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!stat) return false;
  char text[512] = {};
  const std::size_t n = std::fread(text, 1, sizeof text - 1, stat);
  std::fclose(stat);
  const std::string s(text, n);
  const auto close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() && s[close + 2] != 'Z';
}

// The live processes in network namespace `name`.
std::vector<pid_t> namespace_processes(const std::string& name) {
  std::vector<pid_t> out;
  FILE* p = ::popen(("ip netns pids " + name + " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char line[64];
  while (std::fgets(line, sizeof line, p))
    if (const pid_t pid = std::atoi(line); pid > 0 && alive(pid)) out.push_back(pid);
  ::pclose(p);
  return out;
}

}  // namespace

TEST_CASE("a real partition between a primary and its backup: the backup takes over, the old primary is fenced, and the output is precise", "[e2e][partition]") {
  if (skipped()) return;
  for (HaMode ha : {HaMode::passive, HaMode::active}) {
    INFO("ha=" << to_string(ha));
    // 600 ms against a 150 ms failure timeout: the backup suspects the primary, which lives on
    // and keeps sending downstream until it hears of the newer epoch (from its neighbours, or
    // from the backup after the heal).
    const auto plan = plan_of("", ha, 3.0);
    const RunOutcome o = run_partitioned(plan, "aggregate", "aggregate.backup", 1.0, 0.6);
    CHECK(count_events(*plan, o.result, "takeover", "aggregate.backup") == 1);
    CHECK(count_events(*plan, o.result, "fenced", "aggregate") == 1);
  }
}

TEST_CASE("a real partition between a primary and its downstream primary is recovered precisely", "[e2e][partition]") {
  if (skipped()) return;
  for (HaMode ha : {HaMode::passive, HaMode::active}) {
    INFO("ha=" << to_string(ha));
    // The filter can no longer reach the aggregate, nor the aggregate the filter: its heartbeats
    // stay unanswered, so the aggregate's standby or the filter's may act; whatever happens, the
    // output must be the reference.
    const auto plan = plan_of("", ha, 3.0);
    run_partitioned(plan, "filter", "aggregate", 1.0, 0.6);
  }
}

TEST_CASE("with nodes in namespaces, a SIGKILLed primary is replaced and its restarted process rejoins from its namespace", "[e2e][partition]") {
  if (skipped()) return;
  // The partition (of two nodes that never talk) only puts every node in a namespace; the crash
  // is a SIGKILL of the node itself (its process entered the namespace with setns before exec),
  // and the restart binds the same endpoint in the same namespace.
  const auto plan = plan_of("", HaMode::passive, 3.0);
  const RunOutcome o =
      run_partitioned(plan, "source", "sink", 0.5, 1.5, {crash("aggregate", 1.0), restart("aggregate", 1.5)});
  CHECK(count_events(*plan, o.result, "takeover", "aggregate.backup") == 1);
  CHECK(count_events(*plan, o.result, "restart", "aggregate") == 1);
}

TEST_CASE("a launcher with nodes in namespaces that is interrupted or killed with -9 leaves no namespace, link or node", "[e2e][partition]") {
  if (skipped()) return;
  for (int sig : {SIGINT, SIGKILL}) {
    INFO("signal " << sig);
    // A 60 s run whose partition (of two nodes that never talk) comes late: only the namespaces
    // matter here.
    const pid_t launcher = ::fork();
    REQUIRE(launcher >= 0);
    if (launcher == 0) {
      const int null_fd = ::open("/dev/null", O_WRONLY);
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
      for (int s : {SIGINT, SIGTERM, SIGABRT, SIGSEGV}) ::signal(s, SIG_DFL);  // not the test framework's
      ::execl(HAPAIR_BINARY, HAPAIR_BINARY, "run", "--ha", "passive", "--duration-s", "60", "--partition",
              "source-sink@50+1", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Running: every node process lives in its namespace.
    const std::size_t node_count = make_plan(default_topology()).nodes.size();
    std::vector<pid_t> nodes;
    const bool started = wait_for(
        [&] {
          nodes.clear();
          for (std::size_t i = 0; i < node_count; ++i)
            for (pid_t pid : namespace_processes(node_namespace_name(launcher, i))) nodes.push_back(pid);
          return nodes.size() == node_count;
        },
        60);
    CHECK(started);
    CHECK_FALSE(leftovers(launcher).empty());
    ::kill(launcher, sig);
    int status = 0;
    ::waitpid(launcher, &status, 0);
    // The launcher itself (SIGINT), or its watcher process (kill -9), removes everything; the
    // nodes die with the launcher (parent-death signal).
    CHECK(wait_for([&] { return leftovers(launcher).empty(); }, 30));
    CHECK(wait_for([&] { return std::none_of(nodes.begin(), nodes.end(), alive); }, 30));
  }
}
