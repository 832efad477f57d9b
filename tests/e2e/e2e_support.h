// Helpers for end-to-end tests with real node processes (the launcher spawns `hapair node`).
#pragma once

#include <catch2/catch.hpp>

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "run/run_once.h"
#include "config/topology_file.h"
#include "support/listening.h"
#include "scenarios/faults.h"

namespace hapair::e2e {

// What /proc says of a process: its state letter ('Z': a zombie, which runs nothing), its parent
// and its command line.
struct ProcessInfo {
  char state = 0;
  pid_t parent = 0;
  std::vector<std::string> args;
};

// Every process id in /proc now.
inline std::vector<pid_t> process_ids() {
  std::vector<pid_t> out;
  DIR* proc = opendir("/proc");
  if (!proc) return out;
  while (dirent* entry = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid > 0) out.push_back(pid);
  }
  closedir(proc);
  return out;
}

// nullopt when the process is gone (or ended between the reads).
inline std::optional<ProcessInfo> process_info(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return std::nullopt;
  ProcessInfo info;
  std::istringstream rest(text.substr(close + 2));
  rest >> info.state >> info.parent;
  std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
  std::string arg;
  for (char c : raw) {
    if (c == '\0') {
      info.args.push_back(arg);
      arg.clear();
    } else {
      arg += c;
    }
  }
  return info;
}

// Whether a command line is `hapair node ...`.
inline bool is_hapair_node(const ProcessInfo& p) { return p.args.size() >= 2 && p.args[1] == "node"; }

// The `hapair node` processes that are children of this test process.
inline std::vector<pid_t> node_children() {
  std::vector<pid_t> out;
  for (pid_t pid : process_ids()) {
    const auto p = process_info(pid);
    if (p && p->parent == getpid() && p->state != 'Z' && is_hapair_node(*p)) out.push_back(pid);
  }
  return out;
}

// The TCP ports these processes listen on.
inline std::set<int> listening_ports(const std::vector<pid_t>& pids) {
  std::set<int> ports;
  for (pid_t pid : pids)
    for (const testing::ListeningSocket& s : testing::listening_sockets(pid)) ports.insert(s.port);
  return ports;
}

inline std::shared_ptr<const Plan> plan_of(const std::string& example, HaMode ha, double duration_s,
                                           void (*tweak)(Topology&) = nullptr) {
  Topology t;
  if (example.empty()) {
    t = default_topology();
  } else {
    auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/" + example);
    REQUIRE(load.topology.has_value());
    t = *load.topology;
  }
  RunOverrides o;
  o.ha = ha;
  o.duration_s = duration_s;
  REQUIRE(apply_overrides(t, o).empty());
  // These tests check what each approach delivers, not how fast it detects: a 150 ms timeout
  // keeps a loaded 2-core CI machine (a dozen node processes) from suspecting live primaries.
  // (False suspicions are handled — the old primary is fenced and rejoins — and are tested in the
  // simulator; here they would only move the planned crash onto a standby.)
  t.settings.failure_timeout_ms = 150;
  if (tweak) tweak(t);
  REQUIRE(validate(t).empty());
  return std::make_shared<const Plan>(make_plan(t));
}

inline RunOutcome run_real(const std::shared_ptr<const Plan>& plan, std::vector<FaultSpec> faults,
                           const std::string& out_dir = "") {
  RunRequest r;
  r.driver = "real";
  r.hapair_binary = HAPAIR_BINARY;
  r.faults = std::move(faults);
  r.out_dir = out_dir;
  static std::map<std::string, Reference> cache;
  const std::string key = write_topology(plan->topology);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, compute_reference(*plan)).first;
  RunOutcome o = run_once(plan, r, it->second);
  for (const auto& e : o.result.errors) UNSCOPED_INFO("run error: " << e);
  return o;
}

inline FaultSpec fault_spec(FaultKind kind, const std::string& node, double at_s, double duration_s = 0) {
  return test::fault(kind, node, at_s, duration_s);
}
using test::crash;
inline FaultSpec pause(const std::string& node, double at_s, double duration_s) {
  return fault_spec(FaultKind::pause, node, at_s, duration_s);
}
inline FaultSpec restart(const std::string& node, double at_s) { return fault_spec(FaultKind::restart, node, at_s); }

// How many trace events of this name the run recorded (at one node, by its plan name).
inline std::size_t count_events(const RunResult& r, const std::string& event) {
  std::size_t n = 0;
  for (const auto& e : r.events) n += to_string(e.kind) == event ? 1 : 0;
  return n;
}
inline std::size_t count_events(const Plan& plan, const RunResult& r, const std::string& event, const std::string& node) {
  std::size_t n = 0;
  for (const auto& e : r.events) n += to_string(e.kind) == event && plan.nodes.at(e.node).name == node ? 1 : 0;
  return n;
}

// The run completed without errors and its output is the failure-free reference exactly.
inline void check_precise(const RunOutcome& o) {
  INFO("summary:\n" << o.summary);
  REQUIRE(o.result.errors.empty());
  REQUIRE(o.result.completed);
  CHECK(o.semantics.verdict == "precise");
  CHECK(o.semantics.lost == 0);
  CHECK(o.semantics.duplicates == 0);
  CHECK(o.semantics.differing == 0);
}

// An independent recount of lost reference entries: reference entries (stream, lineage, key,
// value, ts) minus delivered ones, as multisets. Used to check the checker's own count.
inline std::uint64_t recount_lost(const std::vector<Delivery>& reference, const std::vector<Delivery>& delivered) {
  using Key = std::tuple<StreamId, std::uint64_t, std::int64_t, double, TimeUs>;
  std::map<Key, std::int64_t> balance;
  for (const auto& d : reference) ++balance[{d.stream, d.tuple.lineage, d.tuple.key, d.tuple.value, d.tuple.ts_us}];
  for (const auto& d : delivered) --balance[{d.stream, d.tuple.lineage, d.tuple.key, d.tuple.value, d.tuple.ts_us}];
  std::uint64_t lost = 0;
  for (const auto& [k, n] : balance)
    if (n > 0) lost += static_cast<std::uint64_t>(n);
  return lost;
}

// Polls `state` every 20 ms until it holds or `timeout_s` passed; whether it held.
inline bool wait_for(const std::function<bool()>& state, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (state()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return state();
}

}  // namespace hapair::e2e
