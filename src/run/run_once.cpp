#include "run/run_once.h"

#include <charconv>
#include <cmath>
#include <set>

#include "config/input_checks.h"
#include "launch/launcher.h"
#include "judge/merge_order.h"
#include "report/results.h"
#include "config/topology_file.h"
#include "sim/faults.h"
#include "sim/simulator.h"
#include "protocols/version.h"

namespace hapair {

Reference compute_reference(const Plan& plan) {
  Reference r;
  r.run = reference_run(plan);
  r.arbitrary_operators = arbitrary_operators(plan);
  return r;
}

RunOutcome run_once(std::shared_ptr<const Plan> plan, const RunRequest& request, const Reference& reference) {
  RunOutcome out;
  out.effective_config = write_topology(plan->topology);
  if (request.driver == "sim") {
    SimOptions options;
    options.faults = request.faults;
    options.log = request.log;
    out.result = run_simulation(plan, options);
  } else {
    LaunchOptions options;
    options.hapair_binary = request.hapair_binary;
    options.faults = request.faults;
    options.progress = request.progress;
    options.live_faults = request.live_faults;
    options.log_dir = request.log_dir;
    options.manual = request.manual;
    options.control_bind = request.control_bind;
    options.control_advertise = request.control_advertise;
    options.hosts = request.hosts;
    options.secure = request.secure;
    options.checkpoint_dir = request.checkpoint_dir;
    if (request.hosts.hosts && options.log_dir.empty()) options.log_dir = request.out_dir;
    out.result = launch_real_run(*plan, options);
  }
  const Judgement judgement = judge_against(*plan, reference, out.result);
  out.semantics = judge_run(judgement, reference);
  out.reference = judgement.reference;
  out.metrics = compute_metrics(out.result, judgement.reference, judgement.input_tuples);
  out.summary = format_summary(out.result, out.semantics, out.metrics);
  const unsigned cores = request.cores != 0 ? request.cores : machine_cores();
  out.load = planned_load(*plan, reference.run, cores);
  out.measured_load_pct = measured_load_pct(out.metrics.overhead.cpu_s, out.result.end_us, cores);
  out.summary += describe_load(out.load) + "; measured " + std::to_string(static_cast<int>(out.measured_load_pct + 0.5)) +
                 " % (every process, over the run)\n";
  if (out.load.over_limit()) out.summary += load_warning(out.load) + "\n";
  if (!request.out_dir.empty())
    out.write_error = write_results(request.out_dir, out.result, out.semantics, out.metrics, out.effective_config,
                                    plan->settings().seed, version_string(), out.reference);
  return out;
}

Judgement judge_against(const Plan& plan, const Reference& reference, const RunResult& result) {
  Judgement j;
  j.input_tuples = reference.run.input_tuples;
  std::set<StreamId> unjudged;
  const ReferenceRun* ref = &reference.run;
  ReferenceRun replayed;
  std::vector<OrderDependence> dependences = order_dependences(plan);
  std::erase_if(dependences, [](const OrderDependence& d) { return d.streams.empty(); });
  // What no recorded order can judge is left out, saying why (never called lost).
  const std::map<StreamId, std::string> unrecorded = unrecorded_interleavings(plan);
  for (const auto& [s, reason] : unrecorded) {
    unjudged.insert(s);
    j.not_judged.push_back(NotJudged{plan.streams[s].name, reason});
  }
  if (!dependences.empty()) {
    const auto composed = compose_merge_orders(plan, result.merge_orders);
    MergeOrders known;
    std::map<StreamId, std::string> why;
    for (const OrderDependence& d : dependences) {
      const ComposedMergeOrder& c = composed.at(d.key);
      if (c.known) {
        known.emplace(d.key, c.runs);
        continue;
      }
      for (StreamId s : d.streams) {
        if (unrecorded.count(s) != 0) continue;  // said already
        unjudged.insert(s);
        why.emplace(s, c.unknown_reason);
      }
    }
    replayed = reference_run(plan, known);
    ref = &replayed;
    j.merge_order_replayed = !known.empty();
    j.unmatched_merge_runs = replayed.unmatched_merge_runs;
    for (const auto& [s, reason] : why) j.not_judged.push_back(NotJudged{plan.streams[s].name, reason});
  }
  auto judged = [&](const std::vector<Delivery>& all) {
    if (unjudged.empty()) return all;
    std::vector<Delivery> out;
    out.reserve(all.size());
    for (const Delivery& d : all)
      if (unjudged.count(d.stream) == 0) out.push_back(d);
    return out;
  };
  j.reference = judged(ref->deliveries);
  j.delivered = judged(result.deliveries);
  return j;
}

SemanticsReport judge_run(const Judgement& judgement, const Reference& reference) {
  SemanticsReport r = check_semantics(judgement.reference, judgement.delivered, reference.arbitrary_operators);
  r.not_judged = judgement.not_judged;
  r.merge_order_replayed = judgement.merge_order_replayed;
  if (judgement.merge_order_replayed) {
    r.note += "; the reference replays the merge order the run's Unions chose";
    if (judgement.unmatched_merge_runs > 0)
      r.note += " (" + std::to_string(judgement.unmatched_merge_runs) +
                " recorded runs name inputs the reference does not have)";
  }
  return r;
}

namespace {

std::optional<double> parse_seconds(const std::string& s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<FaultSpec> parse_crash_fault(const std::string& text, std::string& error) {
  const auto at = text.find('@');
  if (at == std::string::npos || at == 0) {
    error = "'" + text + "' is not NODE@SECONDS (e.g. aggregate@3)";
    return std::nullopt;
  }
  auto seconds = parse_seconds(text.substr(at + 1));
  if (!seconds) {
    error = "'" + text + "': '" + text.substr(at + 1) + "' is not a number of seconds";
    return std::nullopt;
  }
  FaultSpec f;
  f.kind = FaultKind::crash;
  f.node = text.substr(0, at);
  f.at_s = *seconds;
  return f;
}

std::optional<FaultSpec> parse_pause_fault(const std::string& text, std::string& error) {
  const auto plus = text.rfind('+');
  if (plus == std::string::npos) {
    error = "'" + text + "' is not NODE@SECONDS+DURATION (e.g. filter@2+0.5)";
    return std::nullopt;
  }
  auto f = parse_crash_fault(text.substr(0, plus), error);
  if (!f) return std::nullopt;
  auto duration = parse_seconds(text.substr(plus + 1));
  if (!duration || *duration <= 0) {
    error = "'" + text + "': the pause duration must be a positive number of seconds";
    return std::nullopt;
  }
  f->kind = FaultKind::pause;
  f->duration_s = *duration;
  return f;
}

std::optional<FaultSpec> parse_restart_fault(const std::string& text, std::string& error) {
  auto f = parse_crash_fault(text, error);
  if (f) f->kind = FaultKind::restart;
  return f;
}

std::optional<FaultSpec> parse_partition_fault(const std::string& text, std::string& error) {
  const auto dash = text.find('-');
  const auto at = text.find('@');
  if (dash == std::string::npos || at == std::string::npos || dash > at || dash == 0 || dash + 1 == at) {
    error = "'" + text + "' is not A-B@SECONDS+DURATION (e.g. aggregate-aggregate.backup@2+0.5)";
    return std::nullopt;
  }
  auto f = parse_pause_fault(text.substr(dash + 1), error);
  if (!f) return std::nullopt;
  f->kind = FaultKind::partition;
  f->peer = f->node;
  f->node = text.substr(0, dash);
  return f;
}

std::vector<std::string> validate_run_faults(const Plan& plan, const std::vector<FaultSpec>& faults) {
  // Names and times here, with the valid names and the run's duration; the schedule itself (a
  // crash of a crashed node, a restart of a running one, durations, peers) in validate_faults.
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const std::string which = "fault " + std::to_string(i + 1) + " (" + describe(faults[i]) + "): ";
    for (const auto& p : fault_node_problems(plan, faults[i])) problems.push_back(which + p);
    if (auto p = fault_time_problem(plan, faults[i].at_s)) problems.push_back(which + *p);
  }
  FaultChecks left_to_us;
  left_to_us.node_names = false;
  left_to_us.start_times = false;
  for (auto& p : validate_faults(plan, faults, left_to_us)) problems.push_back(std::move(p));
  return problems;
}

}  // namespace hapair
