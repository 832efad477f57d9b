// One simulated run of a topology with faults, judged as `hapair run` judges it: its plan, the
// failure-free reference, the outcome and whether it kept its approach's guarantee.
#pragma once

#include <memory>
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

}  // namespace hapair::test
