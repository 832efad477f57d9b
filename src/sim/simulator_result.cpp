// The results of a simulated run (simulator_impl.h): the periodic samples of the sampled
// gauges (which also feed the quiet-drain rule and the progress line), each node's counters
// (its core's merged with the simulator's own, kept across incarnations), the RunResult, and the
// command line that repeats a run.
//
// Paper: the measurements of section 6 (recovery time, overhead in bytes and messages per kind),
// taken in virtual time.
//
// Invariant: the result is a function of the run alone (events stably sorted by time, counters
// in ordered maps), so the same plan, options and seed give byte-identical result files.
#include <algorithm>

#include "driver/gauges.h"
#include "sim/faults.h"
#include "sim/simulator_impl.h"

namespace hapair {

using namespace simhost;

void Simulator::Impl::on_sample() {
  for (auto& n : nodes) {
    if (n.crashed) continue;
    const Metrics metrics = n.core->metrics();
    for (const auto& [name, value] : metrics)
      if (is_sampled_gauge(name)) samples.push_back(MetricSample{now_us, n.name, name, value});
    quiet.report(now_us, n.id, metrics);
  }
  if (sinks_unfinished > 0 && quiet.quiet(now_us, fault_edges_pending > 0)) went_quiet = true;
  if (now_us >= next_progress_us) {
    std::ostringstream os;
    os << "sim: t=" << format_s(now_us) << " deliveries=" << deliveries.size() << " events_pending=" << queue.size()
       << " sinks_unfinished=" << sinks_unfinished;
    log(os.str());
    next_progress_us += us_from_s(options.progress_interval_s);
  }
  queue.push(now_us + sample_interval_us, SampleDue{});
}

Metrics Simulator::Impl::merged_metrics(const SimNode& n) const {
  Metrics m = n.core ? n.core->metrics() : n.last_core_metrics;
  m["cpu_us"] = n.c.cpu_us;
  m["decode_dropped"] = 0;  // nothing is decoded in the simulator
  for (std::size_t k = 0; k < kDataPlaneKinds; ++k) {
    m[std::string("bytes_sent.") + kMessageKindNames[k]] = n.c.bytes_sent[k];
    m[std::string("messages_sent.") + kMessageKindNames[k]] = n.c.messages_sent[k];
  }
  m["sim.messages_received"] = n.c.messages_received;
  m["sim.dropped_loss"] = n.c.dropped_loss;
  m["sim.dropped_partition"] = n.c.dropped_partition;
  m["sim.dropped_rule"] = n.c.dropped_rule;
  m["sim.dropped_unsent"] = n.c.dropped_unsent;
  m["sim.dropped_while_down"] = n.c.dropped_while_down;
  m["sim.dropped_control"] = n.c.dropped_control;
  m["sim.duplicated"] = n.c.duplicated;
  m["sim.fifo_overflow"] = n.c.fifo_overflow;
  m["sim.fifo_events_max_seen"] = n.c.fifo_events_max_seen;
  m["sim.incarnations"] = static_cast<std::int64_t>(n.crashed_at_us.size());
  if (links_emulated) add_link_metrics(total_counters(n.links, n.links_before), m);
  return m;
}

RunResult Simulator::Impl::make_result() const {
  RunResult r = result_without_records();
  r.deliveries = deliveries;
  r.merge_orders = merge_orders;
  r.events = events;
  r.samples = samples;
  sort_events(r);
  return r;
}

// For take_result: the big vectors are moved, not copied (a million deliveries in a scale run).
RunResult Simulator::Impl::move_result() {
  RunResult r = result_without_records();
  r.deliveries = std::move(deliveries);
  r.merge_orders = std::move(merge_orders);
  r.events = std::move(events);
  r.samples = std::move(samples);
  sort_events(r);
  return r;
}

void Simulator::Impl::sort_events(RunResult& r) {
  std::stable_sort(r.events.begin(), r.events.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.at_us < b.at_us; });
}

RunResult Simulator::Impl::result_without_records() const {
  RunResult r;
  r.plan = plan;
  r.driver = "sim";
  r.faults = options.faults;
  for (const auto& n : nodes) r.counters[n.name] = merged_metrics(n);
  r.end_us = now_us;
  r.completed = completed();
  r.errors = errors;
  r.stall = stall;
  return r;
}

std::string reproduce_command(const Plan& plan, std::uint64_t seed, const std::vector<FaultSpec>& faults) {
  const Topology& t = plan.topology;
  std::string cmd = "hapair run --driver sim --seed " + std::to_string(seed);
  // `hapair run` builds the network from a file or the built-in default, then applies its
  // overrides (--ha, --duration-s, --rate-tps, --operator-cost-us). The file's own values are not
  // known here, so with a file every override that can be written is; without one, those that
  // differ from the built-in default.
  const bool from_file = !t.source_file.empty();
  const Topology base = default_topology();
  if (from_file) cmd += " --topology " + t.source_file;
  // An --ha override clears the per-fragment modes; a network whose fragments have their own
  // modes got them from its file, and --ha would change them.
  const bool own_modes = std::any_of(t.fragments.begin(), t.fragments.end(), [](const FragmentSpec& f) {
    return f.kind == FragmentKind::operators && f.ha.has_value();
  });
  if (!own_modes && (from_file || t.settings.ha != base.settings.ha)) cmd += std::string(" --ha ") + to_string(t.settings.ha);
  if (from_file || t.settings.duration_s != base.settings.duration_s)
    cmd += " --duration-s " + exact_number(t.settings.duration_s);
  std::vector<double> rates;
  for (const FragmentSpec& f : t.fragments)
    if (f.kind == FragmentKind::source) rates.push_back(source_rate_setting(f.source));
  std::vector<double> base_rates;
  for (const FragmentSpec& f : base.fragments)
    if (f.kind == FragmentKind::source) base_rates.push_back(source_rate_setting(f.source));
  const bool one_rate = !rates.empty() && std::all_of(rates.begin(), rates.end(), [&](double r) { return r == rates.front(); });
  if (one_rate && (from_file || rates != base_rates)) cmd += " --rate-tps " + exact_number(rates.front());
  if (from_file || t.settings.operator_cost_us_per_tuple != base.settings.operator_cost_us_per_tuple)
    cmd += " --operator-cost-us " + exact_number(t.settings.operator_cost_us_per_tuple);
  return cmd + fault_options(faults);
}

}  // namespace hapair
