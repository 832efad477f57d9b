// Regression tests for peer input the fuzz targets (fuzz/) found mishandled: a role core must
// count and drop a well-formed message with absurd fields, never index a table with them or
// assert (STYLE.md rule 3).
#include <catch2/catch.hpp>

#include <memory>

#include "node/node_factory.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {
namespace {

TEST_CASE("a primary without a standby drops a Rejoin that claims to come from no node", "[roles][fuzz]") {
  // fuzz/envelope_fuzz: under ha none the fragment has no partner (its standby is kNoNode), and a
  // Rejoin from sender kNoNode naming node kNoNode passed for one from the partner; the primary
  // then looked up node 0xffff's name and threw std::length_error.
  Topology t = default_topology();
  t.settings.ha = HaMode::none;
  const auto plan = std::make_shared<const Plan>(make_plan(t));
  const NodeId filter = plan->node_id("filter");
  const FragmentId fragment = plan->fragment_id("filter");
  REQUIRE(plan->fragments[fragment].standby == kNoNode);
  auto core = make_node_core(plan, filter);
  core->handle(0, Start{});
  for (std::uint64_t incarnation : {0u, 7u}) {
    const Effects eff =
        core->handle(1000, Received{Envelope{Header{kNoNode, 0, 1000}, Rejoin{fragment, kNoNode, incarnation}}});
    for (const Outgoing& out : eff.sends) CHECK(out.to != kNoNode);
  }
  CHECK(core->metrics().at("unexpected_rejoin_dropped") == 2);
}

}  // namespace
}  // namespace hapair
