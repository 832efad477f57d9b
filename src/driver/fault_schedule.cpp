#include "driver/fault_schedule.h"

#include <algorithm>
#include <cmath>

#include "protocols/check.h"

namespace hapair {
namespace {

TimeUs us_from_s(double s) { return static_cast<TimeUs>(std::llround(s * 1e6)); }

bool earlier(const FaultAction& a, const FaultAction& b) { return a.at_us < b.at_us; }

}  // namespace

std::vector<FaultAction> fault_actions(const Plan& plan, const std::vector<FaultSpec>& faults, bool with_ends) {
  std::vector<FaultAction> actions;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
    FaultAction a;
    a.at_us = us_from_s(f.at_s);
    a.fault = i;
    a.node = plan.node_id(f.node);
    HAPAIR_CHECK_MSG(a.node != kNoNode, "fault of unknown node '" << f.node << "'");
    switch (f.kind) {
      case FaultKind::crash: a.kind = FaultAction::Kind::crash; break;
      case FaultKind::restart: a.kind = FaultAction::Kind::restart; break;
      case FaultKind::pause: a.kind = FaultAction::Kind::pause; break;
      case FaultKind::partition:
        a.kind = FaultAction::Kind::partition;
        a.peer = plan.node_id(f.peer);
        HAPAIR_CHECK_MSG(a.peer != kNoNode, "partition with unknown node '" << f.peer << "'");
        break;
    }
    const bool ends = a.kind == FaultAction::Kind::pause || a.kind == FaultAction::Kind::partition;
    if (ends) a.duration_us = us_from_s(f.duration_s);
    actions.push_back(a);
    if (ends && with_ends) {
      FaultAction end = end_action(a, a.at_us);
      // From the schedule's own numbers, so the end is where at_s + duration_s rounds to.
      end.at_us = us_from_s(f.at_s + f.duration_s);
      actions.push_back(end);
    }
  }
  std::stable_sort(actions.begin(), actions.end(), earlier);
  return actions;
}

FaultAction end_action(const FaultAction& start, TimeUs started_us) {
  HAPAIR_CHECK(start.kind == FaultAction::Kind::pause || start.kind == FaultAction::Kind::partition);
  FaultAction end = start;
  end.kind = start.kind == FaultAction::Kind::pause ? FaultAction::Kind::resume : FaultAction::Kind::heal;
  end.at_us = started_us + start.duration_us;
  return end;
}

void insert_in_time_order(std::vector<FaultAction>& actions, std::size_t from, const FaultAction& action) {
  HAPAIR_CHECK(from <= actions.size());
  const auto later = std::upper_bound(actions.begin() + static_cast<std::ptrdiff_t>(from), actions.end(), action, earlier);
  actions.insert(later, action);
}

}  // namespace hapair
