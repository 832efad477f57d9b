#include "campaigns/experiment_runs.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "report/csv.h"
#include "config/experiment_config.h"
#include "report/results.h"
#include "config/topology_file.h"
#include "protocols/approach_traits.h"
#include "protocols/version.h"

namespace hapair {
namespace {


// Latency after the warm-up: the p99 of the deliveries after the first quarter of the delivery
// span, and the median latency of the last quarter minus the second quarter's.
struct SteadyLatency {
  std::optional<double> p99_ms, growth_ms;
};
SteadyLatency steady_latency(const RunResult& result) {
  SteadyLatency out;
  const std::vector<Delivery>& d = result.deliveries;
  if (d.size() < 8) return out;
  TimeUs first = d.front().at_us, last = first;
  for (const Delivery& x : d) {
    first = std::min(first, x.at_us);
    last = std::max(last, x.at_us);
  }
  const TimeUs span = last - first;
  std::vector<double> second, fourth;
  std::vector<TimeUs> after_warmup;
  for (const Delivery& x : d) {
    const TimeUs latency_us = x.at_us - x.tuple.ts_us;
    if (x.at_us >= first + span / 4) after_warmup.push_back(latency_us);
    if (x.at_us >= first + span / 4 && x.at_us < first + span / 2) second.push_back(ms_from_us(latency_us));
    else if (x.at_us >= first + span * 3 / 4) fourth.push_back(ms_from_us(latency_us));
  }
  if (!after_warmup.empty()) {
    std::sort(after_warmup.begin(), after_warmup.end());
    out.p99_ms = ms_from_us(nearest_rank_percentile(after_warmup, 99.0));
  }
  if (!second.empty() && !fourth.empty()) out.growth_ms = median_of(fourth) - median_of(second);
  return out;
}

// F minus the victim's last checkpoint before F.
std::optional<double> since_checkpoint_ms(const RunResult& result, NodeId victim, TimeUs failure_us) {
  std::optional<TimeUs> last;
  for (const TraceEvent& e : result.events)
    if (e.kind == TraceKind::checkpoint && e.node == victim && e.at_us <= failure_us) last = e.at_us;
  if (!last) return std::nullopt;
  return ms_from_us(failure_us - *last);
}

// See ExperimentRow::replacement_output_ms.
std::optional<double> replacement_output_ms(const Plan& plan, const RunResult& result, const RecoveryMetrics& rec,
                                            NodeId victim) {
  if (!rec.detection_ms) return std::nullopt;
  const FragmentId fv = plan.nodes.at(victim).fragment;
  // Ids survive to the sink only through Filters and Maps.
  std::vector<FragmentId> todo(plan.fragments.at(fv).downstream);
  std::set<FragmentId> seen;
  while (!todo.empty()) {
    const FragmentId f = todo.back();
    todo.pop_back();
    if (!seen.insert(f).second) continue;
    if (plan.fragments.at(f).kind == FragmentKind::sink) continue;
    for (const OperatorSpec& op : plan.spec(f).operators)
      if (op.kind != OperatorKind::filter && op.kind != OperatorKind::map) return std::nullopt;
    for (FragmentId d : plan.fragments.at(f).downstream) todo.push_back(d);
  }
  const std::vector<StreamId>& outputs = plan.fragments.at(fv).outputs;
  std::optional<TupleId> after;
  for (const TraceEvent& e : result.events) {
    if (e.kind != TraceKind::replay_request || e.at_us < rec.failure_us) continue;
    if (std::find(outputs.begin(), outputs.end(), e.stream()) == outputs.end()) continue;
    const NodeId peer = e.node_of(TraceKey::peer);
    if (peer == kNoNode || peer >= plan.nodes.size() || plan.nodes.at(peer).fragment != fv) continue;
    after = e.id_of(TraceKey::after_id);
    break;
  }
  if (!after) return std::nullopt;
  const TimeUs from = rec.failure_us + static_cast<TimeUs>(std::llround(*rec.detection_ms * 1000.0));
  for (const Delivery& d : result.deliveries)
    if (d.at_us >= from && d.tuple.id > *after) return ms_from_us(d.at_us - rec.failure_us);
  return std::nullopt;
}

// F to the first delivery at or after the detection (at or after F without one), whatever it
// delivered.
std::optional<double> output_resumed_ms(const RunResult& result, const RecoveryMetrics& rec) {
  const TimeUs from = rec.failure_us + (rec.detection_ms ? static_cast<TimeUs>(std::llround(*rec.detection_ms * 1000.0)) : 0);
  std::optional<TimeUs> first;
  for (const Delivery& d : result.deliveries)
    if (d.at_us >= from && (!first || d.at_us < *first)) first = d.at_us;
  if (!first) return std::nullopt;
  return ms_from_us(*first - rec.failure_us);
}

struct Column {
  std::string name;
  std::function<std::string(const ExperimentRow&)> text;
  // Null for text columns.
  std::function<std::optional<double>(const ExperimentRow&)> number;
};

// `format` is an fmt format for one number ("{:.3f}").
std::string real_text(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string();
}

// The CSV columns in order. Each numeric column both prints and answers row_figure(), so the
// claim checks read exactly what the CSV holds.
std::vector<Column> columns() {
  std::vector<Column> c;
  auto text = [&](const char* name, std::function<std::string(const ExperimentRow&)> f) {
    c.push_back(Column{name, std::move(f), nullptr});
  };
  auto real = [&](const std::string& name, const char* format, std::function<std::optional<double>(const ExperimentRow&)> f) {
    c.push_back(Column{name, [f, format](const ExperimentRow& r) { return real_text(f(r), format); }, f});
  };
  auto count = [&](const std::string& name, std::function<double(const ExperimentRow&)> f) {
    c.push_back(Column{name, [f](const ExperimentRow& r) { return real_text(f(r), "{:.0f}"); },
                       [f](const ExperimentRow& r) { return std::optional<double>(f(r)); }});
  };
  auto flag = [&](const char* name, std::function<bool(const ExperimentRow&)> f) {
    c.push_back(Column{name, [f](const ExperimentRow& r) { return std::string(f(r) ? "true" : "false"); },
                       [f](const ExperimentRow& r) { return std::optional<double>(f(r) ? 1.0 : 0.0); }});
  };
  auto u = [](std::uint64_t v) { return static_cast<double>(v); };
  text("experiment", [](const ExperimentRow& r) { return r.experiment; });
  text("sweep", [](const ExperimentRow& r) { return r.sweep; });
  real("x", "{:.10g}", [](const ExperimentRow& r) { return r.x; });
  text("network", [](const ExperimentRow& r) { return r.network; });
  text("network_class", [](const ExperimentRow& r) { return r.network_class; });
  text("approach", [](const ExperimentRow& r) { return r.approach; });
  count("seed", [u](const ExperimentRow& r) { return u(r.seed); });
  text("driver", [](const ExperimentRow& r) { return r.driver; });
  flag("failure", [](const ExperimentRow& r) { return r.failure; });
  text("victim", [](const ExperimentRow& r) { return r.victim; });
  real("fail_at_s", "{:.3f}", [](const ExperimentRow& r) { return std::optional<double>(r.fail_at_s); });
  flag("completed", [](const ExperimentRow& r) { return r.completed; });
  count("errors", [](const ExperimentRow& r) { return static_cast<double>(r.errors.size()); });
  count("takeovers_before_failure", [u](const ExperimentRow& r) { return u(r.takeovers_before_failure); });
  flag("disturbed", [](const ExperimentRow& r) { return r.disturbed; });
  count("false_detections", [u](const ExperimentRow& r) { return u(r.false_detections); });
  text("verdict", [](const ExperimentRow& r) { return r.verdict; });
  count("lost", [u](const ExperimentRow& r) { return u(r.lost); });
  count("duplicates", [u](const ExperimentRow& r) { return u(r.duplicates); });
  count("differing", [u](const ExperimentRow& r) { return u(r.differing); });
  count("reference_tuples", [u](const ExperimentRow& r) { return u(r.reference_tuples); });
  count("delivered_tuples", [u](const ExperimentRow& r) { return u(r.delivered_tuples); });
  flag("recovered", [](const ExperimentRow& r) { return r.recovered; });
  text("detector", [](const ExperimentRow& r) { return r.detector; });
  real("detection_ms", "{:.3f}", [](const ExperimentRow& r) { return r.detection_ms; });
  real("takeover_ms", "{:.3f}", [](const ExperimentRow& r) { return r.takeover_ms; });
  real("recovery_ms", "{:.3f}", [](const ExperimentRow& r) { return r.recovery_ms; });
  real("catchup_ms", "{:.3f}", [](const ExperimentRow& r) { return r.catchup_ms; });
  flag("catchup_reached_normal", [](const ExperimentRow& r) { return r.catchup_reached_normal; });
  real("replay_ms", "{:.3f}", [](const ExperimentRow& r) { return r.replay_ms; });
  real("output_resumed_ms", "{:.3f}", [](const ExperimentRow& r) { return r.output_resumed_ms; });
  real("since_checkpoint_ms", "{:.3f}", [](const ExperimentRow& r) { return r.since_checkpoint_ms; });
  real("replacement_output_ms", "{:.3f}", [](const ExperimentRow& r) { return r.replacement_output_ms; });
  count("tuples_in", [u](const ExperimentRow& r) { return u(r.tuples_in); });
  count("tuples_out", [u](const ExperimentRow& r) { return u(r.tuples_out); });
  real("throughput_tps", "{:.1f}", [](const ExperimentRow& r) { return std::optional<double>(r.throughput_tps); });
  real("latency_p50_ms", "{:.3f}", [](const ExperimentRow& r) { return std::optional<double>(r.latency_p50_ms); });
  real("latency_p99_ms", "{:.3f}", [](const ExperimentRow& r) { return std::optional<double>(r.latency_p99_ms); });
  real("latency_p99_steady_ms", "{:.3f}", [](const ExperimentRow& r) { return r.latency_p99_steady_ms; });
  real("latency_growth_ms", "{:.3f}", [](const ExperimentRow& r) { return r.latency_growth_ms; });
  real("low_rate_p99_ms", "{:.3f}", [](const ExperimentRow& r) { return r.low_rate_p99_ms; });
  c.push_back(Column{"sustained",
                     [](const ExperimentRow& r) { return r.sustained ? std::string(*r.sustained ? "true" : "false") : ""; },
                     [](const ExperimentRow& r) {
                       return r.sustained ? std::optional<double>(*r.sustained ? 1.0 : 0.0) : std::nullopt;
                     }});
  count("bytes_total", [u](const ExperimentRow& r) { return u(r.bytes_total); });
  count("messages_total", [u](const ExperimentRow& r) { return u(r.messages_total); });
  real("cpu_s", "{:.6f}", [](const ExperimentRow& r) { return std::optional<double>(r.cpu_s); });
  count("tuples_processed", [u](const ExperimentRow& r) { return u(r.tuples_processed); });
  real("standby_cpu_s", "{:.6f}", [](const ExperimentRow& r) { return r.standby_cpu_s; });
  real("upstream_queue_tuples_max", "{:.0f}", [](const ExperimentRow& r) {
    return r.upstream_queue_tuples_max ? std::optional<double>(static_cast<double>(*r.upstream_queue_tuples_max))
                                       : std::nullopt;
  });
  real("queue_tuples_max_sum", "{:.0f}", [](const ExperimentRow& r) {
    return r.queue_tuples_max_sum ? std::optional<double>(static_cast<double>(*r.queue_tuples_max_sum)) : std::nullopt;
  });
  real("baseline_bytes_total", "{:.0f}", [](const ExperimentRow& r) { return r.baseline_bytes_total; });
  real("baseline_cpu_s", "{:.6f}", [](const ExperimentRow& r) { return r.baseline_cpu_s; });
  real("baseline_tuples_processed", "{:.0f}", [](const ExperimentRow& r) { return r.baseline_tuples_processed; });
  real("baseline_messages_total", "{:.0f}", [](const ExperimentRow& r) { return r.baseline_messages_total; });
  real("bandwidth_overhead_pct", "{:.3f}", [](const ExperimentRow& r) { return r.bandwidth_overhead_pct; });
  real("message_overhead_pct", "{:.3f}", [](const ExperimentRow& r) { return r.message_overhead_pct; });
  real("switches_to_active", "{:.0f}", [](const ExperimentRow& r) {
    return r.switches_to_active ? std::optional<double>(static_cast<double>(*r.switches_to_active)) : std::nullopt;
  });
  c.push_back(Column{"active_at_failure",
                     [](const ExperimentRow& r) {
                       return r.active_at_failure ? std::string(*r.active_at_failure ? "true" : "false") : "";
                     },
                     [](const ExperimentRow& r) {
                       return r.active_at_failure ? std::optional<double>(*r.active_at_failure ? 1.0 : 0.0) : std::nullopt;
                     }});
  real("cpu_overhead_pct", "{:.3f}", [](const ExperimentRow& r) { return r.cpu_overhead_pct; });
  real("processing_overhead_pct", "{:.3f}", [](const ExperimentRow& r) { return r.processing_overhead_pct; });
  for (const std::string& kind : data_plane_kind_names())
    count("bytes." + kind, [kind](const ExperimentRow& r) {
      auto it = r.bytes_by_kind.find(kind);
      return it == r.bytes_by_kind.end() ? 0.0 : static_cast<double>(it->second);
    });
  text("disturbance", [](const ExperimentRow& r) { return r.disturbance; });
  text("run_dir", [](const ExperimentRow& r) { return r.run_dir; });
  text("not_judged", [](const ExperimentRow& r) {
    std::string names;
    for (const std::string& n : r.not_judged) names += (names.empty() ? "" : " ") + n;
    return names;
  });
  return c;
}


}  // namespace

std::string run_key(const std::string& driver, const PlannedRun& planned, const HostsLaunch& hosts) {
  std::string key = "driver=" + driver + "\n";
  if (hosts.hosts) key += "hosts=" + hosts.hosts->source_file + "\n";
  key += planned.failure ? "crash " + planned.victim + "@" + number_text(planned.fail_at_s) + "\n" : "no fault\n";
  return key + write_topology(planned.topology);
}

FaultSpec crash_fault(const PlannedRun& planned) {
  FaultSpec f;
  f.kind = FaultKind::crash;
  f.node = planned.victim;
  f.at_s = planned.fail_at_s;
  return f;
}

const Reference& RunCache::reference(const Plan& plan) {
  Topology none = plan.topology;
  apply_approach(none, "none");
  const std::string key = write_topology(none);
  auto it = references_.find(key);
  if (it == references_.end()) it = references_.emplace(key, compute_reference(make_plan(none))).first;
  return it->second;
}

const RunCache::Run* RunCache::find(const std::string& key) const {
  auto it = runs_.find(key);
  return it == runs_.end() ? nullptr : it->second.get();
}

const RunCache::Run& RunCache::run(const std::string& key, const PlannedRun& planned, const RunRequest& request) {
  if (const Run* r = find(key)) return *r;
  auto run = std::make_unique<Run>();
  run->plan = std::make_shared<const Plan>(make_plan(planned.topology));
  const Reference& ref = reference(*run->plan);
  run->outcome = run_once(run->plan, request, ref);
  run->guarantee = check_guarantee(*run->plan, run->outcome, ref);
  return *runs_.emplace(key, std::move(run)).first->second;
}

std::string run_label(const PlannedRun& p) {
  std::string label = p.topology.name;
  if (!p.sweep.empty() && p.x) label += " " + p.sweep + "=" + number_text(*p.x);
  label += " " + p.approach + " seed " + std::to_string(p.seed);
  label += p.failure ? " (SIGKILL " + p.victim + " at " + number_text(p.fail_at_s) + " s)" : " (failure-free)";
  return label;
}

std::string run_folder_name(const PlannedRun& p) {
  std::string name = p.topology.name;
  if (!p.sweep.empty() && p.x) name += "_" + p.sweep + "-" + number_text(*p.x);
  name += "_" + p.approach + "_seed" + std::to_string(p.seed) + (p.failure ? "_crash" : "_nofail");
  for (char& ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
          ch == '-' || ch == '.'))
      ch = '_';
  return name;
}

