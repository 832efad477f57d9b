// Scripted simulator scenarios for tests, in the init / act / check style of etcd-raft's tests:
// build a plan, script faults (crash, pause, restart, partition) and message drops by kind, run,
// then check the RunResult, per-node metrics and which messages were sent. And swarm mode: legal
// random settings and a random crash, all from one seed, for many-seed runs.
//
// docs/ARCHITECTURE.md (tests drive the cores through the simulator, scripted and with many seeds)
// and STYLE.md point 8 (scenario tests assert a checker verdict and that the branch they target
// really ran: sent_count() and observe() say which messages flowed).
//
// Invariants: the script is fixed before the first run (a scenario is a plan, a seed and a script,
// so a failing one can be replayed exactly); swarm_case(seed, options) is a pure function of its
// arguments and draws from its own Rng stream, independent of the network's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "protocols/topology.h"
#include "sim/simulator.h"

namespace hapair {

// In drop_kind() and sent_count(): any node.
inline constexpr const char* kAnyNode = "*";

class Scenario {
 public:
  // The production cores (make_node_core) on make_plan(topology); the topology must be valid.
  explicit Scenario(const Topology& topology);
  // Any plan and cores (the simulator's own tests use small test cores).
  Scenario(std::shared_ptr<const Plan> plan, CoreFactory factory);
  ~Scenario();
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  // The script; times in seconds of virtual time.
  Scenario& seed(std::uint64_t seed);
  Scenario& crash(const std::string& node, double at_s);
  Scenario& pause(const std::string& node, double at_s, double duration_s);
  Scenario& restart(const std::string& node, double at_s);
  Scenario& partition(const std::string& a, const std::string& b, double from_s, double until_s);
  Scenario& fault(const FaultSpec& fault);
  // Drops every message of `kind` (a kMessageKindNames entry) sent from `from` to `to` (node
  // names or kAnyNode) while from_s <= send time < until_s.
  Scenario& drop_kind(const std::string& kind, const std::string& from, const std::string& to, double from_s,
                      double until_s);
  // Called for every message a core sends, dropped or not.
  Scenario& observe(SendObserver observer);
  Scenario& log(std::function<void(const std::string&)> log);
  // Everything else the simulator takes (time limit, progress, FIFO bound).
  SimOptions& options();

  // Runs until every sink finished and nothing is in flight, or the time limit.
  const RunResult& run_until_quiet();
  // Runs up to `t_s` of virtual time; may be called again with a later time.
  const RunResult& run_until(double t_s);

  const RunResult& result() const;
  Metrics metrics(const std::string& node) const;
  // Messages of `kind` sent from `from` to `to` so far (kAnyNode for any), dropped ones included.
  std::int64_t sent_count(const std::string& kind, const std::string& from = kAnyNode,
                          const std::string& to = kAnyNode) const;
  const Plan& plan() const { return *plan_; }
  std::uint64_t effective_seed() const;
  Simulator& simulator();

 private:
  void start_if_needed();
  NodeId checked_node(const std::string& name) const;

  std::shared_ptr<const Plan> plan_;
  CoreFactory factory_;
  SimOptions options_;
  std::vector<SendObserver> observers_;
  std::unique_ptr<Simulator> sim_;
  RunResult result_;
  // (kind index, from, to) -> messages sent.
  std::map<std::tuple<std::size_t, NodeId, NodeId>, std::int64_t> sent_;
};

// ---- swarm mode --------------------------------------------------------------------------

struct SwarmOptions {
  Topology base = default_topology();
  // HA modes to pick from for the whole network; empty: keep the base topology's.
  std::vector<HaMode> ha_modes;
  double duration_s = 3.0;
  // Crash one random operator-fragment primary in the middle 60% of the run.
  bool crash = true;
  // Network faults are off unless the protocol under test tolerates them (none of the modes
  // retransmits lost data-plane messages, so loss turns into gaps).
  double loss_ratio_max = 0.0;
  double duplication_ratio_max = 0.0;
  double reorder_ratio_max = 0.0;
};

struct SwarmCase {
  std::uint64_t seed = 0;
  Topology topology;               // with the picked settings; settings.seed == seed
  std::vector<FaultSpec> faults;   // the picked failure schedule
  std::string description;         // the picks on one line, for logs and failure messages
};

SwarmCase swarm_case(std::uint64_t seed, const SwarmOptions& options = {});

}  // namespace hapair
