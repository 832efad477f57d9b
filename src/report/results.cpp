#include "report/results.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/csv.h"
#include "report/run_json.h"
#include "report/timeline.h"
#include "protocols/trace_text.h"

namespace hapair {

namespace {

// Keys stay in the order they are set, so the file reads in the order results.h lists it.
using Json = nlohmann::ordered_json;

// ---- number formatting ------------------------------------------------------------------------

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

// A measured figure: null when it is not a finite number; a whole number as an integer ("650",
// not "650.0"); any other number as nlohmann-json writes a double (Grisu2: it reads back exactly,
// and is now and then a digit or two longer than the shortest text that would).
Json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::trunc(v) && std::fabs(v) < 1e15 && !(v == 0 && std::signbit(v))) return static_cast<std::int64_t>(v);
  return v;
}
Json number(const std::optional<double>& v) { return v ? number(*v) : Json(nullptr); }

template <typename Map>
Json number_map(const Map& m) {
  Json j = Json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

Json entry_json(const std::string& stream, const SemanticsEntry& e) {
  Json j;
  j["stream"] = stream;
  j["lineage"] = fmt::format("{:016x}", e.lineage);
  j["key"] = e.key;
  j["value"] = number(e.value);
  j["ts_us"] = e.ts_us;
  return j;
}

// ---- names ----------------------------------------------------------------------------------------

std::string stream_name(const Plan* plan, StreamId s) {
  if (plan != nullptr && s < plan->streams.size()) return plan->streams[s].name;
  return std::to_string(s);
}

std::string node_name(const Plan* plan, NodeId n) {
  if (n == kNoNode) return "launcher";
  if (plan != nullptr && n < plan->nodes.size()) return plan->nodes[n].name;
  return std::to_string(n);
}

std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return "cannot create " + path.string();
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return "cannot write " + path.string();
  return {};
}

}  // namespace

std::string clock_bound_note(const RunResult& result, const RunMetrics& metrics) {
  if (!result.clock_error_bound_us) return "";
  const double bound_ms = static_cast<double>(*result.clock_error_bound_us) / 1e3;
  std::vector<std::string> below;
  auto check = [&](const char* what, const std::optional<double>& ms) {
    if (ms && *ms < bound_ms) below.push_back(std::string(what) + " (" + fixed(*ms, 3) + " ms)");
  };
  if (metrics.tuples_out > 0) check("latency p50", metrics.latency.p50_ms);
  for (const RecoveryMetrics& r : metrics.recoveries) {
    check("detection", r.detection_ms);
    check("takeover", r.takeover_ms);
    check("recovery", r.recovery_ms);
  }
  if (below.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < below.size(); ++i) list += (i == 0 ? "" : i + 1 == below.size() ? " and " : ", ") + below[i];
  return "the clocks' cross-host error bound of " + fixed(bound_ms, 3) + " ms exceeds the " + list +
         " it reports: across hosts those figures are known only to within that bound";
}

// ---- summary.json ---------------------------------------------------------------------------------

