// Global checkpoints (ha = checkpoint, src/checkpoint, docs/CHECKPOINT.md) in the simulator,
// judged against the failure-free reference: barriers aligned at every fragment, snapshots in
// the coordinator's store, checkpoints completed and producers trimming only what a completed
// checkpoint covers; a crash of a fragment's primary (also in the middle of a checkpoint, and
// before any checkpoint completed) is recovered precisely by its spare from the store, with its
// region rolled back; a crash of the coordinator leaves the output precise.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/topology_file.h"
#include "judged_run.h"
#include "scenarios/faults.h"

using namespace hapair;
using hapair::test::check_precise;
using hapair::test::counter;
using hapair::test::events_of;

namespace {

Topology checkpoint_network() {
  Topology t = default_topology();
  t.settings.ha = HaMode::checkpoint;
  t.settings.duration_s = 3.0;
  t.settings.checkpoint_interval_ms = 100;
  return t;
}

// The same under a failover mode (said in a failure's message).
Topology checkpoint_network(FailoverMode failover) {
  UNSCOPED_INFO("failover " << to_string(failover));
  Topology t = checkpoint_network();
  t.settings.failover = failover;
  return t;
}

using test::crash;

}  // namespace

TEST_CASE("global checkpoints without a failure: every fragment aligns and snapshots, checkpoints complete, precise",
          "[scenarios][checkpoint]") {
  const auto r = test::judged_sim_run(checkpoint_network());
  check_precise(r);
  REQUIRE(r.plan->coordinator != kNoNode);
  const auto completed = events_of(r, TraceKind::checkpoint_completed, kCoordinatorNodeName);
  // One every 100 ms over 3 s of input (and the drain): most of them complete.
  CHECK(completed.size() >= 20);
  CHECK(counter(r, "filter", "checkpoint_snapshots") >= 20);
  CHECK(counter(r, "aggregate", "checkpoint_snapshots") >= 20);
  // The aggregate's barriers come from the filter, not from a trigger.
  CHECK(counter(r, "aggregate", "stale_checkpoint_triggers") == 0);
  CHECK(counter(r, kCoordinatorNodeName, "snapshots_received") >= 40);
  CHECK(counter(r, kCoordinatorNodeName, "rollbacks") == 0);
  // Producers trim only on a completed checkpoint's level-1 acks: the source trimmed.
  CHECK(counter(r, "filter", "unexpected_checkpoint_barrier_dropped") == 0);
  CHECK(counter(r, "aggregate", "unexpected_checkpoint_trigger_dropped") == 0);
}

TEST_CASE("global checkpoints: a crash of the aggregate's primary is recovered by its spare from the coordinator's store",
          "[scenarios][checkpoint]") {
  const double at = GENERATE(1.0, 1.55, 2.03);
  INFO("crash at " << at);
  const auto r = test::judged_sim_run(checkpoint_network(), {crash("aggregate", at)});
  check_precise(r);
  const auto rollbacks = events_of(r, TraceKind::checkpoint_rollback, kCoordinatorNodeName);
  REQUIRE(rollbacks.size() == 1);
  CHECK(rollbacks.front()->get(TraceKey::checkpoint).value_or(0) > 0);
  CHECK(events_of(r, TraceKind::takeover, "aggregate.spare").size() == 1);
  CHECK(events_of(r, TraceKind::checkpoint_restore, kCoordinatorNodeName).size() == 1);
  // Checkpoints go on after the rollback, with the spare as the fragment's node.
  CHECK(counter(r, "aggregate.spare", "checkpoint_snapshots") > 0);
}

