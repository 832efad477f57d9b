// RouteTable on its own: epochs that only grow, Takeovers classified against the route followed,
// the takeover a newer epoch implies, fencing notices and the own fragment's route changes
// (paper section 4: upstream servers re-route after a takeover; docs/FAULTS.md, "Who may act as primary": epochs
// fence an old primary).
#include <catch2/catch.hpp>

#include "primary/route_table.h"
#include "roles/role_test_support.h"

using namespace hapair;
using hapair::test::default_plan;

namespace {

Envelope from_node(NodeId sender, Epoch epoch, Message body = Heartbeat{}) {
  Envelope e;
  e.header.sender = sender;
  e.header.epoch = epoch;
  e.body = std::move(body);
  return e;
}

}  // namespace

TEST_CASE("a route table starts with the plan's routes at epoch 0", "[roles][route_table]") {
  auto plan = default_plan(HaMode::active);
  const NodeId filter = plan->node_id("filter");
  RouteTable routes(*plan, filter);
  const FragmentId agg = plan->fragment_id("aggregate");
  CHECK(routes.route(agg).primary == plan->node_id("aggregate"));
  CHECK(routes.route(agg).standbys == std::vector<StandbyRef>{{plan->node_id("aggregate.backup"), 0}});
  CHECK(routes.epoch() == 0);
  // An active standby receives its fragment's input too.
  CHECK(routes.input_nodes_of(agg) == std::vector<NodeId>{plan->node_id("aggregate"), plan->node_id("aggregate.backup")});
  const auto neighbours = routes.neighbour_nodes();
  CHECK(std::is_sorted(neighbours.begin(), neighbours.end()));
  CHECK(std::count(neighbours.begin(), neighbours.end(), plan->node_id("source")) == 1);
  CHECK(std::count(neighbours.begin(), neighbours.end(), filter) == 0);
}

TEST_CASE("a takeover is followed only when it names a newer epoch", "[roles][route_table]") {
  auto plan = default_plan(HaMode::passive);
  RouteTable routes(*plan, plan->node_id("filter"));
  const FragmentId agg = plan->fragment_id("aggregate");
  const NodeId backup = plan->node_id("aggregate.backup");
  const Takeover t{agg, backup, 1, {}};
  CHECK(routes.classify(t) == TakeoverNews::newer);
  routes.follow(t);
  CHECK(routes.route(agg).primary == backup);
  CHECK(routes.route(agg).epoch == 1);
  CHECK(routes.classify(t) == TakeoverNews::repeat);
  CHECK(routes.classify(Takeover{agg, plan->node_id("aggregate"), 1, {}}) == TakeoverNews::epoch_tie);
  CHECK(routes.classify(Takeover{agg, plan->node_id("aggregate"), 0, {}}) == TakeoverNews::stale);
  // A node of another fragment cannot be a fragment's primary.
  CHECK(routes.classify(Takeover{agg, plan->node_id("sink"), 2, {}}) == TakeoverNews::malformed);
  CHECK(routes.classify(Takeover{static_cast<FragmentId>(99), backup, 2, {}}) == TakeoverNews::malformed);
  // An epoch no run reaches (found by envelope_fuzz: followed at the codec's bound, the next
  // claim above it could not be encoded): refused, and the largest followed one leaves room.
  CHECK(routes.classify(Takeover{agg, backup, kEpochFollowMax + 1, {}}) == TakeoverNews::malformed);
  CHECK(routes.classify(Takeover{agg, backup, kEpochMax, {}}) == TakeoverNews::malformed);
  CHECK(routes.classify(Takeover{agg, backup, kEpochFollowMax, {}}) == TakeoverNews::newer);
}