std::string summary_json(const RunResult& result, const SemanticsReport& semantics, const RunMetrics& metrics,
                         std::uint64_t seed, const std::string& version) {
  const Plan* plan = result.plan.get();
  Json j;
  j["ha"] = plan != nullptr ? Json(to_string(plan->settings().ha)) : Json(nullptr);
  j["driver"] = result.driver;
  j["seed"] = seed;
  j["version"] = version;
  j["network"] = plan != nullptr ? Json(plan->topology.name) : Json(nullptr);
  j["tuples_in"] = metrics.tuples_in;
  j["tuples_in_from"] = metrics.tuples_in_from_counters ? "counters" : "reference";
  j["tuples_out"] = metrics.tuples_out;
  j["throughput_tps"] = number(metrics.throughput_tps);
  j["latency_ms"] = {{"p50", number(metrics.latency.p50_ms)},
                     {"p99", number(metrics.latency.p99_ms)},
                     {"max", number(metrics.latency.max_ms)}};

  j["failure"] = nullptr;
  if (const FaultSpec* fault = measured_fault(result))
    j["failure"] = {{"node", fault->node}, {"at_s", number(fault->at_s)}, {"kind", to_string(fault->kind)}};

  j["recovery"] = nullptr;
  if (metrics.recovery) {
    const RecoveryMetrics& r = *metrics.recovery;
    Json& rec = j["recovery"];
    rec["detection_ms"] = number(r.detection_ms);
    rec["detector"] = r.detector;
    rec["detected_by"] = r.detected_by;
    rec["takeover_ms"] = number(r.takeover_ms);
    rec["recovery_ms"] = number(r.recovery_ms);
    rec["catchup_ms"] = number(r.catchup_ms);
    rec["replay_ms"] = number(r.replay_ms);
    rec["restore_ms"] = number(r.restore_ms);
    rec["rollback_ms"] = number(r.rollback_ms);
    rec["state_restored_ms"] = number(r.state_restored_ms);
    rec["recovered"] = r.recovered;
    rec["catchup_reached_normal"] = r.catchup_reached_normal;
    rec["failure_us"] = r.failure_us;
    rec["failure_from_event"] = r.failure_from_event;
    rec["prefailure_p99_ms"] = number(r.prefailure_p99_ms);
    rec["reference_delivered_before"] = r.reference_delivered_before;
    rec["new_after"] = r.new_after;
  }

  // Several hosts: the clocks' error bound after the correction, and what it leaves unresolved.
  if (result.clock_error_bound_us)
    j["clocks"] = {{"cross_host_error_bound_us", *result.clock_error_bound_us},
                   {"note", clock_bound_note(result, metrics)}};

  Json& disturbance = j["disturbance"];
  disturbance["disturbed"] = metrics.disturbance.disturbed();
  disturbance["text"] = describe_disturbances(metrics.disturbance);
  disturbance["items"] = Json::array();
  for (const Disturbance& d : metrics.disturbance.disturbances)
    disturbance["items"].push_back({{"kind", to_string(d.kind)}, {"at_us", d.at_us}, {"node", d.node}, {"detail", d.detail}});
  disturbance["detections"] = Json::array();
  for (const DetectionSeen& d : metrics.disturbance.detections)
    disturbance["detections"].push_back({{"at_us", d.at_us},
                                         {"by", d.by},
                                         {"failed", d.failed},
                                         {"detector", d.detector},
                                         {"of_standby", d.of_standby}});
  // Fragments that ran without a standby after their primary declared it lost.
  j["unprotected"] = Json::array();
  for (const UnprotectedSpan& u : metrics.unprotected)
    j["unprotected"].push_back({{"fragment", u.fragment},
                                {"primary", u.primary},
                                {"standby", u.standby},
                                {"lost_us", u.lost_us},
                                {"silent_ms", number(u.silent_ms)},
                                {"released_tuples", u.released_tuples},
                                {"unprotected_ms", number(u.unprotected_ms)},
                                {"restored", u.restored}});

  Json& sem = j["semantics"];
  sem["verdict"] = semantics.verdict;
  sem["lost"] = semantics.lost;
  sem["duplicates"] = semantics.duplicates;
  sem["differing"] = semantics.differing;
  sem["reference_tuples"] = semantics.reference_tuples;
  sem["delivered_tuples"] = semantics.delivered_tuples;
  sem["order_matches"] = semantics.order_matches;
  sem["multiset_compare"] = semantics.multiset_compare;
  sem["note"] = semantics.note;
  sem["merge_order_replayed"] = semantics.merge_order_replayed;
  sem["not_judged"] = Json::array();
  for (const NotJudged& n : semantics.not_judged) sem["not_judged"].push_back({{"stream", n.stream}, {"reason", n.reason}});

  j["semantics_examples"] = Json::array();
  for (const SemanticsExample& e : semantics.examples) {
    Json example;
    example["kind"] = e.kind;
    example["entry"] = entry_json(stream_name(plan, e.entry.stream), e.entry);
    example["reference_count"] = e.reference_count;
    example["delivered_count"] = e.delivered_count;
    example["delivered_instead"] = e.delivered_instead
                                       ? entry_json(stream_name(plan, e.delivered_instead->stream), *e.delivered_instead)
                                       : Json(nullptr);
    j["semantics_examples"].push_back(std::move(example));
  }

  Json& overhead = j["overhead"];
  overhead["bytes_total"] = metrics.overhead.bytes_total;
  overhead["messages_total"] = metrics.overhead.messages_total;
  overhead["bytes_by_kind"] = number_map(metrics.overhead.bytes_by_kind);
  overhead["messages_by_kind"] = number_map(metrics.overhead.messages_by_kind);
  overhead["cpu_s"] = number(metrics.overhead.cpu_s);

  j["completed"] = result.completed;
  j["end_us"] = result.end_us;
  j["errors"] = result.errors;

  j["ha_by_fragment"] = Json::object();
  if (plan != nullptr)
    for (const PlanFragment& f : plan->fragments) j["ha_by_fragment"][f.name] = to_string(f.ha);

  j["output_queue_tuples_max"] = number_map(metrics.output_queue_tuples_max);

  j["nodes"] = Json::object();
  for (const auto& [node, counters] : result.counters) j["nodes"][node] = number_map(counters);

  // Bytes that are not UTF-8 (a name in a hand-written file) are replaced, never a failure.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// ---- CSV files -------------------------------------------------------------------------------------

std::string output_csv(const RunResult& result) {
  std::string out = "delivery_us,stream,id,ts_us,key,value,lineage,from,replayed\n";
  for (const Delivery& d : result.deliveries) {
    out += CsvRow()
               .number(d.at_us)
               .field(stream_name(result.plan.get(), d.stream))
               .number(d.tuple.id)
               .number(d.tuple.ts_us)
               .number(d.tuple.key)
               .raw(fmt::format("{:.17g}", d.tuple.value))
               .raw(fmt::format("{:016x}", d.tuple.lineage))
               .field(node_name(result.plan.get(), d.from))
               .raw(d.replayed ? "1" : "0")
               .line();
  }
  return out;
}

std::string events_csv(const RunResult& result) {
  std::string out = "time_us,node,event,details\n";
  for (const TraceEvent& e : result.events) {
    out += CsvRow()
               .number(e.at_us)
               .field(node_name(result.plan.get(), e.node))
               .field(to_string(e.kind))
               .quoted(trace_details_text(result.plan.get(), e))
               .line();
  }
  return out;
}

std::string trace_jsonl(const RunResult& result) {
  std::string out;
  for (const TraceEvent& e : result.events) {
    out += trace_event_json(result.plan.get(), e).dump();
    out += '\n';
  }
  return out;
}

std::string merge_order_csv(const RunResult& result) {
  std::string out = "node,epoch,acting,following,op_index,first_output,port,first_input,count\n";
  for (const MergeOrder& o : result.merge_orders) {
    const std::string node = node_name(result.plan.get(), o.node);
    TupleId output = o.first_output;
    for (const MergeRun& r : o.runs) {
      out += CsvRow()
                 .field(node)
                 .number(o.epoch)
                 .flag(o.acting)
                 .flag(o.following)
                 .number(static_cast<unsigned>(o.op_index))
                 .number(output)
                 .number(static_cast<unsigned>(r.port))
                 .number(r.first_input)
                 .number(static_cast<unsigned>(r.count))
                 .line();
      output += r.count;
    }
  }
  return out;
}

std::string metrics_csv(const RunResult& result) {
  std::string out = "time_us,node,metric,value\n";
  for (const MetricSample& s : result.samples)
    out += CsvRow().number(s.at_us).field(s.node).field(s.name).number(s.value).line();
  return out;
}

std::string timeline_page(const RunResult& result, const SemanticsReport& semantics,
                          const std::vector<Delivery>& reference, std::uint64_t seed, const std::string& version) {
  const std::size_t entries = result.deliveries.size() + result.events.size();
  if (entries <= kTimelineEntriesMax)
    return timeline_html(timeline_data(result, semantics, reference, seed, version, timeline_title(result, seed)));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hapair timeline</title></head><body>\n"
      "<h1>{}</h1>\n<p>This run has {} outputs and {} trace events, more than the {} the timeline page draws. "
      "Its trace is in trace.jsonl and events.csv, its output in output.csv, its figures in summary.json.</p>\n"
      "</body></html>\n",
      timeline_title(result, seed), result.deliveries.size(), result.events.size(), kTimelineEntriesMax);
}

