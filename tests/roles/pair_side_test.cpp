// PairSide (primary/pair_side.h): the routes a node follows and tells, its own fragment's epoch
// changes and their announcement. Paper: after a takeover upstream servers re-route to the new
// primary (section 4); epochs fence an old primary (docs/FAULTS.md, "Who may act as primary").
#include <catch2/catch.hpp>

#include "primary/pair_side.h"
#include "roles/role_test_support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

// A pair side of node `name`, counting how often the epoch of its own fragment ended.
using Pair = Parts;

Envelope from(NodeId sender, Epoch epoch) {
  Envelope e;
  e.header.sender = sender;
  e.header.epoch = epoch;
  e.body = Heartbeat{};
  return e;
}

}  // namespace

TEST_CASE("a pair side drops a stale sender's message and tells it the route once per retransmit timeout",
          "[roles][pair_side]") {
  Pair p(default_plan(HaMode::passive), "filter");
  Effects eff;
  CHECK(p.pair.learn(0, Takeover{p.fragment("aggregate"), p.id("aggregate.backup"), 1, {}}, eff, true) ==
        TakeoverNews::newer);
  CHECK(p.epochs_ended == 0);  // a neighbour's epoch: nothing of mine ends
  Effects answer;
  CHECK_FALSE(p.pair.is_current(10, from(p.id("aggregate"), 0), answer));
  CHECK_FALSE(p.pair.is_current(20, from(p.id("aggregate"), 0), answer));  // within the timeout: no second notice
  const auto notices = messages_to<Takeover>(answer, p.id("aggregate"));
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].new_primary == p.id("aggregate.backup"));
  CHECK(p.outbox.counters().at("stale_dropped") == 2);
  CHECK(p.pair.is_current(30, from(p.id("aggregate.backup"), 1), answer));
  CHECK_FALSE(p.pair.is_current(30, from(static_cast<NodeId>(p.plan->nodes.size()), 0), answer));
}

TEST_CASE("a pair side lets the node collect its Unions' choices before its own epoch ends", "[roles][pair_side]") {
  Pair primary(default_plan(HaMode::passive), "aggregate");
  primary.pair.form_pair(primary.id("aggregate.backup"), 7);
  CHECK(primary.epochs_ended == 1);
  primary.pair.dissolve_pair();  // the primary stays in charge: collected at the end of the event
  primary.pair.renew_claim();
  CHECK(primary.epochs_ended == 1);
  CHECK(primary.routes.epoch() == 3);

  Pair standby(default_plan(HaMode::passive), "aggregate.backup");
  standby.pair.claim_own_fragment();
  CHECK(standby.epochs_ended == 1);
  CHECK(standby.routes.route(standby.fragment("aggregate")).primary == standby.node.self());
  Effects eff;
  // A newer epoch of my own fragment (I was fenced) ends mine too.
  standby.pair.learn(0, Takeover{standby.fragment("aggregate"), standby.id("aggregate"), 5, {}}, eff, true);
  CHECK(standby.epochs_ended == 2);
}

TEST_CASE("a pair side answers another claim of a followed epoch only when asked to", "[roles][pair_side]") {
  Pair p(default_plan(HaMode::passive), "filter");
  const FragmentId agg = p.fragment("aggregate");
  Effects eff;
  p.pair.learn(0, Takeover{agg, p.id("aggregate.backup"), 1, {}}, eff, true);
  CHECK(p.pair.learn(1, Takeover{agg, p.id("aggregate.backup"), 1, {}}, eff, true) == TakeoverNews::repeat);
  Effects quiet;
  CHECK(p.pair.learn(2, Takeover{agg, p.id("aggregate"), 1, {}}, quiet, false) == TakeoverNews::epoch_tie);
  CHECK(quiet.sends.empty());
  Effects told;
  CHECK(p.pair.learn(3, Takeover{agg, p.id("aggregate"), 1, {}}, told, true) == TakeoverNews::epoch_tie);
  CHECK(messages_to<Takeover>(told, p.id("aggregate")).size() == 1);
  CHECK(p.outbox.counters().at("repeated_takeovers") == 1);
  CHECK(p.outbox.counters().at("epoch_ties_answered") == 1);
  CHECK(p.pair.learn(4, Takeover{agg, p.id("filter"), 9, {}}, told, true) == TakeoverNews::malformed);
}

TEST_CASE("a takeover is announced to every neighbour and the old primary until it is answered", "[roles][pair_side]") {
  Pair p(default_plan(HaMode::passive), "aggregate.backup");
  p.pair.claim_own_fragment();
  Effects eff;
  p.pair.announce_takeover(0, eff, p.id("aggregate"));
  const auto first = messages_to<Takeover>(eff);
  CHECK(messages_to<Takeover>(eff, p.id("filter")).size() == 1);
  CHECK(messages_to<Takeover>(eff, p.id("sink")).size() == 1);
  CHECK(messages_to<Takeover>(eff, p.id("aggregate")).size() == 1);
  const TimeUs rt = p.node.retransmit_us();
  Effects early;
  CHECK(p.pair.repeat_announcement(rt - 1, early, false) == rt);
  CHECK(early.sends.empty());
  Effects again;
  CHECK(p.pair.repeat_announcement(rt, again, false) == 2 * rt);
  CHECK(messages_to<Takeover>(again).size() == first.size());
  Effects done;
  CHECK(p.pair.repeat_announcement(2 * rt, done, true) == kNever);
  CHECK(done.sends.empty());
  CHECK(p.pair.repeat_announcement(3 * rt, done, false) == kNever);  // nothing announced any more
}

TEST_CASE("a rejoining node is told only the routes that moved since the plan", "[roles][pair_side]") {
  Pair p(default_plan(HaMode::passive), "aggregate");
  Effects eff;
  p.pair.send_routes_to(0, eff, p.id("aggregate.backup"));
  CHECK(eff.sends.empty());
  p.pair.learn(0, Takeover{p.fragment("filter"), p.id("filter.backup"), 1, {}}, eff, true);
  p.pair.send_routes_to(1, eff, p.id("aggregate.backup"));
  const auto told = messages_to<Takeover>(eff, p.id("aggregate.backup"));
  REQUIRE(told.size() == 1);
  CHECK(told[0].fragment == p.fragment("filter"));
}

TEST_CASE("the roles send heartbeats unless the driver watches the partner", "[roles][pair_side]") {
  Pair p(default_plan(HaMode::passive), "aggregate");
  CHECK(p.pair.own_heartbeats());
  p.pair.set_driver_watches_partner(true);
  CHECK_FALSE(p.pair.own_heartbeats());
}
