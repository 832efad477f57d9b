#include "campaigns/chain_bench.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "report/csv.h"
#include "report/results.h"
#include "config/topology_file.h"
#include "protocols/check.h"
#include "protocols/version.h"

namespace hapair {
namespace {

// The chain, every knob at its default except these: no operator cost, the highest source rate,
// a Filter that keeps 80 % of the input, a Map, and a tumbling window (one state update per
// tuple, as cheap as an Aggregate gets) per key.
constexpr const char* kChainText = R"toml(
[network]
name = "chain_bench"
operator_cost_us_per_tuple = 0

[[source]]
name = "source"
stream = "raw"
rate_tps = 10000000
key_count = 8
values = "uniform(0, 100)"
integer_values = true

[[fragment]]
name = "filter"

[[fragment.operator]]
name = "keep_small"
type = "filter"
input = "raw"
output = "small"
where = "value < 80"

[[fragment]]
name = "map"

[[fragment.operator]]
name = "rescale"
type = "map"
input = "small"
output = "scaled"
scale = 2
offset = 1

[[fragment]]
name = "aggregate"

[[fragment.operator]]
name = "sum_per_key"
type = "aggregate"
input = "scaled"
output = "totals"
function = "sum"
window_ms = 10
slide_ms = 10
group_by = "key"

[[sink]]
name = "sink"
input = "totals"
)toml";

std::string folder_of(const ChainBenchRun& r) {
  return r.approach + "_rep" + std::to_string(r.repetition) + (r.attempt ? "_rerun" + std::to_string(r.attempt) : "");
}

// The figures of one run from its outcome.
void measure(ChainBenchRun& r, const RunOutcome& o) {
  const RunResult& result = o.result;
  r.completed = result.completed;
  r.errors = result.errors;
  r.verdict = o.semantics.verdict;
  r.disturbed = o.metrics.disturbance.disturbed();
  r.disturbance = describe_disturbances(o.metrics.disturbance);
  r.tuples_in = o.metrics.tuples_in;
  TimeUs last = 0;
  for (const Delivery& d : result.deliveries) last = std::max(last, d.at_us);
  r.seconds = static_cast<double>(last) / 1e6;
  r.throughput_tps = r.seconds > 0 ? static_cast<double>(r.tuples_in) / r.seconds : 0.0;
  r.cpu_s = o.metrics.overhead.cpu_s;
  r.bytes_total = o.metrics.overhead.bytes_total;
  r.measured_load_pct = o.measured_load_pct;
  const double tuples = static_cast<double>(std::max<std::uint64_t>(r.tuples_in, 1));
  for (const auto& [kind, bytes] : o.metrics.overhead.bytes_by_kind)
    if (bytes > 0) r.bytes_per_tuple[kind] = static_cast<double>(bytes) / tuples;
  // The split of the CPU time, where the driver reports one (real processes).
  double split_us = 0;
  std::vector<std::string> parts = data_plane_kind_names();
  parts.push_back("timers");
  for (const std::string& part : parts) {
    const std::uint64_t us = counter_sum(result, "cpu_us." + part);
    if (us == 0) continue;
    r.cpu_us_per_tuple[part] = static_cast<double>(us) / tuples;
    split_us += static_cast<double>(us);
  }
  if (split_us > 0) r.cpu_us_per_tuple["other"] = std::max(0.0, r.cpu_s * 1e6 - split_us) / tuples;
}

// "1.23 (1.10..1.40)" or "-".
std::string spread_cell(const Spread& s, const char* format) {
  if (s.count == 0) return "-";
  const std::string m = fmt::format(fmt::runtime(format), s.median);
  const std::string lo = fmt::format(fmt::runtime(format), s.min);
  const std::string hi = fmt::format(fmt::runtime(format), s.max);
  return s.count == 1 || lo == hi ? m : m + " (" + lo + ".." + hi + ")";
}

// The kinds (and timers / other) any row has, in kind order, then timers, then other.
std::vector<std::string> kinds_present(const std::vector<ChainBenchRow>& rows, bool cpu) {
  std::set<std::string> seen;
  for (const ChainBenchRow& r : rows)
    for (const auto& [k, s] : cpu ? r.cpu_us_per_tuple_by_kind : r.bytes_per_tuple_by_kind)
      if (s.count > 0) seen.insert(k);
  std::vector<std::string> order = data_plane_kind_names();
  order.push_back("timers");
  order.push_back("other");
  std::vector<std::string> out;
  for (const std::string& k : order)
    if (seen.count(k)) out.push_back(k);
  return out;
}

void csv_spread(CsvRow& row, const Spread& s, int decimals) {
  if (s.count == 0) row.empty().empty().empty();
  else row.fixed(s.median, decimals).fixed(s.min, decimals).fixed(s.max, decimals);
}

}  // namespace

