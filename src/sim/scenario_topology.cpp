// Scenario(Topology) builds the plan and uses the production cores. It lives apart from
// scenario.cpp so that scenarios over hand-made plans and test cores link without the role
// libraries' factory.
#include "node/node_factory.h"
#include "protocols/check.h"
#include "sim/scenario.h"

namespace hapair {
namespace {

std::shared_ptr<const Plan> checked_plan(const Topology& topology) {
  const auto problems = validate(topology);
  std::string all;
  for (const auto& p : problems) all += "\n  " + p;
  HAPAIR_CHECK_MSG(problems.empty(), "scenario topology '" << topology.name << "' is invalid:" << all);
  return std::make_shared<const Plan>(make_plan(topology));
}

}  // namespace

Scenario::Scenario(const Topology& topology) : Scenario(checked_plan(topology), run_node_cores()) {}

}  // namespace hapair
