// The reproduction experiments (`hapair experiment NAME`): one per figure or table of the paper,
// each configured by experiments/<name>/experiment.toml, each writing <name>.csv (one row per
// run), <name>.png and <name>.pdf, <name>.txt (medians and the claim check), seed.txt, config.toml and
// version.txt, and per-run result folders, into its out directory, and each ending with a check
// of the paper's claim on its own data.
//
// Paper: Hwang et al., ICDE 2005, section 6 (recovery time vs communication interval, runtime
// overhead vs interval, the trade-off between them, recovery time vs state size and load,
// knowledge of query-network properties) and the recovery-type table of section 3.
// docs/EXPERIMENTS.md is the figure table; every experiment's README states its claim, the
// expected shape, the tolerances of its check and the numbers measured on our machine.
//
// Invariants: every point runs over several seeds and every run becomes one CSV row; the claim
// check reads only those rows (experiment_claims.h); a differing claim is reported, it does not
// make the experiment fail, only failed runs (errors, incomplete) do.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "campaigns/experiment_claims.h"
#include "campaigns/experiment_runs.h"

namespace hapair {

struct ExperimentInfo {
  std::string name;
  std::string title;  // what the figure shows
  std::string claim;  // the paper's claim it checks, in one sentence
};

// Every experiment, in the order `hapair experiment all` runs them.
std::vector<ExperimentInfo> experiment_infos();
bool is_experiment(const std::string& name);

struct ExperimentOptions {
  // The small version: 1 seed, the <sweep>_quick_points, quick_duration_s/quick_fail_at_s, and
  // the simulator unless `driver` is given.
  bool quick = false;
  std::string driver;           // "real" or "sim"; "" = real (sim under quick)
  std::optional<std::int64_t> seeds;  // overrides [experiment] seeds
  std::string out_dir;          // where the files go (created)
  std::string config_path;      // "" = <source dir>/experiments/<name>/experiment.toml
  std::string hapair_binary = "/proc/self/exe";
  bool write_run_folders = true;  // runs/<label>/ with every run's result files
  // Several hosts over ssh (the real driver only; docs/HOSTS.md): every run's nodes placed on
  // the hosts, the victim SIGKILLed on its host, node logs and hosts.json in its run folder. The
  // claim is checked with the tolerances calibrated on one machine, and the report says so.
  HostsLaunch hosts;
  std::function<void(std::size_t, std::size_t, const std::string&, bool)> on_run;  // see ExecuteOptions
  std::function<void(double, double)> progress;
};

struct ExperimentReport {
  std::string name;
  std::string out_dir;
  std::string csv_path;
  std::string png_path;
  std::string pdf_path;  // the same plot as a vector graphic, beside the PNG
  std::string driver;
  std::vector<std::string> problems;  // the experiment could not be set up (bad config): nothing ran
  std::size_t runs = 0;
  std::size_t reused_runs = 0;        // identical runs taken from earlier in the same invocation
  // "<label>: <outcome line>" and that run's errors, for runs that broke their approach's
  // guarantee or whose harness failed (run/guarantee.h).
  std::vector<std::string> run_errors;
  std::vector<std::string> write_errors;
  std::string plot_error;             // non-empty when the PNG could not be drawn
  std::vector<ExperimentRow> rows;
  std::string summary;                // medians per point, for the terminal and <name>.txt
  ClaimCheck claim;
  double wall_s = 0;
  // Whether the runs themselves went wrong (the exit status of the command): problems, runs that
  // broke their approach's guarantee or whose harness failed, result files that could not be
  // written. A differing claim is not a failure.
  bool failed() const { return !problems.empty() || !run_errors.empty() || !write_errors.empty(); }
};

// Runs one experiment. `cache` holds the runs of this invocation: an identical run (same driver,
// fault and effective topology) that an earlier experiment ran is reused, not run again.
ExperimentReport run_experiment(const std::string& name, const ExperimentOptions& options, RunCache& cache);

// The runs an experiment would make, without running any: what `hapair experiment` estimates its
// time from before it starts. `problems` as in ExperimentReport (then no runs).
struct ExperimentPlan {
  std::string driver;
  std::vector<PlannedRun> runs;
  std::vector<std::string> problems;
};
ExperimentPlan plan_experiment(const std::string& name, const ExperimentOptions& options);

// What a list of planned runs is expected to take, in wall-clock seconds, counting once the runs
// that more than one experiment shares (they are reused): on real processes the seconds each run
// lasts (its sources' duration, the drain after it) plus a fixed cost per run for starting and
// stopping its processes and judging it, fitted to this repository's committed results
// (docs/EXPERIMENTS.md, "How long"); in the simulator the simulated seconds at a rate measured
// the same way. An estimate, said as one.
struct TimeEstimate {
  std::size_t runs = 0;      // distinct runs
  std::size_t reused = 0;    // runs another experiment of the list makes too
  double seconds = 0;
};
TimeEstimate estimate_time(const std::vector<std::pair<std::string, std::vector<PlannedRun>>>& plans_by_driver);

// A Markdown table of the semantics experiment's rows: approach x network, each cell the verdict
// over the seeds with lost/duplicate counts (semantics_table.md).
std::string semantics_markdown(const std::vector<ExperimentRow>& rows);

}  // namespace hapair