TEST_CASE("a message from an older epoch is stale and one from a newer epoch implies a takeover", "[roles][route_table]") {
  auto plan = default_plan(HaMode::passive);
  RouteTable routes(*plan, plan->node_id("filter"));
  const FragmentId agg = plan->fragment_id("aggregate");
  const NodeId old_primary = plan->node_id("aggregate");
  const NodeId backup = plan->node_id("aggregate.backup");
  CHECK_FALSE(routes.is_stale(from_node(old_primary, 0)));
  CHECK_FALSE(routes.implied_takeover(from_node(old_primary, 0)));
  // The backup speaks in epoch 1: its Takeover was lost.
  auto implied = routes.implied_takeover(from_node(backup, 1));
  REQUIRE(implied);
  CHECK(*implied == Takeover{agg, backup, 1, {}});
  routes.follow(*implied);
  CHECK(routes.is_stale(from_node(old_primary, 0)));
  // A Takeover itself implies nothing (it is classified on its own).
  CHECK_FALSE(routes.implied_takeover(from_node(backup, 2, Takeover{agg, backup, 2, {}})));
}

TEST_CASE("an active standby's acks and replay requests in a newer epoch do not make it the primary", "[roles][route_table]") {
  // Real campaign case 604: a node that missed two epochs of an active fragment (its standby
  // declared lost, then taken back) read the standby's level-0 ack first and followed it as the
  // fragment's primary; the output stopped.
  auto plan = default_plan(HaMode::active);
  RouteTable routes(*plan, plan->node_id("filter"));
  const NodeId standby = plan->node_id("aggregate.backup");
  const StreamId small = plan->stream_id("small");
  CHECK_FALSE(routes.implied_takeover(from_node(standby, 2, Level0Ack{small, 5, false})));
  CHECK_FALSE(routes.implied_takeover(from_node(standby, 2, ReplayRequest{small, 0, 0, 0})));
  CHECK_FALSE(routes.implied_takeover(from_node(standby, 2, Heartbeat{})));
  // Data, or anything else only a primary sends, still implies it.
  auto implied = routes.implied_takeover(from_node(standby, 2, TupleBatch{}));
  REQUIRE(implied);
  CHECK(implied->new_primary == standby);
  CHECK(implied->epoch == 2);
  // Passive standby: a standby talks only to its primary, so any message to another node in a
  // newer epoch comes from the primary (a lost Takeover), acks included.
  auto passive_plan = default_plan(HaMode::passive);
  RouteTable passive(*passive_plan, passive_plan->node_id("filter"));
  CHECK(passive.implied_takeover(from_node(passive_plan->node_id("aggregate.backup"), 1,
                                      Level0Ack{passive_plan->stream_id("small"), 5, false})));
  // Inside its own pair, any message in a newer epoch does: the primary's heartbeat tells a
  // resumed standby that the pair was dissolved while it was paused.
  RouteTable own(*plan, standby);
  auto dissolved = own.implied_takeover(from_node(plan->node_id("aggregate"), 1, Heartbeat{}));
  REQUIRE(dissolved);
  CHECK(dissolved->new_primary == plan->node_id("aggregate"));
}

