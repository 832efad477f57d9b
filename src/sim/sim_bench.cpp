#include "sim/sim_bench.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <memory>
#include <sstream>

#include "operators/source_generator.h"
#include "protocols/check.h"
#include "protocols/plan.h"
#include "sim/simulator.h"

namespace hapair {
namespace {

std::uint64_t bits_of(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

std::uint64_t fold(std::uint64_t digest, std::uint64_t v) { return mix64(digest, v); }

std::uint64_t digest_of(const std::vector<Delivery>& deliveries) {
  std::uint64_t h = 0;
  for (const Delivery& d : deliveries) {
    h = fold(h, static_cast<std::uint64_t>(d.at_us));
    h = fold(h, d.stream);
    h = fold(h, d.tuple.id);
    h = fold(h, static_cast<std::uint64_t>(d.tuple.ts_us));
    h = fold(h, static_cast<std::uint64_t>(d.tuple.key));
    h = fold(h, bits_of(d.tuple.value));
    h = fold(h, d.tuple.lineage);
    h = fold(h, d.from);
    h = fold(h, d.replayed ? 1 : 0);
  }
  return h;
}

std::uint64_t digest_of(const std::map<std::string, Metrics>& counters) {
  std::uint64_t h = 0;
  for (const auto& [node, metrics] : counters) {
    h = fold(h, hash_name(node));
    for (const auto& [name, value] : metrics) h = fold(fold(h, hash_name(name)), static_cast<std::uint64_t>(value));
  }
  return h;
}

std::uint64_t digest_of(const std::vector<TraceEvent>& events) {
  std::uint64_t h = 0;
  for (const TraceEvent& e : events)
    h = fold(fold(fold(h, static_cast<std::uint64_t>(e.at_us)), e.node), static_cast<std::uint64_t>(e.kind));
  return h;
}

}  // namespace

Topology sim_bench_topology(const SimBenchOptions& options) {
  HAPAIR_CHECK_MSG(options.nodes >= 3, "nodes=" << options.nodes);
  HAPAIR_CHECK_MSG(options.tuples > 0 && options.rate_tps > 0.0, "tuples=" << options.tuples << " rate_tps=" << options.rate_tps);
  Topology t;
  t.name = "sim-bench-chain-" + std::to_string(options.nodes);
  t.settings.seed = options.seed;
  t.settings.ha = options.ha;

  FragmentSpec source;
  source.name = "source";
  source.kind = FragmentKind::source;
  source.source.stream = "s0";
  source.source.rate_tps = options.rate_tps;
  source.where = "sim bench";
  t.fragments.push_back(source);
  // Tuple i is scheduled at floor(i * 1e6 / rate) us and emitted while its time is before the
  // duration, so ending the run half a microsecond before tuple (tuples + 1)'s time emits
  // exactly `tuples` tuples (the half keeps the seconds-to-microseconds rounding off the edge).
  const TimeUs after_last_us = source_tuple_time_us(source.source, static_cast<TupleId>(options.tuples) + 1);
  t.settings.duration_s = (static_cast<double>(after_last_us) - 0.5) / 1e6;

  for (std::int64_t i = 1; i + 1 < options.nodes; ++i) {
    FragmentSpec f;
    f.name = "f" + std::to_string(i);
    f.where = "sim bench";
    OperatorSpec keep;
    keep.name = "keep" + std::to_string(i);
    keep.kind = OperatorKind::filter;
    keep.inputs = {"s" + std::to_string(i - 1)};
    keep.output = "s" + std::to_string(i);
    // Source values are in [0, 100): every tuple passes.
    keep.filter_field = Field::value;
    keep.filter_op = CompareOp::ge;
    keep.filter_constant = -1.0;
    keep.where = "sim bench";
    f.operators.push_back(keep);
    t.fragments.push_back(f);
  }
  FragmentSpec sink;
  sink.name = "sink";
  sink.kind = FragmentKind::sink;
  sink.sink_inputs = {"s" + std::to_string(options.nodes - 2)};
  sink.where = "sim bench";
  t.fragments.push_back(sink);
  return t;
}

SimBenchReport run_sim_scale_bench(const SimBenchOptions& options) {
  const Topology topology = sim_bench_topology(options);
  SimBenchReport report;
  report.nodes = options.nodes;
  report.errors = validate(topology);
  if (!report.errors.empty()) return report;
  report.tuples = static_cast<std::int64_t>(source_tuple_count(topology.fragments.front().source, topology.settings.duration_s));
  auto plan = std::make_shared<const Plan>(make_plan(topology));

  const auto wall_start = std::chrono::steady_clock::now();
  const RunResult r = run_simulation(plan, SimOptions{});
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  report.tuples_delivered = static_cast<std::int64_t>(r.deliveries.size());
  report.simulated_s = static_cast<double>(r.end_us) / 1e6;
  report.completed = r.completed;
  report.errors = r.errors;
  report.deliveries_digest = digest_of(r.deliveries);
  report.counters_digest = digest_of(r.counters);
  report.events_digest = digest_of(r.events);
  report.events = static_cast<std::int64_t>(r.events.size());
  std::int64_t hops = 0;
  for (const auto& [node, counters] : r.counters) {
    (void)node;
    for (const auto& [name, value] : counters) {
      if (name.rfind("messages_sent.", 0) == 0) report.messages += value;
      if (name == "tuples_processed") hops += value;
    }
  }
  if (report.wall_s > 0.0) {
    report.simulated_per_wall = report.simulated_s / report.wall_s;
    report.tuple_hops_per_wall_s = static_cast<double>(hops) / report.wall_s;
  }
  return report;
}

std::string format_sim_bench_report(const SimBenchReport& r) {
  std::ostringstream os;
  os << "simulator scale bench: chain of " << r.nodes << " nodes, " << r.tuples << " source tuples\n";
  os << "  delivered        " << r.tuples_delivered << " tuples" << (r.completed ? "" : " (run did not complete)") << "\n";
  os << "  messages         " << r.messages << "\n";
  os << "  simulated time   " << r.simulated_s << " s\n";
  os << "  wall time        " << r.wall_s << " s\n";
  os << "  simulated/wall   " << r.simulated_per_wall << "\n";
  os << "  tuple hops/s     " << r.tuple_hops_per_wall_s << " (wall)\n";
  // Everything below is deterministic for the seed: equal across builds that behave alike.
  os << std::hex << std::setfill('0');
  os << "  deliveries digest " << std::setw(16) << r.deliveries_digest << "\n";
  os << "  counters digest   " << std::setw(16) << r.counters_digest << "\n";
  os << "  events digest     " << std::setw(16) << r.events_digest << std::dec << " (" << r.events << " events)\n";
  for (const auto& e : r.errors) os << "  error: " << e << "\n";
  return os.str();
}

}  // namespace hapair
