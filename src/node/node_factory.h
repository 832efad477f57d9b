// Builds the pure core of any node of a plan: a source, a sink, a fragment primary, or the
// standby its HA mode needs (spare, passive backup, active backup). Drivers (runtime, simulator)
// create cores only through this, so they never depend on which roles exist.
#pragma once

#include <memory>

#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {

std::unique_ptr<NodeCore> make_node_core(std::shared_ptr<const Plan> plan, NodeId node);

}  // namespace hapair
