// The comparison of the approaches on one network (the main job, `hapair compare`): every
// approach with the same input and seed, repeated, so that each figure is a median with its
// spread rather than one run's noise.
//
// Paper: the recovery-time versus runtime-overhead trade-off of amnesia, passive standby,
// active standby and upstream backup (Hwang et al., section 6): overhead is the cost during
// normal operation, recovery time what one crash costs. Definitions (docs/EXPERIMENTS.md, "How we measure", README
// "How we measure"), as implemented here:
// - Each repetition runs, in this interleaved order, a failure-free run of ha=none and of every
//   approach (the overhead runs), then every approach with the same SIGKILL of the victim at
//   fail_at_s (the crash runs); repetition 2 repeats the same order, and so on. Interleaving
//   spreads slow phases of a shared machine over every approach instead of one. ha=none's crash
//   run is in the first repetition only: its output stops at the crash, every repetition would
//   show the same stop, and such a run lasts drain_quiet_s (at least the longest retransmission
//   back-off, 4 s) beyond the others before it ends as incomplete.
// - Recovery figures (verdict, lost, detection, takeover, recovery, catch-up, replay) come from
//   the crash runs, each from the run's own events and output (metrics.h).
// - Overheads come from the failure-free runs only, so they hold no recovery traffic: bandwidth
//   and CPU overhead are (approach - none) / none in percent and +p99 is the approach's latency
//   p99 minus none's, each against the ha=none failure-free run of the same repetition.
// - Every figure is shown as the median (an even count averages the middle two) with the
//   minimum and maximum over the repetitions whose runs were used.
// - A disturbed run (disturbance.h: a takeover before the failure, a false detection, a victim
//   out of its planned role) is run again, up to reruns_max times; when every attempt was
//   disturbed, the last one is left out of the medians. The report lists each such run, its
//   disturbance and what happened to it.
// - The none row shows what its crash run gave (the output stops: verdict gap, lost) and no
//   overhead (it is the baseline).
//
// Invariant: the report is a pure function of the runs' outcomes; in the simulator the whole
// comparison is deterministic.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "campaigns/experiment_runs.h"
#include "run/guarantee.h"
#include "judge/load.h"
#include "run/run_once.h"