TEST_CASE("a fencing notice goes to a node that is not its fragment's primary, once per interval", "[roles][route_table]") {
  auto plan = default_plan(HaMode::passive);
  RouteTable routes(*plan, plan->node_id("filter"));
  const FragmentId agg = plan->fragment_id("aggregate");
  const NodeId old_primary = plan->node_id("aggregate");
  CHECK_FALSE(routes.fencing_notice_due(old_primary, 0, 1'000));  // it is the primary
  routes.follow(Takeover{agg, plan->node_id("aggregate.backup"), 1, {}});
  CHECK(routes.fencing_notice_due(old_primary, 0, 1'000));
  CHECK_FALSE(routes.fencing_notice_due(old_primary, 999, 1'000));
  CHECK(routes.fencing_notice_due(old_primary, 1'000, 1'000));
  CHECK_FALSE(routes.fencing_notice_due(plan->node_id("filter"), 5'000, 1'000));  // myself
}

TEST_CASE("every change of my own fragment's route opens a new epoch", "[roles][route_table]") {
  auto plan = default_plan(HaMode::passive);
  const NodeId backup = plan->node_id("aggregate.backup");
  const FragmentId agg = plan->fragment_id("aggregate");
  RouteTable routes(*plan, backup);
  routes.claim_as_primary();
  CHECK(routes.route(agg).primary == backup);
  CHECK(routes.route(agg).standbys.empty());
  CHECK(routes.epoch() == 1);
  routes.form_pair(plan->node_id("aggregate"), 42);
  CHECK(routes.route(agg).standbys == std::vector<StandbyRef>{{plan->node_id("aggregate"), 42}});
  CHECK(routes.epoch() == 2);
  // A standby that restarted is named again, with its new incarnation, not twice.
  routes.form_pair(plan->node_id("aggregate"), 42);
  CHECK(routes.route(agg).standbys.size() == 1);
  CHECK(routes.statement_of(agg) == Takeover{agg, backup, 3, {{plan->node_id("aggregate"), 42}}, plan->fragments[agg].ha});
  routes.dissolve_pair();
  CHECK(routes.route(agg).standbys.empty());
  CHECK(routes.epoch() == 4);
  routes.renew_claim();
  CHECK(routes.epoch() == 5);
  // My own fragment's repeated epoch is stale, not a repeat (only a newer one replaces me).
  CHECK(routes.classify(routes.statement_of(agg)) == TakeoverNews::stale);
}

TEST_CASE("a live switch opens a new epoch whose route names the approach, and neighbours follow it", "[roles][route_table]") {
  auto plan = default_plan(HaMode::passive);
  const NodeId aggregate = plan->node_id("aggregate");
  const NodeId backup = plan->node_id("aggregate.backup");
  const FragmentId agg = plan->fragment_id("aggregate");
  RouteTable primary(*plan, aggregate);
  CHECK(primary.route(agg).mode == HaMode::passive);
  primary.switch_approach(HaMode::active);
  CHECK(primary.epoch() == 1);
  CHECK(primary.route(agg).primary == aggregate);
  CHECK(primary.route(agg).standbys == std::vector<StandbyRef>{{backup, 0}});
  const Takeover t = primary.statement_of(agg);
  CHECK(t.mode == HaMode::active);
  // A producer follows it: the aggregate's standby processes input now (active standby).
  RouteTable filter(*plan, plan->node_id("filter"));
  CHECK(filter.input_nodes_of(agg) == std::vector<NodeId>{aggregate});
  REQUIRE(filter.classify(t) == TakeoverNews::newer);
  filter.follow(t);
  CHECK(filter.traits(agg).mode == HaMode::active);
  CHECK(filter.input_nodes_of(agg) == std::vector<NodeId>{aggregate, backup});
  // An implied takeover cannot know the approach: the one followed is kept, and the real
  // announcement of that epoch is then followed once more for its mode.
  RouteTable sink(*plan, plan->node_id("sink"));
  Takeover implied = t;
  implied.mode.reset();
  sink.follow(implied);
  CHECK(sink.route(agg).mode == HaMode::passive);
  CHECK(sink.classify(t) == TakeoverNews::newer);
  sink.follow(t);
  CHECK(sink.route(agg).mode == HaMode::active);
  CHECK(sink.classify(t) == TakeoverNews::repeat);
  // A mode the plan's catalog does not hold is malformed.
  Takeover odd = t;
  odd.epoch = 2;
  odd.mode = static_cast<HaMode>(200);
  CHECK(sink.classify(odd) == TakeoverNews::malformed);
}

TEST_CASE("an announcement stays pending until it is answered", "[roles][route_table]") {
  auto plan = default_plan(HaMode::passive);
  RouteTable routes(*plan, plan->node_id("aggregate.backup"));
  CHECK_FALSE(routes.announcing());
  routes.announced(100, plan->node_id("aggregate"));
  CHECK(routes.announcing());
  CHECK(routes.announced_us() == 100);
  CHECK(routes.announced_old_primary() == plan->node_id("aggregate"));
  routes.reannounced(300);
  CHECK(routes.announced_us() == 300);
  routes.announcement_answered();
  CHECK_FALSE(routes.announcing());
}

TEST_CASE("a route table stops the node rather than follow an epoch that is not newer", "[roles][route_table]") {
  auto plan = default_plan(HaMode::passive);
  const FragmentId agg = plan->fragment_id("aggregate");
  const NodeId backup = plan->node_id("aggregate.backup");
  CHECK(hapair::test::aborts([&] {
    RouteTable routes(*plan, plan->node_id("filter"));
    routes.follow(Takeover{agg, backup, 1, {}});
    routes.follow(Takeover{agg, backup, 1, {}});  // the same epoch again
  }));
}