std::string ChainBenchRun::label() const {
  return approach + ", repetition " + std::to_string(repetition) + (attempt ? ", rerun " + std::to_string(attempt) : "");
}

std::optional<double> chain_target(const std::string& approach) {
  if (approach == "upstream") return kChainTargetUpstream;
  if (approach == "passive") return kChainTargetPassive;
  if (approach == "active") return kChainTargetActive;
  return std::nullopt;
}

Topology chain_bench_topology(const ChainBenchOptions& options, HaMode ha) {
  TopologyLoad load = parse_topology(kChainText, "built-in chain bench");
  HAPAIR_CHECK_MSG(load.topology, (load.problems.empty() ? std::string() : load.problems.front()));
  Topology t = *load.topology;
  t.settings.seed = options.seed;
  // The source's schedule is in whole microseconds: this many seconds make it emit `tuples`.
  t.settings.duration_s = (static_cast<double>(options.tuples) + 0.5) / kChainSourceRateTps;
  t.settings.checkpoint_interval_ms = options.checkpoint_interval_ms;
  t.settings.ack_interval_ms = options.ack_interval_ms;
  t.settings.checkpoint_mode = options.checkpoint_mode;
  // Every queue may retain the whole run's tuples: under upstream backup a producer's queue is
  // trimmed only on the level-1 rounds (every ack interval), and with a bound just below what the
  // source emits (the default 1,000,000 against 1,000,009) the source waited for the rounds to
  // reach it before its last tuples, so the run ended on the rounds' 100 ms grid, whatever the
  // chain's processing took (docs/PERFORMANCE.md). The bench measures processing, not that wait.
  t.settings.output_queue_tuples_max = std::max(t.settings.output_queue_tuples_max, 2 * options.tuples);
  RunOverrides o;
  o.ha = ha;
  const std::vector<std::string> problems = apply_overrides(t, o);
  HAPAIR_CHECK_MSG(problems.empty(), problems.front());
  return t;
}

std::vector<ChainBenchRow> summarize_chain_runs(std::vector<ChainBenchRun>& runs, const std::vector<std::string>& approaches) {
  std::map<std::size_t, double> none_tps;  // repetition -> none's used throughput
  for (const ChainBenchRun& r : runs)
    if (r.used && r.approach == "none") none_tps[r.repetition] = r.throughput_tps;
  for (ChainBenchRun& r : runs) {
    auto it = none_tps.find(r.repetition);
    r.ratio_to_none.reset();
    if (r.used && it != none_tps.end() && it->second > 0) r.ratio_to_none = r.throughput_tps / it->second;
  }
  std::vector<ChainBenchRow> rows;
  for (const std::string& a : approaches) {
    ChainBenchRow row;
    row.approach = a;
    row.target = chain_target(a);
    std::vector<double> tps, ratio, bytes, cpu, load;
    std::map<std::string, std::vector<double>> bytes_by, cpu_by;
    for (const ChainBenchRun& r : runs) {
      if (r.approach != a || !r.used) continue;
      ++row.runs;
      tps.push_back(r.throughput_tps);
      if (r.ratio_to_none) ratio.push_back(*r.ratio_to_none);
      double b = 0;
      for (const auto& [k, v] : r.bytes_per_tuple) {
        bytes_by[k].push_back(v);
        b += v;
      }
      bytes.push_back(b);
      cpu.push_back(r.tuples_in > 0 ? r.cpu_s * 1e6 / static_cast<double>(r.tuples_in) : 0.0);
      for (const auto& [k, v] : r.cpu_us_per_tuple) cpu_by[k].push_back(v);
      load.push_back(r.measured_load_pct);
    }
    row.throughput_tps = spread_of(tps);
    row.ratio_to_none = spread_of(ratio);
    row.ratio_interval = median_interval(ratio);
    row.bytes_per_tuple = spread_of(bytes);
    row.cpu_us_per_tuple = spread_of(cpu);
    row.measured_load_pct = spread_of(load);
    // A kind a run did not send counts as zero in that run, so every spread is over the same runs.
    for (auto& [k, v] : bytes_by) {
      v.resize(row.runs, 0.0);
      row.bytes_per_tuple_by_kind[k] = spread_of(v);
    }
    for (auto& [k, v] : cpu_by) {
      v.resize(row.runs, 0.0);
      row.cpu_us_per_tuple_by_kind[k] = spread_of(v);
    }
    if (row.target) row.verdict = verdict_on_interval(ratio, *row.target);
    rows.push_back(std::move(row));
  }
  return rows;
}

