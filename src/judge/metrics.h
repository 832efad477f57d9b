// Run metrics: throughput, end-to-end latency, recovery-time figures and runtime overhead,
// computed from a RunResult and the failure-free reference output only.
//
// Paper: the trade-off Hwang et al. measure (sections 5-6) is recovery time against runtime
// overhead. docs/EXPERIMENTS.md ("How we measure") is the contract; its definitions, as implemented here:
//
// - tuples_in: the sum of counter "tuples_emitted" over the source nodes (every node when the
//   result has no plan); when no node reports it, the reference run's input count.
// - tuples_out: the number of deliveries (duplicates included).
// - throughput_tps: tuples_out / delivery span, the span being last minus first delivery time;
//   0 when there are fewer than two distinct delivery times.
// - latency of a delivery: at_us - tuple.ts_us (ts is the window end for an Aggregate result,
//   the later input's ts for a Join result). p50/p99 are nearest-rank percentiles: of the n
//   latencies sorted ascending, the p-th percentile is the one at rank ceil(p/100 * n) (1-based).
// - the failure instant F of the first fault that is not a restart: the time of the first
//   "failure" trace event naming that node (details "node=<name>" or the event's node id);
//   without one, the fault's at_s.
// - detection_ms: the first "detection" event at or after F that names the failed node
//   (details failed=<node>: its standby's detection of it), minus F; detector: that event's
//   detector field ("heartbeat" when absent). A detection of another node is not this failure's
//   (disturbance.h reports it); without one, detection is absent.
// - takeover_ms: the first "takeover" event at or after F by a node of the failed node's
//   fragment, minus F.
// - recovery_ms: the delivery time of the first new output tuple (one the reference has and that
//   was not delivered before F, see checker.h split_at_failure) delivered at or after the
//   detection of the failure (at or after F when nothing detected it), minus F. Output the
//   failed node sent just before it died can still arrive after F; it is not the recovery's work.
//   No such tuple at all: not recovered, recovery and catch-up are absent.
// - catchup_ms: from F to the first such new tuple whose latency is at most the p99 latency of the
//   deliveries before F ("latency back to normal"). When no new tuple gets there, or nothing was
//   delivered before F, it runs to the last delivery and catchup_reached_normal is false.
// - replay_ms: from the first "replay_start" event at or after F to the last "replay_end" event
//   after that (each consumer traces the replay of each of its input streams, so the replay
//   phase ends when the last of them has ended); absent without both. Only the replays of this
//   failure count: events at nodes of the failed node's fragment or naming a stream that fragment
//   produces, before the next fault's instant (a later failure's replay is its own, and so is a
//   restart's: the rejoined standby's bootstrap replays its input too).
// - rollback_ms (global checkpoints, ha = checkpoint): the coordinator's first
//   "checkpoint_rollback" decision at or after F that names the failed node, minus F (detection,
//   then the coordinator abandons the checkpoint in flight and orders the rollback).
// - state_restored_ms: the last state installed at a fragment after that decision (the
//   replacement's "takeover", a live primary's in-place "checkpoint_restore": its snapshot
//   installed, its replay asked for) and before the next rollback or fault, minus F: when every
//   fragment of the rollback holds its checkpoint's state again (the coordinator hears of it a
//   message later). Absent without a rollback. Replay (replay_ms) and the first new output follow.
// - recoveries: these figures for every fault that is not a restart, in fault order; recovery is
//   the first of them.
// - disturbance: find_disturbances() (disturbance.h): takeovers and detections the faults did
//   not ask for; a disturbed run's figures do not measure what its schedule planned.
// - overhead: counters "bytes_sent.<kind>" and "messages_sent.<kind>" summed over every node,
//   for the data-plane kinds only (is_control_message() false; control messages connect nodes
//   to the launcher and are not HA overhead); cpu_s from counters "cpu_us".
// - output queue: the maximum of the samples named "output_queue_tuples", per node.
// - unprotected: one UnprotectedSpan per "standby_lost" event (see the struct).
//
// Invariant: every figure is a pure function of its inputs; maps are ordered, so result files
// written from them are deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "judge/disturbance.h"
#include "protocols/run_result.h"

