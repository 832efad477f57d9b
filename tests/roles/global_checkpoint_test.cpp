// The pure parts of global checkpoints (docs/CHECKPOINT.md; Carbone et al. 2015, Flink's
// CheckpointCoordinator): the in-memory checkpoint store, the coordinator core (trigger, complete
// when every participant's snapshot is in, keep the newest N, abandon on a timeout or a failure,
// roll back to the newest complete checkpoint, go on from the store after a restart), barrier
// alignment and the failover regions.
#include <catch2/catch.hpp>

#include "checkpoint/barrier_aligner.h"
#include "primary/checkpoint_store.h"
#include "checkpoint/coordinator.h"
#include "checkpoint/fragment_checkpointer.h"
#include "checkpoint/global_snapshot.h"
#include "checkpoint/regions.h"
#include "roles/role_test_support.h"

using namespace hapair;

namespace {

const Bytes kState{1, 2, 3};

std::vector<CheckpointParticipant> three_fragments() { return {{0, "source"}, {1, "filter"}, {2, "aggregate"}}; }

CoordinatorSettings coordinator_every_100ms() {
  CoordinatorSettings s;
  s.interval_us = 100'000;
  s.timeout_us = 1'000'000;
  s.checkpoints_retained = 2;
  return s;
}

// Every participant sends its snapshot of `id`.
CoordinatorOutput all_snapshots(CheckpointCoordinator& c, TimeUs now, CheckpointId id) {
  CoordinatorOutput out;
  for (const CheckpointParticipant& p : three_fragments()) c.snapshot(now, p.fragment, id, Bytes{static_cast<std::uint8_t>(id)}, out);
  return out;
}

// A coordinator of three fragments on an in-memory store, started at 0.
struct Coordinated {
  explicit Coordinated(std::map<FragmentId, std::vector<FragmentId>> sets = {})
      : c(three_fragments(), std::move(sets), coordinator_every_100ms(), store) {
    c.start(0, out);
  }
  MemoryCheckpointStore store;
  CheckpointCoordinator c;
  CoordinatorOutput out;
};

// Starts `c` at 0 (unless it was), completes checkpoint 1 and leaves checkpoint 2 with the source's snapshot only.
void one_complete_one_half(CheckpointCoordinator& c, bool start = true) {
  CoordinatorOutput out;
  if (start) c.start(0, out);
  c.tick(100'000, out);
  all_snapshots(c, 110'000, 1);
  c.tick(200'000, out);
  c.snapshot(210'000, 0, 2, kState, out);
  REQUIRE(out.triggered == std::vector<CheckpointId>{1, 2});
}

}  // namespace

TEST_CASE("the in-memory checkpoint store shows only complete checkpoints and keeps the newest N",
          "[roles][checkpoint]") {
  MemoryCheckpointStore store;
  CHECK(!store.newest_complete());
  store.put_snapshot(1, "filter", kState);
  CHECK(store.highest_started() == 1);
  CHECK(!store.snapshot(1, "filter"));  // not complete yet
  store.complete(1, {"filter"}, 2);
  CHECK(store.snapshot(1, "filter") == kState);
  for (CheckpointId id : {2, 3, 4}) {
    store.put_snapshot(id, "filter", Bytes{static_cast<std::uint8_t>(id)});
    store.complete(id, {"filter"}, 2);
  }
  CHECK(store.completed() == std::vector<CheckpointId>{3, 4});
  CHECK(!store.snapshot(2, "filter"));
  // An unfinished checkpoint is invisible; a newer complete one discards it.
  store.put_snapshot(5, "filter", kState);
  store.put_snapshot(6, "filter", kState);
  CHECK(store.newest_complete() == 4u);
  store.complete(6, {"filter"}, 2);
  CHECK(store.completed() == std::vector<CheckpointId>{4, 6});
  CHECK(store.highest_started() == 6);
}

TEST_CASE("the coordinator triggers every interval and completes a checkpoint once every participant's snapshot is in",
          "[roles][checkpoint]") {
  Coordinated k;
  auto& [store, c, out] = k;
  CHECK(c.next_wakeup_us() == 100'000);
  c.tick(99'999, out);
  CHECK(out.triggered.empty());
  c.tick(100'000, out);
  REQUIRE(out.triggered == std::vector<CheckpointId>{1});
  // At most one in flight: no second trigger while the first is unfinished.
  c.tick(250'000, out);
  CHECK(out.triggered.size() == 1);
  CoordinatorOutput part;
  c.snapshot(260'000, 0, 1, kState, part);
  c.snapshot(260'000, 1, 1, kState, part);
  c.snapshot(260'000, 1, 1, kState, part);  // a repetition
  CHECK(part.completed.empty());
  CHECK(c.stale_snapshots() == 1);
  CHECK(!store.newest_complete());
  c.snapshot(270'000, 2, 1, kState, part);
  CHECK(part.completed == std::vector<CheckpointId>{1});
  CHECK(store.newest_complete() == 1u);
  CHECK(store.snapshot(1, "aggregate") == kState);
  CHECK(c.newest_complete() == 1u);
  CHECK(!c.in_flight());
}

TEST_CASE("the coordinator abandons a checkpoint that times out and triggers the next with a higher id",
          "[roles][checkpoint]") {
  Coordinated k;
  auto& [store, c, out] = k;
  c.tick(100'000, out);
  c.snapshot(110'000, 0, 1, kState, out);
  c.tick(1'100'000, out);
  CHECK(out.abandoned == std::vector<CheckpointId>{1});
  CHECK(out.triggered == std::vector<CheckpointId>{1, 2});
  // A late snapshot of the abandoned checkpoint is stale.
  c.snapshot(1'100'001, 1, 1, kState, out);
  CHECK(c.stale_snapshots() == 1);
  all_snapshots(c, 1'200'000, 2);
  CHECK(store.completed() == std::vector<CheckpointId>{2});
}

TEST_CASE("a failure during a checkpoint abandons it and rolls back to the newest complete one",
          "[roles][checkpoint]") {
  Coordinated k({{1, {1, 2}}, {2, {1, 2}}});
  CheckpointCoordinator& c = k.c;
  one_complete_one_half(c, false);  // checkpoint 2 is half done when the filter fails
  CoordinatorOutput failed;
  c.fragment_failed(220'000, 1, failed);
  CHECK(failed.abandoned == std::vector<CheckpointId>{2});
  REQUIRE(failed.rollbacks.size() == 1);
  CHECK(failed.rollbacks[0] == Rollback{1, 1, 1, {1, 2}});
  // No checkpoint starts until every rolled-back fragment restored.
  c.tick(10'000'000, failed);
  CHECK(failed.triggered.empty());
  CHECK(c.next_wakeup_us() == kNever);
  c.restored(10'000'001, 1, 1, failed);
  CHECK(c.rolling_back());
  c.restored(10'000'002, 2, 1, failed);
  CHECK(!c.rolling_back());
  c.tick(10'100'002, failed);
  CHECK(failed.triggered == std::vector<CheckpointId>{3});
}

TEST_CASE("a failure before any checkpoint completed rolls back to the start of the run", "[roles][checkpoint]") {
  Coordinated k;
  auto& [store, c, out] = k;
  c.fragment_failed(50'000, 2, out);
  REQUIRE(out.rollbacks.size() == 1);
  CHECK(out.rollbacks[0].to == 0);
  CHECK(out.rollbacks[0].fragments == std::vector<FragmentId>{2});
}

TEST_CASE("a restarted coordinator goes on from the store: the newest complete checkpoint, ids above every started one",
          "[roles][checkpoint]") {
  MemoryCheckpointStore store;
  {
    CheckpointCoordinator first(three_fragments(), {}, coordinator_every_100ms(), store);
    one_complete_one_half(first);  // the coordinator dies with checkpoint 2 half written
  }
  CheckpointCoordinator second(three_fragments(), {}, coordinator_every_100ms(), store);
  CoordinatorOutput out;
  second.start(300'000, out);
  CHECK(second.newest_complete() == 1u);
  second.tick(400'000, out);
  CHECK(out.triggered == std::vector<CheckpointId>{3});
  second.fragment_failed(410'000, 1, out);
  REQUIRE(out.rollbacks.size() == 1);
  CHECK(out.rollbacks[0].to == 1);
}

TEST_CASE("barrier alignment holds an input at its barrier until every input reached its own", "[roles][checkpoint]") {
  BarrierAligner a({3, 5});
  CHECK(a.limit(3) == BarrierAligner::kNoLimit);
  CHECK(a.barrier(3, 1, 10) == BarrierAligner::Heard::started);
  CHECK(a.limit(3) == 10);
  CHECK(a.limit(5) == BarrierAligner::kNoLimit);
  CHECK(!a.ready({{3, 10}, {5, 40}}));  // stream 5's barrier has not come
  // A barrier may come before the tuples it follows: stream 5 is held at 50, processed to 40.
  CHECK(a.barrier(5, 1, 50) == BarrierAligner::Heard::added);
  CHECK(a.barrier(5, 1, 50) == BarrierAligner::Heard::repeated);
  CHECK(!a.ready({{3, 10}, {5, 40}}));
  REQUIRE(a.ready({{3, 10}, {5, 50}}) == 1u);
  CHECK(a.taken(1) == std::map<StreamId, TupleId>{{3, 10}, {5, 50}});
  CHECK(a.limit(3) == BarrierAligner::kNoLimit);
  CHECK(a.barrier(3, 1, 10) == BarrierAligner::Heard::stale);
}

TEST_CASE("a newer checkpoint's barrier abandons an unfinished alignment, and an ended input counts as aligned",
          "[roles][checkpoint]") {
  BarrierAligner a({3, 5});
  a.barrier(3, 1, 10);
  CHECK(a.barrier(3, 2, 20) == BarrierAligner::Heard::superseded);
  CHECK(a.abandoned() == 1);
  CHECK(a.aligning() == 2u);
  CHECK(a.barrier(5, 1, 7) == BarrierAligner::Heard::stale);
  a.ended(5, 60);
  CHECK(!a.ready({{3, 20}, {5, 59}}));
  CHECK(a.ready({{3, 20}, {5, 60}}) == 2u);
  CHECK(a.taken(2) == std::map<StreamId, TupleId>{{3, 20}, {5, 60}});
}

TEST_CASE("full failover rolls back every operator fragment, region failover the region cut at retained streams",
          "[roles][checkpoint]") {
  auto plan = hapair::test::two_producer_plan(HaMode::upstream);
  const FragmentId filter = plan->fragment_id("filter");
  const FragmentId merge = plan->fragment_id("merge");
  const std::vector<FragmentId> both = filter < merge ? std::vector<FragmentId>{filter, merge} : std::vector<FragmentId>{merge, filter};
  const std::vector<bool> retained(plan->streams.size(), true);
  const std::vector<bool> none_retained(plan->streams.size(), false);
  CHECK(failover_fragments(*plan, filter, FailoverMode::full, retained) == both);
  CHECK(failover_fragments(*plan, filter, FailoverMode::region, retained) == std::vector<FragmentId>{filter});
  // Without retention the pipelined edge filter -> merge joins them; sources and sinks never roll back.
  CHECK(failover_fragments(*plan, merge, FailoverMode::region, none_retained) == both);
  const auto sets = rollback_sets(*plan, FailoverMode::region, retained);
  CHECK(sets.size() == 2);
  CHECK(parse_failover_mode("region") == FailoverMode::region);
  CHECK(!parse_failover_mode("regional"));
  CHECK(std::string(allowed_failover_modes()) == "full, region");
}

TEST_CASE("a fragment reading a source takes the trigger as the barrier after what it accepted, and trims only to complete checkpoints",
          "[roles][checkpoint]") {
  // Stream 1 comes from a source, stream 2 from an operator fragment; the fragment writes stream 7.
  FragmentCheckpointer f({1, 2}, {1});
  CHECK(f.trigger(1, {{1, 40}, {2, 5}}));
  CHECK(!f.trigger(1, {{1, 41}}));  // heard already
  CHECK(f.limit(1) == 40);
  CHECK(f.limit(2) == BarrierAligner::kNoLimit);
  CHECK(!f.due({{1, 40}, {2, 9}}, {{7, 3}}));  // no barrier on stream 2 yet
  CHECK(f.barrier(2, 1, 12) == BarrierAligner::Heard::added);
  CHECK(!f.due({{1, 40}, {2, 9}}, {{7, 3}}));
  const auto due = f.due({{1, 40}, {2, 12}}, {{7, 4}});
  REQUIRE(due);
  CHECK(due->id == 1);
  CHECK(due->inputs == std::map<StreamId, TupleId>{{1, 40}, {2, 12}});
  CHECK(due->outputs == std::map<StreamId, TupleId>{{7, 4}});  // the barrier it sends its consumers
  CHECK(f.limit(1) == BarrierAligner::kNoLimit);
  // Checkpoint 2 is taken too; 1 completes, then 2; a repeated completion trims nothing more.
  f.trigger(2, {{1, 80}});
  f.barrier(2, 2, 30);
  REQUIRE(f.due({{1, 80}, {2, 30}}, {{7, 9}}));
  CHECK(f.completed(1) == std::map<StreamId, TupleId>{{1, 40}, {2, 12}});
  CHECK(f.completed(2) == std::map<StreamId, TupleId>{{1, 80}, {2, 30}});
  CHECK(!f.completed(2));
  CHECK(!f.completed(3));  // never taken here
  CHECK(f.last_complete() == 2);
}

TEST_CASE("a global snapshot is a full checkpoint payload without output tuples and reads back exactly",
          "[roles][checkpoint]") {
  DueSnapshot due;
  due.id = 7;
  due.inputs = {{1, 40}, {2, 12}};
  due.outputs = {{7, 4}};
  const GlobalSnapshot s = global_snapshot(due, Bytes{9, 8, 7});
  const Bytes payload = encode_global_snapshot(s);
  CHECK(decode_global_snapshot(payload) == s);
  // A passive standby's checkpoint with retained output tuples is not a global snapshot.
  CheckpointContent with_tuples;
  with_tuples.id = 3;
  CheckpointOutput o;
  o.stream = 7;
  o.last_id = 1;
  o.tuples = {Tuple{1, 1, 0, 0.0, 1}};
  with_tuples.outputs.push_back(o);
  CHECK(!decode_global_snapshot(serialize_checkpoint(with_tuples)));
  // A truncated payload is refused, never half-read.
  CHECK(!decode_global_snapshot(Bytes(payload.begin(), payload.end() - 1)));
}
