// Upstream backup's forwarding of restart points one hop upstream (upstream_backup/
// forwarded_points.h). Paper: upstream backup (section 4.3); docs/FAULTS.md, two adjacent
// failures: a server's restart point carries what it held for its consumers.
#include <catch2/catch.hpp>

#include "primary/server.h"
#include "roles/role_test_support.h"
#include "upstream_backup/forwarded_points.h"

using namespace hapair;
using namespace hapair::test;

namespace {

struct Filter {
  std::shared_ptr<const Plan> plan = two_producer_plan(HaMode::upstream);
  Server server{plan, plan->node_id("filter")};
  StreamId small = plan->stream_id("small");
  FragmentId merge = plan->fragment_id("merge");
  NodeId merge_node = plan->node_id("merge");
};

}  // namespace

TEST_CASE("a server forwards what it holds for its downstream with its own level-1 acks", "[roles][forwarded_points]") {
  Filter f;
  auto nothing = downstream_restart_points(f.server);
  REQUIRE(nothing.size() == 1);
  CHECK(nothing[0].consumer == kNoFragment);  // it still says where my queue of small begins
  f.server.outputs().on_level1_ack(0, f.merge_node, Level1Ack{f.small, 0, 1, Bytes{1}, {}});
  auto held = downstream_restart_points(f.server);
  REQUIRE(held.size() == 1);
  CHECK(held[0].stream == f.small);
  CHECK(held[0].consumer == f.merge);
  CHECK(held[0].points.size() == 1);
}

TEST_CASE("a recovery node installs forwarded points only when they name every output stream it has",
          "[roles][forwarded_points]") {
  Filter f;
  CHECK_FALSE(install_downstream_restart_points(f.server, {}));
  const DownstreamRestartPoints stranger{f.plan->stream_id("s2"), kNoFragment, 0, {}};
  CHECK_FALSE(install_downstream_restart_points(f.server, {stranger}));
  const DownstreamRestartPoints wrong_consumer{f.small, f.plan->fragment_id("filter"), 0, {}};
  CHECK_FALSE(install_downstream_restart_points(f.server, {wrong_consumer}));
  CHECK(f.server.metrics().at("bad_downstream_restart_points_dropped") == 2);

  const DownstreamRestartPoints mine{f.small, f.merge, 4, {StoredRestartPoint{2, 3, Bytes{2}, {}}}};
  REQUIRE(install_downstream_restart_points(f.server, {mine}));
  const OutputChannel& small = f.server.outputs().at(f.small);
  CHECK(small.queue().trimmed_up_to() == 4);
  CHECK(small.restart_points().held_generation(f.merge) == 2);  // they came from my upstream: held
  CHECK(f.server.metrics().at("downstream_restart_points_installed") == 1);
}

TEST_CASE("a consumer with several producers is told a generation once my upstream confirms it",
          "[roles][forwarded_points]") {
  Filter f;
  f.server.outputs().on_level1_ack(0, f.merge_node, Level1Ack{f.small, 0, 3, Bytes{3}, {}});
  CHECK(f.server.outputs().at(f.small).restart_points().held_generation(f.merge) == 0);
  confirm_forwarded(f.server, downstream_restart_points(f.server));
  CHECK(f.server.outputs().at(f.small).restart_points().held_generation(f.merge) == 3);
}
