#include "support/trace_read.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "protocols/core.h"
#include "protocols/run_result.h"
#include "protocols/topology.h"
#include "protocols/trace_text.h"

namespace hapair {

namespace {

bool parse_number(const std::string& s, std::int64_t& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

// The value of `text` for a key of type `type`.
std::optional<std::int64_t> parse_value(const Plan* plan, TraceValueType type, const std::string& text) {
  std::int64_t n = 0;
  switch (type) {
    case TraceValueType::node:
      if (text == "none") return kNoNode;
      if (plan != nullptr && plan->node_id(text) != kNoNode) return plan->node_id(text);
      break;
    case TraceValueType::stream:
      if (plan != nullptr && plan->stream_id(text) != kNoStream) return plan->stream_id(text);
      break;
    case TraceValueType::number: break;
    case TraceValueType::flag:
      if (text == "true") return 1;
      if (text == "false") return 0;
      return std::nullopt;
    case TraceValueType::detector:
      if (text == "connection") return static_cast<std::int64_t>(Detector::connection);
      if (text == "heartbeat") return static_cast<std::int64_t>(Detector::heartbeat);
      return std::nullopt;
    case TraceValueType::fault:
      for (FaultKind k : {FaultKind::crash, FaultKind::pause, FaultKind::partition, FaultKind::restart})
        if (text == to_string(k)) return static_cast<std::int64_t>(k);
      return std::nullopt;
    case TraceValueType::role:
      for (int r = 0; r <= static_cast<int>(kLastRole); ++r)
        if (text == to_string(static_cast<Role>(r))) return r;
      return std::nullopt;
    case TraceValueType::ha:
      if (auto h = parse_ha_mode(text)) return static_cast<std::int64_t>(*h);
      return std::nullopt;
    case TraceValueType::mode:
      if (auto m = parse_checkpoint_mode(text)) return static_cast<std::int64_t>(*m);
      return std::nullopt;
    case TraceValueType::reason:
      for (int r = 0; r <= static_cast<int>(TraceReason::queue_full); ++r)
        if (text == to_string(static_cast<TraceReason>(r))) return r;
      return std::nullopt;
  }
  if (parse_number(text, n)) return n;
  return std::nullopt;
}

}  // namespace

std::optional<TraceEvent> parse_trace_event(const Plan* plan, TimeUs at_us, NodeId node, const std::string& kind,
                                            const std::string& details, std::string* problem) {
  auto fail = [&](const std::string& what) -> std::optional<TraceEvent> {
    if (problem != nullptr) *problem = what;
    return std::nullopt;
  };
  const auto k = trace_kind_from(kind);
  if (!k) return fail("unknown trace kind '" + kind + "'");
  TraceEvent e(at_us, node, *k);
  std::string words = details;
  const auto text_at = details.find("-- ");
  if (text_at != std::string::npos && (text_at == 0 || details[text_at - 1] == ' ')) {
    e.text = details.substr(text_at + 3);
    words = details.substr(0, text_at);
  }
  std::istringstream in(words);
  for (std::string word; in >> word;) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) return fail("detail '" + word + "' is not key=value");
    const auto key = trace_key_from(word.substr(0, eq));
    if (!key) return fail("unknown trace key '" + word.substr(0, eq) + "'");
    if (e.has(*key)) return fail("trace key '" + word.substr(0, eq) + "' twice");
    if (e.detail_count == kTraceDetailsMax) return fail("more than " + std::to_string(kTraceDetailsMax) + " details");
    const auto value = parse_value(plan, trace_key_type(*key), word.substr(eq + 1));
    if (!value) return fail("value '" + word.substr(eq + 1) + "' of '" + word.substr(0, eq) + "'");
    e.with(*key, *value);
  }
  return e;
}

TraceEvent trace_event(const Plan* plan, TimeUs at_us, NodeId node, const std::string& kind, const std::string& details) {
  std::string problem;
  auto e = parse_trace_event(plan, at_us, node, kind, details, &problem);
  if (!e) {
    std::fprintf(stderr, "trace_event(%s, \"%s\"): %s\n", kind.c_str(), details.c_str(), problem.c_str());
    std::abort();
  }
  return *e;
}

TraceEvent trace_event(const Plan& plan, TimeUs at_us, const std::string& node, const std::string& kind,
                       const std::string& details) {
  const NodeId id = node == "launcher" ? kNoNode : plan.node_id(node);
  if (id == kNoNode && node != "launcher") {
    std::fprintf(stderr, "trace_event: no node '%s'\n", node.c_str());
    std::abort();
  }
  return trace_event(&plan, at_us, id, kind, details);
}

}  // namespace hapair
