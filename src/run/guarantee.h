// Whether a run kept the guarantee of its approach, and the exit status every command that runs
// something (run, compare, experiment, chaos) derives from it.
//
// Paper: each approach promises a recovery type for a fail-stop crash (Hwang et al., section 3):
// precise for passive standby, for active standby (with determinants, or on a network without an
// arbitrary operator) and for upstream backup on a deterministic network; gap for amnesia; ha none
// promises nothing. docs/FAULTS.md extends this to the other faults; judge/guarantee_rules.h's
// judge_guarantee() and beyond_guarantee() implement it, and this module applies them to any
// run.
//
// Invariant: a run's outcome is exactly one of three. It gave a result: whatever the verdict, as
// long as it is what its approach promises, or the schedule went beyond the guarantee (a crash of
// a fragment without standby, whose output then stops: that stop is the run's result). Or it
// broke its approach's guarantee (a precise approach not precise, a recovery that never came). Or
// the harness failed (a node process, a driver, the result files). Exit status 0 when every run
// gave a result, 1 when one broke its guarantee or the harness failed, 2 for bad input (found
// before anything runs).
#pragma once

#include <string>
#include <vector>

#include "run/run_once.h"
#include "protocols/plan.h"

namespace hapair {

inline constexpr int kExitResults = 0;   // every run gave a result, whatever the verdict
inline constexpr int kExitBroken = 1;    // a run broke its approach's guarantee, or the harness failed
inline constexpr int kExitBadInput = 2;  // bad options, topology or config: nothing (more) ran

enum class RunStatus { result, broken, harness_failed };
const char* to_string(RunStatus);  // "result", "broken", "harness failed"

struct GuaranteeCheck {
  RunStatus status = RunStatus::result;
  // Why, in a sentence: what the approach promises and what the run gave ("passive standby gave
  // gap (lost 3, ...)"); for a run beyond the guarantee, which fault took it there.
  std::string reason;
  // The run ended because its output stopped (RunResult::stall) and that is its result: a crash
  // of a fragment without standby.
  bool stopped = false;
  // The schedule left a fragment without a node holding its state (judge/guarantee_rules.h beyond_guarantee);
  // `reason` says which fault. Whatever such a run gives is its result.
  bool beyond = false;
  // The run's approach promises nothing (ha none): a stop at a crash is the expected result.
  bool promises_nothing = false;
};

// The errors of a run that are failures of a node, a driver or the harness: every error but the
// line that says its output stopped (RunResult::stall).
std::vector<std::string> harness_errors(const RunResult& result);

// The approach a run is judged by: the mode of the operator fragments its faults hit (those of
// every operator fragment in a failure-free run) and those their live switches name; when they
// differ, the one that promises least (Promise's order: none, amnesia, upstream, active, passive).
HaMode judged_approach(const Plan& plan, const std::vector<FaultSpec>& faults);

// The run's outcome against its approach's guarantee (docs/FAULTS.md, the same rules as
// `hapair chaos`, on the streams the reference can judge). A failure-free run must complete
// under every approach, ha none included. Upstream backup with trimming = conservative rebases
// its output ids after a recovery, so it is held to "nothing lost" (rollback allowed), as on an
// arbitrary network.
GuaranteeCheck check_guarantee(const Plan& plan, const RunOutcome& outcome, const Reference& reference);

// The check on one line, for the end of a run's summary: "outcome: a result within the
// approach's guarantee", "outcome: the output stopped at the failure, the expected result: ..."
// (a crash of a fragment without standby, whose approach promises nothing), "outcome: a result
// beyond the approach's guarantee (the output stopped): ...", "outcome: GUARANTEE BROKEN: ...",
// "outcome: the harness failed: ...".
std::string guarantee_line(const GuaranteeCheck& check);

// kExitResults when every check is a result, else kExitBroken.
int exit_status(const std::vector<GuaranteeCheck>& checks);

}  // namespace hapair
