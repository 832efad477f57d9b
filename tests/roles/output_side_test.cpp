// OutputSide (primary/output_side.h): a node's output queues, their consumers and what holds
// output back. Paper: output queues double as logs, trimmed by queue-trimming acknowledgements
// (sections 2, 4.3); after a takeover they are re-sent and downstream drops duplicates by id.
#include <catch2/catch.hpp>

#include "primary/output_side.h"
#include "roles/role_test_support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

using Outputs = Parts;

void append_tuples(Outputs& o, StreamId s, TupleId first, TupleId last) {
  for (TupleId id = first; id <= last; ++id) o.outputs.append(s, Tuple{id, 0, 0, 0, 0});
}

}  // namespace

TEST_CASE("a primary's output side sends to every consumer node, a standby's only tracks them", "[roles][output_side]") {
  Outputs primary(default_plan(HaMode::active), "filter");
  const StreamId small = primary.stream("small");
  append_tuples(primary, small, 1, 3);
  Effects eff;
  primary.outputs.pump(0, eff);
  CHECK(ids_in(messages_to<TupleBatch>(eff, primary.id("aggregate"))) == std::vector<TupleId>{1, 2, 3});
  CHECK(ids_in(messages_to<TupleBatch>(eff, primary.id("aggregate.backup"))) == std::vector<TupleId>{1, 2, 3});
  CHECK(primary.outputs.tuples_sent() == 6);

  Outputs standby(default_plan(HaMode::active), "filter.backup");
  append_tuples(standby, small, 1, 3);
  Effects none;
  standby.outputs.pump(0, none);
  CHECK(none.sends.empty());
  CHECK(standby.outputs.at(small).consumers().size() == 2);
}

TEST_CASE("an output side trims only what every consumer acknowledged, less the trim margin", "[roles][output_side]") {
  Outputs o(default_plan(HaMode::active), "filter");
  const StreamId small = o.stream("small");
  append_tuples(o, small, 1, 10);
  o.outputs.on_level0_ack(0, o.id("aggregate"), Level0Ack{small, 8, false});
  CHECK(o.outputs.at(small).queue().trimmed_up_to() == 0);  // the backup has not acked
  o.outputs.set_trim_margin(3);
  o.outputs.on_level0_ack(0, o.id("aggregate.backup"), Level0Ack{small, 6, false});
  CHECK(o.outputs.at(small).queue().trimmed_up_to() == 3);
  o.outputs.set_trim_margin(0);
  o.outputs.on_level0_ack(0, o.id("aggregate.backup"), Level0Ack{small, 6, false});
  CHECK(o.outputs.at(small).queue().trimmed_up_to() == 6);
  CHECK(o.outputs.tuples_trimmed() == 6);
  o.outputs.on_level0_ack(0, o.id("sink"), Level0Ack{small, 9, false});
  CHECK(o.outbox.counters().at("unexpected_ack_dropped") == 1);
}

TEST_CASE("a level-1 ack from a fragment that does not consume the stream is dropped", "[roles][output_side]") {
  Outputs o(default_plan(HaMode::upstream), "filter");
  const StreamId small = o.stream("small");
  append_tuples(o, small, 1, 10);
  o.outputs.on_level1_ack(0, o.id("sink"), Level1Ack{small, 5, 1, Bytes{1}, {}});
  CHECK(o.outbox.counters().at("unexpected_ack_dropped") == 1);
  o.outputs.on_level0_ack(0, o.id("aggregate"), Level0Ack{small, 10, false});
  CHECK(o.outputs.at(small).queue().trimmed_up_to() == 0);  // upstream backup: level-1 decides
  o.outputs.on_level1_ack(0, o.id("aggregate"), Level1Ack{small, 5, 1, Bytes{1}, {}});
  o.outputs.on_level1_ack(0, o.id("aggregate"), Level1Ack{small, 7, 2, Bytes{2}, {}});
  CHECK(o.outputs.at(small).queue().trimmed_up_to() == 5);  // the older of two generations
  CHECK(o.outbox.counters().at("level1_acks_received") == 2);
}

