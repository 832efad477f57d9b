// The comparison of the approaches on one network (the main job, `hapair compare`): the same
// input, seed and SIGKILL of the same node at the same time under every approach, plus one
// failure-free run without HA that every overhead is measured against.
//
// Paper: the recovery-time versus runtime-overhead trade-off of amnesia, passive standby,
// active standby and upstream backup (Hwang et al., section 6). Definitions (DESIGN.md
// section 5, README "How we measure"): recovery figures come from each run's own events and
// output; bandwidth and CPU overhead are (run - baseline) / baseline in percent, where the
// baseline is the failure-free run with ha=none (the approach's run includes its recovery
// traffic); added latency p99 is the approach's p99 before the failure minus the baseline's p99
// over the same interval.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/guarantee.h"
#include "harness/run_once.h"

namespace hapair {

// `hapair compare` on the built-in network charges each operator this much CPU per tuple
// (Settings::operator_cost_us_per_tuple), the value every experiment uses: with the built-in 0,
// reprocessing is nearly free and every approach would recover in the detection time.
inline constexpr double kCompareOperatorCostUs = 100.0;

struct CompareOptions {
  std::string driver = "real";
  std::string victim = "aggregate";  // the node SIGKILLed in every approach's run
  double fail_at_s = 3.0;
  std::vector<HaMode> approaches = {HaMode::none, HaMode::amnesia, HaMode::upstream, HaMode::passive, HaMode::active};
  std::string out_dir;  // compare.csv, compare.png, and one folder per run
  std::string hapair_binary = "/proc/self/exe";
  // Called before each run (index from 0, total, label) and during it (elapsed, total s).
  std::function<void(std::size_t, std::size_t, const std::string&)> on_run;
  std::function<void(double, double)> progress;
};

struct CompareRow {
  std::string approach;  // "none", "amnesia", ...
  RunOutcome outcome;
  std::optional<double> bandwidth_overhead_pct;
  std::optional<double> cpu_overhead_pct;
  std::optional<double> added_latency_p99_ms;
  GuaranteeCheck guarantee;  // whether the run kept its approach's guarantee (harness/guarantee.h)
};

// The note column of a row: "stopped at the crash" (none: no standby, the stop is the row's
// result), "guarantee broken", "harness failed", what the approach was expected to give ("gap
// expected (amnesia)"), or "as promised".
std::string compare_note(const GuaranteeCheck& check);

struct CompareReport {
  std::string network;
  std::uint64_t seed = 0;
  std::string victim;
  double fail_at_s = 0;
  std::string driver;
  double operator_cost_us = 0;  // Settings::operator_cost_us_per_tuple of every run
  RunOutcome baseline;  // ha=none, no failure
  GuaranteeCheck baseline_guarantee;
  std::vector<CompareRow> rows;
  std::string plot_error;  // non-empty when compare.png could not be drawn
};

// `topology` is the network; its ha setting is replaced per approach.
CompareReport run_compare(const Topology& topology, const CompareOptions& options);

std::string compare_table(const CompareReport& report);
std::string compare_csv(const CompareReport& report);

}  // namespace hapair
