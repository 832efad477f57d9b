// Checking a fault schedule (crash, pause, partition, restart; protocols/run_result.h) against a
// plan before a simulated run.
//
// Paper: the failure model is a fail-stop server crash (Hwang et al., section 2); DESIGN.md
// section 6 adds pauses (a stopped process that comes back), partitions and restarts. A fault
// schedule comes from a user's command line or experiment config, so its mistakes are reported,
// not asserted.
//
// Invariant: validate_faults returns every problem at once, each naming the fault (its position
// and a short description) and what is wrong; an empty result means the simulator can inject the
// schedule as written.
#pragma once

#include <string>
#include <vector>

#include "protocols/plan.h"
#include "protocols/run_result.h"

namespace hapair {

std::vector<std::string> validate_faults(const Plan& plan, const std::vector<FaultSpec>& faults);

// "crash aggregate at 1.5 s", "partition filter<->aggregate at 1 s for 0.5 s": for messages and logs.
std::string describe(const FaultSpec& fault);

}  // namespace hapair