namespace hapair {

// `hapair compare` on the built-in network charges each operator this much CPU per tuple
// (Settings::operator_cost_us_per_tuple), the value every experiment uses: with the built-in 0,
// reprocessing is nearly free and every approach would recover in the detection time.
inline constexpr double kCompareOperatorCostUs = 100.0;
// The main job's run lengths on the built-in network (it must finish in about two minutes on a
// 2-core machine, 28 runs): crash runs of 3.5 s with the SIGKILL at 2 s (the aggregate's window
// is 200 ms and the slowest recovery, amnesia's, waits one window, so 2 s before and 1.5 s after
// hold a steady pre-failure p99 and every phase of the recovery) and failure-free runs of 2.5 s.
inline constexpr double kCompareCrashDurationS = 3.5;
inline constexpr double kCompareFailAtS = 2.0;
inline constexpr double kCompareFailureFreeDurationS = 2.5;
inline constexpr std::size_t kCompareRepeatDefault = 3;
inline constexpr std::size_t kCompareRerunsMax = 2;

// One run of a comparison.
struct CompareRun {
  std::string approach;       // "none", "amnesia", ...
  bool failure = false;       // a crash run (true) or a failure-free overhead run
  std::size_t repetition = 0; // from 1
  std::size_t attempt = 0;    // 0: the first; 1..reruns_max: reruns after a disturbed attempt
  RunOutcome outcome;
  GuaranteeCheck guarantee;   // whether the run kept its approach's guarantee (run/guarantee.h)
  bool disturbed = false;
  std::string disturbance;    // describe_disturbances(), "" when undisturbed
  bool used = false;          // counted in the medians
  std::string run_dir;        // relative to the out dir ("" when none written)
  // "active crash run, repetition 2" / "passive failure-free run, repetition 1, rerun 1".
  std::string label() const;
};

struct CompareOptions {
  std::string driver = "real";
  std::string victim = "aggregate";  // the node SIGKILLed in every crash run
  // With hosts: the crash runs lose the victim's whole host (HostLossSpec "host-of:VICTIM": its
  // links dropped, then every node there killed) instead of SIGKILLing the victim alone.
  bool lose_victim_host = false;
  double fail_at_s = kCompareFailAtS;
  // Seconds the sources emit in the failure-free runs; unset: the topology's duration_s (the
  // crash runs').
  std::optional<double> failure_free_duration_s;
  std::size_t repeat = kCompareRepeatDefault;
  // Repetition r runs with the topology's seed + r - 1 (its sources' tuples and, in the
  // simulator, the network), every approach of a repetition on the same seed; off: every
  // repetition on the topology's seed (the simulator then repeats one run exactly).
  bool vary_seed = false;
  std::size_t reruns_max = kCompareRerunsMax;  // per disturbed run
  std::vector<HaMode> approaches = ApproachCatalog::builtin().modes();
  std::string out_dir;  // compare.csv, compare_runs.csv, compare.txt, compare.png, one folder per run
  std::string hapair_binary = "/proc/self/exe";
  unsigned cores = 0;   // for the planned CPU load; 0: this machine's
  // Several hosts over ssh (LaunchOptions::hosts); each run's node logs and hosts.json go to its
  // folder under out_dir.
  HostsLaunch hosts;
  // CURVE on every socket of each run (RunRequest::secure; always on with hosts).
  bool secure = false;
  // Called before each run (position from 0, the planned number of runs (reruns come on top),
  // label) and during it (elapsed, total s).
  std::function<void(std::size_t, std::size_t, const std::string&)> on_run;
  std::function<void(double, double)> progress;
  // Test hook: changes a run's outcome before it is judged (e.g. adds a takeover before the
  // failure, as a false detection would), so that reruns and exclusions can be tested.
  std::function<void(const CompareRun&, RunOutcome&)> tamper;
};

// Median, minimum and maximum of one figure over the used runs (count 0: not measured).
using CompareSpread = Spread;

struct CompareRow {
  std::string approach;
  PlannedLoad load;  // of its crash runs' plan
  // Crash runs.
  std::size_t crash_runs = 0;         // used in the medians
  std::string verdict;                // "precise" when every used run agrees, else "precise 2, gap 1"
  std::map<std::string, std::size_t> verdicts;
  CompareSpread lost, duplicates;
  std::string detector;               // which detector fired, e.g. "heartbeat", "connection 2, heartbeat 1"
  CompareSpread detection_ms, takeover_ms, recovery_ms, catchup_ms, replay_ms;
  // Global checkpoints' phases (metrics.h): the rollback decision and the state restored, after F.
  CompareSpread rollback_ms, state_restored_ms;
  std::size_t not_recovered = 0;      // used crash runs with no new output after the failure
  // What the crash runs' outcome means (compare_note): "stopped at the crash" (none: no
  // standby, the stop is the row's result), "as promised", "gap expected (amnesia)", or
  // "guarantee broken in 1 of 3 runs" when any run, disturbed or not, broke it.
  std::string note;
  // Failure-free runs (none: the baseline; its overheads stay unmeasured).
  std::size_t failure_free_runs = 0;  // used in the medians
  CompareSpread bandwidth_overhead_pct, cpu_overhead_pct, added_latency_p99_ms;
  // The CPU every process of a failure-free run used over its span and the cores (load.h).
  CompareSpread measured_load_pct;
  // Attempts of this approach that were disturbed, reruns, and repetitions left out (every
  // attempt disturbed), crash and failure-free runs together.
  std::size_t disturbed = 0, reruns = 0, excluded = 0;
};

struct CompareReport {
  std::string network;
  std::uint64_t seed = 0;
  bool vary_seed = false;  // repetition r ran on seed + r - 1 (CompareOptions::vary_seed)
  std::string victim;
  std::string failure = "SIGKILL of";  // or "loss of the host of" (CompareOptions::lose_victim_host)
  double fail_at_s = 0;
  double crash_duration_s = 0, failure_free_duration_s = 0;
  std::size_t repeat = 0, reruns_max = 0;
  std::string driver;
  double operator_cost_us = 0;  // Settings::operator_cost_us_per_tuple of every run
  unsigned cores = 1;
  std::vector<CompareRun> runs;   // every run in the order it ran, reruns included
  std::vector<CompareRow> rows;   // one per approach, in the options' order
  // One line per disturbed run: which run, its disturbance, rerun or left out.
  std::vector<std::string> disturbed_notes;
  std::string plot_error;  // non-empty when compare.png could not be drawn
};

// `topology` is the network; its ha setting is replaced per approach, and its duration_s is the
// crash runs'.
CompareReport run_compare(const Topology& topology, const CompareOptions& options);

// The note of one run: "stopped at the crash" (none: no standby, the stop is the row's
// result), "guarantee broken", "harness failed", what the approach was expected to give ("gap
// expected (amnesia)"), or "as promised".
std::string compare_note(const GuaranteeCheck& check);

// Median with spread: "23.8 (22.4..26.0)"; one value (or all equal) alone; "-" when not measured.
// `format` is an fmt format for one number ("{:.1f}", "{:+.0f}").
std::string spread_text(const CompareSpread& s, const char* format = "{:.1f}");

std::string compare_table(const CompareReport& report);
// One row per approach: medians, minima and maxima (columns <figure>_median, _min, _max).
std::string compare_csv(const CompareReport& report);
// One row per run, reruns included, with its figures, whether it was used and its disturbance.
std::string compare_runs_csv(const CompareReport& report);
// What every column of the table and the CSV means (for --help and the README).
std::string compare_columns_help();

}  // namespace hapair
