// A fault schedule (protocols/run_result.h FaultSpec: crash, restart, pause, partition) turned
// into the timed actions a driver performs, shared by the simulator and the real-process launcher.
//
// Each fault starts at at_s; a pause and a partition also end, duration_s later. Times are whole
// microseconds of the run clock (rounded to nearest). The actions are in time order, and actions
// at the same time keep the schedule's order, a fault's start before its end (the order
// validate_faults, sim/faults.h, checks the schedule in). The schedule must have passed
// validate_faults: every node is a node of the plan.
#pragma once

#include <cstddef>
#include <vector>

#include "protocols/plan.h"
#include "protocols/run_result.h"

namespace hapair {

struct FaultAction {
  enum class Kind { crash, restart, pause, resume, partition, heal };
  TimeUs at_us = 0;
  Kind kind = Kind::crash;
  std::size_t fault = 0;   // its index in the schedule
  NodeId node = kNoNode;
  NodeId peer = kNoNode;   // the other end of a partition
  TimeUs duration_us = 0;  // of a pause or a partition
};

// Which actions to list: `with_ends` false leaves out the ends (resume, heal), for a driver that
// times a fault's end from when its start really happened (the launcher: end_action).
std::vector<FaultAction> fault_actions(const Plan& plan, const std::vector<FaultSpec>& faults, bool with_ends = true);

// The end (resume, heal) of a pause or partition whose start was performed at `started_us`.
FaultAction end_action(const FaultAction& start, TimeUs started_us);

// Inserts `action` into `actions` (in time order from `from` on) after every action at or before
// its time, so it keeps the order of fault_actions.
void insert_in_time_order(std::vector<FaultAction>& actions, std::size_t from, const FaultAction& action);

}  // namespace hapair
