// Builds the pure core of any node of a plan: a source, a sink, a fragment primary, or the
// standby its approach needs (spare, passive backup, active backup). Drivers (runtime, simulator)
// create cores only through this, so they never depend on which roles exist.
#pragma once

#include <functional>
#include <memory>

#include "node/approaches.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {

// The core of `node`, its fragment's approach taken from `approaches` (which outlives the core).
// The plan's node of no fragment (its coordinator, protocols/plan.h) is built by the registration
// of the approach that asked for it, on `store`, the run's checkpoint store (required then; it
// outlives the core).
// Under local recovery a fragment's node gets its host's store of that fragment's snapshot copies
// from `local` (which outlives the core; none without it).
std::unique_ptr<NodeCore> make_node_core_from(const ApproachRegistry& approaches, std::shared_ptr<const Plan> plan,
                                              NodeId node, CheckpointStore* store = nullptr,
                                              LocalSnapshots* local = nullptr);
// The same with the built-in approaches (a CoreFactory, driver/core_factory.h), for a plan
// without a coordinator (checked).
std::unique_ptr<NodeCore> make_node_core(std::shared_ptr<const Plan> plan, NodeId node);

// A CoreFactory (driver/core_factory.h) of one run with the built-in approaches: every node's
// core, the coordinator's on `store`, the fragments' local snapshot copies in `local`, both kept
// by the factory for the run (a restarted coordinator reads what its predecessor wrote, a
// replacement what its host kept). Drivers use it for every run.
std::function<std::unique_ptr<NodeCore>(std::shared_ptr<const Plan>, NodeId)> run_node_cores(
    std::shared_ptr<CheckpointStore> store, std::shared_ptr<LocalSnapshots> local);
// The same on stores in memory (the simulator's, the tests').
std::function<std::unique_ptr<NodeCore>(std::shared_ptr<const Plan>, NodeId)> run_node_cores();

}  // namespace hapair
