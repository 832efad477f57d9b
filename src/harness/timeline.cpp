#include "harness/timeline.h"

#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "harness/results.h"
#include "protocols/trace_text.h"

namespace hapair {

namespace web {
extern const unsigned char kPage_timeline_timeline_html[];
extern const std::size_t kPage_timeline_timeline_html_size;
}  // namespace web

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kPlaceholder = "/*HAPAIR_RUN_JSON*/";

std::string node_text(const Plan& plan, NodeId n) { return n == kNoNode ? "" : trace_node_name(&plan, n); }

Json node_or_null(const Plan& plan, NodeId n) {
  if (n == kNoNode) return nullptr;
  return trace_node_name(&plan, n);
}

std::string stream_text(const Plan& plan, StreamId s) {
  return s < plan.streams.size() ? plan.streams[s].name : std::to_string(s);
}

// What a tuple's lineage is on each named stream (docs/TIMELINE.md): a source position kept by
// Filter, Map and Union, an Aggregate's window, or a Join's pair.
std::map<std::string, std::string> lineage_kinds(const Topology& t) {
  std::map<std::string, const OperatorSpec*> producer;
  std::set<std::string> sources;
  for (const FragmentSpec& f : t.fragments) {
    if (f.kind == FragmentKind::source) sources.insert(f.source.stream);
    for (const OperatorSpec& op : f.operators) producer[op.output] = &op;
  }
  std::map<std::string, std::string> kinds;
  // Bounded by the number of operators: a stream's kind follows its producer's first input.
  auto kind_of = [&](std::string stream) {
    for (std::size_t hops = 0; hops <= producer.size(); ++hops) {
      if (sources.count(stream)) return std::string("source");
      auto it = producer.find(stream);
      if (it == producer.end() || it->second->inputs.empty()) return std::string("source");
      const OperatorSpec& op = *it->second;
      if (op.kind == OperatorKind::aggregate) return std::string("window");
      if (op.kind == OperatorKind::join) return std::string("pair");
      stream = op.inputs.front();
    }
    return std::string("source");
  };
  for (const FragmentSpec& f : t.fragments) {
    if (f.kind == FragmentKind::source) kinds[f.source.stream] = "source";
    for (const OperatorSpec& op : f.operators) kinds[op.output] = kind_of(op.output);
  }
  return kinds;
}

Json plan_json(const Plan& plan, Json& data) {
  Json fragments = Json::array();
  for (const PlanFragment& f : plan.fragments) {
    Json j;
    j["name"] = f.name;
    j["kind"] = to_string(f.kind);
    j["ha"] = to_string(f.ha);
    j["primary"] = node_or_null(plan, f.primary);
    j["standby"] = node_or_null(plan, f.standby);
    Json inputs = Json::array(), outputs = Json::array(), ops = Json::array();
    for (StreamId s : f.inputs) inputs.push_back(stream_text(plan, s));
    for (StreamId s : f.outputs) outputs.push_back(stream_text(plan, s));
    if (f.spec_index < plan.topology.fragments.size())
      for (const OperatorSpec& op : plan.topology.fragments[f.spec_index].operators)
        ops.push_back(Json{{"name", op.name}, {"kind", to_string(op.kind)}});
    j["inputs"] = inputs;
    j["outputs"] = outputs;
    j["operators"] = ops;
    fragments.push_back(j);
  }
  data["fragments"] = fragments;
  Json nodes = Json::array();
  for (const PlanNode& n : plan.nodes) {
    nodes.push_back(Json{{"name", n.name},
                         {"fragment", plan.fragments[n.fragment].name},
                         {"planned", n.standby ? "standby" : "primary"}});
  }
  data["nodes"] = nodes;
  const auto lineage = lineage_kinds(plan.topology);
  Json streams = Json::array();
  for (const PlanStream& s : plan.streams) {
    Json consumers = Json::array();
    for (FragmentId c : s.consumers) consumers.push_back(plan.fragments[c].name);
    auto it = lineage.find(s.name);
    streams.push_back(Json{{"name", s.name},
                           {"producer", plan.fragments[s.producer].name},
                           {"consumers", consumers},
                           {"lineage", it == lineage.end() ? "source" : it->second}});
  }
  return streams;
}

// The injected faults, from the trace: each failure event and the event that ends it.
Json faults_json(const Plan& plan, const std::vector<TraceEvent>& events) {
  Json faults = Json::array();
  std::map<std::pair<NodeId, int>, std::size_t> open;  // (node, fault kind) -> index in faults
  for (const TraceEvent& e : events) {
    if (e.kind == TraceKind::failure) {
      const auto kind = e.enum_of<FaultKind>(TraceKey::fault).value_or(FaultKind::crash);
      Json f;
      f["kind"] = to_string(kind);
      f["node"] = node_text(plan, e.node);
      f["at_us"] = e.at_us;
      f["until_us"] = nullptr;
      f["peer"] = node_or_null(plan, e.node_of(TraceKey::peer));
      open[{e.node, static_cast<int>(kind)}] = faults.size();
      faults.push_back(f);
      continue;
    }
    std::optional<FaultKind> ends;
    if (e.kind == TraceKind::resume) ends = FaultKind::pause;
    if (e.kind == TraceKind::restart) ends = FaultKind::crash;
    if (e.kind == TraceKind::heal) ends = FaultKind::partition;
    if (!ends) continue;
    auto it = open.find({e.node, static_cast<int>(*ends)});
    if (it == open.end()) continue;
    faults[it->second]["until_us"] = e.at_us;
    open.erase(it);
  }
  return faults;
}

Json delivery_json(const Plan& plan, const Delivery& d, const char* status) {
  Json j;
  j["at_us"] = d.at_us;
  j["stream"] = stream_text(plan, d.stream);
  j["id"] = d.tuple.id;
  j["ts_us"] = d.tuple.ts_us;
  j["key"] = d.tuple.key;
  j["value"] = d.tuple.value;
  j["lineage"] = fmt::format("{:016x}", d.tuple.lineage);
  j["from"] = node_or_null(plan, d.from);
  j["replayed"] = d.replayed;
  j["status"] = status;
  return j;
}

}  // namespace

