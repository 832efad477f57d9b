// `hapair bench --chain`: the throughput each HA approach sustains on a chain of real node
// processes, relative to no HA, and where its bytes and CPU go, per tuple and by message kind.
//
// Paper: Hwang et al. (section 6) compare the approaches' runtime overhead as extra bandwidth and
// processing at a given load; on a machine of fixed size that overhead becomes a lower rate
// the network can sustain. Issue 17 item 2 asks how much lower, with operators as cheap as their
// code (no operator cost), so that what is measured is the framework's and the approach's own
// work: upstream backup's level-1 acknowledgements and retained queues, passive standby's
// checkpoints every checkpoint_interval_ms, active standby's second copy of every fragment
// (which does all the work again on the same cores). Targets on 2 cores: upstream >= 0.9x,
// passive >= 0.8x, active >= 0.5x of none; a target that is missed is reported, with by how much.
//
// How it measures: the network is source -> filter (Filter) -> map (Map) -> aggregate (windowed
// Aggregate) -> sink, every fragment (and its standby or spare) its own process. The source's
// rate is the highest a topology may have (10 million tuples/s), so every tuple is due at once
// and only flow control paces the source. Throughput is the tuples the source emitted over the
// time from the run's start to the sink's last delivery (the Aggregate's last window closes at
// the end of the stream, so that delivery comes after every tuple went through the chain). The
// approaches run in interleaved order (repetition 1: none, upstream, passive, active; then
// repetition 2, ...), so a slow phase of a shared machine hits every approach alike; an
// approach's ratio is its throughput over none's of the same repetition. Every run is judged
// against the failure-free reference (a fast run that lost tuples would be no result) and checked
// for disturbances (a false takeover under saturation); a disturbed run is run again, up to
// reruns_max times, and left out when every attempt was disturbed.
//
// Bytes per tuple: data-plane bytes of every node by message kind over the tuples emitted.
// CPU per tuple: every process's CPU time over the tuples emitted, split (real processes,
// counters cpu_us.<kind>, runtime/core_runner.h) into the node threads' time handling each kind
// of received message, their timers, and the rest ("other": ZeroMQ's I/O threads, polling,
// reports to the launcher). The simulator has no such split; it shows the total of its model.
//
// Invariant: the report is a pure function of the runs' outcomes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "campaigns/experiment_runs.h"
#include "run/run_once.h"