TEST_CASE("global checkpoints: the recovery breaks into detection, rollback, state restored, replay and first output",
          "[scenarios][checkpoint]") {
  const auto failover = GENERATE(FailoverMode::region, FailoverMode::full);
  Topology t = checkpoint_network(failover);
  const auto r = test::judged_sim_run(t, {crash("aggregate", 1.55)});
  check_precise(r);
  REQUIRE(r.outcome.metrics.recovery);
  const RecoveryMetrics& m = *r.outcome.metrics.recovery;
  REQUIRE(m.detection_ms);
  REQUIRE(m.rollback_ms);
  REQUIRE(m.state_restored_ms);
  REQUIRE(m.recovery_ms);
  // Each phase after the one before it, as the trace has them.
  CHECK(*m.detection_ms <= *m.rollback_ms);
  CHECK(*m.rollback_ms <= *m.state_restored_ms);
  CHECK(*m.state_restored_ms <= *m.recovery_ms);
  const auto rollbacks = events_of(r, TraceKind::checkpoint_rollback, kCoordinatorNodeName);
  REQUIRE(rollbacks.size() == 1);
  CHECK(*m.rollback_ms == Approx((rollbacks.front()->at_us - m.failure_us) / 1e3));
  // The state is restored at the spare's takeover, and under full failover at the filter's
  // in-place restore too: the later of them ends the phase.
  const auto takeovers = events_of(r, TraceKind::takeover, "aggregate.spare");
  const auto in_place = events_of(r, TraceKind::checkpoint_restore, "filter");
  REQUIRE(takeovers.size() == 1);
  CHECK(in_place.size() == (failover == FailoverMode::full ? 1u : 0u));
  TimeUs last = takeovers.front()->at_us;
  for (const TraceEvent* e : in_place) last = std::max(last, e->at_us);
  CHECK(*m.state_restored_ms == Approx((last - m.failure_us) / 1e3));
  // The coordinator hears of each restore afterwards.
  const auto heard = events_of(r, TraceKind::checkpoint_restore, kCoordinatorNodeName);
  REQUIRE(heard.size() == (failover == FailoverMode::full ? 2u : 1u));
  CHECK(heard.back()->at_us >= last);
  // A process pair has no rollback phase.
  Topology passive = checkpoint_network();
  passive.settings.ha = HaMode::passive;
  const auto p = test::judged_sim_run(passive, {crash("aggregate", 1.55)});
  check_precise(p);
  REQUIRE(p.outcome.metrics.recovery);
  CHECK(!p.outcome.metrics.recovery->rollback_ms);
  CHECK(!p.outcome.metrics.recovery->state_restored_ms);
}

TEST_CASE("global checkpoints: a crash of the filter's primary (a source reader) and one before any checkpoint completed",
          "[scenarios][checkpoint]") {
  SECTION("the filter at 1.2 s") {
    const auto r = test::judged_sim_run(checkpoint_network(), {crash("filter", 1.2)});
    check_precise(r);
    CHECK(events_of(r, TraceKind::takeover, "filter.spare").size() == 1);
    CHECK(counter(r, "filter.spare", "checkpoint_snapshots") > 0);
  }
  SECTION("the aggregate at 50 ms: rolled back to the start of the run") {
    const auto r = test::judged_sim_run(checkpoint_network(), {crash("aggregate", 0.05)});
    check_precise(r);
    const auto rollbacks = events_of(r, TraceKind::checkpoint_rollback, kCoordinatorNodeName);
    REQUIRE(rollbacks.size() == 1);
    CHECK(rollbacks.front()->get(TraceKey::checkpoint).value_or(-1) == 0);
  }
}

TEST_CASE("global checkpoints: a crash of the coordinator stops checkpoints, not the output", "[scenarios][checkpoint]") {
  const auto r = test::judged_sim_run(checkpoint_network(), {crash(kCoordinatorNodeName, 1.0)});
  check_precise(r);
  for (const TraceEvent* e : events_of(r, TraceKind::checkpoint_completed)) CHECK(e->at_us <= 1'000'000);
  // Nobody takes over a coordinator: the failure's metrics name no takeover (a fragment's
  // events are not the coordinator's).
  REQUIRE(r.outcome.metrics.recovery.has_value());
  CHECK_FALSE(r.outcome.metrics.recovery->takeover_ms.has_value());
  CHECK_FALSE(r.outcome.metrics.recovery->detection_ms.has_value());
}

TEST_CASE("global checkpoints: checkpoints_retained below 1 is refused with the bound", "[scenarios][checkpoint]") {
  Topology t = checkpoint_network();
  t.settings.checkpoints_retained = 0;
  const auto problems = validate(t);
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().find("checkpoints_retained = 0: must be >= 1") != std::string::npos);
}

