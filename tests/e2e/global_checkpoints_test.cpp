// Global checkpoints (ha = checkpoint, src/checkpoint, docs/CHECKPOINT.md) on real processes:
// the coordinator is a process of its own writing the run's checkpoints durably (the file store),
// a SIGKILLed fragment is detected on the coordinator's crash lines and rolled back by its spare
// from the store (failover = region), with the live fragments in place (failover = full); the coordinator itself SIGKILLed and restarted reads the store and goes on, so
// a fragment killed afterwards is restored from a checkpoint the restarted coordinator completed.
// Each run is checked against the failure-free reference.
#include <unistd.h>

#include <filesystem>
#include <set>

#include "e2e/e2e_support.h"
#include "runtime/checkpoint_file_store.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

std::int64_t checkpoint_of(const Plan& plan, const RunResult& r, const std::string& event) {
  for (const TraceEvent& e : r.events)
    if (e.node == plan.coordinator && std::string(to_string(e.kind)) == event) return e.get(TraceKey::checkpoint).value_or(-1);
  return -1;
}

}  // namespace

TEST_CASE("global checkpoints: SIGKILL of the aggregate's primary is rolled back by its spare from the store, precisely",
          "[e2e][checkpoint]") {
  // Region failover (the default) and full: the filter then rolls back in place too.
  const FailoverMode failover = GENERATE(FailoverMode::region, FailoverMode::full);
  INFO("failover " << to_string(failover));
  void (*configure)(Topology&) = [](Topology& t) { t.settings.failover = FailoverMode::region; };
  if (failover == FailoverMode::full) configure = [](Topology& t) { t.settings.failover = FailoverMode::full; };
  auto plan = plan_of("", HaMode::checkpoint, 3.0, configure);
  REQUIRE(plan->coordinator != kNoNode);
  auto o = run_real(plan, {crash("aggregate", 1.5)});
  check_precise(o);
  CHECK(count_events(*plan, o.result, "takeover", "aggregate.spare") == 1);
  // Checkpoints completed before the crash: the rollback goes to one of them, not to the start.
  CHECK(checkpoint_of(*plan, o.result, "checkpoint_rollback") > 0);
  CHECK(count_events(*plan, o.result, "checkpoint_restore", kCoordinatorNodeName) == (failover == FailoverMode::full ? 2 : 1));
  CHECK(count_events(*plan, o.result, "checkpoint_restore", "filter") == (failover == FailoverMode::full ? 1 : 0));
}

