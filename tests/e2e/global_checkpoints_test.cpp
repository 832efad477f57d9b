// Global checkpoints (ha = checkpoint, src/checkpoint, docs/CHECKPOINT.md) on real processes:
// the coordinator is a process of its own writing the run's checkpoints durably (the file store),
// a SIGKILLed fragment is detected on the coordinator's crash lines and rolled back by its spare
// from the store (failover = region), with the live fragments in place (failover = full); the coordinator itself SIGKILLed and restarted reads the store and goes on, so
// a fragment killed afterwards is restored from a checkpoint the restarted coordinator completed.
// Each run is checked against the failure-free reference.
#include "e2e/e2e_support.h"

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
