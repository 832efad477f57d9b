#include "run/guarantee.h"

#include <algorithm>

#include "judge/guarantee_rules.h"

namespace hapair {

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::result: return "result";
    case RunStatus::broken: return "broken";
    case RunStatus::harness_failed: return "harness failed";
  }
  return "?";
}

std::vector<std::string> harness_errors(const RunResult& result) {
  std::vector<std::string> out;
  bool stall_seen = false;
  for (const auto& e : result.errors) {
    if (!stall_seen && !result.stall.empty() && e == result.stall) {
      stall_seen = true;
      continue;
    }
    out.push_back(e);
  }
  return out;
}

HaMode judged_approach(const Plan& plan, const std::vector<FaultSpec>& faults) {
  std::vector<FragmentId> hit;
  for (const FaultSpec& f : faults)
    for (const std::string* name : {&f.node, &f.peer}) {
      const NodeId id = plan.node_id(*name);
      if (id != kNoNode && plan.runs_fragment(id) && plan.fragments[plan.nodes[id].fragment].kind == FragmentKind::operators)
        hit.push_back(plan.nodes[id].fragment);
    }
  if (hit.empty())
    for (const PlanFragment& f : plan.fragments)
      if (f.kind == FragmentKind::operators) hit.push_back(f.id);
  if (hit.empty()) return plan.settings().ha;
  HaMode weakest = plan.fragments[hit.front()].ha;
  auto weaken = [&](HaMode m) {
    if (plan.approaches.of(m).promise < plan.approaches.of(weakest).promise) weakest = m;
  };
  for (FragmentId f : hit) {
    weaken(plan.fragments[f].ha);
    // A fragment switched live ran each approach its schedule names (docs/ARCHITECTURE.md).
    for (const PlanSwitch& s : plan.switches)
      if (s.fragment == f) weaken(s.to);
  }
  return weakest;
}

GuaranteeCheck check_guarantee(const Plan& plan, const RunOutcome& outcome, const Reference& reference) {
  const RunResult& result = outcome.result;
  GuaranteeCheck check;
  std::vector<std::string> failures = harness_errors(result);
  if (!outcome.write_error.empty()) failures.push_back("cannot write the result files: " + outcome.write_error);
  if (!failures.empty()) {
    check.status = RunStatus::harness_failed;
    check.reason = failures.front();
    if (failures.size() > 1) check.reason += " (and " + std::to_string(failures.size() - 1) + " more)";
    return check;
  }
  // The verdict on the streams the reference can judge, as `hapair chaos` does.
  const std::vector<StreamId> unjudged = unjudged_streams(plan);
  auto judged = [&](const std::vector<Delivery>& all) {
    std::vector<Delivery> out;
    for (const auto& d : all)
      if (!std::binary_search(unjudged.begin(), unjudged.end(), d.stream)) out.push_back(d);
    return out;
  };
  const SemanticsReport s =
      unjudged.empty() ? outcome.semantics
                       : check_semantics(judged(reference.run.deliveries), judged(result.deliveries),
                                         reference.arbitrary_operators);
  const HaMode approach = judged_approach(plan, result.faults);
  if (result.faults.empty() && !result.completed) {
    check.status = RunStatus::broken;
    check.reason = "a failure-free run must complete under every approach" +
                   (result.errors.empty() ? std::string() : ": " + result.errors.front());
    return check;
  }
  // Upstream backup under the conservative trimming rule restarts from the oldest tuple kept and
  // rebases its output ids (retention/level1_round.h): like on an arbitrary network, it
  // promises that nothing is lost, not that nothing is duplicated.
  const ApproachTraits& traits = plan.approaches.of(approach);
  const bool rebased_ids = rebases_ids(traits, plan.settings());
  const GuaranteeJudgement j =
      judge_guarantee(traits, plan.settings().determinants, !reference.arbitrary_operators.empty() || rebased_ids,
                         s, result.completed, result.errors, beyond_guarantee(plan, result));
  check.status = j.klass == GuaranteeClass::violation ? RunStatus::broken : RunStatus::result;
  check.promises_nothing = traits.promise == Promise{};
  check.beyond = j.klass == GuaranteeClass::beyond;
  check.reason = j.reason;
  check.stopped = check.status == RunStatus::result && !result.completed;
  return check;
}

std::string guarantee_line(const GuaranteeCheck& c) {
  const std::string why = c.reason.empty() ? "" : ": " + c.reason;
  switch (c.status) {
    case RunStatus::result:
      // An approach that promises something and whose output stopped did not give the expected
      // result: the schedule took it beyond what it promises (ha none's stop is expected).
      if (c.beyond && !c.promises_nothing)
        return std::string("outcome: a result beyond the approach's guarantee") + (c.stopped ? " (the output stopped)" : "") + why;
      if (c.stopped) return "outcome: the output stopped at the failure, the expected result" + why;
      return "outcome: a result within the approach's guarantee" + why;
    case RunStatus::broken: return "outcome: GUARANTEE BROKEN" + why;
    case RunStatus::harness_failed: return "outcome: the harness failed" + why;
  }
  return "outcome: ?";
}

int exit_status(const std::vector<GuaranteeCheck>& checks) {
  const bool all_results =
      std::all_of(checks.begin(), checks.end(), [](const GuaranteeCheck& c) { return c.status == RunStatus::result; });
  return all_results ? kExitResults : kExitBroken;
}

}  // namespace hapair
