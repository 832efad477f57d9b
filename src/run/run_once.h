// One run of one configuration, end to end: drive it (real processes or the simulator), compare
// its sink output with the failure-free reference, compute its metrics, and optionally write
// the result files. Every command that runs something (run, compare, experiment, chaos) goes
// through here, so all of them measure the same way (docs/EXPERIMENTS.md, "How we measure").
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "judge/checker.h"
#include "judge/load.h"
#include "judge/metrics.h"
#include "judge/reference.h"
#include "launch/launcher.h"
#include "protocols/plan.h"
#include "protocols/run_result.h"

namespace hapair {

struct RunRequest {
  std::string driver = "real";  // "real" or "sim"
  std::vector<FaultSpec> faults;
  std::string out_dir;          // empty: write no files
  std::string hapair_binary = "/proc/self/exe";
  std::function<void(double elapsed_s, double total_s)> progress;
  // Real driver: crashes asked for while the run goes on (LaunchOptions::live_faults).
  std::function<std::vector<FaultSpec>()> live_faults;
  std::function<void(const std::string&)> log;  // simulator log lines (first: the seed)
  std::string log_dir;                          // real driver: node logs
  // Real driver, several hosts: start no processes, print the `hapair node` command of every
  // node and wait for them; the control socket binds `control_bind` and nodes dial
  // `control_advertise` (LaunchOptions).
  bool manual = false;
  std::string control_bind = "tcp://127.0.0.1:*";
  std::string control_advertise;
  // Real driver: CURVE on every socket of the run (LaunchOptions::secure; always on with hosts).
  bool secure = false;
  // Real driver, global checkpoints: the coordinator's store directory (LaunchOptions::checkpoint_dir).
  std::string checkpoint_dir;
  // The cores the planned CPU load is measured against (load.h); 0: this machine's.
  unsigned cores = 0;
  // Real driver, several hosts over ssh (LaunchOptions::hosts): node logs and hosts.json go to
  // log_dir, or to out_dir when log_dir is empty.
  HostsLaunch hosts;
};

struct RunOutcome {
  RunResult result;
  SemanticsReport semantics;
  RunMetrics metrics;
  std::string effective_config;  // write_topology(plan.topology)
  PlannedLoad load;              // the planned CPU load (load.h)
  double measured_load_pct = 0;  // CPU of every process over the run's span and the cores
  std::string summary;           // format_summary() and the load lines
  std::string write_error;       // non-empty when the result files could not be written
  std::vector<Delivery> reference;  // what the run was judged against (Judgement::reference)
};

// The reference of a plan; compute it once and pass it to several runs of the same network.
struct Reference {
  ReferenceRun run;
  std::vector<std::string> arbitrary_operators;
};
Reference compute_reference(const Plan& plan);

RunOutcome run_once(std::shared_ptr<const Plan> plan, const RunRequest& request, const Reference& reference);

// What a run is judged against (docs/EXPERIMENTS.md, "How we measure", and docs/FAULTS.md). On a network where an
// order-sensitive operator reads a Union's output (merge_order.h), the reference is recomputed
// with the merge order the run's Unions really chose (RunResult::merge_orders); a stream whose
// Union's order is unknown is left out of both sides and listed as not judged. Otherwise the
// canonical `reference` is used as it is.
struct Judgement {
  std::vector<Delivery> reference;  // of the judged streams, in reference order
  std::vector<Delivery> delivered;  // of the judged streams, in delivery order
  std::uint64_t input_tuples = 0;
  std::vector<NotJudged> not_judged;
  bool merge_order_replayed = false;
  std::uint64_t unmatched_merge_runs = 0;  // ReferenceRun::unmatched_merge_runs
};
Judgement judge_against(const Plan& plan, const Reference& reference, const RunResult& result);

// check_semantics() of judge_against(), with not_judged and merge_order_replayed filled in.
SemanticsReport judge_run(const Judgement& judgement, const Reference& reference);

// Parses "NODE@SECONDS" (a crash) into a fault; nullopt with `error` set when malformed.
std::optional<FaultSpec> parse_crash_fault(const std::string& text, std::string& error);
// Parses "NODE@SECONDS+DURATION" (a pause: SIGSTOP, then SIGCONT).
std::optional<FaultSpec> parse_pause_fault(const std::string& text, std::string& error);

// Parses "NODE@SECONDS" as a restart of a crashed node (it rejoins as the standby).
std::optional<FaultSpec> parse_restart_fault(const std::string& text, std::string& error);
// Parses "A-B@SECONDS+DURATION": the link between nodes A and B is cut for that long (simulator).
std::optional<FaultSpec> parse_partition_fault(const std::string& text, std::string& error);

// Every problem with a list of faults for this plan: unknown nodes (with the plan's node names
// and the close match), times outside the run (0 < at_s < duration_s), and a schedule the drivers
// cannot inject (validate_faults: a crash of a crashed node, a restart of a running one, ...).
std::vector<std::string> validate_run_faults(const Plan& plan, const std::vector<FaultSpec>& faults);

}  // namespace hapair