std::string timeline_title(const RunResult& result, std::uint64_t seed) {
  if (!result.plan) return "hapair run";
  const Plan& plan = *result.plan;
  std::string title = fmt::format("{} on the {} network, seed {}, {}", to_string(plan.settings().ha), plan.topology.name,
                                  seed, result.driver == "sim" ? "simulator" : "real processes");
  for (const FaultSpec& f : result.faults) title += fmt::format("; {} of {} at {:g} s", to_string(f.kind), f.node, f.at_s);
  return title;
}

std::string write_results(const std::string& dir, const RunResult& result, const SemanticsReport& semantics,
                          const RunMetrics& metrics, const std::string& effective_config_text,
                          std::uint64_t seed, const std::string& version, const std::vector<Delivery>& reference) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create directory " + dir + ": " + ec.message();
  const std::filesystem::path base(dir);
  const std::pair<const char*, std::string> files[] = {
      {"summary.json", summary_json(result, semantics, metrics, seed, version)},
      {"output.csv", output_csv(result)},
      {"events.csv", events_csv(result)},
      {"trace.jsonl", trace_jsonl(result)},
      {"metrics.csv", metrics_csv(result)},
      {"config.toml", effective_config_text},
      {"timeline.html", timeline_page(result, semantics, reference, seed, version)},
  };
  for (const auto& [name, text] : files) {
    std::string error = write_file(base / name, text);
    if (!error.empty()) return error;
  }
  if (!result.merge_orders.empty()) return write_file(base / "merge_order.csv", merge_order_csv(result));
  return {};
}

