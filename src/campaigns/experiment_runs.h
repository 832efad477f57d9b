// The runs of an experiment and their rows: a planned run (one configuration, one seed, with or
// without the SIGKILL), the measured row it gives (every figure of metrics.h plus the overheads
// relative to its failure-free ha=none twin), the CSV of the rows, and the per-point medians the
// claim checks compare.
//
// Paper: every point of a figure in Hwang et al. (section 6) is one configuration measured once;
// we repeat each over several seeds and keep every run, so the plots can show the spread and
// the claim checks work on medians.
//
// Invariants: a row is a pure function of its run's outcome and its baseline's; runs of the same
// configuration (driver, faults and effective topology text) are run once per RunCache and
// shared, so experiments run together in one invocation measure the same runs; the CSV column
// set is the same for every experiment.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "run/guarantee.h"
#include "run/run_once.h"

namespace hapair {

struct PlannedRun {
  std::string sweep;       // the knob that varies ("" when none)
  std::optional<double> x; // its value
  std::string approach;    // an approach label (experiment_config.h)
  std::uint64_t seed = 0;
  bool failure = false;    // the victim is SIGKILLed at fail_at_s
  std::string victim;
  double fail_at_s = 0;
  Topology topology;       // effective: approach, sweep value and seed applied
  // Index (into the same list) of the failure-free ha=none run with the same knobs that the
  // overheads are measured against; unset: no overhead figures.
  std::optional<std::size_t> baseline;
};

// Figures of one run. Optional figures are absent when not measured (no detection without a
// standby, no recovery when no new output followed the failure, no baseline).
struct ExperimentRow {
  std::string experiment;
  std::string sweep;
  std::optional<double> x;
  std::string network;
  // The weakest operator class in the network (to_string(OperatorClass)): what the recovery type
  // an approach can give depends on (docs/FAULTS.md).
  std::string network_class;
  std::string approach;
  std::uint64_t seed = 0;
  std::string driver;
  bool failure = false;
  std::string victim;
  double fail_at_s = 0;
  bool completed = false;
  std::vector<std::string> errors;
  // Whether the run kept its approach's guarantee (run/guarantee.h): "result", "broken" or
  // "harness failed", and the one-line explanation. Only "broken" and "harness failed" make the
  // experiment fail (exit status 1); a run beyond the guarantee that stops is a result.
  std::string outcome = "result";
  std::string outcome_line;
  // Takeovers before the failure instant (in a failure-free run: all of them). A false detection
  // on a loaded machine can swap a pair before the SIGKILL, which then hits a standby, so such a
  // run does not measure what its point stands for; experiments leave it out of their timing and
  // overhead claims and plots (it stays in the CSV).
  std::uint64_t takeovers_before_failure = 0;
  // Any disturbance (disturbance.h): takeovers or detections before the failure, false
  // detections, a victim out of its planned role; such a run is left out like the above.
  bool disturbed = false;
  std::uint64_t false_detections = 0;
  std::string disturbance;  // describe_disturbances(), "" when undisturbed
  // Semantics (checker.h).
  std::string verdict;
  std::uint64_t lost = 0, duplicates = 0, differing = 0, reference_tuples = 0, delivered_tuples = 0;
  // Sink streams left out of the counts above: the Union order they depend on is unknown
  // (SemanticsReport::not_judged).
  std::vector<std::string> not_judged;
  // Recovery (metrics.h), plus output_resumed_ms: failure to the first delivery of any tuple at
  // or after the detection, right or wrong (amnesia resumes output long before it is correct).
  bool recovered = false;
  std::optional<double> detection_ms, takeover_ms, recovery_ms, catchup_ms, replay_ms, output_resumed_ms;
  std::string detector;  // which detector declared the victim failed ("" without detection)
  bool catchup_reached_normal = false;
  // F minus the victim's last checkpoint before F (its "checkpoint" trace event): where in the
  // checkpoint interval the failure fell; absent when the victim took none (not passive standby).
  std::optional<double> since_checkpoint_ms;
  // F to the first new output that the victim's replacement produced: the first new delivery at
  // or after the detection whose id is above the after_id the victim's consumer asked the
  // replacement to re-send after (its replay_request). recovery_ms can be earlier: output the
  // old primary sent just before it died is still on its way through the servers downstream of
  // it (a chain). Measured only where tuple ids survive from the victim's output to the sink:
  // every fragment downstream of the victim holds only Filters and Maps, which keep their
  // input's ids; absent otherwise.
  std::optional<double> replacement_output_ms;
  // Throughput and latency.
  std::uint64_t tuples_in = 0, tuples_out = 0;
  double throughput_tps = 0, latency_p50_ms = 0, latency_p99_ms = 0;
  // Latency after the warm-up (the first quarter of the delivery span, when the processes start
  // and their queues settle, is left out): its p99, and whether it grows (a queue that grows):
  // the median latency of the last quarter minus that of the second quarter. Absent with fewer
  // than 8 deliveries.
  std::optional<double> latency_p99_steady_ms, latency_growth_ms;
  // Capacity (experiment capacity, filled after every run of the experiment is in): the steady
  // p99 latency of the same approach and seed at the lowest rate swept, and whether this run
  // sustained its rate (experiment_claims.h, annotate_capacity).
  std::optional<double> low_rate_p99_ms;
  std::optional<bool> sustained;
  // Overhead: data-plane bytes/messages, CPU seconds and tuples processed summed over every node;
  // the victim's standby's CPU; the retained output queue of the victim's upstream neighbours
  // (max over their primaries of the "output_queue_tuples" samples).
  std::uint64_t bytes_total = 0, messages_total = 0, tuples_processed = 0;
  double cpu_s = 0;
  std::map<std::string, std::uint64_t> bytes_by_kind;
  std::optional<double> standby_cpu_s;
  std::optional<std::int64_t> upstream_queue_tuples_max;
  // The sum over every node of its largest output_queue_tuples sample: what the whole network
  // retained at its peak (upper bound: the peaks need not coincide).
  std::optional<std::int64_t> queue_tuples_max_sum;
  // Relative to the baseline: (run - baseline) / baseline in percent.
  std::optional<double> baseline_bytes_total, baseline_cpu_s, baseline_tuples_processed, baseline_messages_total;
  std::optional<double> bandwidth_overhead_pct, cpu_overhead_pct, processing_overhead_pct, message_overhead_pct;
  // Hybrid standby: how often a standby was switched to active (every node's
  // hybrid_switches_to_active), and whether the victim's standby was active at the failure: it
  // took over from its live copy (its first takeover after the failure installed no checkpoint).
  // Read from the standby's trace, not the victim's: a SIGKILLed process's last events can be
  // lost. Absent for the other approaches (and without a failure, for the second).
  std::optional<std::uint64_t> switches_to_active;
  std::optional<bool> active_at_failure;
  std::string run_dir;  // the run's result folder, relative to the experiment's out dir ("" none)
};

// The runs of one invocation of `hapair experiment`, shared by the experiments it runs, and the
// failure-free references of their networks.
class RunCache {
 public:
  struct Run {
    std::shared_ptr<const Plan> plan;
    RunOutcome outcome;
    GuaranteeCheck guarantee;  // against the reference of its network (run/guarantee.h)
  };
  // The run with this run_key(), if one was run already; null otherwise.
  const Run* find(const std::string& key) const;
  // The run with this key: the earlier one, or run now with `request` (whose faults must be the
  // planned run's) against the reference of its network.
  const Run& run(const std::string& key, const PlannedRun& planned, const RunRequest& request);
  std::size_t size() const { return runs_.size(); }