ExperimentRow measure_row(const PlannedRun& planned, const std::string& experiment, const RunCache::Run& run,
                          const RunCache::Run* baseline) {
  const RunOutcome& o = run.outcome;
  const RunResult& result = o.result;
  ExperimentRow r;
  r.experiment = experiment;
  r.sweep = planned.sweep;
  r.x = planned.x;
  r.network = planned.topology.name;
  r.approach = planned.approach;
  r.seed = planned.seed;
  r.driver = result.driver;
  r.failure = planned.failure;
  r.victim = planned.victim;
  r.fail_at_s = planned.failure ? planned.fail_at_s : 0.0;
  r.completed = result.completed;
  r.errors = result.errors;
  r.outcome = to_string(run.guarantee.status);
  r.outcome_line = guarantee_line(run.guarantee);
  r.verdict = o.semantics.verdict;
  r.lost = o.semantics.lost;
  r.duplicates = o.semantics.duplicates;
  r.differing = o.semantics.differing;
  r.reference_tuples = o.semantics.reference_tuples;
  r.delivered_tuples = o.semantics.delivered_tuples;
  for (const NotJudged& n : o.semantics.not_judged) r.not_judged.push_back(n.stream);
  if (const auto& rec = o.metrics.recovery) {
    r.recovered = rec->recovered;
    r.detection_ms = rec->detection_ms;
    r.detector = rec->detector;
    r.takeover_ms = rec->takeover_ms;
    r.recovery_ms = rec->recovery_ms;
    r.catchup_ms = rec->catchup_ms;
    r.catchup_reached_normal = rec->catchup_reached_normal;
    r.replay_ms = rec->replay_ms;
    r.output_resumed_ms = output_resumed_ms(result, *rec);
  }
  const TimeUs failure_us = o.metrics.recovery ? o.metrics.recovery->failure_us : kNever;
  for (const TraceEvent& e : result.events)
    if (e.kind == TraceKind::takeover && e.at_us < failure_us) ++r.takeovers_before_failure;
  const DisturbanceReport& d = o.metrics.disturbance;
  r.disturbed = d.disturbed() || r.takeovers_before_failure > 0;
  r.false_detections = d.count(DisturbanceKind::false_detection) + d.count(DisturbanceKind::detection_before_failure);
  r.disturbance = describe_disturbances(d);
  r.tuples_in = o.metrics.tuples_in;
  r.tuples_out = o.metrics.tuples_out;
  r.throughput_tps = o.metrics.throughput_tps;
  r.latency_p50_ms = o.metrics.latency.p50_ms;
  r.latency_p99_ms = o.metrics.latency.p99_ms;
  const SteadyLatency steady = steady_latency(result);
  r.latency_p99_steady_ms = steady.p99_ms;
  r.latency_growth_ms = steady.growth_ms;
  r.bytes_total = o.metrics.overhead.bytes_total;
  r.messages_total = o.metrics.overhead.messages_total;
  r.cpu_s = o.metrics.overhead.cpu_s;
  r.bytes_by_kind = o.metrics.overhead.bytes_by_kind;
  r.tuples_processed = counter_sum(result, "tuples_processed");

  const Plan& plan = *run.plan;
  // An approach that switches its standby's mode (hybrid standby) reads when to switch.
  const ApproachTraits* traits = ApproachCatalog::builtin().find(planned.approach);
  if (traits != nullptr && traits->reads_setting("hybrid_switch_at_ms")) {
    r.switches_to_active = counter_sum(result, "hybrid_switches_to_active");
    const NodeId primary = plan.node_id(planned.victim);
    if (planned.failure && primary != kNoNode && failure_us != kNever) {
      for (const TraceEvent& e : result.events)
        if (e.kind == TraceKind::takeover && e.node != primary && e.at_us >= failure_us) {
          r.active_at_failure = e.get(TraceKey::checkpoint).value_or(-1) == 0;
          break;
        }
      if (!r.active_at_failure) r.active_at_failure = false;
    }
  }
  OperatorClass weakest = OperatorClass::repeatable;
  for (const PlanFragment& f : plan.fragments)
    if (f.kind == FragmentKind::operators) weakest = std::max(weakest, f.klass);
  r.network_class = to_string(weakest);
  const NodeId victim = plan.node_id(planned.victim);
  if (victim != kNoNode && planned.failure && o.metrics.recovery) {
    r.since_checkpoint_ms = since_checkpoint_ms(result, victim, o.metrics.recovery->failure_us);
    r.replacement_output_ms = replacement_output_ms(plan, result, *o.metrics.recovery, victim);
  }
  if (!o.metrics.output_queue_tuples_max.empty()) {
    std::int64_t sum = 0;
    for (const auto& [node, max] : o.metrics.output_queue_tuples_max) sum += max;
    r.queue_tuples_max_sum = sum;
  }
  if (victim != kNoNode) {
    const PlanFragment& f = plan.fragments.at(plan.nodes.at(victim).fragment);
    for (NodeId standby : f.standbys) {
      auto it = result.counters.find(plan.nodes.at(standby).name);
      if (it != result.counters.end() && it->second.count("cpu_us") != 0)
        r.standby_cpu_s = r.standby_cpu_s.value_or(0.0) + static_cast<double>(it->second.at("cpu_us")) / 1e6;
    }
    for (FragmentId up : f.upstream) {
      auto it = o.metrics.output_queue_tuples_max.find(plan.nodes.at(plan.fragments.at(up).primary).name);
      if (it != o.metrics.output_queue_tuples_max.end())
        r.upstream_queue_tuples_max = std::max(r.upstream_queue_tuples_max.value_or(it->second), it->second);
    }
  }

  if (baseline != nullptr) {
    const RunOutcome& b = baseline->outcome;
    const double base_processed = static_cast<double>(counter_sum(b.result, "tuples_processed"));
    r.baseline_bytes_total = static_cast<double>(b.metrics.overhead.bytes_total);
    r.baseline_cpu_s = b.metrics.overhead.cpu_s;
    r.baseline_tuples_processed = base_processed;
    r.bandwidth_overhead_pct = percent_over(static_cast<double>(r.bytes_total), *r.baseline_bytes_total);
    r.cpu_overhead_pct = percent_over(r.cpu_s, *r.baseline_cpu_s);
    r.processing_overhead_pct = percent_over(static_cast<double>(r.tuples_processed), base_processed);
    r.baseline_messages_total = static_cast<double>(b.metrics.overhead.messages_total);
    r.message_overhead_pct = percent_over(static_cast<double>(r.messages_total), *r.baseline_messages_total);
  }
  return r;
}

