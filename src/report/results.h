// Result files of one run and the readable terminal summary.
//
// docs/EXPERIMENTS.md, "How we measure": "write the seed, the effective config and the version next to every
// result", and section 4: a user runs one configuration and gets its metrics printed and written.
// write_results() fills a directory with:
//   summary.json  keys: ha, driver, seed, version, network, tuples_in, tuples_out,
//                 throughput_tps, latency_ms {p50, p99, max}, failure (null or {node, at_s,
//                 kind}), recovery (null or {detection_ms, detector, detected_by, takeover_ms,
//                 recovery_ms, catchup_ms, replay_ms, rollback_ms, state_restored_ms, recovered, ...}), disturbance {disturbed,
//                 text, items [{kind, at_us, node, detail}], detections [{at_us, by, failed,
//                 detector, of_standby}]} (disturbance.h), semantics {verdict, lost, duplicates, differing,
//                 reference_tuples, delivered_tuples, order_matches, multiset_compare, note,
//                 merge_order_replayed, not_judged [{stream, reason}]},
//                 overhead {bytes_total, bytes_by_kind {}, messages_by_kind {}, cpu_s}, and
//                 more: completed, end_us, errors, tuples_in_from, ha_by_fragment,
//                 output_queue_tuples_max, semantics_examples, nodes (per-node counters).
//                 A figure that was not measured is null.
//   output.csv    delivery_us,stream,id,ts_us,key,value,lineage,from,replayed: one row per
//                 delivery in delivery order; value printed with %.17g (exact), lineage as 16
//                 hex digits, from the node that sent it to the sink, replayed 1 when it came in
//                 a replayed batch.
//   events.csv    time_us,node,event,details: the trace timeline for people; details are the
//                 typed details as key=value words (protocols/trace_text.h), always quoted.
//   trace.jsonl   the same typed events, one JSON object a line (docs/TRACE.md), for programs.
//   metrics.csv   time_us,node,metric,value: the sampled time series.
//   config.toml   the effective configuration text, as given by the caller.
//   timeline.html the run to watch (report/timeline.h, docs/TIMELINE.md): one self-contained page
//                 with the trace, the output against `reference` (the judged reference) and the
//                 plan in it.
//   merge_order.csv  (only when a Union reported its merge order) node,epoch,acting,following,
//                 op_index,first_output,port,first_input,count: one row per MergeRun, in report
//                 order; the interleaving the checker replays (judge/merge_order.h).
// Streams and nodes are written by their plan names (numbers when the plan does not know them;
// node "launcher" is kNoNode). summary.json is written with nlohmann-json, the CSV files with
// report/csv.h; the tests read the CSV files back (tests/support/result_csv.h).
//
// Invariant: the files are a pure function of the arguments (ordered maps, fixed number
// formatting: integers and whole numbers as integers; other doubles in summary.json as
// nlohmann-json writes them, which reads back exactly and is now and then a digit longer than the
// shortest such text; in the CSV files with a fixed printf-style format), so the same inputs give
// byte-identical files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge/checker.h"
#include "judge/metrics.h"
#include "protocols/run_result.h"

namespace hapair {

// Writes the result files into `dir` (created when missing). Returns an empty string on
// success, otherwise what failed (the environment's error; nothing is thrown).
std::string write_results(const std::string& dir, const RunResult& result, const SemanticsReport& semantics,
                          const RunMetrics& metrics, const std::string& effective_config_text,
                          std::uint64_t seed, const std::string& version, const std::vector<Delivery>& reference);
// The heading of a run's timeline: approach, network, seed, driver and faults.
std::string timeline_title(const RunResult& result, std::uint64_t seed);
// A run with more outputs and trace events than this (a soak of half an hour) gets a short page
// that says so instead of a timeline a browser could not hold.
inline constexpr std::size_t kTimelineEntriesMax = 300'000;
std::string timeline_page(const RunResult& result, const SemanticsReport& semantics,
                          const std::vector<Delivery>& reference, std::uint64_t seed, const std::string& version);

// Several hosts (RunResult::clock_error_bound_us): which cross-host figures of the run (latency
// p50, each failure's detection, takeover and recovery) are smaller than the clocks' error
// bound, so that the bound, not the figure, is what was measured: "" when none is, else e.g.
// "the clocks' cross-host error bound of 1.2 ms exceeds the detection (0.9 ms) it reports".
std::string clock_bound_note(const RunResult& result, const RunMetrics& metrics);

// The text of summary.json (what write_results() writes).
std::string summary_json(const RunResult& result, const SemanticsReport& semantics, const RunMetrics& metrics,
                         std::uint64_t seed, const std::string& version);
// The texts of the CSV files (what write_results() writes).
// The sum of counter `name` over every node of the run (negative values count as none).
std::uint64_t counter_sum(const RunResult& result, const std::string& name);

// The overhead of run over base in percent, or nothing when base is not positive.
std::optional<double> percent_over(double run, double base);

std::string output_csv(const RunResult& result);
std::string events_csv(const RunResult& result);
// trace.jsonl: one JSON object a line per trace event (docs/TRACE.md): t_us, node, kind, then
// every detail under its key (nodes and streams by name, enums by name, flags as booleans), then
// text when there is one.
std::string trace_jsonl(const RunResult& result);
std::string metrics_csv(const RunResult& result);
std::string merge_order_csv(const RunResult& result);

// A readable multi-line summary for the terminal: tuples in/out, throughput, latency; with a
// failure: the failure, detection/takeover/recovery/catch-up/replay times; the verdict with
// lost/duplicates/differing; the overhead.
std::string format_summary(const RunResult& result, const SemanticsReport& semantics, const RunMetrics& metrics);

}  // namespace hapair
