// The claim checks of the experiments: each takes an experiment's own rows (exactly what its CSV
// holds) and decides, part by part and with explicit tolerances, whether the shape the paper
// reports is there. The experiment prints the outcome as `claim holds` or `claim differs: ...`
// with the numbers; a differing result is reported, never hidden.
//
// Paper: Hwang et al., section 6 (and the recovery-type table of section 3): active standby
// recovers fastest at the highest overhead, passive standby trades overhead for recovery time
// through the checkpoint interval, upstream backup has the lowest overhead and a recovery time
// that grows with the state to rebuild, amnesia loses output; the precise approaches are precise.
//
// Invariant: every comparison is made on per-point medians over seeds (spread_by_x), every
// tolerance is one of the named constants below (docs/EXPERIMENTS.md and each README state them),
// and a part whose data is missing (no run, no recovery measured) differs, it never passes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "campaigns/experiment_runs.h"

namespace hapair {

// "a is no longer than b" between two approaches' medians allows this much (ms): heartbeat
// detection alone jitters by a few ms between runs on real processes.
inline constexpr double kClaimSlackMs = 2.0;
// "grows": the median at the largest sweep value is at least this many times the median at the
// smallest.
inline constexpr double kClaimGrowsFactor = 1.2;
// "flat": max - min of the medians over the sweep is at most max(kClaimFlatMs, kClaimFlatFraction
// x the smallest median).
inline constexpr double kClaimFlatMs = 5.0;
inline constexpr double kClaimFlatFraction = 0.3;
// "only moderately longer": upstream backup's median at most this many times passive standby's.
inline constexpr double kClaimModerateFactor = 2.0;
// "falls": the overhead median at the largest interval is at most this fraction of the one at
// the smallest.
inline constexpr double kClaimFallsFactor = 0.5;
// Overhead comparisons between approaches allow this many percentage points.
inline constexpr double kClaimSlackPct = 1.0;
// CPU overhead comparisons allow this many percentage points (process CPU time is noisy).
inline constexpr double kClaimCpuSlackPct = 5.0;
// "about double processing": active standby's extra tuples processed, in percent of the ha=none
// run's, within this range.
inline constexpr double kClaimDoubleLowPct = 70.0;
inline constexpr double kClaimDoubleHighPct = 130.0;
// tradeoff with global checkpoints: "about passive standby's bandwidth" allows this many
// percentage points between the two curves' mean overheads, and "no faster than passive
// standby" lets global checkpoints' mean recovery be this fraction of passive standby's (both
// replay after a snapshot; run-to-run spread).
inline constexpr double kClaimCheckpointBytesPct = 10.0;
inline constexpr double kClaimCheckpointNoFasterFactor = 0.9;
// "smaller queues": the exact rule's retained queue at most this fraction of the conservative one.
inline constexpr double kClaimSmallerFactor = 0.9;

// capacity: a rate is sustained when the run's sink p99 latency after the warm-up
// (ExperimentRow::latency_p99_steady_ms) is at most this many times that of the same approach and
// seed at the lowest rate swept ...
inline constexpr double kCapacityLatencyFactor = 2.0;
// ... and its latency does not grow: the median latency of the run's last quarter exceeds that
// of its second quarter by at most this many times that low-rate p99 (ExperimentRow::latency_growth_ms).
inline constexpr double kCapacityGrowthFactor = 1.0;
// "nearly the capacity of no HA": at least this fraction of none's.
inline constexpr double kClaimCapacityNearFactor = 0.8;
// "about half the capacity" (active standby, its standby sharing the cores): within this range of none's.
inline constexpr double kClaimCapacityHalfLow = 0.35;
inline constexpr double kClaimCapacityHalfHigh = 0.75;
// "grows like 1/(1 - rho)": from the lowest to the highest load, the median grows at least this
// fraction of the factor (1 - rho_low) / (1 - rho_high).
inline constexpr double kClaimHyperbolicFraction = 0.5;

// The outcome of one experiment's check: every part with its numbers, and which ones differ.
struct ClaimCheck {
  std::vector<std::string> parts;    // "ok: ..." or "differs: ..."
  std::vector<std::string> differs;  // the text of each differing part
  std::vector<std::string> notes;    // what the reader must know about the data (runs left out)
  void expect(bool ok, const std::string& what);
  bool holds() const { return differs.empty(); }
  // Exactly "claim holds", or "claim differs: " followed by the differing parts, "; "-separated.
  std::string line() const;
  // The notes and the parts, one a line, then line().
  std::string text() const;
};

// The rows a timing or overhead claim may use: those without a takeover before the failure.
// The rows left out are described in `notes` (how many, which).
std::vector<ExperimentRow> undisturbed_rows(const std::vector<ExperimentRow>& rows, std::vector<std::string>& notes);

// Experiment 1: failure rows swept over interval_ms; amnesia, upstream, passive, active.
ClaimCheck check_recovery_vs_interval(const std::vector<ExperimentRow>& rows);
// Experiment 2: failure-free rows with overheads, swept over interval_ms.
ClaimCheck check_overhead_vs_interval(const std::vector<ExperimentRow>& rows);
// Experiment 3: both kinds of rows over interval_ms: recovery against bandwidth overhead.
ClaimCheck check_tradeoff(const std::vector<ExperimentRow>& rows);
// Experiment 4: failure rows swept over window_ms and rate_tps; upstream and active.
ClaimCheck check_recovery_vs_state(const std::vector<ExperimentRow>& rows);
// Experiment 5: failure rows, one network per operator class (column network_class).
ClaimCheck check_semantics_table(const std::vector<ExperimentRow>& rows);
// workloads: on every workload network, upstream backup, passive and active standby are precise
// after the failure; the bandwidth overhead orders upstream < passive < active (medians over the
// failure-free runs, kClaimSlackPct); active standby recovers no slower than passive standby and
// upstream backup (medians of recovery_ms, kClaimSlackMs).
ClaimCheck check_workloads(const std::vector<ExperimentRow>& rows);

// hybrid (Zhang, Gu et al., ICDCS 2010): on a workload with rate spikes and a SIGKILL after one,
// every precise approach precise; hybrid standby's standby active at every failure (its input
// queue trigger fired in the spike) and switched in every failure-free run; hybrid recovers
// faster than passive standby (medians) and costs fewer messages than active standby (median
// message overhead over ha none); the two ratios printed beside ICDCS 2010's (-2/3 recovery time
// against passive, -80 % messages against active).
ClaimCheck check_hybrid(const std::vector<ExperimentRow>& rows);
// Experiment 6: failure rows of upstream_exact (no sweep value) and upstream_conservative swept
// over conservative_retention_ms.
ClaimCheck check_trimming_knowledge(const std::vector<ExperimentRow>& rows);
// Experiment 7: failure rows per approach (no sweep); `heartbeat_interval_ms` bounds how far
// the approaches' detection times may lie apart (they share one failure detector).
ClaimCheck check_recovery_breakdown(const std::vector<ExperimentRow>& rows, double heartbeat_interval_ms);
// capacity: fills every row's low_rate_p99_ms (the steady p99 at the lowest rate_tps of no HA in
// the same seed: one yardstick for every approach; of the row's own approach when the rows have
// no none) and sustained (steady p99 <= kCapacityLatencyFactor x that, latency growth <=
// kCapacityGrowthFactor x that, run completed, precise and undisturbed: a false takeover means
// heartbeats came late, the node could not keep up); rows without a rate are left alone.
void annotate_capacity(std::vector<ExperimentRow>& rows);
// The capacity of one approach in one seed: the highest rate_tps such that it and every lower
// rate measured were sustained (0 when the lowest was not); per seed, over annotated rows.
std::map<std::uint64_t, double> capacity_by_seed(const std::vector<ExperimentRow>& rows, const std::string& approach);
// Experiment 8: failure-free rows of none, upstream, passive, active swept over rate_tps, annotated.
// `shared_cores`: every process of a run shares this machine's cores (real processes), so active
// standby's standbys, which repeat all the processing, take cores from the primaries: it should
// sustain about half of none's rate. Otherwise (the simulator: every node a machine of its own,
// as in the paper) the standbys work elsewhere and active should sustain nearly none's rate too.
ClaimCheck check_capacity(const std::vector<ExperimentRow>& rows, bool shared_cores);
// Experiment 9: failure rows of passive and active swept over fail_offset_ms, with
// since_checkpoint_ms; `checkpoint_interval_ms` is the network's.
ClaimCheck check_recovery_vs_phase(const std::vector<ExperimentRow>& rows, double checkpoint_interval_ms);
// Experiment 10: failure rows of upstream, passive, active swept over chain_depth (victim stage1).
ClaimCheck check_recovery_vs_depth(const std::vector<ExperimentRow>& rows);
// Experiment 11: failure rows of upstream, passive, active swept over load (rho).
ClaimCheck check_recovery_vs_load(const std::vector<ExperimentRow>& rows);

}  // namespace hapair