TEST_CASE("global checkpoints, failover = full: every fragment rolls back, the live ones in place, precisely",
          "[scenarios][checkpoint]") {
  Topology t = checkpoint_network();
  t.settings.failover = FailoverMode::full;
  SECTION("the aggregate fails: the filter rolls back in place") {
    const double at = GENERATE(1.0, 1.55);
    INFO("crash at " << at);
    const auto r = test::judged_sim_run(t, {crash("aggregate", at)});
    check_precise(r);
    const auto rollbacks = events_of(r, TraceKind::checkpoint_rollback, kCoordinatorNodeName);
    REQUIRE(rollbacks.size() == 1);
    CHECK(rollbacks.front()->get(TraceKey::count).value_or(0) == 2);  // both operator fragments
    CHECK(events_of(r, TraceKind::takeover, "aggregate.spare").size() == 1);
    CHECK(counter(r, "filter", "rollbacks_in_place") == 1);
    CHECK(events_of(r, TraceKind::takeover, "filter.spare").empty());
    CHECK(counter(r, "filter", "checkpoint_snapshots") > counter(r, "aggregate.spare", "checkpoint_snapshots"));
  }
  SECTION("the filter fails before any checkpoint completed: the aggregate goes back to empty state") {
    const auto r = test::judged_sim_run(t, {crash("filter", 0.05)});
    check_precise(r);
    CHECK(counter(r, "aggregate", "rollbacks_in_place") == 1);
  }
  SECTION("on the Union network (an arbitrary fragment holding its output)") {
    auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/union.toml");
    REQUIRE(load.topology);
    Topology u = *load.topology;
    u.settings.ha = HaMode::checkpoint;
    u.settings.failover = FailoverMode::full;
    u.settings.duration_s = 3.0;
    const auto r = test::judged_sim_run(u, {crash("filter", 1.3)});
    check_precise(r);
    CHECK(counter(r, "merge", "rollbacks_in_place") == 1);
  }
}