TEST_CASE("global checkpoints: the coordinator SIGKILLed and restarted reads its store, and a fragment killed later is restored",
          "[e2e][checkpoint]") {
  // The restart comes early and the filter's crash late: a process started on a loaded machine
  // (the CI's, with a sanitizer build beside the tests) once took more than 1.9 s to say hello.
  auto plan = plan_of("", HaMode::checkpoint, 4.0, [](Topology&) {});
  auto o = run_real(plan, {crash(kCoordinatorNodeName, 0.5), restart(kCoordinatorNodeName, 0.6), crash("filter", 3.0)});
  check_precise(o);
  CHECK(count_events(*plan, o.result, "start", kCoordinatorNodeName) == 2);
  CHECK(count_events(*plan, o.result, "takeover", "filter.spare") == 1);
  // The restarted coordinator numbered its checkpoints above its predecessor's (from the store)
  // and completed some before the filter died: the rollback goes to one of its own.
  std::int64_t last_before_crash = 0;
  for (const TraceEvent& e : o.result.events)
    if (e.node == plan->coordinator && e.kind == TraceKind::checkpoint_completed && e.at_us < 500'000)
      last_before_crash = std::max(last_before_crash, e.get(TraceKey::checkpoint).value_or(0));
  CHECK(last_before_crash > 0);
  CHECK(checkpoint_of(*plan, o.result, "checkpoint_rollback") > last_before_crash);
}

TEST_CASE("global checkpoints, local recovery: SIGKILL of the aggregate's primary, its spare restores from the host's copy",
          "[e2e][checkpoint]") {
  auto plan = plan_of("", HaMode::checkpoint, 3.0, [](Topology& t) { t.settings.local_recovery = true; });
  auto o = run_real(plan, {crash("aggregate", 1.5)});
  check_precise(o);
  CHECK(count_events(*plan, o.result, "takeover", "aggregate.spare") == 1);
  CHECK(checkpoint_of(*plan, o.result, "checkpoint_rollback") > 0);
  // The copy was the primary's file in this host's directory beside the run; the coordinator's
  // first order carried no snapshot. It sends one only with a repeated order, one heartbeat
  // interval later without the spare's Restored (a loaded machine can delay that answer).
  const auto& spare = o.result.counters.at("aggregate.spare");
  REQUIRE(spare.count("local_copy_restored") == 1);
  CHECK(spare.at("local_copy_restored") == 1);
  const auto& coordinator = o.result.counters.at(kCoordinatorNodeName);
  if (coordinator.count("snapshot_bytes_restored") == 1) {
    INFO("the coordinator sent the snapshot: only with a repeated order");
    CHECK(coordinator.count("rollbacks_repeated") == 1);
  }
}

TEST_CASE("global checkpoints: a fragment SIGKILLed during a checkpoint (after its producer's snapshot, before its own) is restored precisely",
          "[e2e][checkpoint]") {
  // The aggregate is paused (SIGSTOP) for 0.5 s: checkpoints triggered meanwhile reach the
  // filter, which snapshots and sends its barrier, but cannot complete; 0.2 s into the pause it
  // is killed. The hang timeout is longer than that, so the kill, not the pause, is the failure.
  auto plan = plan_of("", HaMode::checkpoint, 3.5, [](Topology& t) { t.settings.hang_timeout_ms = 1000; });
  auto o = run_real(plan, {pause("aggregate", 1.3, 0.5), crash("aggregate", 1.5)});
  check_precise(o);
  CHECK(count_events(*plan, o.result, "takeover", "aggregate.spare") == 1);
  // Some checkpoint was in flight at the kill: triggered, the filter's snapshot of it taken,
  // not complete.
  const NodeId filter = plan->node_id("filter");
  const NodeId aggregate = plan->node_id("aggregate");
  TimeUs killed = kNever;
  for (const TraceEvent& e : o.result.events)
    if (e.kind == TraceKind::failure && e.node == aggregate && e.enum_of<FaultKind>(TraceKey::fault) == FaultKind::crash)
      killed = std::min(killed, e.at_us);
  REQUIRE(killed != kNever);
  std::set<std::int64_t> filter_snapshots, aggregate_snapshots, completed;
  for (const TraceEvent& e : o.result.events) {
    if (e.at_us >= killed) continue;
    const std::int64_t c = e.get(TraceKey::checkpoint).value_or(-1);
    if (e.kind == TraceKind::checkpoint_snapshot && e.node == filter) filter_snapshots.insert(c);
    if (e.kind == TraceKind::checkpoint_snapshot && e.node == aggregate) aggregate_snapshots.insert(c);
    if (e.kind == TraceKind::checkpoint_completed && e.node == plan->coordinator) completed.insert(c);
  }
  std::int64_t in_flight = 0;
  for (std::int64_t c : filter_snapshots)
    if (completed.count(c) == 0 && aggregate_snapshots.count(c) == 0) in_flight = c;
  INFO("checkpoints the filter snapshotted before the kill: " << filter_snapshots.size() << ", completed " << completed.size());
  CHECK(in_flight > 0);
  // The rollback went to a complete checkpoint before it.
  CHECK(checkpoint_of(*plan, o.result, "checkpoint_rollback") < in_flight);
}

TEST_CASE("global checkpoints: the coordinator writes its store where the launcher's checkpoint_dir says, and recovers from it",
          "[e2e][checkpoint]") {
  // A directory outside the run's folder, as one the hosts share would be.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hapair-e2e-shared-checkpoints-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto plan = plan_of("", HaMode::checkpoint, 3.0, [](Topology&) {});
  RunRequest r;
  r.driver = "real";
  r.hapair_binary = HAPAIR_BINARY;
  r.faults = {crash("aggregate", 1.5)};
  r.checkpoint_dir = dir.string();
  const RunOutcome o = run_once(plan, r, compute_reference(*plan));
  for (const auto& e : o.result.errors) UNSCOPED_INFO("run error: " << e);
  check_precise(o);
  CHECK(checkpoint_of(*plan, o.result, "checkpoint_rollback") > 0);
  // Complete checkpoints (a manifest each) are in the directory, the newest retained ones only.
  FileCheckpointStore store(dir.string());
  const std::vector<CheckpointId> complete = store.completed();
  CHECK(!complete.empty());
  CHECK(complete.size() <= static_cast<std::size_t>(plan->settings().checkpoints_retained));
  CHECK(store.snapshot(complete.back(), "aggregate"));
  std::filesystem::remove_all(dir);
}
