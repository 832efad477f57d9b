// Checking a fault schedule (crash, pause, partition, restart; protocols/run_result.h) against a
// plan before a simulated run.
//
// Paper: the failure model is a fail-stop server crash (Hwang et al., section 2); docs/FAULTS.md
// adds pauses (a stopped process that comes back), partitions and restarts. A fault
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

// What validate_faults checks besides the schedule itself. The harness turns the first two off and
// checks them itself (config/input_checks.h), because it knows more: the valid names with the
// close match of a misspelt one, and the run's duration a fault has to fall into.
struct FaultChecks {
  bool node_names = true;  // every node and peer is a node of the plan
  bool start_times = true;  // every start time is a finite number >= 0
};

std::vector<std::string> validate_faults(const Plan& plan, const std::vector<FaultSpec>& faults,
                                         const FaultChecks& checks = {});

// The faults as the options of `hapair run` (" --fail aggregate@2 --pause filter@1+0.5 ..."),
// every time written so that it reads back as exactly the same number; empty for no faults.
std::string fault_options(const std::vector<FaultSpec>& faults);

// The shortest text that reads back as exactly `v` (std::to_chars), for commands that repeat a run.
std::string exact_number(double v);

// "crash aggregate at 1.5 s", "partition filter<->aggregate at 1 s for 0.5 s": for messages and logs.
std::string describe(const FaultSpec& fault);

}  // namespace hapair