TEST_CASE("a consumer's takeover moves the stream to its new primary, which says where to resume",
          "[roles][output_side]") {
  Outputs o(default_plan(HaMode::upstream), "filter");
  const StreamId small = o.stream("small");
  append_tuples(o, small, 1, 5);
  Effects eff;
  o.outputs.pump(0, eff);
  const Takeover t{o.plan->fragment_id("aggregate"), o.id("aggregate.spare"), 1, {}};
  o.pair.learn(1, t, eff, true);
  o.outputs.follow_consumer_takeover(t);
  CHECK_FALSE(o.outputs.all_ready());
  Effects offer;
  o.outputs.offer_restart_points(1, t, offer);  // an upstream-backup consumer: my points for it
  CHECK(messages_to<RestartPoints>(offer, o.id("aggregate.spare")).size() == 1);
  Effects replay;
  o.outputs.on_replay_request(2, o.id("aggregate.spare"), ReplayRequest{small, 2, 0, 0}, replay);
  CHECK(o.outputs.all_ready());
  CHECK(messages_to<Takeover>(replay, o.id("aggregate.spare")).size() == 1);  // the route echoed
  o.outputs.pump(2, replay);
  const auto sent = messages_to<TupleBatch>(replay, o.id("aggregate.spare"));
  CHECK(ids_in(sent) == std::vector<TupleId>{3, 4, 5});
  REQUIRE_FALSE(sent.empty());
  CHECK(sent[0].replay);
}

TEST_CASE("a passive consumer's takeover is offered no restart points", "[roles][output_side]") {
  Outputs o(default_plan(HaMode::passive), "filter");
  const Takeover t{o.plan->fragment_id("aggregate"), o.id("aggregate.backup"), 1, {}};
  Effects eff;
  o.outputs.offer_restart_points(0, t, eff);
  CHECK(eff.sends.empty());
}

TEST_CASE("release gates hold output until released, and all that is held can go at once", "[roles][output_side]") {
  Outputs o(default_plan(HaMode::none), "filter");
  const StreamId small = o.stream("small");
  o.outputs.hold_all();
  append_tuples(o, small, 1, 4);
  Effects eff;
  o.outputs.pump(0, eff);
  CHECK(eff.sends.empty());
  o.outputs.release(small, 2);
  o.outputs.pump(1, eff);
  CHECK(ids_in(messages_to<TupleBatch>(eff)) == std::vector<TupleId>{1, 2});
  CHECK(o.outputs.release_all_held() == 2);
  Effects rest;
  o.outputs.pump(2, rest);
  CHECK(ids_in(messages_to<TupleBatch>(rest)) == std::vector<TupleId>{3, 4});
}

TEST_CASE("a rebase numbers what is retained above everything a consumer was sent", "[roles][output_side]") {
  Outputs o(default_plan(HaMode::amnesia), "filter");
  const StreamId small = o.stream("small");
  append_tuples(o, small, 1, 3);
  Effects eff;
  o.outputs.pump(0, eff);  // the aggregate was sent 1..3
  o.outputs.reset_consumers_awaiting_replay_request();
  o.outputs.on_replay_request(1, o.id("aggregate"), ReplayRequest{small, 3, 0, 0}, eff);
  o.outputs.rebase_all();
  const OutputChannel& c = o.outputs.at(small);
  CHECK(c.queue().at(0).id == 4);  // 1..3 are 4..6 now
  CHECK(c.queue().last_id() == 6);
  append_tuples(o, small, 4, 4);  // the fragment's id 4 goes out as 7
  CHECK(c.queue().last_id() == 7);
  CHECK(o.outbox.counters().at("rebased_streams") == 1);
}

