#include "demo/demo_service.h"

#include <cmath>

#include "demo/demo_networks.h"

namespace hapair {

namespace {

using Json = OrderedJson;

Json failure(bool& error, const std::string& what) {
  error = true;
  return Json{{"error", what}};
}

// The approaches the page offers: every one of the catalog.
std::string approaches_text() { return ApproachCatalog::builtin().names(); }

// A whole number field in [lo, hi]; `what` names the problem when it is not.
bool whole(const nlohmann::json& j, const char* field, std::int64_t lo, std::int64_t hi, std::int64_t& out,
           std::string& what) {
  if (!j.contains(field)) {
    what = std::string("missing '") + field + "'";
    return false;
  }
  const auto& v = j[field];
  double x = 0;
  if (v.is_number_integer() || v.is_number_unsigned()) x = v.get<double>();
  else if (v.is_number_float()) x = v.get<double>();
  else {
    what = std::string("'") + field + "' must be a number";
    return false;
  }
  if (!std::isfinite(x) || x != std::floor(x) || x < static_cast<double>(lo) || x > static_cast<double>(hi)) {
    what = std::string("'") + field + "' must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    return false;
  }
  out = static_cast<std::int64_t>(x);
  return true;
}

bool text(const nlohmann::json& j, const char* field, std::string& out, std::string& what) {
  if (!j.contains(field) || !j[field].is_string()) {
    what = std::string("'") + field + "' must be a string";
    return false;
  }
  out = j[field].get<std::string>();
  return true;
}

std::string node_names(const Plan& plan) {
  std::string s;
  for (const PlanNode& n : plan.nodes) s += (s.empty() ? "" : ", ") + n.name;
  return s;
}

// A fault from a request (create's faults[], or the fault op); `at_needed`: its at_us is read too.
bool fault_of(const nlohmann::json& j, const Plan* plan, bool at_needed, FaultSpec& f, std::string& what) {
  if (!j.is_object()) {
    what = "a fault must be an object";
    return false;
  }
  std::string kind;
  if (!text(j, "kind", kind, what)) return false;
  if (kind == "crash") f.kind = FaultKind::crash;
  else if (kind == "pause") f.kind = FaultKind::pause;
  else if (kind == "partition") f.kind = FaultKind::partition;
  else if (kind == "restart") f.kind = FaultKind::restart;
  else {
    what = "unknown fault kind '" + kind + "'; allowed: crash, pause, partition, restart";
    return false;
  }
  if (!text(j, "node", f.node, what)) return false;
  if (plan != nullptr && plan->node_id(f.node) == kNoNode) {
    what = "no node '" + f.node + "'; the nodes are " + node_names(*plan);
    return false;
  }
  if (f.kind == FaultKind::partition) {
    if (!text(j, "peer", f.peer, what)) return false;
    if (plan != nullptr && plan->node_id(f.peer) == kNoNode) {
      what = "no node '" + f.peer + "'; the nodes are " + node_names(*plan);
      return false;
    }
  }
  if (f.kind == FaultKind::pause || f.kind == FaultKind::partition) {
    std::int64_t d = 0;
    if (!whole(j, "duration_us", 1, 60'000'000, d, what)) return false;
    f.duration_s = static_cast<double>(d) / 1e6;
  }
  if (at_needed) {
    std::int64_t at = 0;
    if (!whole(j, "at_us", 0, 3'600'000'000, at, what)) return false;
    f.at_s = static_cast<double>(at) / 1e6;
  }
  return true;
}

Json fault_json(const FaultSpec& f) {
  Json j;
  j["kind"] = to_string(f.kind);
  j["node"] = f.node;
  j["at_us"] = static_cast<std::int64_t>(std::llround(f.at_s * 1e6));
  if (f.kind == FaultKind::pause || f.kind == FaultKind::partition)
    j["duration_us"] = static_cast<std::int64_t>(std::llround(f.duration_s * 1e6));
  if (f.kind == FaultKind::partition) j["peer"] = f.peer;
  return j;
}

// A live switch from a request (create's switches[], or the switch op): a fragment and the
// approach to switch it to; `at_needed`: its at_us is read too.
bool switch_of(const nlohmann::json& j, bool at_needed, SwitchSpec& s, std::string& what) {
  if (!j.is_object()) {
    what = "a switch must be an object";
    return false;
  }
  if (!text(j, "fragment", s.fragment, what)) return false;
  std::string to;
  if (!text(j, "to", to, what)) return false;
  const auto mode = parse_ha_mode(to);
  if (!mode) {
    what = "unknown approach '" + to + "'; live switching allows: " + DemoSession::switchable_names();
    return false;
  }
  s.to = *mode;
  if (at_needed) {
    std::int64_t at = 0;
    if (!whole(j, "at_us", 1, 3'600'000'000, at, what)) return false;
    s.at_s = static_cast<double>(at) / 1e6;
  }
  s.where = "switch";
  return true;
}

Json switch_json(const SwitchSpec& s) {
  return Json{{"fragment", s.fragment}, {"to", to_string(s.to)}, {"at_us", static_cast<std::int64_t>(std::llround(s.at_s * 1e6))}};
}

}  // namespace

DemoService::DemoService(std::size_t sessions_max) : sessions_max_(sessions_max == 0 ? 1 : sessions_max) {}
DemoService::~DemoService() = default;

std::string DemoService::handle(const std::string& request_text) {
  bool error = false;
  const auto request = nlohmann::json::parse(request_text, nullptr, false);
  if (request.is_discarded()) return Json{{"error", "the request is not JSON"}}.dump();
  return handle(request, error).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Json DemoService::handle(const nlohmann::json& request, bool& error) {
  error = false;
  if (!request.is_object() || !request.contains("op") || !request["op"].is_string())
    return failure(error, "a request is an object with a string 'op'");
  const std::string op = request["op"].get<std::string>();
  if (op == "networks") {
    Json networks = Json::array();
    for (const DemoNetwork& n : demo_networks())
      networks.push_back(Json{{"name", n.name}, {"title", n.title}, {"description", n.description}});
    Json approaches = Json::array();
    Json switchable = Json::array();
    for (const ApproachTraits& a : ApproachCatalog::builtin().all()) {
      approaches.push_back(a.name);
      if (switchable_mode(ApproachCatalog::builtin(), a.mode)) switchable.push_back(a.name);
    }
    return Json{{"networks", networks}, {"approaches", approaches}, {"switchable", switchable}};
  }
  if (op == "create") return create(request, error);
  if (op == "advance" || op == "step" || op == "fault" || op == "switch" || op == "close") {
    Json answer;
    DemoSession* s = find(request, answer, error);
    if (s == nullptr) return answer;
    if (op == "close") {
      const std::int64_t id = request["session"].get<std::int64_t>();
      sessions_.erase(id);
      recent_.remove(id);
      return Json{{"ok", true}};
    }
    if (op == "step") return s->step();
    if (op == "advance") {
      std::string what;
      std::int64_t to = 0;
      if (!whole(request, "to_us", 0, 3'600'000'000, to, what)) return failure(error, what);
      return s->advance(to);
    }
    std::string what;
    if (op == "switch") {
      SwitchSpec w;
      if (!switch_of(request, false, w, what)) return failure(error, what);
      const auto problems = s->switch_approach(w);
      if (!problems.empty()) return failure(error, problems.front());
      w.at_s = static_cast<double>(s->now_us() + 1) / 1e6;
      return Json{{"ok", true}, {"switch", switch_json(w)}};
    }
    FaultSpec f;
    if (!fault_of(request, &s->plan(), false, f, what)) return failure(error, what);
    const auto problems = s->inject(f);
    if (!problems.empty()) return failure(error, problems.front());
    f.at_s = static_cast<double>(s->now_us() + 1) / 1e6;
    return Json{{"ok", true}, {"fault", fault_json(f)}};
  }
  if (op.rfind("real_", 0) == 0) {
    if (!real_handler) return failure(error, "real processes need the server (hapair demo); this page runs the simulator only");
    return real_handler(request, error);
  }
  return failure(error, "unknown op '" + op +
                            "'; allowed: networks, create, advance, step, fault, switch, close, real_start, real_kill, real_status");
}

Json DemoService::create(const nlohmann::json& request, bool& error) {
  DemoRunSpec spec;
  std::string what;
  if (request.contains("network") && !text(request, "network", spec.network, what)) return failure(error, what);
  if (request.contains("ha")) {
    std::string ha;
    if (!text(request, "ha", ha, what)) return failure(error, what);
    const auto mode = parse_ha_mode(ha);
    if (!mode) return failure(error, "unknown approach '" + ha + "'; allowed: " + approaches_text());
    spec.ha = *mode;
  }
  if (request.contains("seed")) {
    std::int64_t seed = 0;
    if (!whole(request, "seed", 0, INT64_MAX, seed, what)) return failure(error, what);
    spec.seed = static_cast<std::uint64_t>(seed);
  }
  if (request.contains("duration_s")) {
    const auto& d = request["duration_s"];
    if (!d.is_number() || !(d.get<double>() >= 1.0 && d.get<double>() <= 60.0))
      return failure(error, "'duration_s' must be a number from 1 to 60");
    spec.duration_s = d.get<double>();
  }
  if (request.contains("faults")) {
    if (!request["faults"].is_array()) return failure(error, "'faults' must be an array");
    for (const auto& j : request["faults"]) {
      FaultSpec f;
      if (!fault_of(j, nullptr, true, f, what)) return failure(error, what);
      spec.faults.push_back(f);
    }
  }
  if (request.contains("switches")) {
    if (!request["switches"].is_array()) return failure(error, "'switches' must be an array");
    for (const auto& j : request["switches"]) {
      SwitchSpec w;
      if (!switch_of(j, true, w, what)) return failure(error, what);
      spec.switches.push_back(w);
    }
  }
  auto session = DemoSession::create(spec, what);
  if (!session) return failure(error, what);
  while (sessions_.size() >= sessions_max_ && !recent_.empty()) {
    sessions_.erase(recent_.front());
    recent_.pop_front();
  }
  const std::int64_t id = next_id_++;
  Json answer{{"session", id}, {"meta", session->meta()}};
  sessions_.emplace(id, std::move(session));
  recent_.push_back(id);
  return answer;
}

DemoSession* DemoService::find(const nlohmann::json& request, Json& answer, bool& error) {
  std::string what;
  std::int64_t id = 0;
  if (!whole(request, "session", 1, INT64_MAX, id, what)) {
    answer = failure(error, what);
    return nullptr;
  }
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    answer = failure(error, "no session " + std::to_string(id) + " (closed, or never created)");
    return nullptr;
  }
  recent_.remove(id);
  recent_.push_back(id);
  return it->second.get();
}

}  // namespace hapair
