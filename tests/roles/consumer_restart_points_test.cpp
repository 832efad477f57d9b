// ConsumerRestartPoints and ConservativeHorizon: the small types of upstream backup that the
// processing node holds and consults (retention/consumer_restart_points.h,
// retention/conservative_horizon.h). Paper: level-1 acks let an upstream trim what its
// downstream no longer needs (section 4.3); hapair's generations and one-hop forwarding
// (docs/FAULTS.md) let a recovery node find restart points every producer holds.
#include <catch2/catch.hpp>

#include "roles/role_test_support.h"
#include "retention/conservative_horizon.h"
#include "retention/consumer_restart_points.h"

using namespace hapair;
using namespace hapair::test;

namespace {

Level1Ack point(StreamId s, TupleId up_to, std::uint64_t generation) {
  return Level1Ack{s, up_to, generation, Bytes{static_cast<std::uint8_t>(generation)}, {}};
}

}  // namespace

TEST_CASE("a consumer's level-1 acks set how far its stream may be trimmed: to the older of two generations",
          "[roles][consumer_restart_points]") {
  ConsumerRestartPoints c;
  const FragmentId d = 3;
  CHECK(c.trim_position(d) == 0);  // nothing heard: nothing may go
  CHECK(c.add(d, point(0, 10, 1)));
  CHECK(c.trim_position(d) == 0);  // one generation: the recovery node may still need it all
  CHECK(c.add(d, point(0, 20, 2)));
  CHECK(c.trim_position(d) == 10);
  CHECK_FALSE(c.add(d, point(0, 30, 2)));  // not newer: no news
  CHECK(c.held_generation(d) == 2);
  CHECK(c.stores().size() == 1);
}

TEST_CASE("a consumer with several producers is told a generation only once my upstream holds it",
          "[roles][consumer_restart_points]") {
  const auto plan = two_producer_plan(HaMode::upstream);
  const FragmentId filter = plan->fragment_id("filter");
  const FragmentId merge = plan->fragment_id("merge");
  ConsumerRestartPoints c = ConsumerRestartPoints::for_stream(*plan, filter, plan->stream_id("small"));
  CHECK(c.several_producers(merge));
  c.add(merge, point(0, 10, 1));
  c.add(merge, point(0, 20, 2));
  CHECK(c.held_generation(merge) == 0);  // my upstream holds none of them yet
  CHECK(c.confirm_forwarded(merge, 1));
  CHECK(c.held_generation(merge) == 1);
  CHECK_FALSE(c.confirm_forwarded(merge, 1));  // not news
  CHECK(c.confirm_forwarded(merge, 5));
  CHECK(c.held_generation(merge) == 2);  // never more than the consumer sent
  CHECK(c.forwarded_confirmed(merge) == 5);
}

TEST_CASE("a source tells its consumers the newest generation at once", "[roles][consumer_restart_points]") {
  const auto plan = two_producer_plan(HaMode::upstream);
  const FragmentId merge = plan->fragment_id("merge");
  ConsumerRestartPoints c = ConsumerRestartPoints::for_stream(*plan, plan->fragment_id("s2"), plan->stream_id("s2"));
  c.add(merge, point(0, 10, 4));
  CHECK(c.held_generation(merge) == 4);  // a source never recovers: nothing to wait for
}

TEST_CASE("only a consumer that recovers by upstream backup is offered restart points",
          "[roles][consumer_restart_points]") {
  const auto upstream = two_producer_plan(HaMode::upstream);
  const FragmentId merge = upstream->fragment_id("merge");
  ConsumerRestartPoints c = ConsumerRestartPoints::for_stream(*upstream, upstream->fragment_id("filter"), upstream->stream_id("small"));
  const auto empty = c.offer(merge, 7, 40);
  REQUIRE(empty.has_value());
  CHECK(empty->trimmed_up_to == 40);
  CHECK(empty->points.empty());  // an offer goes out even with nothing held: where my queue begins
  c.add(merge, point(7, 10, 1));
  CHECK(c.offer(merge, 7, 40)->points.size() == 1);

  const auto passive = two_producer_plan(HaMode::passive);
  ConsumerRestartPoints p = ConsumerRestartPoints::for_stream(*passive, passive->fragment_id("filter"), passive->stream_id("small"));
  CHECK_FALSE(p.offer(passive->fragment_id("merge"), 7, 40).has_value());
}

TEST_CASE("what a stream forwards upstream names every consumer that sent points, or where the queue begins",
          "[roles][consumer_restart_points]") {
  const auto plan = two_producer_plan(HaMode::upstream);
  const FragmentId merge = plan->fragment_id("merge");
  ConsumerRestartPoints c = ConsumerRestartPoints::for_stream(*plan, plan->fragment_id("filter"), plan->stream_id("small"));
  auto none = c.forwarded(7, 12);
  REQUIRE(none.size() == 1);
  CHECK(none[0].consumer == kNoFragment);
  CHECK(none[0].trimmed_up_to == 12);
  c.add(merge, point(7, 10, 1));
  c.add(merge, point(7, 20, 2));
  auto both = c.forwarded(7, 12);
  REQUIRE(both.size() == 1);
  CHECK(both[0].consumer == merge);
  CHECK(both[0].points.size() == 2);  // several producers: both, to find one in common
}

TEST_CASE("installed points from my upstream count as the consumer's", "[roles][consumer_restart_points]") {
  ConsumerRestartPoints c;
  c.install(2, {StoredRestartPoint{1, 10, Bytes{1}, {}}, StoredRestartPoint{2, 20, Bytes{2}, {}}});
  CHECK(c.held_generation(2) == 2);
  CHECK(c.trim_position(2) == 10);
}

TEST_CASE("the conservative horizon keeps retention_us of event time and names what fell out of it",
          "[roles][conservative_horizon]") {
  ConservativeHorizon h(2'500);
  CHECK(h.beyond() == 0);
  for (TupleId id = 1; id <= 5; ++id) h.processed(id, static_cast<TimeUs>(id) * 1'000);  // ts = id ms
  // Tuples older than 2.5 ms before the newest (ts 5 ms) fell out: ids 1 and 2.
  CHECK(h.beyond() == 2);
  h.processed(6, 10'000);
  CHECK(h.beyond() == 5);
  CHECK(aborts([] { ConservativeHorizon none(0); }));
}
