// OutputChannel on its own: the retained log with a cursor per consumer, the flow-control
// window, retransmission with back-off, trimming by level-0 and level-1 acks, rebasing, and the
// release gate (paper sections 2 and 4.3: output queues are logs trimmed by queue-trimming
// acknowledgements).
#include <catch2/catch.hpp>

#include "primary/output_channel.h"
#include "roles/role_test_support.h"

using namespace hapair;
using hapair::test::aborts;

namespace {

constexpr StreamId kOutStream = 2;
constexpr NodeId kConsumer = 7;
constexpr FragmentId kConsumerFragment = 4;

ConsumerState consumer(NodeId n = kConsumer, bool retention = false) {
  ConsumerState c;
  c.node = n;
  c.fragment = kConsumerFragment;
  c.retention = retention;
  return c;
}

OutputChannel channel_with(TupleId count, std::size_t tuples_max = 100) {
  OutputChannel o(kOutStream, tuples_max);
  for (TupleId id = 1; id <= count; ++id) o.append(Tuple{id, 0, 0, 0, 0});
  return o;
}

std::vector<TupleId> ids_of(const std::vector<OutgoingBatch>& out) {
  std::vector<TupleId> ids;
  for (const auto& b : out)
    for (const auto& t : b.batch.tuples) ids.push_back(t.id);
  return ids;
}

}  // namespace

TEST_CASE("an output channel sends in batches up to the flow-control window", "[roles][output_channel]") {
  OutputChannel o = channel_with(10);
  o.add_consumer(consumer());
  std::vector<OutgoingBatch> out;
  const PumpReport r = o.pump(0, 2, 5, out);
  CHECK(r.tuples_sent == 5);
  REQUIRE(out.size() == 3);  // 2 + 2 + 1: the window stops it
  CHECK(out[0].to == kConsumer);
  CHECK(out[0].batch.prev_id == 0);
  CHECK(out[1].batch.prev_id == 2);
  CHECK(ids_of(out) == std::vector<TupleId>{1, 2, 3, 4, 5});
  out.clear();
  CHECK(o.pump(1, 2, 5, out).tuples_sent == 0);  // nothing until an ack
  REQUIRE(o.on_level0_ack(2, kConsumer, Level0Ack{kOutStream, 3, false}));
  o.pump(3, 2, 5, out);
  CHECK(ids_of(out) == std::vector<TupleId>{6, 7, 8});
  CHECK_FALSE(o.on_level0_ack(4, kConsumer + 1, Level0Ack{kOutStream, 3, false}));  // no such consumer
}