TEST_CASE("the trims of an event are traced once per stream at trace_level data", "[roles][output_side]") {
  Outputs o(default_plan(HaMode::none, [](Settings& s) { s.trace_level = TraceLevel::data; }), "filter");
  const StreamId small = o.stream("small");
  append_tuples(o, small, 1, 10);
  o.outputs.on_level0_ack(0, o.id("aggregate"), Level0Ack{small, 4, false});
  o.outputs.on_level0_ack(0, o.id("aggregate"), Level0Ack{small, 7, false});
  Effects eff;
  o.outputs.trace_trims(0, eff);
  REQUIRE(traces_of(eff, TraceKind::trimmed) == 1);
  CHECK(eff.traces[0].get(TraceKey::position) == 7);
  CHECK(eff.traces[0].get(TraceKey::count) == 7);
  Effects none;
  o.outputs.trace_trims(1, none);
  CHECK(none.traces.empty());
}

TEST_CASE("a confirmation from my upstream owes a batch only to a consumer with several producers",
          "[roles][output_side]") {
  Outputs o(two_producer_plan(HaMode::upstream), "filter");
  const StreamId small = o.stream("small");
  const FragmentId merge = o.plan->fragment_id("merge");
  o.outputs.on_level1_ack(0, o.id("merge"), Level1Ack{small, 0, 1, Bytes{1}, {}});
  Effects first;
  o.outputs.pump(0, first);  // the new generation is owed a confirmation: an empty batch
  REQUIRE(messages_to<TupleBatch>(first, o.id("merge")).size() == 1);
  CHECK(messages_to<TupleBatch>(first, o.id("merge"))[0].held_generation == 0);  // my upstream holds none yet
  CHECK(o.outputs.confirm_forwarded(small, merge, 1));
  Effects confirmed;
  o.outputs.pump(1, confirmed);
  REQUIRE(messages_to<TupleBatch>(confirmed, o.id("merge")).size() == 1);
  CHECK(messages_to<TupleBatch>(confirmed, o.id("merge"))[0].held_generation == 1);
  CHECK_FALSE(o.outputs.confirm_forwarded(small, merge, 1));
}

TEST_CASE("a gap fill asked from before what was trimmed is served as a replay from there", "[roles][output_side]") {
  // Real campaign case 316 with ZeroMQ's 100 ms reconnect: an amnesia primary took a stale batch
  // as its start and asked, every retransmit timeout, for a gap its producer had trimmed; the gap
  // fill sent nothing and the output stopped. Now what is still held follows the asked position.
  Outputs o(default_plan(HaMode::amnesia), "filter");
  const StreamId small = o.stream("small");
  const NodeId agg = o.id("aggregate");
  append_tuples(o, small, 1, 10);
  Effects sent;
  o.outputs.pump(0, sent);
  o.outputs.on_level0_ack(0, agg, Level0Ack{small, 10, false});
  REQUIRE(o.outputs.at(small).queue().trimmed_up_to() == 10);
  append_tuples(o, small, 11, 15);
  Effects more;
  o.outputs.pump(0, more);
  Effects eff;
  o.outputs.on_replay_request(1000, agg, ReplayRequest{small, 4, 0, 10}, eff);
  o.outputs.pump(1000, eff);
  const auto batches = messages_to<TupleBatch>(eff, agg);
  REQUIRE_FALSE(batches.empty());
  CHECK(batches.front().prev_id == 4);
  CHECK(ids_in(batches) == std::vector<TupleId>{11, 12, 13, 14, 15});
  CHECK(o.outbox.counters().at("gap_fills_of_trimmed") == 1);
  // A gap inside what is held is still filled by itself.
  Effects inside;
  o.outputs.on_replay_request(2000, agg, ReplayRequest{small, 11, 0, 13}, inside);
  CHECK(ids_in(messages_to<TupleBatch>(inside, agg)) == std::vector<TupleId>{12, 13});
}