ChainBenchReport run_chain_bench(const ChainBenchOptions& options) {
  HAPAIR_CHECK_MSG(options.repetitions >= 1 && options.tuples >= 1,
                   "repetitions=" << options.repetitions << " tuples=" << options.tuples);
  const auto started = std::chrono::steady_clock::now();
  ChainBenchReport report;
  report.driver = options.driver;
  report.secure = options.secure;
  report.tuples = options.tuples;
  report.repetitions = options.repetitions;
  report.reruns_max = options.reruns_max;
  report.checkpoint_interval_ms = options.checkpoint_interval_ms;
  report.ack_interval_ms = options.ack_interval_ms;
  report.checkpoint_mode = options.checkpoint_mode;
  report.cores = options.cores != 0 ? options.cores : machine_cores();
  report.network = "source -> filter (Filter) -> map (Map) -> aggregate (Aggregate) -> sink, no operator cost";

  std::map<HaMode, std::shared_ptr<const Plan>> plans;
  for (HaMode ha : options.approaches) plans[ha] = std::make_shared<const Plan>(make_plan(chain_bench_topology(options, ha)));
  const Reference reference = compute_reference(*plans.begin()->second);

  const std::size_t planned = options.repetitions * options.approaches.size();
  std::size_t position = 0;
  for (std::size_t rep = 1; rep <= options.repetitions; ++rep) {
    for (HaMode ha : options.approaches) {
      for (std::size_t attempt = 0;; ++attempt) {
        ChainBenchRun r;
        r.approach = to_string(ha);
        r.repetition = rep;
        r.attempt = attempt;
        if (options.on_run)
          options.on_run(position, planned,
                         "repetition " + std::to_string(rep) + "/" + std::to_string(options.repetitions) + ": " +
                             r.approach + (attempt ? ", rerun " + std::to_string(attempt) + " (the last was disturbed)" : ""));
        RunRequest request;
        request.driver = options.driver;
        request.hapair_binary = options.hapair_binary;
        request.progress = options.progress;
        request.cores = report.cores;
        request.secure = options.secure;
        const RunOutcome outcome = run_once(plans.at(ha), request, reference);
        measure(r, outcome);
        r.used = r.completed && r.verdict == "precise" && !r.disturbed && r.errors.empty();
        const bool last = !r.disturbed || attempt >= options.reruns_max;
        if (!r.used) {
          std::string why;
          if (r.disturbed) why = r.disturbance;
          else if (!r.completed) why = "did not complete";
          else if (r.verdict != "precise") why = "verdict " + r.verdict;
          for (const std::string& e : r.errors) why += "; " + e;
          report.notes.push_back(r.label() + ": " + why + (r.disturbed && !last ? "; run again" : "; left out"));
        }
        if (!options.out_dir.empty()) {
          const std::string error =
              write_results(options.out_dir + "/runs/" + folder_of(r), outcome.result, outcome.semantics, outcome.metrics,
                            outcome.effective_config, options.seed, version_string(), outcome.reference);
          if (!error.empty()) report.write_errors.push_back(error);
        }
        report.runs.push_back(std::move(r));
        if (last) break;
      }
      ++position;
    }
  }
  std::vector<std::string> names;
  for (HaMode ha : options.approaches) names.push_back(to_string(ha));
  report.rows = summarize_chain_runs(report.runs, names);
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  if (!options.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.out_dir, ec);
    const std::vector<std::pair<std::string, std::string>> files = {
        {"chain_bench.csv", chain_bench_csv(report)},
        {"chain_bench_runs.csv", chain_bench_runs_csv(report)},
        {"chain_bench.txt", chain_bench_table(report)},
        {"config.toml", "# hapair bench --chain: the network of the none runs (the others differ in ha only)\n" +
                            write_topology(plans.begin()->second->topology)},
        {"version.txt", std::string(version_string()) + "\n"},
    };
    for (const auto& [name, text] : files) {
      std::ofstream out(options.out_dir + "/" + name, std::ios::binary);
      out << text;
      out.close();
      if (!out) report.write_errors.push_back("cannot write " + options.out_dir + "/" + name);
    }
  }
  return report;
}

