// InputSide (primary/input_side.h): what a node accepts from its producers' primaries, the input
// queue the workload takes from, level-0 acks and replay requests. Paper: downstream servers
// drop duplicates by tuple id (section 4) and send level-0 acks, "received up to id x" (section
// 4.3).
#include <catch2/catch.hpp>

#include "primary/input_side.h"
#include "roles/role_test_support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

using Inputs = Parts;

}  // namespace

namespace {

// The workload's way of taking one item: the front run's first, marked processed.
std::optional<InputItem> take_next(InputSide& inputs) {
  if (inputs.queued() == 0) return std::nullopt;
  const InputQueue::Run& run = inputs.front_run();
  const InputItem item = run.eos ? InputItem{run.stream, Tuple{}, true, run.from, run.replayed}
                                 : InputItem{run.stream, *run.first(), false, run.from, run.replayed};
  inputs.take_front(1);
  return item;
}

}  // namespace

TEST_CASE("an input side queues what the producer's primary sends, drops the rest and tells an impostor",
          "[roles][input_side]") {
  Inputs in(default_plan(HaMode::passive), "aggregate");
  const StreamId small = in.stream("small");
  Effects eff;
  CHECK(in.inputs.accept_batch(0, in.id("filter"), batch_after(small, 0, 3), eff) == 3);
  CHECK(in.inputs.accept_batch(1, in.id("filter"), batch_after(small, 1, 3), eff) == 1);  // ids 2, 3 again
  CHECK(in.inputs.duplicates_dropped() == 2);
  CHECK(in.inputs.queued() == 4);
  // The filter's standby acts as the filter's primary: dropped, and told who is.
  Effects impostor;
  CHECK(in.inputs.accept_batch(2, in.id("filter.backup"), batch_after(small, 4, 1), impostor) == 0);
  CHECK(messages_to<Takeover>(impostor, in.id("filter.backup")).size() == 1);
  CHECK(in.outbox.counters().at("not_from_primary_dropped") == 1);
  CHECK(in.inputs.accept_batch(3, in.id("filter"), batch_after(in.stream("raw"), 0, 1), eff) == 0);
  CHECK(in.outbox.counters().at("unexpected_stream_dropped") == 1);
}

TEST_CASE("an item leaves the input queue only to be processed, marked processed on its stream",
          "[roles][input_side]") {
  Inputs in(default_plan(HaMode::none), "aggregate");
  const StreamId small = in.stream("small");
  Effects eff;
  TupleBatch b = batch_after(small, 0, 2);
  b.end_of_stream = true;
  in.inputs.accept_batch(0, in.id("filter"), b, eff);
  CHECK(in.inputs.queued() == 3);  // two tuples and the end of stream
  CHECK(take_next(in.inputs)->tuple.id == 1);
  CHECK(in.inputs.at(small).processed() == 1);
  CHECK(take_next(in.inputs)->tuple.id == 2);
  CHECK_FALSE(in.inputs.all_ended());
  CHECK(take_next(in.inputs)->eos);
  CHECK(in.inputs.all_ended());
  CHECK_FALSE(take_next(in.inputs).has_value());
}

TEST_CASE("the workload takes a run of queued tuples at once, each marked processed", "[roles][input_side]") {
  Inputs in(default_plan(HaMode::none), "aggregate");
  const StreamId small = in.stream("small");
  Effects eff;
  in.inputs.accept_batch(0, in.id("filter"), batch_after(small, 0, 5), eff);
  TupleBatch more = batch_after(small, 5, 2);
  more.end_of_stream = true;
  in.inputs.accept_batch(1, in.id("filter"), more, eff);
  CHECK(in.inputs.queued() == 8);
  // The two batches' tuples form one run (same stream, sender and replay flag), the end of
  // stream its own.
  REQUIRE(in.inputs.front_run().items() == 7);
  CHECK(in.inputs.front_run().first()->id == 1);
  in.inputs.take_front(3);
  CHECK(in.inputs.at(small).processed() == 3);
  CHECK(in.inputs.at(small).queued() == 4);
  CHECK(in.inputs.front_run().first()->id == 4);
  in.inputs.take_front(4);
  CHECK(in.inputs.at(small).processed() == 7);
  CHECK(in.inputs.at(small).queued() == 0);
  REQUIRE(in.inputs.queued() == 1);
  CHECK(in.inputs.front_run().eos);
  CHECK_FALSE(in.inputs.all_ended());
  in.inputs.take_front(1);
  CHECK(in.inputs.all_ended());
  CHECK(in.inputs.queued() == 0);
}

