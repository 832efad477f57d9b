// The coordinator of global checkpoints as a node core (checkpoint/coordinator_node.h,
// docs/CHECKPOINT.md): the messages it sends for its decisions (triggers to the fragments
// reading sources, completions to every coordinated fragment, rollbacks to every node of the
// fragments that roll back), the snapshots it reassembles from Checkpoint chunks into the store,
// the failures it detects (a lost connection, missed heartbeats) and what it drops.
#include <catch2/catch.hpp>

#include <algorithm>

#include "checkpoint/coordinator_node.h"
#include "node/approaches.h"
#include "node/node_factory.h"
#include "upstream_backup/approaches.h"
#include "protocols/topology_builders.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

constexpr HaMode kCoordinated = static_cast<HaMode>(202);

// source(0) -> filter(1) -> aggregate(2) -> sink(3); spares filter.spare(4), aggregate.spare(5);
// the coordinator is node 6.
std::shared_ptr<const Plan> plan() {
  Topology t = default_topology();
  t.settings.ha = kCoordinated;
  t.settings.failure_timeout_ms = 1000;
  return std::make_shared<const Plan>(make_plan(t, coordinated_catalog(kCoordinated)));
}

constexpr NodeId kFilter = 1, kAggregate = 2, kFilterSpare = 4, kAggregateSpare = 5, kCoordinator = 6;

CoordinatorNodeOptions every_100ms(FailoverMode failover = FailoverMode::full) {
  CoordinatorNodeOptions o;
  o.checkpoints.interval_us = 100'000;
  o.checkpoints.timeout_us = 1'000'000;
  o.checkpoints.checkpoints_retained = 2;
  o.failover = failover;
  return o;
}

Received from(NodeId sender, Message body, Epoch epoch = 0) { return Received{Envelope{Header{sender, epoch, 0}, std::move(body)}}; }

// The sends of `eff` whose body is a T, as (to, body).
template <class T>
std::vector<std::pair<NodeId, T>> sent(const Effects& eff) {
  std::vector<std::pair<NodeId, T>> out;
  for (const Outgoing& o : eff.sends)
    if (const auto* m = std::get_if<T>(&o.envelope.body)) out.emplace_back(o.to, *m);
  return out;
}

bool traced(const Effects& eff, TraceKind kind) {
  return std::any_of(eff.traces.begin(), eff.traces.end(), [&](const TraceEvent& e) { return e.kind == kind; });
}

const TraceEvent& the_trace(const Effects& eff, TraceKind kind) {
  auto it = std::find_if(eff.traces.begin(), eff.traces.end(), [&](const TraceEvent& e) { return e.kind == kind; });
  REQUIRE(it != eff.traces.end());
  return *it;
}

// `node`'s snapshot of checkpoint `id` in `chunks` chunks of the bytes {id, 1}, {id, 2}, ...
Effects send_snapshot(CoordinatorNode& c, TimeUs now, NodeId node, CheckpointId id, std::uint32_t chunks = 1) {
  Effects last;
  for (std::uint32_t i = 0; i < chunks; ++i)
    last = c.handle(now, from(node, Checkpoint{id, false, 0, i, chunks, Bytes{static_cast<std::uint8_t>(id),
                                                                          static_cast<std::uint8_t>(i + 1)}}));
  return last;
}

