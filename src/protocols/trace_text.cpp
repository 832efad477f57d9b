#include "protocols/trace_text.h"

#include "protocols/approach_traits.h"
#include "protocols/core.h"
#include "protocols/run_result.h"
#include "protocols/topology.h"

namespace hapair {

std::string trace_node_name(const Plan* plan, NodeId node) {
  if (node == kNoNode) return "launcher";
  if (plan != nullptr && node < plan->nodes.size()) return plan->nodes[node].name;
  return std::to_string(node);
}

std::string trace_value_text(const Plan* plan, const TraceDetail& d) {
  const std::int64_t v = d.value;
  switch (trace_key_type(d.key)) {
    case TraceValueType::node:
      if (v == kNoNode) return "none";
      return v >= 0 && v < kNoNode ? trace_node_name(plan, static_cast<NodeId>(v)) : std::to_string(v);
    case TraceValueType::stream:
      if (plan != nullptr && v >= 0 && static_cast<std::uint64_t>(v) < plan->streams.size())
        return plan->streams[static_cast<std::size_t>(v)].name;
      return std::to_string(v);
    case TraceValueType::number: return std::to_string(v);
    case TraceValueType::flag: return v != 0 ? "true" : "false";
    case TraceValueType::detector:
      return v == static_cast<std::int64_t>(Detector::connection) ? "connection" : "heartbeat";
    case TraceValueType::fault:
      return v >= 0 && v <= static_cast<std::int64_t>(FaultKind::restart) ? to_string(static_cast<FaultKind>(v))
                                                                           : std::to_string(v);
    case TraceValueType::role:
      return v >= 0 && v <= static_cast<std::int64_t>(kLastRole) ? to_string(static_cast<Role>(v))
                                                                        : std::to_string(v);
    case TraceValueType::ha: {
      // A built-in approach by name; another (registered elsewhere) by its number.
      const ApproachTraits* a =
          v >= 0 && v <= 255 ? ApproachCatalog::builtin().find(static_cast<HaMode>(v)) : nullptr;
      return a != nullptr ? a->name : std::to_string(v);
    }
    case TraceValueType::mode:
      return v >= 0 && v <= static_cast<std::int64_t>(CheckpointMode::delta)
                 ? to_string(static_cast<CheckpointMode>(v))
                 : std::to_string(v);
    case TraceValueType::reason:
      return v >= 0 && v <= static_cast<std::int64_t>(TraceReason::latency) ? to_string(static_cast<TraceReason>(v))
                                                                                 : std::to_string(v);
  }
  return std::to_string(v);
}

std::string trace_details_text(const Plan* plan, const TraceEvent& e) {
  std::string out;
  for (std::size_t i = 0; i < e.detail_count; ++i) {
    if (!out.empty()) out += ' ';
    out += to_string(e.details[i].key);
    out += '=';
    out += trace_value_text(plan, e.details[i]);
  }
  if (!e.text.empty()) out += (out.empty() ? "-- " : " -- ") + e.text;
  return out;
}

}  // namespace hapair