TEST_CASE("level-0 acks go to the producer's primary and its active standby", "[roles][input_side]") {
  Inputs in(default_plan(HaMode::active), "aggregate");
  const StreamId small = in.stream("small");
  Effects eff;
  in.inputs.accept_batch(0, in.id("filter"), batch_after(small, 0, 3), eff);
  while (take_next(in.inputs)) {
  }
  CHECK(in.inputs.next_ack_due_us() == us_from_ms(static_cast<double>(in.node.settings().ack_interval_ms)));
  Effects acks;
  in.inputs.send_level0_acks(1, acks, true);
  CHECK(messages_to<Level0Ack>(acks, in.id("filter")) == std::vector<Level0Ack>{Level0Ack{small, 3, false}});
  CHECK(messages_to<Level0Ack>(acks, in.id("filter.backup")).size() == 1);
  CHECK(in.inputs.next_ack_due_us() == kNever);
}

TEST_CASE("replay requests go to each producer's primary and are repeated until it answers", "[roles][input_side]") {
  Inputs in(two_producer_plan(HaMode::upstream), "merge");
  const StreamId small = in.stream("small");
  const StreamId s2 = in.stream("s2");
  Effects eff;
  in.inputs.accept_batch(0, in.id("s2"), batch_after(s2, 0, 4), eff);
  in.inputs.request_replay(0, eff, {{small, 7}}, 3);
  CHECK(messages_to<ReplayRequest>(eff, in.id("filter")) == std::vector<ReplayRequest>{ReplayRequest{small, 7, 3, 0}});
  CHECK(messages_to<ReplayRequest>(eff, in.id("s2")) == std::vector<ReplayRequest>{ReplayRequest{s2, 4, 3, 0}});
  CHECK(in.inputs.awaiting_producer());
  const TimeUs rt = in.node.retransmit_us();
  Effects again;
  CHECK(in.inputs.repeat_replay_requests(rt, again) == 2 * rt);
  CHECK(messages_to<ReplayRequest>(again).size() == 2);
  // The filter answers (its batch), s2 does not: only s2 is asked again.
  in.inputs.accept_batch(rt, in.id("filter"), batch_after(small, 7, 1), again);
  Effects once_more;
  in.inputs.repeat_replay_requests(2 * rt, once_more);
  CHECK(messages_to<ReplayRequest>(once_more, in.id("s2")).size() == 1);
  CHECK(messages_to<ReplayRequest>(once_more, in.id("filter")).empty());
}

TEST_CASE("a producer's takeover asks its new primary to continue after what was accepted", "[roles][input_side]") {
  Inputs in(default_plan(HaMode::passive), "aggregate");
  const StreamId small = in.stream("small");
  Effects eff;
  in.inputs.accept_batch(0, in.id("filter"), batch_after(small, 0, 5), eff);
  const Takeover t{in.plan->fragment_id("filter"), in.id("filter.backup"), 1, {}};
  in.inputs.ask_new_producer(1, t, eff);
  CHECK(messages_to<ReplayRequest>(eff, in.id("filter.backup")) == std::vector<ReplayRequest>{ReplayRequest{small, 5, 0, 0}});
  const Takeover other{in.plan->fragment_id("sink"), in.id("sink"), 1, {}};
  Effects none;
  in.inputs.ask_new_producer(1, other, none);
  CHECK(none.sends.empty());
}

TEST_CASE("an input side installs checkpoint positions, and a standby starts from nothing", "[roles][input_side]") {
  Inputs in(default_plan(HaMode::passive), "aggregate.backup");
  const StreamId small = in.stream("small");
  in.inputs.restore({CheckpointInput{small, 40, false}});
  CHECK(in.inputs.at(small).processed() == 40);
  CHECK(in.inputs.at(small).last_accepted() == 40);
  Effects eff;
  in.inputs.accept_batch(0, in.id("filter"), batch_after(small, 40, 2), eff);
  CHECK(in.inputs.queued() == 2);
  in.inputs.reset_for_standby();
  CHECK(in.inputs.queued() == 0);
  CHECK(in.inputs.at(small).processed() == 0);
}

TEST_CASE("with upstream backup's conservative rule every stream follows a horizon of event time",
          "[roles][input_side]") {
  Inputs in(default_plan(HaMode::upstream), "aggregate");
  const StreamId small = in.stream("small");
  Effects eff;
  in.inputs.accept_batch(0, in.id("filter"), batch_after(small, 0, 10), eff);  // ts 0.5 ms apart
  take_next(in.inputs);
  CHECK(in.inputs.at(small).beyond_horizon() == 0);  // no horizon kept: nothing named
  in.inputs.keep_horizon(2'000);
  while (take_next(in.inputs)) {
  }
  // The newest (id 10) is at 5 ms: ids at or before 2.5 ms (5) are out (id 1 was taken before).
  CHECK(in.inputs.at(small).beyond_horizon() == 5);
}
