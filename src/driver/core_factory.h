// How a driver gets the core of each node it hosts.
#pragma once

#include <functional>
#include <memory>

#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {

// Makes the core of one node of a plan. Production runs use make_node_core
// (node/node_factory.h); tests and benchmarks of a driver pass small cores of their own.
using CoreFactory = std::function<std::unique_ptr<NodeCore>(std::shared_ptr<const Plan>, NodeId)>;

}  // namespace hapair
