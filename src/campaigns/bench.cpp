#include "campaigns/bench.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "campaigns/experiment_runs.h"
#include "node/node_factory.h"
#include "operators/source_generator.h"
#include "protocols/plan.h"
#include "runtime/throughput.h"

namespace hapair {
namespace {

// The source's schedule: every tuple is due within the first milliseconds, so flow control
// paces the source, never its schedule. This is above what validate() lets a user configure
// (10 million tuples/s, a sanity bound for experiments); at that bound the schedule itself
// capped the measured rate, so the bench validates its topology at a legal rate and only then
// raises it.
constexpr double kBenchSourceRateTps = 1e9;
constexpr double kValidatedRateTps = 1e7;

// source -> sink, no HA: the smallest network with one data hop between two nodes.
Topology one_hop_topology(const BenchOptions& options) {
  Topology t;
  t.name = "bench-one-hop";
  t.source_file = "built-in bench";
  // The duration makes the source emit about `tuples` tuples (ids with ts < duration; ts is in
  // whole microseconds, so the exact count comes from source_tuple_count()).
  const double rate_tps = kBenchSourceRateTps;
  t.settings.duration_s = (static_cast<double>(options.tuples) + 0.5) / rate_tps;
  t.settings.batch_tuples = options.batch_tuples;
  t.settings.ha = ApproachCatalog::builtin().baseline();

  FragmentSpec source;
  source.name = "source";
  source.kind = FragmentKind::source;
  source.source.stream = "tuples";
  source.source.rate_tps = rate_tps;
  source.where = "built-in bench";
  FragmentSpec sink;
  sink.name = "sink";
  sink.kind = FragmentKind::sink;
  sink.sink_inputs = {"tuples"};
  sink.where = "built-in bench";
  t.fragments = {source, sink};
  return t;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string spread(const std::vector<double>& v, double scale, const char* format) {
  if (v.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return fmt::format(fmt::runtime(format), median(v) / scale) + " (" + fmt::format(fmt::runtime(format), *lo / scale) +
         ".." + fmt::format(fmt::runtime(format), *hi / scale) + ")";
}

void add_cpu(BenchReport::CpuPerTuple& cpu, const ThroughputMeasurement& m) {
  const double per_tuple = 1e9 / static_cast<double>(std::max<std::int64_t>(m.tuples, 1));
  cpu.sender_ns.push_back(m.sender_cpu_s * per_tuple);
  cpu.receiver_ns.push_back(m.receiver_cpu_s * per_tuple);
  cpu.io_ns.push_back(std::max(0.0, m.process_cpu_s - m.sender_cpu_s - m.receiver_cpu_s) * per_tuple);
}

// The median's distribution-free 95 % interval (campaigns/experiment_runs.h), or why there is none.
std::string interval_line(const std::vector<double>& ratios) {
  const std::optional<MedianInterval> interval = median_interval(ratios);
  if (!interval) return "none (fewer than 6 repetitions)";
  return interval_text(*interval, kOneHopTarget) + " (order statistics)";
}

std::string cpu_line(const BenchReport::CpuPerTuple& cpu) {
  return fmt::format("sender {}, receiver {}, ZeroMQ I/O {}", spread(cpu.sender_ns, 1.0, "{:.0f}"),
                     spread(cpu.receiver_ns, 1.0, "{:.0f}"), spread(cpu.io_ns, 1.0, "{:.0f}"));
}

}  // namespace

BenchReport run_one_hop_bench(const BenchOptions& options) {
  BenchReport report;
  report.tuples = options.tuples;
  report.batch_tuples = options.batch_tuples;
  if (options.tuples <= 0 || options.batch_tuples <= 0) {
    report.errors.push_back("tuples and batch_tuples must be positive");
    return report;
  }

  report.repetitions = std::max(options.repetitions, 1);
  const Topology topology = one_hop_topology(options);
  Topology checked = topology;
  checked.fragments[0].source.rate_tps = kValidatedRateTps;
  const std::vector<std::string> problems = validate(checked);
  if (!problems.empty()) {
    for (const std::string& p : problems) report.errors.push_back("bench topology: " + p);
    return report;
  }
  Plan raised = make_plan(checked);
  raised.topology = topology;  // same fragments and streams; only the source's rate differs
  auto plan = std::make_shared<const Plan>(std::move(raised));
  const NodeId source = plan->node_id("source");
  const NodeId sink = plan->node_id("sink");
  // The source's schedule is in whole microseconds, so its count can differ slightly from the
  // requested one; every tuple it emits must arrive.
  const auto emitted = static_cast<std::int64_t>(
      source_tuple_count(plan->spec(plan->nodes[source].fragment).source, plan->settings().duration_s));
  report.secure = options.secure;
  CurveKeys keys;
  if (options.secure) {
    if (const std::string why = curve_unavailable(); !why.empty()) {
      report.errors.push_back(why);
      return report;
    }
    keys = make_run_keys();
  }
  for (int i = 0; i < report.repetitions; ++i) {
    const ThroughputMeasurement raw = measure_raw_push_pull(options.tuples, options.batch_tuples, options.timeout_s, keys);
    const ThroughputMeasurement hop = measure_one_hop(plan, source, sink, make_node_core, options.timeout_s, keys);
    if (!raw.completed) report.errors.push_back("raw, repetition " + std::to_string(i + 1) + ": " + raw.error);
    if (!hop.completed) report.errors.push_back("hapair, repetition " + std::to_string(i + 1) + ": " + hop.error);
    else if (hop.tuples != emitted)
      report.errors.push_back("hapair delivered " + std::to_string(hop.tuples) + " tuples, but the source emits " +
                              std::to_string(emitted));
    if (!raw.completed || !hop.completed || hop.tuples != emitted || raw.tuples_per_s <= 0) continue;
    report.raw_tuples_per_s.push_back(raw.tuples_per_s);
    report.hapair_tuples_per_s.push_back(hop.tuples_per_s);
    report.ratios.push_back(hop.tuples_per_s / raw.tuples_per_s);
    add_cpu(report.raw_cpu, raw);
    add_cpu(report.hapair_cpu, hop);
    if (hop.tuples > 0) report.hapair_bytes_per_tuple = hop.bytes / hop.tuples;
  }
  report.ratio = median(report.ratios);
  return report;
}

std::string format_bench_report(const BenchReport& r) {
  std::string out = fmt::format(
      "one-hop throughput, {} tuples, {} tuples per message, tcp loopback{}, two threads in one process;\n"
      "{} interleaved repetitions ({} completed), median (min..max)\n"
      "  raw ZeroMQ PUSH/PULL (40-byte records): {} M tuples/s\n"
      "  hapair source -> sink (cores, codec):   {} M tuples/s ({} wire bytes per tuple)\n"
      "  ratio hapair / raw, per repetition:     {}  (target >= {:.2f})\n"
      "  95 % CI of the median ratio:            {}: {}\n"
      "  CPU ns per tuple, raw:    {}\n"
      "  CPU ns per tuple, hapair: {}\n",
      r.tuples, r.batch_tuples, r.secure ? " with CURVE on both sides" : "", r.repetitions, r.ratios.size(), spread(r.raw_tuples_per_s, 1e6, "{:.2f}"),
      spread(r.hapair_tuples_per_s, 1e6, "{:.2f}"), r.hapair_bytes_per_tuple, spread(r.ratios, 1.0, "{:.2f}"),
      kOneHopTarget, interval_line(r.ratios), verdict_on_interval(r.ratios, kOneHopTarget), cpu_line(r.raw_cpu),
      cpu_line(r.hapair_cpu));
  for (const std::string& e : r.errors) out += "  error: " + e + "\n";
  return out;
}

}  // namespace hapair
