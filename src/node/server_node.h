// A node core: a Server (the shared state) plus the role it currently runs, swapped on
// takeover. This is the NodeCore every driver hosts. It also runs the live switches of its
// fragment's approach (docs/ARCHITECTURE.md "Live switching"): as primary, the plan's schedule
// (RoleBehaviour::switch_approach); as a standby, its route's approach (the primary's
// announcement): it becomes the new approach's standby, rejoined, with a fresh fragment.
#pragma once

#include <memory>

#include "node/approaches.h"
#include "primary/approach.h"
#include "primary/role.h"
#include "protocols/core.h"

namespace hapair {

class ServerNode : public NodeCore {
 public:
  // `approaches` (the registry every approach of the plan is found in) outlives me.
  // `local_snapshots`: my host's copies of my fragment's snapshots (local recovery), or null.
  ServerNode(std::shared_ptr<const Plan> plan, NodeId self, const ApproachRegistry& approaches,
             CheckpointStore* local_snapshots = nullptr);
  Effects handle(TimeUs now, const Event& event) override;
  Metrics metrics() const override;
  const Server& server() const { return server_; }
  Role role() const { return server_.role(); }

 private:
  void swap_roles(TimeUs now, Effects& eff);
  // My fragment's approach now (it changes at a live switch).
  const Approach& approach() const;
  // The live switches: the schedule at the primary, the route's approach at a standby.
  void follow_switches(TimeUs now, Effects& eff);
  // When I am next due to look at the schedule (kNever: not the primary, or no switch ahead).
  TimeUs next_switch_us(TimeUs now) const;

  Server server_;
  const ApproachRegistry& approaches_;  // node/approaches.h, outlives me
  std::unique_ptr<RoleBehaviour> role_;
};

}  // namespace hapair
