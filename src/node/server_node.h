// A node core: a Server (the shared state) plus the role it currently runs, swapped on
// takeover. This is the NodeCore every driver hosts.
#pragma once

#include <memory>

#include "primary/approach.h"
#include "primary/role.h"
#include "protocols/core.h"

namespace hapair {

class ServerNode : public NodeCore {
 public:
  ServerNode(std::shared_ptr<const Plan> plan, NodeId self, const Approach& approach);
  Effects handle(TimeUs now, const Event& event) override;
  Metrics metrics() const override;
  const Server& server() const { return server_; }
  Role role() const { return server_.role(); }

 private:
  void swap_roles(TimeUs now, Effects& eff);

  Server server_;
  const Approach& approach_;  // my fragment's (node/approaches.h), outlives me
  std::unique_ptr<RoleBehaviour> role_;
};

}  // namespace hapair