TEST_CASE("a consumer that makes no progress is rewound to its ack with back-off", "[roles][output_channel]") {
  OutputChannel o = channel_with(4);
  o.add_consumer(consumer());
  std::vector<OutgoingBatch> out;
  o.pump(0, 10, 10, out);
  std::int64_t retransmissions = 0;
  CHECK(o.retransmit(999, 1'000, retransmissions) == 1'000);
  CHECK(retransmissions == 0);
  // One timeout: rewound; the next one waits twice as long.
  CHECK(o.retransmit(1'000, 1'000, retransmissions) == 3'000);
  CHECK(retransmissions == 1);
  out.clear();
  o.pump(1'000, 10, 10, out);
  CHECK(ids_of(out) == std::vector<TupleId>{1, 2, 3, 4});
  CHECK(o.retransmit(2'999, 1'000, retransmissions) == 3'000);
  CHECK(retransmissions == 1);
  // Progress resets the back-off.
  o.on_level0_ack(3'000, kConsumer, Level0Ack{kOutStream, 4, false});
  CHECK(o.retransmit(3'001, 1'000, retransmissions) == kNever);
}

TEST_CASE("the queue is trimmed to the slowest consumer's acknowledgement", "[roles][output_channel]") {
  OutputChannel o = channel_with(10);
  o.add_consumer(consumer(7));
  o.add_consumer(consumer(8, true));  // retains until its level-1 ack
  o.on_level0_ack(0, 7, Level0Ack{kOutStream, 6, false});
  o.on_level0_ack(0, 8, Level0Ack{kOutStream, 8, false});
  CHECK(o.trim(0) == 0);  // node 8 sent no level-1 ack yet
  o.add_level1(kConsumerFragment, 8, Level1Ack{kOutStream, 4, 1, {}, {}});  // a passive standby's direct ack
  CHECK(o.trim(0) == 4);
  CHECK(o.queue().trimmed_up_to() == 4);
  o.add_level1(kConsumerFragment, 8, Level1Ack{kOutStream, 7, 2, {}, {}});
  CHECK(o.trim(1) == 1);  // min(6, 7) less a margin of 1
  CHECK(o.acked_internal() == 6);
  CHECK(o.trimmed_internal() == 5);
}

TEST_CASE("a resuming consumer is sent what follows its position, flagged as replay", "[roles][output_channel]") {
  OutputChannel o = channel_with(6);
  ConsumerState c = consumer();
  c.ready = false;
  o.add_consumer(c);
  std::vector<OutgoingBatch> out;
  o.pump(0, 10, 10, out);
  CHECK(out.empty());  // not ready until it says where to resume
  CHECK_FALSE(o.all_ready());
  CHECK(o.resume(kConsumer, 3, false, 0) == 0);
  CHECK(o.all_ready());
  o.pump(0, 10, 10, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].batch.replay);
  CHECK(ids_of(out) == std::vector<TupleId>{4, 5, 6});
  // Asking for what was trimmed already reports the missing tuples.
  o.on_level0_ack(1, kConsumer, Level0Ack{kOutStream, 6, false});
  o.trim(0);
  CHECK(o.resume(kConsumer, 2, false, 2) == 4);
  // Only new tuples: the cursor moves to the end.
  CHECK(o.resume(kConsumer, 0, true, 3) == 0);
  out.clear();
  o.pump(3, 10, 10, out);
  CHECK(out.empty());
}

TEST_CASE("a gap fill re-sends only the lost range to a sending consumer", "[roles][output_channel]") {
  OutputChannel o = channel_with(10);
  o.add_consumer(consumer());
  std::vector<OutgoingBatch> out;
  o.pump(0, 10, 10, out);
  auto fill = o.gap_fill(kConsumer, 3, 6, 2);
  REQUIRE(fill);
  REQUIRE(fill->size() == 2);
  CHECK((*fill)[0].prev_id == 3);
  CHECK((*fill)[1].prev_id == 5);
  CHECK((*fill)[1].tuples.back().id == 6);
  o.set_sending(kConsumer, false);
  CHECK_FALSE(o.gap_fill(kConsumer, 3, 6, 2));
}

TEST_CASE("rebasing puts retained output above every id a consumer was sent", "[roles][output_channel]") {
  OutputChannel o = channel_with(3);
  ConsumerState c = consumer();
  c.sent_up_to = 10;  // the consumer accepted up to 10 from the old primary
  o.add_consumer(c);
  o.rebase();
  CHECK(o.offset() == 10);
  CHECK(o.queue().at(0).id == 11);
  CHECK(o.queue().last_id() == 13);
  o.append(Tuple{4, 0, 0, 0, 0});  // internal id 4 is wire id 14
  CHECK(o.queue().last_id() == 14);
  CHECK(o.consumers()[0].replay_until == 13);
}

TEST_CASE("the release gate holds output and only moves forward", "[roles][output_channel]") {
  OutputChannel o = channel_with(4);
  o.add_consumer(consumer());
  o.hold_after_last();  // what exists (1..4) is released
  CHECK(o.gate().held());
  CHECK(o.gate().limit() == 4);
  for (TupleId id = 5; id <= 8; ++id) o.append(Tuple{id, 0, 0, 0, 0});
  std::vector<OutgoingBatch> out;
  o.pump(0, 10, 10, out);
  CHECK(ids_of(out) == std::vector<TupleId>{1, 2, 3, 4});
  o.release_up_to(6);
  out.clear();
  o.pump(1, 10, 10, out);
  CHECK(ids_of(out) == std::vector<TupleId>{5, 6});
  o.hold_after_last();  // a new standby: held from here on, never back
  CHECK(o.gate().limit() == 8);
  CHECK(o.release_all() == 0);
  CHECK_FALSE(o.gate().held());
  ReleaseGate g;
  g.hold_after(3);
  g.release_up_to(3);
  g.release_up_to(9);
  CHECK(g.limit() == 9);
}

TEST_CASE("opening the gate reports what it held", "[roles][output_channel]") {
  OutputChannel o = channel_with(2);
  o.hold_after_last();
  for (TupleId id = 3; id <= 5; ++id) o.append(Tuple{id, 0, 0, 0, 0});
  CHECK(o.release_all() == 3);
  CHECK(o.release_all() == 0);
}

TEST_CASE("a new restart-point generation from a consumer is owed a confirmation", "[roles][output_channel]") {
  OutputChannel o = channel_with(2);
  o.add_consumer(consumer(kConsumer, true));
  o.add_level1(kConsumerFragment, kConsumer, Level1Ack{kOutStream, 1, 1, Bytes{1}, {}});
  std::vector<OutgoingBatch> out;
  PumpReport r = o.pump(0, 10, 10, out);
  CHECK(r.confirmations == 0);  // the tuples carry held_generation
  out.clear();
  o.add_level1(kConsumerFragment, kConsumer, Level1Ack{kOutStream, 2, 2, Bytes{2}, {}});
  r = o.pump(1, 10, 10, out);
  CHECK(r.confirmations == 1);  // nothing to send: an empty batch does
  REQUIRE(out.size() == 1);
  CHECK(out[0].batch.tuples.empty());
  CHECK(out[0].batch.prev_id == 2);
  CHECK(o.restart_points().stores().at(kConsumerFragment).newest_generation() == 2);
  CHECK(out[0].batch.held_generation == 2);
  CHECK(o.confirm_forwarded(kConsumerFragment, 2));
  CHECK_FALSE(o.confirm_forwarded(kConsumerFragment, 1));
  CHECK(o.restart_points().forwarded_confirmed(kConsumerFragment) == 2);
}

TEST_CASE("the end of stream goes out after the last tuple and is acknowledged", "[roles][output_channel]") {
  OutputChannel o = channel_with(2);
  o.add_consumer(consumer());
  o.end_stream();
  std::vector<OutgoingBatch> out;
  o.pump(0, 10, 10, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].batch.end_of_stream);
  CHECK_FALSE(o.acked_to_end());
  o.on_level0_ack(1, kConsumer, Level0Ack{kOutStream, 2, true});
  CHECK(o.acked_to_end());
}


TEST_CASE("the release gate stops the node rather than move back", "[roles][output_channel]") {
  CHECK(aborts([] {
    ReleaseGate g;
    g.hold_after(5);
    g.release_up_to(4);
  }));
  CHECK(aborts([] {
    ReleaseGate g;
    g.hold_after(5);
    g.hold_after(4);
  }));
  CHECK(aborts([] {
    ReleaseGate g;  // open: nothing is held, so nothing can be released
    g.release_up_to(4);
  }));
  CHECK_FALSE(aborts([] {
    ReleaseGate g;
    g.hold_after(5);
    g.release_up_to(5);
  }));
}
