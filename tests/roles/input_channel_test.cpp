// InputChannel on its own: duplicate elimination by tuple id, the gap stash, the level-0 ack
// schedule and the replay requests after a takeover (paper section 4: downstream drops
// duplicates by tuple id; section 4.3: level-0 acks).
#include <catch2/catch.hpp>

#include "primary/input_channel.h"

using namespace hapair;

namespace {

constexpr StreamId kStream = 3;
constexpr FragmentId kProducer = 1;

TupleBatch batch(TupleId prev, TupleId first, TupleId last, bool replay = false) {
  TupleBatch b;
  b.stream = kStream;
  b.prev_id = prev;
  b.replay = replay;
  for (TupleId id = first; id <= last; ++id) b.tuples.push_back(Tuple{id, static_cast<TimeUs>(id) * 1000, 0, 0, 0});
  return b;
}

const InputLimits kLimits{8, 100, 5'000};

}  // namespace

TEST_CASE("an input channel queues new tuples in order and drops re-sent ones by id", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  Accepted a = in.accept(0, batch(0, 1, 3), kLimits, queue);
  CHECK(a.queued == 3);
  CHECK(a.duplicates == 0);
  CHECK(in.last_accepted() == 3);
  // The producer re-sends 2..4 (our ack was lost): 2 and 3 are duplicates, 4 is new.
  a = in.accept(10, batch(1, 2, 4), kLimits, queue);
  CHECK(a.queued == 1);
  CHECK(a.duplicates == 2);
  REQUIRE(queue.size() == 4);
  CHECK(queue.back().tuple.id == 4);
  CHECK(in.queued() == 4);
  // A duplicate means the producer may have lost our ack: one is owed at once.
  auto ack = in.level0_due(20, 1'000'000, 100, false);
  REQUIRE(ack);
  CHECK(ack->up_to == 0);  // nothing processed yet
}

TEST_CASE("a batch beyond a lost one is stashed and the gap alone is asked for", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  in.accept(0, batch(0, 1, 2), kLimits, queue);
  // 3..4 were lost; 5..6 arrive with prev_id 4.
  Accepted a = in.accept(100, batch(4, 5, 6), kLimits, queue);
  CHECK(a.gap_detected);
  CHECK(a.queued == 0);
  REQUIRE(a.gap_request);
  CHECK(a.gap_request->after_id == 2);
  CHECK(a.gap_request->up_to == 4);
  // The same gap is not asked for again within the retransmission timeout...
  a = in.accept(200, batch(6, 7, 7), kLimits, queue);
  CHECK_FALSE(a.gap_request);
  // ...but is after it.
  a = in.accept(100 + kLimits.retransmit_us, batch(7, 8, 8), kLimits, queue);
  CHECK(a.gap_request);
  // The gap fill arrives: everything stashed follows, in order.
  a = in.accept(6'000, batch(2, 3, 4), kLimits, queue);
  CHECK(a.queued == 6);
  CHECK(in.last_accepted() == 8);
  std::vector<TupleId> ids;
  for (const auto& item : queue.items()) ids.push_back(item.tuple.id);
  CHECK(ids == std::vector<TupleId>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("the gap stash holds at most one flow-control window", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  in.accept(0, batch(0, 1, 1), kLimits, queue);
  CHECK_FALSE(in.accept(1, batch(5, 6, 10), kLimits, queue).stash_overflow);  // 5 tuples
  CHECK(in.accept(2, batch(10, 11, 14), kLimits, queue).stash_overflow);      // 5 + 4 > 8
}

TEST_CASE("level-0 acks are due after the interval or half a window of processed tuples", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  in.accept(0, batch(0, 1, 5), kLimits, queue);
  CHECK_FALSE(in.level0_due(0, 1'000, 3, false));  // nothing processed
  in.processed_tuple(queue.at(0).tuple);
  CHECK(in.next_level0_due_us(1'000) == 1'000);
  CHECK_FALSE(in.level0_due(500, 1'000, 3, false));
  in.processed_tuple(queue.at(1).tuple);
  in.processed_tuple(queue.at(2).tuple);
  auto ack = in.level0_due(600, 1'000, 3, false);  // half a window processed
  REQUIRE(ack);
  CHECK(ack->up_to == 3);
  CHECK_FALSE(ack->end_of_stream);
  CHECK(in.next_level0_due_us(1'000) == kNever);
  in.processed_tuple(queue.at(3).tuple);
  CHECK(in.level0_due(1'600, 1'000, 3, false));  // the interval passed
  in.processed_tuple(queue.at(4).tuple);
  CHECK(in.level0_due(1'601, 1'000, 3, true));  // forced
  CHECK(in.queued() == 0);
}

TEST_CASE("the end of stream is acknowledged once it is processed", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  TupleBatch b = batch(0, 1, 1);
  b.end_of_stream = true;
  in.accept(0, b, kLimits, queue);
  REQUIRE(queue.size() == 2);
  CHECK(queue.back().eos);
  in.processed_tuple(queue.at(0).tuple);
  in.processed_end_of_stream();
  auto ack = in.level0_due(0, 1'000'000, 100, false);
  REQUIRE(ack);
  CHECK(ack->end_of_stream);
  CHECK_FALSE(in.level0_due(1, 1'000'000, 100, false));
}

TEST_CASE("a replay request is repeated until the producer answers", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  in.accept(0, batch(0, 1, 4), kLimits, queue);
  const ReplayRequest r = in.ask_replay(100, 2, 7);
  CHECK(r == ReplayRequest{kStream, 2, 7, 0});
  CHECK(in.awaiting_producer());
  CHECK(in.last_accepted() == 2);  // 3 and 4 will come again, as replay
  CHECK_FALSE(in.replay_request_due(100 + kLimits.retransmit_us - 1, kLimits.retransmit_us));
  auto again = in.replay_request_due(100 + kLimits.retransmit_us, kLimits.retransmit_us);
  REQUIRE(again);
  CHECK(*again == r);
  CHECK(in.next_replay_request_us(kLimits.retransmit_us) == 100 + 2 * kLimits.retransmit_us);
  // The replay arrives: the phase is reported as it begins and ends.
  Accepted a = in.accept(9'000, batch(2, 3, 4, true), kLimits, queue);
  CHECK_FALSE(in.awaiting_producer());
  CHECK(a.replay_batches);
  CHECK(a.replayed_tuples == 2);
  REQUIRE(a.replay_changes.size() == 1);
  CHECK_FALSE(a.replay_changes[0]);
  a = in.accept(9'100, batch(4, 5, 5), kLimits, queue);
  REQUIRE(a.replay_changes.size() == 1);
  CHECK(a.replay_changes[0] == std::optional<std::uint64_t>{2});
  CHECK(in.next_replay_request_us(kLimits.retransmit_us) == kNever);
}

TEST_CASE("after asking for only new tuples the next batch is taken whatever its prev_id", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  in.ask_replay(0, kReplayOnlyNew, 0);
  Accepted a = in.accept(1, batch(40, 41, 42), kLimits, queue);
  CHECK_FALSE(a.gap_detected);
  CHECK(a.queued == 2);
  // From then on gaps count again.
  CHECK(in.accept(2, batch(50, 51, 51), kLimits, queue).gap_detected);
}

TEST_CASE("a new producer primary holds none of my restart points until it says so", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  TupleBatch b = batch(0, 1, 2);
  b.held_generation = 5;
  in.accept(0, b, kLimits, queue);
  CHECK(in.held_generation() == 5);
  const ReplayRequest r = in.ask_new_producer(10);
  CHECK(r == ReplayRequest{kStream, 2, 0, 0});
  CHECK(in.held_generation() == 0);
  CHECK(in.awaiting_producer());
}

TEST_CASE("the conservative horizon moves with processed timestamps", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  InputQueue queue;
  in.accept(0, batch(0, 1, 5), kLimits, queue);
  in.keep_horizon(2'500);
  for (const auto& item : queue.items()) in.processed_tuple(item.tuple);  // ts = id ms
  // Tuples older than 2.5 ms before the newest (ts 5 ms) fell out: ids 1 and 2.
  CHECK(in.beyond_horizon() == 2);
}

TEST_CASE("a checkpoint's input position is installed as processed and accepted", "[roles][input_channel]") {
  InputChannel in(kStream, kProducer);
  in.restore(30, true);
  CHECK(in.processed() == 30);
  CHECK(in.last_accepted() == 30);
  CHECK(in.eos_processed());
  CHECK(in.next_level0_due_us(1'000) == kNever);
}
