// run_simulation() with the production cores. It lives apart from simulator.cpp so that tests
// of the simulator with their own small cores link without the role libraries' factory.
#include "node/node_factory.h"
#include "sim/simulator.h"

namespace hapair {

RunResult run_simulation(std::shared_ptr<const Plan> plan, const SimOptions& options) {
  return run_simulation(std::move(plan), options, run_node_cores());
}

}  // namespace hapair
