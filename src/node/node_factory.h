// Builds the pure core of any node of a plan: a source, a sink, a fragment primary, or the
// standby its approach needs (spare, passive backup, active backup). Drivers (runtime, simulator)
// create cores only through this, so they never depend on which roles exist.
#pragma once

#include <memory>

#include "node/approaches.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {

// The core of `node`, its fragment's approach taken from `approaches` (which outlives the core).
std::unique_ptr<NodeCore> make_node_core_from(const ApproachRegistry& approaches, std::shared_ptr<const Plan> plan,
                                              NodeId node);
// The same with the built-in approaches (a CoreFactory, driver/core_factory.h).
std::unique_ptr<NodeCore> make_node_core(std::shared_ptr<const Plan> plan, NodeId node);

}  // namespace hapair
