#include "judge/disturbance.h"

#include "protocols/trace_text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace hapair {

namespace {

std::string node_name(const Plan* plan, NodeId id) { return trace_node_name(plan, id); }

std::string seconds_text(TimeUs at_us) {
  return fmt::format("{:.2f} s", static_cast<double>(at_us) / 1e6);
}

// Event indices in time order (ties keep their recorded order).
std::vector<std::size_t> time_order(const std::vector<TraceEvent>& events) {
  std::vector<std::size_t> order(events.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return events[a].at_us < events[b].at_us; });
  return order;
}

bool is_failure(const FaultSpec& f) { return f.kind != FaultKind::restart; }

}  // namespace

std::string detector_of(const TraceEvent& e) {
  const auto d = e.enum_of<Detector>(TraceKey::detector);
  return to_string(d.value_or(Detector::heartbeat));
}

bool failure_event_names(const TraceEvent& e, NodeId node_id) {
  return e.kind == TraceKind::failure && node_id != kNoNode && e.node == node_id;
}

TimeUs fault_instant_us(const RunResult& result, const FaultSpec& fault, bool* from_event) {
  const NodeId id = result.plan ? result.plan->node_id(fault.node) : kNoNode;
  const TimeUs configured = static_cast<TimeUs>(std::llround(fault.at_s * 1e6));
  // The injection is recorded at or after the configured time (1 ms of slack for rounding), with
  // its kind; an earlier or later fault of another kind on the same node is not this one.
  std::optional<TimeUs> seen;
  for (const TraceEvent& e : result.events) {
    if (!failure_event_names(e, id) || e.at_us + 1000 < configured) continue;
    const auto kind = e.enum_of<FaultKind>(TraceKey::fault);
    if (kind && *kind != fault.kind) continue;
    if (!seen || e.at_us < *seen) seen = e.at_us;
  }
  if (from_event != nullptr) *from_event = seen.has_value();
  return seen ? *seen : configured;
}

const char* to_string(DisturbanceKind k) {
  switch (k) {
    case DisturbanceKind::takeover_before_failure: return "takeover_before_failure";
    case DisturbanceKind::detection_before_failure: return "detection_before_failure";
    case DisturbanceKind::false_detection: return "false_detection";
    case DisturbanceKind::false_takeover: return "false_takeover";
    case DisturbanceKind::victim_out_of_role: return "victim_out_of_role";
  }
  return "?";
}

std::size_t DisturbanceReport::count(DisturbanceKind kind) const {
  return static_cast<std::size_t>(std::count_if(disturbances.begin(), disturbances.end(),
                                                [&](const Disturbance& d) { return d.kind == kind; }));
}