Executed execute_runs(const std::vector<PlannedRun>& plan, const ExecuteOptions& options, RunCache& cache) {
  Executed out;
  std::vector<const RunCache::Run*> runs;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedRun& p = plan[i];
    const std::string key = run_key(options.driver, p, options.hosts);
    const bool reused = cache.find(key) != nullptr;
    if (reused) ++out.reused;
    if (options.on_run) options.on_run(i, plan.size(), run_label(p), reused);
    RunRequest request;
    request.driver = options.driver;
    request.hapair_binary = options.hapair_binary;
    request.progress = options.progress;
    request.hosts = options.hosts;
    if (options.hosts.hosts && !options.out_dir.empty()) request.log_dir = options.out_dir + "/runs/" + run_folder_name(p);
    if (p.failure) request.faults.push_back(crash_fault(p));
    runs.push_back(&cache.run(key, p, request));
  }
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedRun& p = plan[i];
    const RunCache::Run* baseline = p.baseline ? runs.at(*p.baseline) : nullptr;
    ExperimentRow row = measure_row(p, options.experiment, *runs[i], baseline);
    if (!options.out_dir.empty()) {
      row.run_dir = "runs/" + run_folder_name(p);
      const RunOutcome& o = runs[i]->outcome;
      std::string error = write_results(options.out_dir + "/" + row.run_dir, o.result, o.semantics, o.metrics,
                                        o.effective_config, p.seed, version_string(), o.reference);
      if (!error.empty()) out.write_errors.push_back(row.run_dir + ": " + error);
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::vector<std::string> experiment_csv_columns() {
  std::vector<std::string> names;
  for (const Column& c : columns()) names.push_back(c.name);
  return names;
}

std::string experiment_csv(const std::vector<ExperimentRow>& rows) {
  const std::vector<Column> cs = columns();
  std::string out;
  for (std::size_t i = 0; i < cs.size(); ++i) out += (i ? "," : "") + cs[i].name;
  out += "\n";
  for (const ExperimentRow& r : rows) {
    CsvRow row;
    for (const Column& c : cs) row.field(c.text(r));
    out += row.line();
  }
  return out;
}

std::optional<double> row_figure(const ExperimentRow& row, const std::string& column) {
  for (const Column& c : columns())
    if (c.name == column) return c.number ? c.number(row) : std::nullopt;
  return std::nullopt;
}

bool RowFilter::matches(const ExperimentRow& row) const {
  return (approach.empty() || row.approach == approach) && (sweep.empty() || row.sweep == sweep) &&
         (!failure || row.failure == *failure) && (network.empty() || row.network == network);
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  s.count = values.size();
  if (values.empty()) return s;
  s.median = median_of(values);
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  return s;
}

std::string interval_text(const MedianInterval& interval, std::optional<double> target) {
  int digits = 3;
  const auto same_side = [&](double v) {
    const double scale = std::pow(10.0, digits);
    const double printed = std::round(v * scale) / scale;
    return !target || (v < *target) == (printed < *target);
  };
  while (digits < 6 && !(same_side(interval.low) && same_side(interval.high))) ++digits;
  return fmt::format("{:.{}f}..{:.{}f}", interval.low, digits, interval.high, digits);
}

std::optional<MedianInterval> median_interval(std::vector<double> values, double confidence) {
  const std::size_t n = values.size();
  // below[k] = P(B < k) for B ~ Binomial(n, 1/2), built term by term: C(n, i) / 2^n.
  std::optional<MedianInterval> best;
  double term = std::ldexp(1.0, -static_cast<int>(n));  // P(B = 0)
  double below = 0.0;                                    // P(B < k), k = 1 first
  std::sort(values.begin(), values.end());
  for (std::size_t k = 1; 2 * k <= n + 1; ++k) {
    below += term;  // P(B < k) = P(B <= k - 1)
    term = term * static_cast<double>(n - (k - 1)) / static_cast<double>(k);
    const double coverage = 1.0 - 2.0 * below;
    if (coverage < confidence) break;
    best = MedianInterval{values[k - 1], values[n - k], coverage};
  }
  return best;
}

std::string verdict_on_interval(const std::vector<double>& values, double target) {
  if (values.empty()) return "not measured";
  const double median = median_of(values);
  const std::string missed =
      fmt::format("missed by {:.2f} ({:.0f} % below)", target - median, 100.0 * (target - median) / target);
  const std::optional<MedianInterval> interval = median_interval(values);
  if (!interval) return median >= target ? "met by the median (< 6 runs)" : missed + " (< 6 runs)";
  if (interval->low >= target) return "met";
  if (interval->high < target) return missed;
  return "not settled";
}

std::map<double, Spread> spread_by_x(const std::vector<ExperimentRow>& rows, const RowFilter& filter,
                                     const std::string& column) {
  std::map<double, std::vector<double>> values;
  for (const ExperimentRow& r : rows) {
    if (!r.x || !filter.matches(r)) continue;
    auto& v = values[*r.x];
    if (auto f = row_figure(r, column)) v.push_back(*f);
  }
  std::map<double, Spread> out;
  for (const auto& [x, v] : values) out[x] = spread_of(v);
  return out;
}

Spread summarize(const std::vector<ExperimentRow>& rows, const RowFilter& filter, const std::string& column) {
  std::vector<double> values;
  for (const ExperimentRow& r : rows)
    if (filter.matches(r))
      if (auto f = row_figure(r, column)) values.push_back(*f);
  return spread_of(values);
}

}  // namespace hapair