namespace hapair {

// The targets of issue 17 (2 cores): an approach's throughput over none's.
inline constexpr double kChainTargetUpstream = 0.9;
inline constexpr double kChainTargetPassive = 0.8;
inline constexpr double kChainTargetActive = 0.5;
// The highest source rate validate() allows: every tuple is due at once.
inline constexpr double kChainSourceRateTps = 1e7;

// The approaches the chain bench measures by default: the baseline, then every approach precise on
// a deterministic network (approach_traits.h).
inline std::vector<HaMode> chain_bench_default_approaches() {
  std::vector<HaMode> out{ApproachCatalog::builtin().baseline()};
  for (HaMode m : ApproachCatalog::builtin().precise_modes()) out.push_back(m);
  return out;
}

struct ChainBenchOptions {
  std::string driver = "real";  // "real" or "sim"
  // CURVE on every socket of each real run (RunRequest::secure): what authentication costs.
  bool secure = false;
  // Tuples the source emits in each run: about a second of the chain at full speed, so a run
  // measures the steady state (a quarter-second run of 1 M tuples spent a good part of itself
  // touching fresh memory and on the first checkpoint and level-1 rounds: docs/PERFORMANCE.md).
  std::int64_t tuples = 4'000'000;
  std::size_t repetitions = 5;
  std::size_t reruns_max = 2;        // per disturbed run
  // The baseline and every approach precise on a deterministic network (none, upstream, passive,
  // active): amnesia's throughput is the baseline's.
  std::vector<HaMode> approaches = chain_bench_default_approaches();
  std::int64_t checkpoint_interval_ms = 100;  // passive standby's
  // Every approach's level-0 and level-1 acks (upstream backup's trimming rounds): the networks'
  // default. The checkpoint interval here (100 ms) would make upstream backup hold five times the
  // tuples of a deployment with the default (docs/PERFORMANCE.md).
  std::int64_t ack_interval_ms = Settings{}.ack_interval_ms;
  CheckpointMode checkpoint_mode = CheckpointMode::full;  // passive standby's (the networks' default)
  std::uint64_t seed = 1;
  std::string out_dir;  // chain_bench.csv, chain_bench_runs.csv, chain_bench.txt, config.toml ("" none)
  std::string hapair_binary = "/proc/self/exe";
  unsigned cores = 0;   // 0: this machine's
  // Before each run (position from 0, planned runs, label) and during it (elapsed, total s).
  std::function<void(std::size_t, std::size_t, const std::string&)> on_run;
  std::function<void(double, double)> progress;
};

struct ChainBenchRun {
  std::string approach;
  std::size_t repetition = 0;  // from 1
  std::size_t attempt = 0;     // 0: the first; then reruns after a disturbed attempt
  bool completed = false;
  std::vector<std::string> errors;
  std::string verdict;         // against the failure-free reference
  bool disturbed = false;
  std::string disturbance;
  bool used = false;           // in the medians: completed, precise, undisturbed
  std::uint64_t tuples_in = 0;
  double seconds = 0;          // run start to the last sink delivery
  double throughput_tps = 0;   // tuples_in / seconds
  std::optional<double> ratio_to_none;  // over none's throughput of the same repetition
  double cpu_s = 0;            // every process
  std::uint64_t bytes_total = 0;
  std::map<std::string, double> bytes_per_tuple;   // data-plane kind -> bytes / tuples_in (kinds sent only)
  std::map<std::string, double> cpu_us_per_tuple;  // kind, "timers", "other" -> CPU us / tuples_in
  double measured_load_pct = 0;
  std::string label() const;
};

struct ChainBenchRow {
  std::string approach;
  std::size_t runs = 0;  // used
  Spread throughput_tps, ratio_to_none, bytes_per_tuple, cpu_us_per_tuple, measured_load_pct;
  std::map<std::string, Spread> bytes_per_tuple_by_kind, cpu_us_per_tuple_by_kind;
  std::optional<double> target;  // the target ratio (none: no target)
  // The 95 % confidence interval of the median ratio (median_interval; nullopt with < 6 runs).
  std::optional<MedianInterval> ratio_interval;
  // Against the target (empty without one), on the interval: verdict_on_interval.
  std::string verdict;
};


struct ChainBenchReport {
  std::string driver;
  bool secure = false;  // CURVE on every socket (ChainBenchOptions::secure)
  std::int64_t tuples = 0;
  std::size_t repetitions = 0, reruns_max = 0;
  std::int64_t checkpoint_interval_ms = 0;
  std::int64_t ack_interval_ms = 0;
  CheckpointMode checkpoint_mode = CheckpointMode::full;
  unsigned cores = 1;
  std::string network;  // "source -> filter -> map -> aggregate -> sink"
  std::vector<ChainBenchRun> runs;  // in the order they ran, reruns included
  std::vector<ChainBenchRow> rows;  // one per approach, in the options' order
  std::vector<std::string> notes;   // disturbed, incomplete or imprecise runs
  std::vector<std::string> write_errors;
  double wall_s = 0;
};

// The benchmark's network with `ha` on every processing fragment.
Topology chain_bench_topology(const ChainBenchOptions& options, HaMode ha);

// Runs every repetition and summarizes it (runs may be tiny: the test suite runs one in the
// simulator).
ChainBenchReport run_chain_bench(const ChainBenchOptions& options);

// The target of an approach (none: no target).
std::optional<double> chain_target(const std::string& approach);
// Summarizes runs (used ones only) into rows, one per approach in `approaches` order, and fills
// each run's ratio_to_none from the none run of its repetition. Exposed for tests.
std::vector<ChainBenchRow> summarize_chain_runs(std::vector<ChainBenchRun>& runs, const std::vector<std::string>& approaches);

// The table `hapair bench --chain` prints: throughput and its ratio with the target, then bytes
// and CPU per tuple by message kind.
std::string chain_bench_table(const ChainBenchReport& report);
// One line per approach: medians, minima and maxima of every figure.
std::string chain_bench_csv(const ChainBenchReport& report);
// One line per run, reruns included.
std::string chain_bench_runs_csv(const ChainBenchReport& report);

}  // namespace hapair