std::string chain_bench_table(const ChainBenchReport& report) {
  std::string out = fmt::format(
      "chain throughput: {}\n{} tuples per run, source as fast as flow control lets it, driver {}{}, {} core(s); "
      "{} repetitions in interleaved order; passive checkpoints ({}) every {} ms, acks every {} ms\n",
      report.network, report.tuples, report.driver, report.secure ? " with CURVE on every socket" : "", report.cores,
      report.repetitions, to_string(report.checkpoint_mode), report.checkpoint_interval_ms, report.ack_interval_ms);
  out += "median (min..max) over the used runs; ratio = throughput over none's of the same repetition;\n"
         "95 % CI = distribution-free confidence interval of the median ratio (order statistics, 6 runs or more):\n"
         "a target is met when the whole interval is at or above it, missed when it is below, not settled when it\n"
         "spans the target\n\n";
  constexpr const char* kRow = "{:<9} {:>4}  {:<28} {:<20} {:<13} {:<7} {:<34} {}\n";
  out += fmt::format(kRow, "approach", "runs", "tuples/s", "ratio to none", "95 % CI", "target", "verdict", "CPU load %");
  for (const ChainBenchRow& r : report.rows) {
    const bool baseline = r.approach == "none";
    std::string interval = baseline ? "" : "-";
    if (!baseline && r.ratio_interval) interval = interval_text(*r.ratio_interval, r.target);
    out += fmt::format(kRow, r.approach, r.runs, spread_cell(r.throughput_tps, "{:.0f}"),
                       baseline ? "(the baseline)" : spread_cell(r.ratio_to_none, "{:.2f}"), interval,
                       r.target ? fmt::format(">= {:.1f}", *r.target) : "-", r.target ? r.verdict : "-",
                       spread_cell(r.measured_load_pct, "{:.0f}"));
  }
  auto per_kind = [&](bool cpu) {
    const std::vector<std::string> kinds = kinds_present(report.rows, cpu);
    std::string t = cpu ? "\nCPU us per tuple (every process; by what the node threads spent it on: handling each kind of "
                          "received message, timers, other = the rest of the process)\n"
                        : "\ndata-plane bytes per tuple, by message kind sent\n";
    std::string head = fmt::format("{:<9} {:<22}", "approach", "total");
    for (const std::string& k : kinds) head += fmt::format(" {:<18}", k);
    t += head + "\n";
    for (const ChainBenchRow& r : report.rows) {
      std::string line = fmt::format("{:<9} {:<22}", r.approach,
                                     spread_cell(cpu ? r.cpu_us_per_tuple : r.bytes_per_tuple, cpu ? "{:.2f}" : "{:.1f}"));
      for (const std::string& k : kinds) {
        const auto& by = cpu ? r.cpu_us_per_tuple_by_kind : r.bytes_per_tuple_by_kind;
        auto it = by.find(k);
        line += fmt::format(" {:<18}", it == by.end() ? "-" : spread_cell(it->second, cpu ? "{:.2f}" : "{:.1f}"));
      }
      t += line + "\n";
    }
    if (cpu && kinds.empty()) t += "(the " + report.driver + " driver reports no split of the CPU time)\n";
    return t;
  };
  out += per_kind(false);
  out += per_kind(true);
  if (report.notes.empty()) {
    out += "\nevery run completed, precise and undisturbed\n";
  } else {
    out += "\nruns left out or run again:\n";
    for (const std::string& n : report.notes) out += "  " + n + "\n";
  }
  out += fmt::format("took {:.0f} s ({} runs)\n", report.wall_s, report.runs.size());
  return out;
}

