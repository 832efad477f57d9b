// Who a node is in its plan: its node id and name, its fragment with that fragment's approach
// (mode and traits) and kind, and the plan's settings. Fixed for the node's life (a role change does not change it).
#pragma once

#include <memory>
#include <string>

#include "protocols/check.h"
#include "protocols/plan.h"
#include "protocols/trace.h"

namespace hapair {

class NodeIdentity {
 public:
  NodeIdentity(std::shared_ptr<const Plan> plan, NodeId self) : plan_(std::move(plan)), self_(self) {
    HAPAIR_CHECK_MSG(self_ < plan_->nodes.size(), "node " << self_ << " of " << plan_->nodes.size());
  }

  const Plan& plan() const { return *plan_; }
  const Settings& settings() const { return plan_->settings(); }
  NodeId self() const { return self_; }
  const std::string& name() const { return plan_->nodes[self_].name; }
  FragmentId fragment_id() const { return plan_->nodes[self_].fragment; }
  const PlanFragment& fragment_plan() const { return plan_->fragments[fragment_id()]; }
  HaMode mode() const { return fragment_plan().ha; }
  // What my fragment's approach is (protocols/approach_traits.h).
  const ApproachTraits& traits() const { return plan_->traits(fragment_id()); }
  FragmentKind kind() const { return fragment_plan().kind; }
  // Whether the plan names this node as its fragment's standby.
  bool planned_standby() const { return plan_->nodes[self_].standby; }
  // The role my fragment's approach's standby runs.
  Role standby_role() const { return traits().standby_role; }
  TimeUs retransmit_us() const { return us_from_ms(static_cast<double>(settings().retransmit_timeout_ms)); }

 private:
  std::shared_ptr<const Plan> plan_;
  NodeId self_;
};

}  // namespace hapair