 private:
  const Reference& reference(const Plan& plan);
  std::map<std::string, std::unique_ptr<Run>> runs_;  // by run_key()
  std::map<std::string, Reference> references_;       // by the ha=none topology text
};

// What makes two planned runs the same run: the driver, the faults and the effective topology.
// Across hosts the hosts file is part of it (the same topology on other machines is another run).
std::string run_key(const std::string& driver, const PlannedRun& planned, const HostsLaunch& hosts = {});

// The fault of a planned run with a failure.
FaultSpec crash_fault(const PlannedRun& planned);

struct ExecuteOptions {
  std::string experiment;
  std::string driver = "real";
  std::string hapair_binary = "/proc/self/exe";
  std::string out_dir;  // per-run result folders go to <out_dir>/runs/<label>/ ("" none)
  // Several hosts over ssh (RunRequest::hosts; the real driver only): each run's node logs and
  // hosts.json go to its run folder, and CURVE is on (always with hosts).
  HostsLaunch hosts;
  // Before each run (index from 0, total, label, whether an earlier identical run is reused) and
  // during it (elapsed, total s).
  std::function<void(std::size_t, std::size_t, const std::string&, bool)> on_run;
  std::function<void(double, double)> progress;
};

struct Executed {
  std::vector<ExperimentRow> rows;  // one per planned run, in plan order
  std::size_t reused = 0;
  std::vector<std::string> write_errors;
};

// A readable, file-name-safe label of a planned run: "interval_ms=100 passive seed 2 (SIGKILL
// aggregate at 2 s)" for progress; run_folder_name() the folder of its result files.
std::string run_label(const PlannedRun& planned);
std::string run_folder_name(const PlannedRun& planned);

// Runs (or reuses) every planned run and measures its row; overheads use each run's baseline.
Executed execute_runs(const std::vector<PlannedRun>& plan, const ExecuteOptions& options, RunCache& cache);

// The row of one outcome; `baseline` (may be null) is the failure-free ha=none twin.
ExperimentRow measure_row(const PlannedRun& planned, const std::string& experiment, const RunCache::Run& run,
                          const RunCache::Run* baseline);

// The CSV: a header and one line per row; the same columns for every experiment (see
// experiment_csv_columns()).
std::vector<std::string> experiment_csv_columns();
std::string experiment_csv(const std::vector<ExperimentRow>& rows);

// A numeric figure of a row by its CSV column name (lost, recovery_ms, bandwidth_overhead_pct,
// bytes.tuples, ...); absent when not measured or not numeric.
std::optional<double> row_figure(const ExperimentRow& row, const std::string& column);

// Which rows a summary is over.
struct RowFilter {
  std::string approach;  // "" any
  std::string sweep;     // "" any
  std::optional<bool> failure;
  std::string network;   // "" any
  bool matches(const ExperimentRow& row) const;
};

// Per sweep value: the median (of the values present; an even count averages the middle two),
// the minimum, the maximum and how many runs had the figure, over the rows that match. Rows
// without a sweep value are skipped; summarize() covers those.
struct Spread {
  double median = 0, min = 0, max = 0;
  std::size_t count = 0;
};
std::map<double, Spread> spread_by_x(const std::vector<ExperimentRow>& rows, const RowFilter& filter,
                                     const std::string& column);
// The spread over every matching row, regardless of x; count 0 when none has the figure.
Spread summarize(const std::vector<ExperimentRow>& rows, const RowFilter& filter, const std::string& column);
double median_of(std::vector<double> values);
// The median, least and greatest of `values` (count 0 and zeros when there are none).
Spread spread_of(const std::vector<double>& values);

// A distribution-free confidence interval of the median (order statistics): the k-th least and
// the k-th greatest of the values, for the largest k whose coverage 1 - 2 P(B < k), B ~
// Binomial(n, 1/2), is at least `confidence`. Nothing is assumed about the distribution but that
// the values are independent draws of it. nullopt when even the least and the greatest cover
// less (fewer than 6 values at 95 %).
struct MedianInterval {
  double low = 0, high = 0;
  double coverage = 0;  // the interval's exact coverage, >= the confidence asked for
};
std::optional<MedianInterval> median_interval(std::vector<double> values, double confidence = 0.95);
// "low..high" to three decimals, or as many more (up to six) as it takes for each bound to print
// on its own side of `target`: an interval ending just below a target (0.4998) must not print as
// if it reached it (0.500) beside a verdict that says missed.
std::string interval_text(const MedianInterval& interval, std::optional<double> target = std::nullopt);

// A target for a median (a benchmark's ratio) judged on its 95 % interval: "met" when the whole
// interval is at or above the target, "missed by D (P % below)" when the whole interval is below
// it (D from the median), "not settled" when it spans it; with fewer than 6 values there is no
// interval and the median alone decides, which the verdict says ("met by the median (< 6
// runs)"); "not measured" without values.
std::string verdict_on_interval(const std::vector<double>& values, double target);

}  // namespace hapair
