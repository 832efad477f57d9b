// One simulated run of a topology with faults, judged as `hapair run` judges it: its plan, the
// failure-free reference, the outcome and whether it kept its approach's guarantee.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "run/guarantee.h"
#include "run/run_once.h"

namespace hapair::test {

struct JudgedRun {
  std::shared_ptr<const Plan> plan;
  Reference reference;
  RunOutcome outcome;
  GuaranteeCheck check;
};

inline JudgedRun judged_sim_run(const Topology& t, std::vector<FaultSpec> faults = {}) {
  JudgedRun r;
  r.plan = std::make_shared<const Plan>(make_plan(t));
  r.reference = compute_reference(*r.plan);
  RunRequest request;
  request.driver = "sim";
  request.faults = std::move(faults);
  r.outcome = run_once(r.plan, request, r.reference);
  r.check = check_guarantee(*r.plan, r.outcome, r.reference);
  return r;
}

// The trace events of one kind, of one node (by name) or of every node.
// A node's name, or "?" for an id the plan does not have.
inline std::string node_name(const JudgedRun& r, NodeId n) { return n < r.plan->nodes.size() ? r.plan->nodes[n].name : "?"; }

inline std::vector<const TraceEvent*> events_of(const JudgedRun& r, TraceKind kind, const std::string& node = "") {
  std::vector<const TraceEvent*> out;
  for (const TraceEvent& e : r.outcome.result.events)
    if (e.kind == kind && (node.empty() || (e.node < r.plan->nodes.size() && r.plan->nodes[e.node].name == node)))
      out.push_back(&e);
  return out;
}

// A node's counter at the end of the run (0 when it never counted it).
inline std::int64_t counter(const JudgedRun& r, const std::string& node, const std::string& name) {
  auto n = r.outcome.result.counters.find(node);
  if (n == r.outcome.result.counters.end()) return 0;
  auto c = n->second.find(name);
  return c == n->second.end() ? 0 : c->second;
}

// Completed, judged precise (nothing lost, duplicated or different), within the guarantee.
inline void check_precise(const JudgedRun& r) {
  INFO(r.outcome.summary);
  CHECK(r.outcome.result.completed);
  CHECK(r.outcome.semantics.verdict == "precise");
  CHECK(r.outcome.semantics.lost == 0);
  CHECK(r.outcome.semantics.duplicates == 0);
  CHECK(r.outcome.semantics.differing == 0);
  CHECK(r.check.status == RunStatus::result);
  CHECK_FALSE(r.check.beyond);
}

}  // namespace hapair::test
