#include "report/run_json.h"

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <set>

#include "protocols/run_result.h"
#include "protocols/topology.h"
#include "protocols/trace_text.h"

namespace hapair {

namespace {

using Json = OrderedJson;

Json node_or_null(const Plan& plan, NodeId n) {
  if (n == kNoNode) return nullptr;
  return trace_node_name(&plan, n);
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

}  // namespace

std::string lineage_text(std::uint64_t lineage) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, lineage);
  return text;
}

std::string stream_text(const Plan& plan, StreamId s) {
  return s < plan.streams.size() ? plan.streams[s].name : std::to_string(s);
}

Json trace_event_json(const Plan* plan, const TraceEvent& e) {
  Json j;
  j["t_us"] = e.at_us;
  j["node"] = trace_node_name(plan, e.node);
  j["kind"] = to_string(e.kind);
  for (std::size_t i = 0; i < e.detail_count; ++i) {
    const TraceDetail& d = e.details[i];
    switch (trace_key_type(d.key)) {
      case TraceValueType::number: j[to_string(d.key)] = d.value; break;
      case TraceValueType::flag: j[to_string(d.key)] = d.value != 0; break;
      default: j[to_string(d.key)] = trace_value_text(plan, d); break;
    }
  }
  if (!e.text.empty()) j["text"] = e.text;
  return j;
}

Json fragments_json(const Plan& plan) {
  Json fragments = Json::array();
  for (const PlanFragment& f : plan.fragments) {
    Json j;
    j["name"] = f.name;
    j["kind"] = to_string(f.kind);
    j["ha"] = to_string(f.ha);
    j["primary"] = node_or_null(plan, f.primary);
    // "standby": the (first) standby, as the pages read it; "standbys": every one.
    j["standby"] = node_or_null(plan, f.has_standby() ? f.standbys.front() : kNoNode);
    Json standbys = Json::array();
    for (NodeId n : f.standbys) standbys.push_back(node_or_null(plan, n));
    j["standbys"] = standbys;
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
  return fragments;
}

Json nodes_json(const Plan& plan) {
  Json nodes = Json::array();
  for (const PlanNode& n : plan.nodes) {
    // A node of no fragment (the coordinator of global checkpoints) is a lane of its own.
    if (!plan.runs_fragment(n.id)) {
      nodes.push_back(Json{{"name", n.name}, {"fragment", n.name}, {"planned", n.name}});
      continue;
    }
    nodes.push_back(Json{{"name", n.name},
                         {"fragment", plan.fragments[n.fragment].name},
                         {"planned", n.standby ? "standby" : "primary"}});
  }
  return nodes;
}

Json streams_json(const Plan& plan) {
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
      f["node"] = trace_node_name(&plan, e.node);
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
  j["lineage"] = lineage_text(d.tuple.lineage);
  j["from"] = node_or_null(plan, d.from);
  j["replayed"] = d.replayed;
  j["status"] = status;
  return j;
}

Json missing_json(const Plan& plan, const Delivery& d) {
  return Json{{"stream", stream_text(plan, d.stream)},
              {"ts_us", d.tuple.ts_us},
              {"key", d.tuple.key},
              {"value", d.tuple.value},
              {"lineage", lineage_text(d.tuple.lineage)}};
}

}  // namespace hapair
