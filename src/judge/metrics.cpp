#include "judge/metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>

#include "judge/checker.h"
#include "protocols/check.h"
#include "protocols/trace_text.h"

namespace hapair {

namespace {

constexpr std::size_t kKindCount = std::variant_size_v<Message>;

// Whether each message kind is control plane, asked of is_control_message() itself so that the
// split between HA overhead and launcher traffic is defined in one place.
template <std::size_t... I>
std::array<bool, kKindCount> control_flags(std::index_sequence<I...>) {
  return {is_control_message(Message(std::in_place_index<I>))...};
}

TimeUs latency_us(const Delivery& d) { return d.at_us - d.tuple.ts_us; }

double ms_between(TimeUs from, TimeUs to) { return ms_from_us(to - from); }

// The first event of `kind` at or after `from`; null when none.
const TraceEvent* first_event_after(const std::vector<TraceEvent>& events, TraceKind kind, TimeUs from) {
  const TraceEvent* best = nullptr;
  for (const TraceEvent& e : events) {
    if (e.kind != kind || e.at_us < from) continue;
    if (best == nullptr || e.at_us < best->at_us) best = &e;
  }
  return best;
}

std::uint64_t counter_value(const Metrics& counters, const std::string& name) {
  auto it = counters.find(name);
  return it == counters.end() || it->second < 0 ? 0 : static_cast<std::uint64_t>(it->second);
}


std::vector<UnprotectedSpan> measure_unprotected(const RunResult& result) {
  std::vector<UnprotectedSpan> spans;
  if (!result.plan) return spans;
  const Plan& plan = *result.plan;
  TimeUs last_delivery_us = 0;
  for (const Delivery& d : result.deliveries) last_delivery_us = std::max(last_delivery_us, d.at_us);
  std::map<FragmentId, std::size_t> open;  // fragment -> its span still running
  for (const TraceEvent& e : result.events) {
    if (e.node >= plan.nodes.size() ||
        (e.kind != TraceKind::standby_lost && e.kind != TraceKind::pair_restored &&
         e.kind != TraceKind::held_output_released))
      continue;
    const FragmentId f = plan.nodes[e.node].fragment;
    auto it = open.find(f);
    if (e.kind == TraceKind::held_output_released) {
      if (it != open.end()) spans[it->second].released_tuples += e.get(TraceKey::count).value_or(0);
      continue;
    }
    if (e.kind == TraceKind::pair_restored) {
      if (it == open.end()) continue;
      UnprotectedSpan& s = spans[it->second];
      s.unprotected_ms = ms_between(s.lost_us, e.at_us);
      s.restored = true;
      open.erase(it);
      continue;
    }
    if (it != open.end()) continue;  // still unprotected since an earlier loss
    UnprotectedSpan s;
    s.fragment = plan.fragments[f].name;
    s.primary = plan.nodes[e.node].name;
    s.standby = trace_node_name(&plan, e.node_of(TraceKey::standby));
    s.lost_us = e.at_us;
    s.silent_ms = ms_from_us(e.get(TraceKey::silent_us).value_or(0));
    open[f] = spans.size();
    spans.push_back(s);
  }
  for (const auto& [f, i] : open) {
    UnprotectedSpan& s = spans[i];
    const TimeUs until = last_delivery_us > s.lost_us ? last_delivery_us : std::max(result.end_us, s.lost_us);
    s.unprotected_ms = ms_between(s.lost_us, until);
  }
  return spans;
}

// `next_failure_us`: the instant of the next failure after this one (kNever when none);
// `next_fault_us`: of the next fault of any kind, a restart included (its rejoin's replay is its own).
RecoveryMetrics measure_recovery(const RunResult& result, const FaultSpec& fault, const std::vector<Delivery>& reference,
                                 TimeUs next_failure_us, TimeUs next_fault_us) {
  RecoveryMetrics m;
  m.node = fault.node;
  m.kind = fault.kind;
  m.at_s = fault.at_s;
  m.failure_us = fault_instant_us(result, fault, &m.failure_from_event);
  const TimeUs f = m.failure_us;

  // The failed node's fragment, and the streams it produces: whose events belong to this failure.
  const Plan* plan = result.plan.get();
  const NodeId node_id = plan ? plan->node_id(fault.node) : kNoNode;
  const FragmentId fragment = node_id == kNoNode ? kNoFragment : plan->nodes[node_id].fragment;
  auto in_fragment = [&](const TraceEvent& e) {
    if (node_id == kNoNode) return true;          // no plan: nothing to tell them apart by
    if (fragment == kNoFragment) return e.node == node_id;  // the coordinator: its own events only
    return e.node != kNoNode && e.node < plan->nodes.size() && plan->nodes[e.node].fragment == fragment;
  };
  auto of_this_failure = [&](const TraceEvent& e) {
    if (e.at_us >= std::min(next_failure_us, next_fault_us)) return false;
    if (in_fragment(e)) return true;
    const StreamId s = e.stream();
    return s != kNoStream && plan->streams[s].producer == fragment;
  };

  // Output that the failed node produced before it died can still arrive after F; it is not the
  // recovery's work. So recovery ends at the first new output delivered once the failure was
  // detected (at F itself when nothing detects failures, e.g. ha=none).
  TimeUs recovering_from = f;
  const TraceEvent* detection = nullptr;
  const TraceEvent* takeover = nullptr;
  for (const TraceEvent& e : result.events) {
    if (e.at_us < f) continue;
    if (e.kind == TraceKind::detection && node_id != kNoNode && e.node_of(TraceKey::failed) == node_id &&
        (detection == nullptr || e.at_us < detection->at_us))
      detection = &e;
    if (e.kind == TraceKind::takeover && in_fragment(e) && (takeover == nullptr || e.at_us < takeover->at_us)) takeover = &e;
  }
  if (detection != nullptr) {
    m.detection_ms = ms_between(f, detection->at_us);
    m.detector = detector_of(*detection);
    m.detected_by = plan && detection->node < plan->nodes.size() ? plan->nodes[detection->node].name
                                                                 : std::to_string(detection->node);
    recovering_from = detection->at_us;
  }
  if (takeover != nullptr) m.takeover_ms = ms_between(f, takeover->at_us);
  // Replays run per input stream (each consumer traces its own start and end), so the replay
  // phase lasts from the first start to the last end.
  const TraceEvent* start = nullptr;
  for (const TraceEvent& e : result.events)
    if (e.kind == TraceKind::replay_start && e.at_us >= f && of_this_failure(e) && (start == nullptr || e.at_us < start->at_us))
      start = &e;
  if (start != nullptr) {
    const TraceEvent* last_end = nullptr;
    for (const TraceEvent& e : result.events) {
      if (e.kind == TraceKind::replay_end && e.at_us >= start->at_us && of_this_failure(e) &&
          (last_end == nullptr || e.at_us > last_end->at_us)) {
        last_end = &e;
      }
    }
    if (last_end != nullptr) m.replay_ms = ms_between(start->at_us, last_end->at_us);
  }
  // Global checkpoints: the coordinator's rollback decision for this failure, then the last
  // fragment of that rollback that answered Restored (before the next rollback or fault).
  const TraceEvent* rollback = nullptr;
  for (const TraceEvent& e : result.events)
    if (e.kind == TraceKind::checkpoint_rollback && e.at_us >= f && node_id != kNoNode &&
        e.node_of(TraceKey::failed) == node_id && e.at_us < std::min(next_failure_us, next_fault_us)) {
      rollback = &e;
      break;
    }
  if (rollback != nullptr) {
    m.rollback_ms = ms_between(f, rollback->at_us);
    // Installed at the fragments: the replacement's takeover, each in-place rollback's restore.
    const TraceEvent* restored = nullptr;
    for (const TraceEvent& e : result.events) {
      if (e.at_us < rollback->at_us || &e == rollback || e.node == rollback->node) continue;
      if (e.at_us >= std::min(next_failure_us, next_fault_us) || e.kind == TraceKind::checkpoint_rollback) break;
      if (e.kind == TraceKind::checkpoint_restore || e.kind == TraceKind::takeover) restored = &e;
    }
    if (restored != nullptr) m.state_restored_ms = ms_between(f, restored->at_us);
  }
  if (const TraceEvent* rejoin = first_event_after(result.events, TraceKind::rejoin_requested, f))
    if (const TraceEvent* restored = first_event_after(result.events, TraceKind::pair_restored, rejoin->at_us))
      m.restore_ms = ms_between(rejoin->at_us, restored->at_us);

  const FailureSplit split = split_at_failure(reference, result.deliveries, f);
  m.reference_delivered_before = split.reference_delivered_before;
  m.new_after = split.new_deliveries.size();

  std::vector<TimeUs> before;
  for (const Delivery& d : result.deliveries) {
    if (d.at_us < f) before.push_back(latency_us(d));
  }
  std::optional<TimeUs> normal_us;
  if (!before.empty()) {
    std::sort(before.begin(), before.end());
    normal_us = nearest_rank_percentile(before, 99.0);
    m.prefailure_p99_ms = ms_from_us(*normal_us);
  }

  std::vector<std::size_t> recovered_new;
  for (std::size_t i : split.new_deliveries)
    if (result.deliveries[i].at_us >= recovering_from) recovered_new.push_back(i);
  if (recovered_new.empty()) return m;
  m.recovered = true;
  m.recovery_ms = ms_between(f, result.deliveries[recovered_new.front()].at_us);
  if (normal_us) {
    for (std::size_t i : recovered_new) {
      if (latency_us(result.deliveries[i]) <= *normal_us) {
        m.catchup_ms = ms_between(f, result.deliveries[i].at_us);
        m.catchup_reached_normal = true;
        break;
      }
    }
  }
  if (!m.catchup_reached_normal) {
    TimeUs last = result.deliveries.front().at_us;
    for (const Delivery& d : result.deliveries) last = std::max(last, d.at_us);
    m.catchup_ms = ms_between(f, last);
  }
  return m;
}

}  // namespace

TimeUs nearest_rank_percentile(const std::vector<TimeUs>& sorted, double p) {
  HAPAIR_CHECK_MSG(!sorted.empty() && p > 0.0 && p <= 100.0, "n=" << sorted.size() << " p=" << p);
  const double n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

LatencySummary latency_summary(const std::vector<Delivery>& deliveries) {
  LatencySummary s;
  if (deliveries.empty()) return s;
  std::vector<TimeUs> latencies;
  latencies.reserve(deliveries.size());
  for (const Delivery& d : deliveries) latencies.push_back(latency_us(d));
  std::sort(latencies.begin(), latencies.end());
  s.count = latencies.size();
  s.p50_ms = ms_from_us(nearest_rank_percentile(latencies, 50.0));
  s.p99_ms = ms_from_us(nearest_rank_percentile(latencies, 99.0));
  s.max_ms = ms_from_us(latencies.back());
  return s;
}

std::vector<std::string> data_plane_kind_names() {
  static_assert(std::size(kMessageKindNames) == kKindCount);
  const std::array<bool, kKindCount> control = control_flags(std::make_index_sequence<kKindCount>{});
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kKindCount; ++i) {
    if (!control[i]) names.emplace_back(kMessageKindNames[i]);
  }
  return names;
}

const FaultSpec* measured_fault(const RunResult& result) {
  for (const FaultSpec& f : result.faults) {
    if (f.kind != FaultKind::restart) return &f;
  }
  return nullptr;
}

RunMetrics compute_metrics(const RunResult& result, const std::vector<Delivery>& reference,
                           std::uint64_t reference_input_tuples) {
  RunMetrics m;

  for (const auto& [node, counters] : result.counters) {
    if (result.plan) {
      const NodeId id = result.plan->node_id(node);
      if (id == kNoNode || !result.plan->runs_fragment(id)) continue;  // a coordinator emits no input
      const FragmentId f = result.plan->nodes.at(id).fragment;
      if (result.plan->fragments.at(f).kind != FragmentKind::source) continue;
    }
    if (counters.count("tuples_emitted") != 0) {
      m.tuples_in += counter_value(counters, "tuples_emitted");
      m.tuples_in_from_counters = true;
    }
  }
  if (!m.tuples_in_from_counters) m.tuples_in = reference_input_tuples;

  m.tuples_out = result.deliveries.size();
  if (!result.deliveries.empty()) {
    auto [first, last] = std::minmax_element(result.deliveries.begin(), result.deliveries.end(),
                                             [](const Delivery& a, const Delivery& b) { return a.at_us < b.at_us; });
    const TimeUs span_us = last->at_us - first->at_us;
    if (span_us > 0) m.throughput_tps = static_cast<double>(m.tuples_out) / (static_cast<double>(span_us) / 1e6);
  }
  m.latency = latency_summary(result.deliveries);

  std::vector<TimeUs> failure_instants, fault_instants;
  for (const FaultSpec& f : result.faults) {
    fault_instants.push_back(fault_instant_us(result, f));
    if (f.kind != FaultKind::restart) failure_instants.push_back(fault_instants.back());
  }
  auto next_after = [](const std::vector<TimeUs>& instants, TimeUs at) {
    TimeUs next = kNever;
    for (TimeUs other : instants)
      if (other > at) next = std::min(next, other);
    return next;
  };
  for (const FaultSpec& f : result.faults) {
    if (f.kind == FaultKind::restart) continue;
    const TimeUs at = fault_instant_us(result, f);
    m.recoveries.push_back(measure_recovery(result, f, reference, next_after(failure_instants, at), next_after(fault_instants, at)));
  }
  if (!m.recoveries.empty()) m.recovery = m.recoveries.front();
  m.disturbance = find_disturbances(result);

  for (const std::string& kind : data_plane_kind_names()) {
    std::uint64_t bytes = 0, messages = 0;
    for (const auto& [node, counters] : result.counters) {
      bytes += counter_value(counters, "bytes_sent." + kind);
      messages += counter_value(counters, "messages_sent." + kind);
    }
    m.overhead.bytes_by_kind[kind] = bytes;
    m.overhead.messages_by_kind[kind] = messages;
    m.overhead.bytes_total += bytes;
    m.overhead.messages_total += messages;
  }
  std::uint64_t cpu_us = 0;
  for (const auto& [node, counters] : result.counters) cpu_us += counter_value(counters, "cpu_us");
  m.overhead.cpu_s = static_cast<double>(cpu_us) / 1e6;

  for (const MetricSample& s : result.samples) {
    if (s.name != "output_queue_tuples") continue;
    auto [it, inserted] = m.output_queue_tuples_max.emplace(s.node, s.value);
    if (!inserted) it->second = std::max(it->second, s.value);
  }
  m.unprotected = measure_unprotected(result);
  return m;
}

}  // namespace hapair