Json timeline_data(const RunResult& result, const SemanticsReport& semantics, const std::vector<Delivery>& reference,
                   std::uint64_t seed, const std::string& version, const std::string& title) {
  static const Plan kNoPlan{};
  const Plan& plan = result.plan ? *result.plan : kNoPlan;
  Json data;
  data["format"] = "hapair-timeline/1";
  data["title"] = title;
  Json run;
  run["driver"] = result.driver;
  run["ha"] = result.plan ? to_string(plan.settings().ha) : "";
  run["network"] = result.plan ? plan.topology.name : "";
  run["seed"] = seed;
  run["version"] = version;
  run["duration_us"] = result.plan ? static_cast<TimeUs>(plan.settings().duration_s * 1e6) : 0;
  run["end_us"] = result.end_us;
  run["completed"] = result.completed;
  run["trace_level"] = result.plan ? to_string(plan.settings().trace_level) : "control";
  run["verdict"] = semantics.verdict;
  run["lost"] = semantics.lost;
  run["duplicates"] = semantics.duplicates;
  run["differing"] = semantics.differing;
  run["reference_tuples"] = semantics.reference_tuples;
  run["delivered_tuples"] = semantics.delivered_tuples;
  run["multiset_compare"] = semantics.multiset_compare;
  Json not_judged = Json::array();
  for (const NotJudged& n : semantics.not_judged) not_judged.push_back(n.stream);
  run["not_judged"] = not_judged;
  data["run"] = run;
  data["streams"] = plan_json(plan, data);
  data["faults"] = faults_json(plan, result.events);
  Json events = Json::array();
  for (const TraceEvent& e : result.events) events.push_back(trace_event_json(&plan, e));
  data["events"] = events;

  // Deliveries on judged streams, classified against the judged reference; the rest are not
  // judged (their reference depends on an interleaving the run did not report).
  std::set<std::string> unjudged;
  for (const NotJudged& n : semantics.not_judged) unjudged.insert(n.stream);
  std::vector<Delivery> judged;
  std::vector<std::size_t> judged_index;
  for (std::size_t i = 0; i < result.deliveries.size(); ++i) {
    if (unjudged.count(stream_text(plan, result.deliveries[i].stream))) continue;
    judged.push_back(result.deliveries[i]);
    judged_index.push_back(i);
  }
  const OutputClassification c = classify_output(reference, judged);
  std::vector<const char*> status(result.deliveries.size(), "not_judged");
  for (std::size_t k = 0; k < judged.size(); ++k) status[judged_index[k]] = to_string(c.status[k]);
  Json outputs = Json::array();
  for (std::size_t i = 0; i < result.deliveries.size(); ++i) outputs.push_back(delivery_json(plan, result.deliveries[i], status[i]));
  data["outputs"] = outputs;
  Json missing = Json::array();
  for (std::size_t i : c.missing) {
    const Delivery& d = reference[i];
    missing.push_back(Json{{"stream", stream_text(plan, d.stream)},
                           {"ts_us", d.tuple.ts_us},
                           {"key", d.tuple.key},
                           {"value", d.tuple.value},
                           {"lineage", fmt::format("{:016x}", d.tuple.lineage)}});
  }
  data["missing"] = missing;
  return data;
}

std::string_view timeline_template() {
  return {reinterpret_cast<const char*>(web::kPage_timeline_timeline_html), web::kPage_timeline_timeline_html_size};
}

std::string timeline_html(const Json& data) {
  std::string json = data.dump(-1, ' ', false, Json::error_handler_t::replace);
  // Inside <script> "</" ends the script and "<!--" changes how it is parsed; '<' appears only
  // inside JSON strings, where \u003c means the same character.
  std::string safe;
  safe.reserve(json.size());
  for (char ch : json) {
    if (ch == '<') safe += "\\u003c";
    else safe += ch;
  }
  std::string page(timeline_template());
  const auto at = page.find(kPlaceholder);
  if (at == std::string::npos) return page;
  page.replace(at, kPlaceholder.size(), safe);
  return page;
}

}  // namespace hapair