std::string chain_bench_csv(const ChainBenchReport& report) {
  std::vector<std::string> bytes_kinds = kinds_present(report.rows, false);
  std::vector<std::string> cpu_kinds = kinds_present(report.rows, true);
  std::string out = "approach,runs,target";
  for (const std::string f : {"throughput_tps", "ratio_to_none", "bytes_per_tuple", "cpu_us_per_tuple", "measured_load_pct"})
    out += "," + f + "_median," + f + "_min," + f + "_max";
  for (const std::string& k : bytes_kinds) out += ",bytes_per_tuple." + k + "_median,bytes_per_tuple." + k + "_min,bytes_per_tuple." + k + "_max";
  for (const std::string& k : cpu_kinds) out += ",cpu_us_per_tuple." + k + "_median,cpu_us_per_tuple." + k + "_min,cpu_us_per_tuple." + k + "_max";
  out += ",tuples,repetitions,checkpoint_interval_ms,ack_interval_ms,checkpoint_mode,driver,cores";
  out += ",ratio_to_none_ci95_low,ratio_to_none_ci95_high,verdict\n";
  for (const ChainBenchRow& r : report.rows) {
    CsvRow row;
    row.field(r.approach).number(r.runs);
    if (r.target) row.fixed(*r.target, 2);
    else row.empty();
    csv_spread(row, r.throughput_tps, 1);
    csv_spread(row, r.ratio_to_none, 4);
    csv_spread(row, r.bytes_per_tuple, 3);
    csv_spread(row, r.cpu_us_per_tuple, 4);
    csv_spread(row, r.measured_load_pct, 1);
    for (const std::string& k : bytes_kinds) {
      auto it = r.bytes_per_tuple_by_kind.find(k);
      csv_spread(row, it == r.bytes_per_tuple_by_kind.end() ? Spread{} : it->second, 3);
    }
    for (const std::string& k : cpu_kinds) {
      auto it = r.cpu_us_per_tuple_by_kind.find(k);
      csv_spread(row, it == r.cpu_us_per_tuple_by_kind.end() ? Spread{} : it->second, 4);
    }
    row.number(report.tuples).number(report.repetitions).number(report.checkpoint_interval_ms).number(report.ack_interval_ms);
    row.field(to_string(report.checkpoint_mode)).field(report.driver);
    row.number(report.cores);
    if (r.ratio_interval && r.approach != "none") row.fixed(r.ratio_interval->low, 4).fixed(r.ratio_interval->high, 4);
    else row.empty().empty();
    row.field(r.verdict);
    out += row.line();
  }
  return out;
}

std::string chain_bench_runs_csv(const ChainBenchReport& report) {
  std::set<std::string> bytes_seen, cpu_seen;
  for (const ChainBenchRun& r : report.runs) {
    for (const auto& [k, v] : r.bytes_per_tuple) bytes_seen.insert(k);
    for (const auto& [k, v] : r.cpu_us_per_tuple) cpu_seen.insert(k);
  }
  std::vector<std::string> order = data_plane_kind_names();
  order.push_back("timers");
  order.push_back("other");
  std::vector<std::string> bytes_kinds, cpu_kinds;
  for (const std::string& k : order) {
    if (bytes_seen.count(k)) bytes_kinds.push_back(k);
    if (cpu_seen.count(k)) cpu_kinds.push_back(k);
  }
  std::string out = "order,approach,repetition,attempt,used,completed,verdict,disturbed,tuples_in,seconds,throughput_tps,"
                    "ratio_to_none,cpu_s,bytes_total,measured_load_pct";
  for (const std::string& k : bytes_kinds) out += ",bytes_per_tuple." + k;
  for (const std::string& k : cpu_kinds) out += ",cpu_us_per_tuple." + k;
  out += ",disturbance,errors\n";
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    const ChainBenchRun& r = report.runs[i];
    CsvRow row;
    row.number(i + 1).field(r.approach).number(r.repetition).number(r.attempt).flag(r.used).flag(r.completed);
    row.field(r.verdict).flag(r.disturbed).number(r.tuples_in).fixed(r.seconds, 6).fixed(r.throughput_tps, 1);
    if (r.ratio_to_none) row.fixed(*r.ratio_to_none, 4);
    else row.empty();
    row.fixed(r.cpu_s, 6).number(r.bytes_total).fixed(r.measured_load_pct, 1);
    for (const std::string& k : bytes_kinds) {
      auto it = r.bytes_per_tuple.find(k);
      row.fixed(it == r.bytes_per_tuple.end() ? 0.0 : it->second, 3);
    }
    for (const std::string& k : cpu_kinds) {
      auto it = r.cpu_us_per_tuple.find(k);
      row.fixed(it == r.cpu_us_per_tuple.end() ? 0.0 : it->second, 4);
    }
    std::string errors;
    for (const std::string& e : r.errors) errors += (errors.empty() ? "" : "; ") + e;
    row.field(r.disturbance).field(errors);
    out += row.line();
  }
  return out;
}

}  // namespace hapair