// A coordinator started at 0 with checkpoint 1 complete at 110 ms.
struct OneComplete {
  explicit OneComplete(FailoverMode failover = FailoverMode::full) : node(p, kCoordinator, every_100ms(failover), store) {
    node.handle(0, Start{});
    node.handle(100'000, Tick{});
    send_snapshot(node, 105'000, kFilter, 1);
    REQUIRE(!sent<CheckpointComplete>(send_snapshot(node, 110'000, kAggregate, 1)).empty());
  }
  std::shared_ptr<const Plan> p = plan();
  MemoryCheckpointStore store;
  CoordinatorNode node;
};

}  // namespace

TEST_CASE("the coordinator triggers only the fragments reading a source, every checkpoint interval") {
  const auto p = plan();
  REQUIRE(p->coordinator == kCoordinator);
  CHECK(coordinated_fragments(*p) == std::vector<FragmentId>{1, 2});
  CHECK(source_readers(*p, coordinated_fragments(*p)) == std::vector<FragmentId>{1});
  MemoryCheckpointStore store;
  CoordinatorNode c(p, kCoordinator, every_100ms(), store);
  const Effects started = c.handle(0, Start{});
  CHECK(started.sends.empty());
  CHECK(the_trace(started, TraceKind::start).get(TraceKey::role) == static_cast<std::int64_t>(Role::coordinator));
  CHECK(started.wake_at_us <= 100'000);

  const Effects due = c.handle(100'000, Tick{});
  const auto triggers = sent<CheckpointTrigger>(due);
  REQUIRE(triggers.size() == 1);
  CHECK(triggers[0].first == kFilter);
  CHECK(triggers[0].second == CheckpointTrigger{1});
  CHECK(the_trace(due, TraceKind::checkpoint_triggered).get(TraceKey::checkpoint) == 1);
  // One in flight at a time (Flink's max-concurrent-checkpoints = 1).
  CHECK(sent<CheckpointTrigger>(c.handle(250'000, Tick{})).empty());
}

TEST_CASE("a checkpoint completes once every coordinated fragment's snapshot is whole in the store") {
  const auto p = plan();
  MemoryCheckpointStore store;
  CoordinatorNode c(p, kCoordinator, every_100ms(), store);
  c.handle(0, Start{});
  c.handle(100'000, Tick{});
  // The filter's snapshot in three chunks, one of them repeated: nothing completes without the
  // aggregate's.
  c.handle(101'000, from(kFilter, Checkpoint{1, false, 0, 2, 3, Bytes{7}}));
  c.handle(102'000, from(kFilter, Checkpoint{1, false, 0, 0, 3, Bytes{5}}));
  c.handle(102'500, from(kFilter, Checkpoint{1, false, 0, 0, 3, Bytes{5}}));
  CHECK(sent<CheckpointComplete>(c.handle(103'000, from(kFilter, Checkpoint{1, false, 0, 1, 3, Bytes{6}}))).empty());
  CHECK(store.completed().empty());

  const Effects done = send_snapshot(c, 104'000, kAggregate, 1);
  const auto completes = sent<CheckpointComplete>(done);
  REQUIRE(completes.size() == 2);
  CHECK(completes[0] == std::make_pair(kFilter, CheckpointComplete{1}));
  CHECK(completes[1] == std::make_pair(kAggregate, CheckpointComplete{1}));
  CHECK(the_trace(done, TraceKind::checkpoint_completed).get(TraceKey::checkpoint) == 1);
  CHECK(store.completed() == std::vector<CheckpointId>{1});
  CHECK(store.snapshot(1, "filter") == Bytes{5, 6, 7});  // the chunks in their order
  CHECK(store.snapshot(1, "aggregate") == Bytes{1, 1});
  CHECK(c.metrics().at("checkpoints_completed") == 1);
  CHECK(c.metrics().at("snapshots_received") == 2);
}

TEST_CASE("snapshot chunks of another checkpoint or from a node not acting for its fragment are dropped") {
  const auto p = plan();
  MemoryCheckpointStore store;
  CoordinatorNode c(p, kCoordinator, every_100ms(), store);
  c.handle(0, Start{});
  send_snapshot(c, 50'000, kFilter, 1);  // before checkpoint 1 began
  c.handle(100'000, Tick{});
  send_snapshot(c, 101'000, kFilter, 7);         // not in flight
  send_snapshot(c, 101'000, kFilterSpare, 1);    // the spare does not act for the filter
  send_snapshot(c, 101'000, kAggregateSpare, 1);
  c.handle(101'000, from(kFilter, Checkpoint{1, true, 0, 0, 1, Bytes{1}}));  // a delta: never a global snapshot
  send_snapshot(c, 102'000, kAggregate, 1);
  CHECK(store.completed().empty());
  CHECK(c.metrics().at("stale_snapshot_chunks") == 3);
  CHECK(c.metrics().at("not_acting_checkpoint_dropped") == 2);
  // The filter's own snapshot completes it.
  CHECK(sent<CheckpointComplete>(send_snapshot(c, 103'000, kFilter, 1)).size() == 2);
}

TEST_CASE("a lost connection of a fragment's primary abandons the checkpoint in flight and rolls every coordinated fragment back, failover full") {
  OneComplete run;
  run.node.handle(200'000, Tick{});  // checkpoint 2 begins
  send_snapshot(run.node, 201'000, kFilter, 2);
  const Effects lost = run.node.handle(202'000, PeerLost{kAggregate, Detector::connection});
  CHECK(traced(lost, TraceKind::checkpoint_abandoned));
  CHECK(the_trace(lost, TraceKind::detection).get(TraceKey::failed) == kAggregate);
  const TraceEvent& decided = the_trace(lost, TraceKind::checkpoint_rollback);
  CHECK(decided.get(TraceKey::checkpoint) == 1);
  CHECK(decided.get(TraceKey::failed) == kAggregate);
  CHECK(decided.get(TraceKey::count) == 2);
  // Every node of both fragments hears it: the filter restores in place, the aggregate's spare
  // replaces the failed primary.
  const auto rollbacks = sent<Rollback>(lost);
  std::vector<NodeId> to;
  for (const auto& [n, r] : rollbacks) {
    to.push_back(n);
    CHECK(r == Rollback{1, 1, 2, {1, 2}});
  }
  std::sort(to.begin(), to.end());
  CHECK(to == std::vector<NodeId>{kFilter, kAggregate, kFilterSpare, kAggregateSpare});
  CHECK(run.store.completed() == std::vector<CheckpointId>{1});  // checkpoint 2 never completes

  // Nothing is triggered until every rolled-back fragment restored.
  CHECK(sent<CheckpointTrigger>(run.node.handle(500'000, Tick{})).empty());
  run.node.handle(510'000, from(kFilter, Restored{1, 1}));
  CHECK(sent<CheckpointTrigger>(run.node.handle(700'000, Tick{})).empty());
  const Effects spare = run.node.handle(710'000, from(kAggregateSpare, Restored{1, 2}));
  CHECK(the_trace(spare, TraceKind::checkpoint_restore).get(TraceKey::peer) == kAggregateSpare);
  CHECK(run.node.acting(2) == kAggregateSpare);
  // The next checkpoint continues above the abandoned one, and the spare's snapshot counts.
  const auto next = sent<CheckpointTrigger>(run.node.handle(810'000, Tick{}));
  REQUIRE(next.size() == 1);
  CHECK(next[0].second == CheckpointTrigger{3});
  send_snapshot(run.node, 811'000, kFilter, 3);
  CHECK(sent<CheckpointComplete>(send_snapshot(run.node, 812'000, kAggregateSpare, 3)).size() == 2);
  CHECK(run.store.completed() == std::vector<CheckpointId>{1, 3});
}

TEST_CASE("region failover rolls back only the failed fragment, whose producers keep their output") {
  OneComplete run(FailoverMode::region);
  const auto rollbacks = sent<Rollback>(run.node.handle(150'000, PeerLost{kFilter, Detector::connection}));
  REQUIRE(rollbacks.size() == 2);  // the filter and its spare
  for (const auto& [n, r] : rollbacks) {
    CHECK((n == kFilter || n == kFilterSpare));
    CHECK(r == Rollback{1, 1, 1, {1}});
  }
}

TEST_CASE("missed heartbeats of a fragment's acting node are a failure, and only its acting node is watched") {
  OneComplete run;
  // The aggregate goes on talking; the filter falls silent after its snapshot at 105 ms, for
  // longer than failure_timeout_ms (1 s).
  for (TimeUs t = 200'000; t <= 1'200'000; t += 100'000) {
    run.node.handle(t, from(kAggregate, Heartbeat{static_cast<std::uint64_t>(t)}));
    run.node.handle(t, from(kFilterSpare, Heartbeat{1}));  // a spare's heartbeat says nothing of the primary
    const Effects tick = run.node.handle(t, Tick{});
    if (t < 1'200'000) {
      CHECK(sent<Rollback>(tick).empty());
      CHECK(tick.wake_at_us <= 1'105'000);  // the filter's detector's deadline
    } else {
      const TraceEvent& d = the_trace(tick, TraceKind::detection);
      CHECK(d.get(TraceKey::failed) == kFilter);
      CHECK(d.get(TraceKey::detector) == static_cast<std::int64_t>(Detector::heartbeat));
      CHECK(d.get(TraceKey::silent_us) == 1'095'000);
      CHECK(sent<Rollback>(tick).size() == 4);
    }
  }
  CHECK(run.node.metrics().at("not_acting_heartbeat_dropped") == 11);
  // A lost connection of a node that does not act for its fragment decides nothing.
  CHECK(sent<Rollback>(run.node.handle(150'000, PeerLost{kAggregateSpare, Detector::connection})).empty());
  CHECK(run.node.metrics().at("peer_lost_ignored") == 1);
}

TEST_CASE("with the driver watching the fragments, silence alone is no failure") {
  const auto p = plan();
  MemoryCheckpointStore store;
  CoordinatorNode c(p, kCoordinator, every_100ms(), store);
  Start start;
  start.driver_watches_partner = true;
  c.handle(0, start);
  for (TimeUs t = 500'000; t <= 5'000'000; t += 500'000) CHECK(sent<Rollback>(c.handle(t, Tick{})).empty());
  CHECK(sent<Rollback>(c.handle(5'000'001, PeerLost{kFilter, Detector::heartbeat})).size() == 4);
}

TEST_CASE("a restarted coordinator goes on from the store: the newest complete checkpoint, ids above the highest started") {
  OneComplete run;
  run.node.handle(200'000, Tick{});
  send_snapshot(run.node, 201'000, kFilter, 2);  // checkpoint 2 half written when the coordinator dies
  CoordinatorNode restarted(run.p, kCoordinator, every_100ms(), run.store);
  restarted.handle(300'000, Start{});
  const auto triggers = sent<CheckpointTrigger>(restarted.handle(400'000, Tick{}));
  REQUIRE(triggers.size() == 1);
  CHECK(triggers[0].second == CheckpointTrigger{3});
  // A failure now rolls back to checkpoint 1, the newest complete one.
  const auto rollbacks = sent<Rollback>(restarted.handle(401'000, PeerLost{kFilter, Detector::connection}));
  REQUIRE(!rollbacks.empty());
  CHECK(rollbacks[0].second.to == 1);
}

TEST_CASE("a fragment's node takes the coordinator's messages without epoch or route checks, a node of another approach drops them") {
  // filter: passive standby (filter.backup, node 4); aggregate: the coordinated approach with
  // amnesia's ends (aggregate.spare, node 5); the coordinator is node 6.
  Topology t = default_topology();
  t.fragments[1].ha = HaMode::passive;
  t.fragments[2].ha = kCoordinated;
  const auto p = std::make_shared<const Plan>(make_plan(t, coordinated_catalog(kCoordinated)));
  REQUIRE(p->coordinator == 6);
  Approach ends = amnesia_approach();
  ends.mode = kCoordinated;
  const ApproachRegistry registry = ApproachRegistry::builtin().with(ends);
  const std::vector<Message> bodies{CheckpointTrigger{1}, CheckpointBarrier{0, 1, 5}, CheckpointComplete{1},
                                    Rollback{1, 0, 2, {2}}, Restored{1, 2}, Heartbeat{1}};
  for (NodeId n : {NodeId{1}, NodeId{2}, NodeId{4}, NodeId{5}}) {
    INFO("node " << p->nodes[n].name);
    auto core = make_node_core_from(registry, p, n);
    core->handle(0, Start{});
    TimeUs now = 1'000;
    for (const Message& body : bodies)
      for (Epoch epoch : {Epoch{0}, Epoch{7}}) {  // epoch 7 would imply a takeover from a fragment's node
        const Effects eff = core->handle(now, Received{Envelope{Header{6, epoch, now}, body}});
        CHECK_FALSE(traced(eff, TraceKind::takeover));
        CHECK_FALSE(traced(eff, TraceKind::route_change));
        now += 1'000;
      }
    const Metrics m = core->metrics();
    CHECK(m.count("implied_takeovers") == 0);
    CHECK(m.count("stale_dropped") == 0);
    if (p->nodes[n].fragment == 1) {
      CHECK(m.at("from_no_fragment_checkpoint_trigger_dropped") == 2);
      CHECK(m.at("from_no_fragment_rollback_dropped") == 2);
    } else {
      CHECK(m.count("from_no_fragment_checkpoint_trigger_dropped") == 0);
    }
  }
  // The coordinated primary's role saw them: no end of it handles them yet, so they are unexpected.
  auto primary = make_node_core_from(registry, p, 2);
  primary->handle(0, Start{});
  primary->handle(1'000, Received{Envelope{Header{6, 0, 1'000}, CheckpointTrigger{1}}});
  CHECK(primary->metrics().at("unexpected_checkpoint_trigger_dropped") == 1);
}