namespace hapair {

struct LatencySummary {
  std::uint64_t count = 0;
  double p50_ms = 0.0;
  double p99_ms = 0.0;
  double max_ms = 0.0;
};

// Nearest-rank percentile (see above) of values sorted ascending; `sorted` must not be empty
// and 0 < p <= 100.
TimeUs nearest_rank_percentile(const std::vector<TimeUs>& sorted, double p);

// Latency summary of the given deliveries; all zero when there are none.
LatencySummary latency_summary(const std::vector<Delivery>& deliveries);

struct RecoveryMetrics {
  std::string node;  // the failed node
  FaultKind kind = FaultKind::crash;
  double at_s = 0.0;             // as configured
  TimeUs failure_us = 0;         // F, as measured
  bool failure_from_event = false;  // F came from a "failure" event, not from at_s
  std::optional<double> detection_ms;
  std::string detector;     // which detector fired ("heartbeat", "connection"); "" without detection
  std::string detected_by;  // the node that detected the failure
  std::optional<double> takeover_ms;
  std::optional<double> recovery_ms;
  std::optional<double> catchup_ms;
  bool catchup_reached_normal = false;
  std::optional<double> replay_ms;
  std::optional<double> rollback_ms;        // global checkpoints: F to the rollback decision
  std::optional<double> state_restored_ms;  // global checkpoints: F to the last fragment restored
  // Restoring the pair: from the first rejoin request after F (a restarted or fenced node) to the
  // primary's first "pair_restored" after it; absent when the pair was not restored.
  std::optional<double> restore_ms;
  bool recovered = false;  // some new output followed the failure
  std::uint64_t reference_delivered_before = 0;
  std::uint64_t new_after = 0;   // new deliveries at or after F
  std::optional<double> prefailure_p99_ms;
};

struct OverheadMetrics {
  std::uint64_t bytes_total = 0;     // data plane only
  std::uint64_t messages_total = 0;  // data plane only
  std::map<std::string, std::uint64_t> bytes_by_kind;     // every data-plane kind, zeros too
  std::map<std::string, std::uint64_t> messages_by_kind;  // every data-plane kind, zeros too
  double cpu_s = 0.0;
};

// The exposure after a standby loss: a fragment whose primary declared its standby lost
// ("standby_lost") ran without protection — a crash of its primary then is beyond recovery —
// from that event until the pair was restored (the fragment's next "pair_restored") or, when it
// never was, until the last sink delivery (the run's end when nothing was delivered after the
// loss). silent_ms is how long before the loss the primary last heard from the standby (output
// that waited for it was held at most that long); released_tuples is how much of it was waiting
// (the "held_output_released" events of the span).
struct UnprotectedSpan {
  std::string fragment;
  std::string primary;  // the node that declared the loss
  std::string standby;  // the node declared lost
  TimeUs lost_us = 0;
  double silent_ms = 0.0;
  std::int64_t released_tuples = 0;
  double unprotected_ms = 0.0;
  bool restored = false;
};

struct RunMetrics {
  std::uint64_t tuples_in = 0;
  bool tuples_in_from_counters = false;  // false: the reference input count
  std::uint64_t tuples_out = 0;
  double throughput_tps = 0.0;
  LatencySummary latency;
  std::optional<RecoveryMetrics> recovery;  // present when a failure was injected
  std::vector<RecoveryMetrics> recoveries;  // every failure (not restarts), in fault order
  DisturbanceReport disturbance;
  OverheadMetrics overhead;
  std::map<std::string, std::int64_t> output_queue_tuples_max;  // node -> max sample
  std::vector<UnprotectedSpan> unprotected;  // in the order of the losses
};

// The names of the data-plane message kinds (kMessageKindNames where is_control_message() is
// false), in kind order.
std::vector<std::string> data_plane_kind_names();

// The fault recovery is measured for: the first one that is not a restart; null when none.
const FaultSpec* measured_fault(const RunResult& result);

RunMetrics compute_metrics(const RunResult& result, const std::vector<Delivery>& reference,
                           std::uint64_t reference_input_tuples);

}  // namespace hapair