// ---- terminal summary ----------------------------------------------------------------------------------

namespace {

std::string ms_or_none(const std::optional<double>& ms) { return ms ? fixed(*ms, 1) + " ms" : "none"; }

}  // namespace

std::string format_summary(const RunResult& result, const SemanticsReport& semantics, const RunMetrics& metrics) {
  std::ostringstream s;
  const Plan* plan = result.plan.get();
  s << "network " << (plan ? plan->topology.name : std::string("?")) << ", ha "
    << (plan ? to_string(plan->settings().ha) : "?") << ", driver " << result.driver
    << (result.completed ? "" : " (run did not complete)") << "\n";
  s << "tuples in " << metrics.tuples_in << ", out " << metrics.tuples_out << ", throughput "
    << fixed(metrics.throughput_tps, 1) << " tuples/s\n";
  s << "latency p50 " << fixed(metrics.latency.p50_ms, 3) << " ms, p99 " << fixed(metrics.latency.p99_ms, 3)
    << " ms, max " << fixed(metrics.latency.max_ms, 3) << " ms\n";
  for (std::size_t i = 0; i < metrics.recoveries.size(); ++i) {
    const RecoveryMetrics& r = metrics.recoveries[i];
    s << (metrics.recoveries.size() > 1 ? "failure " + std::to_string(i + 1) + ": " : std::string("failure: "))
      << to_string(r.kind) << " of " << r.node << " at " << fixed(r.at_s, 3) << " s ("
      << (r.failure_from_event ? "observed at " : "configured, ") << fixed(static_cast<double>(r.failure_us) / 1e6, 6)
      << " s)\n";
    s << "  detection " << ms_or_none(r.detection_ms);
    if (r.detection_ms) s << " (" << r.detector << " detector, by " << r.detected_by << ")";
    if (r.rollback_ms) s << ", rollback " << ms_or_none(r.rollback_ms);
    if (r.state_restored_ms) s << ", state restored " << ms_or_none(r.state_restored_ms);
    s << ", takeover " << ms_or_none(r.takeover_ms);
    if (r.replay_ms) s << ", replay " << ms_or_none(r.replay_ms);
    if (r.restore_ms) s << ", pair restored in " << ms_or_none(r.restore_ms);
    s << "\n";
    if (r.recovered) {
      s << "  recovery " << ms_or_none(r.recovery_ms) << " (first new output), catch-up " << ms_or_none(r.catchup_ms)
        << (r.catchup_reached_normal ? " (latency back to normal)" : " (latency never back to normal: to the last delivery)")
        << "\n";
    } else {
      s << "  not recovered: no new output after the failure\n";
    }
  }
  if (result.clock_error_bound_us) {
    const std::string note = clock_bound_note(result, metrics);
    s << "clocks: cross-host times within +-" << fixed(static_cast<double>(*result.clock_error_bound_us) / 1e3, 3)
      << " ms (NTP probes over the control channel, hosts.json)" << (note.empty() ? "" : "; " + note) << "\n";
  }
  // Disturbances: a run whose pair was swapped before its failure, or that saw a false
  // detection, is never shown as clean.
  if (metrics.disturbance.disturbed()) {
    s << "disturbed: " << describe_disturbances(metrics.disturbance)
      << (metrics.recovery ? " (the recovery figures above do not measure the planned failure alone)" : "") << "\n";
  } else {
    s << "undisturbed: no takeover or detection "
      << (metrics.recovery ? "before the failure, none of a node no fault touched" : "in this failure-free run") << "\n";
  }
  for (const UnprotectedSpan& u : metrics.unprotected) {
    s << "standby lost: " << u.standby << " (standby of " << u.primary << ") at "
      << fixed(static_cast<double>(u.lost_us) / 1e6, 3) << " s (last heard " << fixed(u.silent_ms, 1)
      << " ms before); " << u.released_tuples << " held tuples released; fragment " << u.fragment
      << " unprotected for " << fixed(u.unprotected_ms, 1) << " ms"
      << (u.restored ? " (until the pair was restored)" : " (to the last output: the pair was not restored)") << "\n";
  }
  s << "semantics: " << semantics.verdict << " (lost " << semantics.lost << ", duplicates " << semantics.duplicates
    << ", differing " << semantics.differing << "; reference " << semantics.reference_tuples << " tuples, delivered "
    << semantics.delivered_tuples << ")\n";
  s << "  " << semantics.note << "\n";
  for (const NotJudged& n : semantics.not_judged)
    s << "  not judged: stream " << n.stream << " (" << n.reason << ")\n";
  for (const SemanticsExample& e : semantics.examples) {
    s << "  " << e.kind << ": " << stream_name(plan, e.entry.stream) << " key " << e.entry.key << " ts "
      << e.entry.ts_us << " us value " << shortest_text(e.entry.value) << " (reference x" << e.reference_count
      << ", delivered x" << e.delivered_count << ")";
    if (e.delivered_instead) s << ", delivered value " << shortest_text(e.delivered_instead->value) << " instead";
    s << "\n";
  }
  // What the nodes said they could not replay: the cause of a gap, or of rebased ids.
  std::size_t replay_gaps = 0;
  for (const TraceEvent& e : result.events) {
    if (e.kind != TraceKind::replay_gap) continue;
    if (++replay_gaps <= 3)
      s << "  replay gap at " << (plan && e.node < plan->nodes.size() ? plan->nodes[e.node].name : std::to_string(e.node))
        << " (" << fixed(static_cast<double>(e.at_us) / 1e6, 6) << " s): " << trace_details_text(plan, e) << "\n";
  }
  if (replay_gaps > 3) s << "  (" << replay_gaps - 3 << " more replay gaps in events.csv)\n";
  s << "overhead: " << metrics.overhead.bytes_total << " bytes in " << metrics.overhead.messages_total
    << " data-plane messages, cpu " << fixed(metrics.overhead.cpu_s, 3) << " s\n";
  // The line that says the output stopped is the end of the run, not a failure (RunResult::stall).
  for (const std::string& e : result.errors) s << (e == result.stall ? "stopped: " : "error: ") << e << "\n";
  return s.str();
}

std::uint64_t counter_sum(const RunResult& result, const std::string& name) {
  std::uint64_t sum = 0;
  for (const auto& [node, counters] : result.counters) {
    auto it = counters.find(name);
    if (it != counters.end() && it->second > 0) sum += static_cast<std::uint64_t>(it->second);
  }
  return sum;
}

std::optional<double> percent_over(double run, double base) {
  if (base <= 0) return std::nullopt;
  return 100.0 * (run - base) / base;
}

}  // namespace hapair