DisturbanceReport find_disturbances(const RunResult& result) {
  DisturbanceReport report;
  const Plan* plan = result.plan.get();
  const std::vector<std::size_t> order = time_order(result.events);

  // When each targeted node's first fault came (a partition targets both of its ends).
  std::map<std::string, TimeUs> target_us;
  auto target = [&](const std::string& node, TimeUs at) {
    auto [it, inserted] = target_us.emplace(node, at);
    if (!inserted) it->second = std::min(it->second, at);
  };
  for (const FaultSpec& f : result.faults) {
    if (!is_failure(f)) continue;
    const TimeUs at = fault_instant_us(result, f);
    report.first_failure_us = std::min(report.first_failure_us, at);
    target(f.node, at);
    if (!f.peer.empty()) target(f.peer, at);
  }
  auto targeted_by = [&](const std::string& node, TimeUs at) {
    auto it = target_us.find(node);
    return it != target_us.end() && it->second <= at;
  };
  auto fragment_of = [&](const std::string& node) {
    const NodeId id = plan ? plan->node_id(node) : kNoNode;
    return id == kNoNode ? kNoFragment : plan->nodes[id].fragment;
  };
  // Once every sink has seen the end of its input the run is over and the launcher stops the
  // processes; a connection closing then is the shutdown, not a failure.
  TimeUs output_complete_us = kNever;
  if (plan != nullptr) {
    std::set<NodeId> ended;
    TimeUs last = 0;
    for (const TraceEvent& e : result.events)
      if (e.kind == TraceKind::end_of_output && e.node != kNoNode) {
        ended.insert(e.node);
        last = std::max(last, e.at_us);
      }
    std::size_t sinks = 0;
    for (const PlanFragment& f : plan->fragments) sinks += f.kind == FragmentKind::sink;
    if (sinks > 0 && ended.size() >= sinks) output_complete_us = last;
  }
  auto add = [&](DisturbanceKind kind, TimeUs at, std::string node, std::string detail) {
    if (at > output_complete_us) return;
    report.disturbances.push_back(Disturbance{kind, at, std::move(node), std::move(detail)});
  };

  for (std::size_t i : order) {
    const TraceEvent& e = result.events[i];
    const std::string by = node_name(plan, e.node);
    if (e.kind == TraceKind::detection || e.kind == TraceKind::standby_suspected) {
      DetectionSeen d;
      d.at_us = e.at_us;
      d.by = by;
      d.of_standby = e.kind == TraceKind::standby_suspected;
      d.failed = trace_node_name(plan, e.node_of(d.of_standby ? TraceKey::standby : TraceKey::failed));
      d.detector = detector_of(e);
      const std::string what = d.failed + " by " + by + " at " + seconds_text(e.at_us) + " via " + d.detector;
      if (e.at_us < report.first_failure_us) add(DisturbanceKind::detection_before_failure, e.at_us, by, what);
      // A node that was paused or cut off itself heard nothing meanwhile: its detections after
      // that are the fault's doing too.
      else if (!targeted_by(d.failed, e.at_us) && !targeted_by(by, e.at_us))
        add(DisturbanceKind::false_detection, e.at_us, by, what);
      report.detections.push_back(std::move(d));
    } else if (e.kind == TraceKind::takeover) {
      const std::string what = by + " at " + seconds_text(e.at_us);
      if (e.at_us < report.first_failure_us) {
        add(DisturbanceKind::takeover_before_failure, e.at_us, by, what);
      } else {
        // A takeover answers a fault on its own fragment (its primary crashed, paused or was cut
        // off); one where no fault had touched any node of the fragment is a false one.
        const FragmentId f = fragment_of(by);
        bool touched = f == kNoFragment;  // without a plan, nothing to judge by
        for (const auto& [node, at] : target_us)
          if (fragment_of(node) == f && at <= e.at_us) touched = true;
        if (!touched) add(DisturbanceKind::false_takeover, e.at_us, by, what);
      }
    }
  }

  // Each crashed or paused node's role when its fault came, from the plan and the takeovers,
  // fencings and re-formed pairs before it.
  if (plan != nullptr) {
    for (const FaultSpec& f : result.faults) {
      if (f.kind != FaultKind::crash && f.kind != FaultKind::pause) continue;
      const NodeId victim = plan->node_id(f.node);
      // A node of no fragment (the coordinator of global checkpoints) has no planned role in a pair.
      if (victim == kNoNode || !plan->runs_fragment(victim)) continue;
      const FragmentId fragment = plan->nodes[victim].fragment;
      const TimeUs at = fault_instant_us(result, f);
      // After an earlier fault on the same fragment the roles are whatever that fault made them.
      bool earlier_fault = false;
      for (const auto& [node, node_at] : target_us)
        if (node_at < at && fragment_of(node) == fragment) earlier_fault = true;
      if (earlier_fault) continue;
      NodeId acting = plan->fragments[fragment].primary;
      bool victim_fenced = false;
      std::string took_over, fenced_at;  // the last takeover in the fragment; the victim's fencing
      for (std::size_t i : order) {
        const TraceEvent& e = result.events[i];
        if (e.at_us >= at) break;
        if (e.node == kNoNode || e.node >= plan->nodes.size() || plan->nodes[e.node].fragment != fragment) continue;
        if (e.kind == TraceKind::takeover || e.kind == TraceKind::pair_restored) {
          acting = e.node;
          if (e.node == victim) victim_fenced = false;
          took_over = node_name(plan, e.node) +
                      (e.kind == TraceKind::takeover ? " took over at " : " re-formed the pair at ") + seconds_text(e.at_us);
        } else if (e.kind == TraceKind::fenced) {
          if (acting == e.node) acting = kNoNode;
          if (e.node == victim) {
            victim_fenced = true;
            fenced_at = "fenced at " + seconds_text(e.at_us);
          }
        } else if (e.kind == TraceKind::rejoined && e.node == victim) {
          victim_fenced = false;
        }
      }
      const bool planned_primary = !plan->nodes[victim].standby;
      const char* role = victim_fenced ? "fenced" : acting == victim ? "the primary" : "the standby";
      if ((planned_primary && acting == victim) || (!planned_primary && acting != victim && !victim_fenced)) continue;
      const std::string why = victim_fenced ? fenced_at + (took_over.empty() ? "" : " (" + took_over + ")") : took_over;
      add(DisturbanceKind::victim_out_of_role, at, f.node,
          f.node + " was " + role + " (planned: " + (planned_primary ? "primary" : "standby") + ") at its " +
              to_string(f.kind) + " at " + seconds_text(at) + (why.empty() ? "" : ": " + why));
    }
  }
  std::stable_sort(report.disturbances.begin(), report.disturbances.end(),
                   [](const Disturbance& a, const Disturbance& b) { return a.at_us < b.at_us; });
  return report;
}

std::string describe_disturbances(const DisturbanceReport& report, std::size_t examples_max) {
  const bool failure_free = report.first_failure_us == kNever;
  struct Heading {
    DisturbanceKind kind;
    const char* one;
    const char* many;
  };
  const Heading headings[] = {
      {DisturbanceKind::victim_out_of_role, "victim out of its planned role", "victims out of their planned roles"},
      {DisturbanceKind::takeover_before_failure,
       failure_free ? "takeover in a failure-free run" : "takeover before the failure",
       failure_free ? "takeovers in a failure-free run" : "takeovers before the failure"},
      {DisturbanceKind::detection_before_failure,
       failure_free ? "detection in a failure-free run" : "detection before the failure",
       failure_free ? "detections in a failure-free run" : "detections before the failure"},
      {DisturbanceKind::false_detection, "false detection (a node no fault touched)",
       "false detections (nodes no fault touched)"},
      {DisturbanceKind::false_takeover, "takeover of a fragment no fault touched",
       "takeovers of fragments no fault touched"},
  };
  std::string out;
  for (const Heading& h : headings) {
    std::vector<const Disturbance*> of_kind;
    for (const Disturbance& d : report.disturbances)
      if (d.kind == h.kind) of_kind.push_back(&d);
    if (of_kind.empty()) continue;
    if (!out.empty()) out += "; ";
    if (h.kind == DisturbanceKind::victim_out_of_role) {
      for (std::size_t i = 0; i < of_kind.size(); ++i) out += (i ? "; " : "") + of_kind[i]->detail;
      continue;
    }
    out += std::to_string(of_kind.size()) + " " + (of_kind.size() == 1 ? h.one : h.many) + " (";
    for (std::size_t i = 0; i < of_kind.size() && i < examples_max; ++i) out += (i ? ", " : "") + of_kind[i]->detail;
    if (of_kind.size() > examples_max) out += ", ...";
    out += ")";
  }
  return out;
}

}  // namespace hapair