TEST_CASE("global checkpoints with Flink's default heartbeat (10 s, 50 s): detection is nearly all of the recovery",
          "[scenarios][checkpoint]") {
  // docs/examples/checkpoint_flink_heartbeat.toml: the setting the measurements of Flink
  // (about 50 s to recover) come from; hapair's detectors on the same network find the crash in
  // a link latency (the global checkpoints' scenario above).
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/docs/examples/checkpoint_flink_heartbeat.toml");
  REQUIRE(load.problems.empty());
  REQUIRE(load.topology);
  const auto r = test::judged_sim_run(*load.topology, {crash("aggregate", 2.0)});
  check_precise(r);
  REQUIRE(r.outcome.metrics.recovery.has_value());
  const RecoveryMetrics& m = *r.outcome.metrics.recovery;
  REQUIRE(m.detection_ms.has_value());
  REQUIRE(m.recovery_ms.has_value());
  CHECK(m.detector == "heartbeat");
  // Simulated time: silent for the 50 s timeout less what passed since the last heartbeat.
  CHECK(*m.detection_ms > 40'000.0);
  CHECK(*m.detection_ms <= 50'000.0);
  CHECK(*m.recovery_ms - *m.detection_ms < 1'000.0);
}

TEST_CASE("global checkpoints, unaligned: snapshots at the first barrier, nothing held, precise after a crash under both failovers",
          "[scenarios][checkpoint]") {
  // Every fragment snapshots at the trigger or its first barrier, at what it processed, and never
  // holds an input; the in-flight tuples are in its producers' snapshots.
  Topology t = checkpoint_network();
  t.settings.checkpoint_alignment = CheckpointAlignment::unaligned;
  t.settings.failover = GENERATE(FailoverMode::region, FailoverMode::full);
  INFO("failover " << to_string(t.settings.failover));
  SECTION("failure free") {
    const auto r = test::judged_sim_run(t);
    check_precise(r);
    CHECK(events_of(r, TraceKind::checkpoint_completed, kCoordinatorNodeName).size() >= 20);
  }
  SECTION("a crash of the aggregate") {
    const auto r = test::judged_sim_run(t, {crash("aggregate", 1.55)});
    check_precise(r);
    CHECK(events_of(r, TraceKind::checkpoint_rollback, kCoordinatorNodeName).size() == 1);
  }
  SECTION("a crash of the filter on the Union network") {
    auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/union.toml");
    REQUIRE(load.topology);
    Topology u = *load.topology;
    u.settings.ha = HaMode::checkpoint;
    u.settings.duration_s = 3.0;
    u.settings.failover = t.settings.failover;
    u.settings.checkpoint_alignment = CheckpointAlignment::unaligned;
    const auto r = test::judged_sim_run(u, {crash("filter", 1.3)});
    check_precise(r);
  }
}

TEST_CASE("global checkpoints, local recovery: a spare on the crashed primary's host restores from the host's copy",
          "[scenarios][checkpoint]") {
  const auto failover = GENERATE(FailoverMode::region, FailoverMode::full);
  Topology t = checkpoint_network(failover);
  t.settings.local_recovery = true;
  const auto r = test::judged_sim_run(t, {crash("aggregate", 1.55)});
  check_precise(r);
  // Every fragment kept copies; the spare restored from its host's (one machine: the same host).
  CHECK(counter(r, "aggregate", "local_copies_written") >= 10);
  CHECK(counter(r, "aggregate.spare", "local_copy_restored") == 1);
  CHECK(counter(r, "aggregate.spare", "local_copy_missing") == 0);
  const auto takeovers = events_of(r, TraceKind::takeover, "aggregate.spare");
  REQUIRE(takeovers.size() == 1);
  CHECK(takeovers.front()->text == "from its host's local copy");
  // The coordinator sent no snapshot bytes for the restore: the order went without them.
  CHECK(counter(r, kCoordinatorNodeName, "snapshot_bytes_restored") == 0);
  // Under full failover the live filter rolled back in place from its own copy too.
  CHECK(counter(r, "filter", "local_copy_restored") == (failover == FailoverMode::full ? 1 : 0));
  // Without local recovery the same crash ships the snapshot from the coordinator.
  t.settings.local_recovery = false;
  const auto remote = test::judged_sim_run(t, {crash("aggregate", 1.55)});
  check_precise(remote);
  CHECK(counter(remote, kCoordinatorNodeName, "snapshot_bytes_restored") > 0);
  CHECK(counter(remote, "aggregate.spare", "local_copy_restored") == 0);
}

TEST_CASE("global checkpoints, local recovery: a spare on another host has no copy and restores from the coordinator's",
          "[scenarios][checkpoint]") {
  Topology t = checkpoint_network();
  t.settings.local_recovery = true;
  for (FragmentSpec& f : t.fragments)
    if (f.name == "aggregate") {
      f.host = "host-a";
      f.standby_host = "host-b";
    }
  const auto r = test::judged_sim_run(t, {crash("aggregate", 1.55)});
  check_precise(r);
  CHECK(counter(r, "aggregate", "local_copies_written") >= 10);
  // The coordinator knows the placement: the spare's host holds no copy, so the first order
  // carried the snapshot.
  CHECK(counter(r, "aggregate.spare", "local_copy_restored") == 0);
  CHECK(counter(r, "aggregate.spare", "local_copy_missing") == 0);
  CHECK(counter(r, kCoordinatorNodeName, "snapshot_bytes_restored") > 0);
  const auto takeovers = events_of(r, TraceKind::takeover, "aggregate.spare");
  REQUIRE(takeovers.size() == 1);
  CHECK(takeovers.front()->text == "from the coordinator's checkpoint");
}

TEST_CASE("global checkpoints, local recovery: a primary killed before it heard of the completion left no complete copy, and the repeated order brings the snapshot",
          "[scenarios][checkpoint]") {
  Topology t = checkpoint_network();
  t.settings.local_recovery = true;
  // The instant a checkpoint completed in the failure-free run (the simulator is deterministic):
  // the aggregate dies 50 us later, before the coordinator's CheckpointComplete (0.1 ms away)
  // reaches it, so its host's copy of that checkpoint was never completed.
  const auto clean = test::judged_sim_run(t);
  const auto completions = events_of(clean, TraceKind::checkpoint_completed, kCoordinatorNodeName);
  const TraceEvent* chosen = nullptr;
  for (const TraceEvent* e : completions)
    if (e->at_us > 1'500'000) {
      chosen = e;
      break;
    }
  REQUIRE(chosen != nullptr);
  const auto r = test::judged_sim_run(t, {crash("aggregate", static_cast<double>(chosen->at_us + 50) / 1e6)});
  check_precise(r);
  const auto rollbacks = events_of(r, TraceKind::checkpoint_rollback, kCoordinatorNodeName);
  REQUIRE(rollbacks.size() == 1);
  CHECK(rollbacks.front()->get(TraceKey::checkpoint).value_or(0) == chosen->get(TraceKey::checkpoint).value_or(-1));
  CHECK(counter(r, "aggregate.spare", "local_copy_missing") >= 1);
  CHECK(counter(r, "aggregate.spare", "local_copy_restored") == 0);
  CHECK(counter(r, kCoordinatorNodeName, "rollbacks_repeated") >= 1);
  CHECK(counter(r, kCoordinatorNodeName, "snapshot_bytes_restored") > 0);
  const auto takeovers = events_of(r, TraceKind::takeover, "aggregate.spare");
  REQUIRE(takeovers.size() == 1);
  CHECK(takeovers.front()->text == "from the coordinator's checkpoint");
  // The repetition came a heartbeat interval after the first order, not a retransmit timeout.
  CHECK(takeovers.front()->at_us - rollbacks.front()->at_us < 1000 * t.settings.retransmit_timeout_ms);
}
