// Who a node is in its plan: its node id and name, its fragment with that fragment's approach
// (mode and traits) and kind, and the plan's settings. Fixed for the node's life (a role change
// does not change it), except the approach: a live switch changes the mode (set_mode, by the
// node core: docs/ARCHITECTURE.md "Live switching").
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
    if (plan_->runs_fragment(self_)) mode_ = fragment_plan().ha;
  }

  const Plan& plan() const { return *plan_; }
  const Settings& settings() const { return plan_->settings(); }
  NodeId self() const { return self_; }
  const std::string& name() const { return plan_->nodes[self_].name; }
  FragmentId fragment_id() const { return plan_->nodes[self_].fragment; }
  const PlanFragment& fragment_plan() const { return plan_->fragments[fragment_id()]; }
  // My fragment's approach now: the plan's until a live switch.
  HaMode mode() const { return mode_; }
  // What my fragment's approach is (protocols/approach_traits.h).
  const ApproachTraits& traits() const {
    return plan_->runs_fragment(self_) ? plan_->approaches.of(mode_) : plan_->traits(fragment_id());
  }
  // A live switch: my fragment's approach is `mode` from now on (one the plan's catalog holds).
  void set_mode(HaMode mode) {
    HAPAIR_CHECK_MSG(plan_->approaches.find(mode) != nullptr, "node " << name() << " switches to mode " << static_cast<int>(mode));
    mode_ = mode;
  }
  FragmentKind kind() const { return fragment_plan().kind; }
  // Whether the plan names this node as its fragment's standby.
  bool planned_standby() const { return plan_->nodes[self_].standby; }
  // The role my fragment's approach's standby runs.
  Role standby_role() const { return traits().standby_role; }
  TimeUs retransmit_us() const { return us_from_ms(static_cast<double>(settings().retransmit_timeout_ms)); }

 private:
  std::shared_ptr<const Plan> plan_;
  NodeId self_;
  HaMode mode_ = kNoHa;
};

}  // namespace hapair
