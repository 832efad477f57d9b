// Hybrid standby (ha = hybrid, src/hybrid) in the simulator, judged against the failure-free
// reference: passive standby until a trigger (a command, a stall of the primary), then an active
// standby bootstrapped from a checkpoint plus redirected input, back to passive after a calm
// period; a crash of the primary while passive, while active and in the middle of a switch is
// recovered precisely, and each switch is a typed trace event.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "judged_run.h"
#include "scenarios/faults.h"

using namespace hapair;
using hapair::test::check_precise;
using hapair::test::counter;
using hapair::test::events_of;

namespace {

Topology hybrid_network() {
  Topology t = default_topology();
  t.settings.ha = ApproachCatalog::builtin().find("hybrid")->mode;
  t.settings.duration_s = 3.0;
  t.settings.checkpoint_interval_ms = 100;
  return t;
}

using test::crash;

}  // namespace

TEST_CASE("hybrid standby without a trigger is a passive standby: precise, no switch", "[scenarios][hybrid]") {
  const auto r = test::judged_sim_run(hybrid_network());
  check_precise(r);
  CHECK(events_of(r, TraceKind::hybrid_switch).empty());
  CHECK(counter(r, "aggregate", "checkpoints_acked") > 0);
  CHECK(counter(r, "aggregate.backup", "hybrid_bootstraps_installed") == 0);
}

TEST_CASE("hybrid standby: a command makes the standby active (traced, bootstrapped, processing) and a calm period passive again",
          "[scenarios][hybrid]") {
  Topology t = hybrid_network();
  t.settings.hybrid_switch_at_ms = 1000;
  t.settings.hybrid_calm_ms = 500;
  const auto r = test::judged_sim_run(t);
  check_precise(r);
  for (const std::string node : {"filter", "aggregate"}) {
    INFO(node);
    const auto switches = events_of(r, TraceKind::hybrid_switch, node);
    REQUIRE(switches.size() == 2);
    CHECK(switches[0]->enum_of<Role>(TraceKey::role) == Role::active_backup);
    CHECK(switches[0]->enum_of<TraceReason>(TraceKey::reason) == TraceReason::command);
    CHECK(switches[0]->at_us == 1'000'000);
    CHECK(switches[1]->enum_of<Role>(TraceKey::role) == Role::passive_backup);
    CHECK(switches[1]->enum_of<TraceReason>(TraceKey::reason) == TraceReason::calm);
    CHECK(switches[1]->at_us >= 1'500'000);
    CHECK(events_of(r, TraceKind::bootstrap_installed, node + ".backup").size() == 1);
    CHECK(counter(r, node, "hybrid_activations") == 1);
  }
  // While active the standby processed redirected input (its node is an active_backup: a
  // passive_backup's workload takes none), and the timeline shows the role.
  CHECK(counter(r, "aggregate.backup", "hybrid_bootstraps_installed") == 1);
  CHECK(counter(r, "source", "standbys_subscribed") >= 1);
  CHECK(counter(r, "aggregate.backup", "tuples_processed") > 0);
  const auto roles = events_of(r, TraceKind::role, "aggregate.backup");
  REQUIRE_FALSE(roles.empty());
  CHECK(roles.front()->enum_of<Role>(TraceKey::role) == Role::active_backup);
}

TEST_CASE("hybrid standby: a rate spike trips the latency trigger, and a crash after it recovers like active standby",
          "[scenarios][hybrid]") {
  // source -> filter -> aggregate at 100 us a tuple; a spike to 8x 2000 tuples/s for 0.3 s from
  // 1 s overloads the filter, so its input waits: the latency trigger (the other triggers off).
  auto spiky = [](const char* ha) {
    Topology t = hybrid_network();
    t.settings.ha = ApproachCatalog::builtin().find(ha)->mode;
    t.settings.operator_cost_us_per_tuple = 100;
    t.settings.failure_timeout_ms = 500;  // the simulator's own heartbeats queue behind the backlog
    t.settings.hybrid_stall_ms = 0;
    t.settings.hybrid_input_queue_tuples = 0;
    t.settings.hybrid_latency_ms = 50;
    t.fragments[0].source.spikes = RateSpikes{10.0, 0.3, 8.0, 1.0};
    return t;
  };
  const auto hybrid = test::judged_sim_run(spiky("hybrid"), {crash("filter", 1.4)});
  check_precise(hybrid);
  const auto switches = events_of(hybrid, TraceKind::hybrid_switch, "filter");
  REQUIRE_FALSE(switches.empty());
  CHECK(switches[0]->enum_of<TraceReason>(TraceKey::reason) == TraceReason::latency);
  CHECK(switches[0]->get(TraceKey::duration_us).value_or(0) > 50'000);
  CHECK(switches[0]->at_us > 1'000'000);  // not before the spike
  const auto takeovers = events_of(hybrid, TraceKind::takeover, "filter.backup");
  REQUIRE(takeovers.size() == 1);
  CHECK(takeovers[0]->text == "from its live state");
  // The same crash under passive standby needs the replay from its last checkpoint: hybrid's
  // recovery (the simulator's clock, deterministic) is shorter.
  const auto passive = test::judged_sim_run(spiky("passive"), {crash("filter", 1.4)});
  check_precise(passive);
  REQUIRE(hybrid.outcome.metrics.recovery.has_value());
  REQUIRE(passive.outcome.metrics.recovery.has_value());
  REQUIRE(hybrid.outcome.metrics.recovery->recovery_ms.has_value());
  REQUIRE(passive.outcome.metrics.recovery->recovery_ms.has_value());
  CHECK(*hybrid.outcome.metrics.recovery->recovery_ms < *passive.outcome.metrics.recovery->recovery_ms);
}

TEST_CASE("hybrid standby: a crash of the primary while passive is recovered precisely from the checkpoint",
          "[scenarios][hybrid]") {
  for (const std::string node : {"filter", "aggregate"}) {
    INFO(node);
    const auto r = test::judged_sim_run(hybrid_network(), {crash(node, 1.5)});
    check_precise(r);
    const auto takeovers = events_of(r, TraceKind::takeover, node + ".backup");
    REQUIRE(takeovers.size() == 1);
    CHECK(takeovers[0]->text == "from its last checkpoint");
  }
}

TEST_CASE("hybrid standby: a crash of the primary while active is recovered precisely from the live state",
          "[scenarios][hybrid]") {
  Topology t = hybrid_network();
  t.settings.hybrid_switch_at_ms = 500;
  t.settings.hybrid_calm_ms = 100'000;
  for (const std::string node : {"filter", "aggregate"}) {
    for (double at_s : {1.0, 1.55, 2.2}) {
      INFO(node << " at " << at_s << " s");
      const auto r = test::judged_sim_run(t, {crash(node, at_s)});
      check_precise(r);
      const auto takeovers = events_of(r, TraceKind::takeover, node + ".backup");
      REQUIRE(takeovers.size() == 1);
      CHECK(takeovers[0]->text == "from its live state");
    }
  }
}

TEST_CASE("hybrid standby: a crash of the primary in the middle of a switch is recovered precisely",
          "[scenarios][hybrid]") {
  Topology t = hybrid_network();
  t.settings.hybrid_switch_at_ms = 1000;
  t.settings.hybrid_calm_ms = 100;
  // The bootstrap leaves at 1.000 s and arrives about 0.1 ms later; the calm switch back is
  // at 1.100 s.
  for (const std::string node : {"filter", "aggregate"}) {
    for (double at_s : {1.0, 1.00005, 1.0001, 1.0002, 1.0005, 1.002, 1.1, 1.10005, 1.1002}) {
      INFO(node << " at " << at_s << " s");
      const auto r = test::judged_sim_run(t, {crash(node, at_s)});
      check_precise(r);
      CHECK(events_of(r, TraceKind::takeover, node + ".backup").size() == 1);
    }
  }
}

TEST_CASE("hybrid standby: a stall of the primary short of the failure timeout switches it to active",
          "[scenarios][hybrid]") {
  Topology t = hybrid_network();
  // 15 ms: the standby hears nothing for up to 25 ms, short of the 30 ms failure timeout.
  const auto r = test::judged_sim_run(t, {FaultSpec{FaultKind::pause, "aggregate", "", 1.0, 0.015}});
  check_precise(r);
  const auto switches = events_of(r, TraceKind::hybrid_switch, "aggregate");
  REQUIRE(switches.size() == 2);
  CHECK(switches[0]->enum_of<TraceReason>(TraceKey::reason) == TraceReason::stalled);
  CHECK(switches[0]->get(TraceKey::duration_us).value_or(0) >= 10'000);
  CHECK(switches[1]->enum_of<TraceReason>(TraceKey::reason) == TraceReason::calm);
  CHECK(events_of(r, TraceKind::takeover).empty());
}

TEST_CASE("hybrid standby: a long input queue switches it to active", "[scenarios][hybrid]") {
  Topology t = hybrid_network();
  // A high rate: the source's batches of 100 tuples (a 2 ms flush holds 100) are a
  // backlog above a bound of 50.
  t.fragments[0].source.rate_tps = 50'000;
  t.settings.duration_s = 1.0;
  t.settings.hybrid_input_queue_tuples = 50;
  t.settings.hybrid_stall_ms = 0;
  const auto r = test::judged_sim_run(t);
  check_precise(r);
  const auto switches = events_of(r, TraceKind::hybrid_switch);
  REQUIRE_FALSE(switches.empty());
  CHECK(switches[0]->enum_of<TraceReason>(TraceKey::reason) == TraceReason::input_queue);
}

TEST_CASE("hybrid standby: after the switch back its live copy stops, and a crash is taken over from the checkpoint",
          "[scenarios][hybrid]") {
  Topology t = hybrid_network();
  t.settings.hybrid_switch_at_ms = 1000;
  t.settings.hybrid_calm_ms = 100;
  const auto r = test::judged_sim_run(t, {crash("aggregate", 1.6)});
  check_precise(r);
  REQUIRE(events_of(r, TraceKind::hybrid_switch, "aggregate").size() == 2);
  const auto takeovers = events_of(r, TraceKind::takeover, "aggregate.backup");
  REQUIRE(takeovers.size() == 1);
  CHECK(takeovers[0]->text == "from its last checkpoint");
}

TEST_CASE("hybrid standby: a primary crashed while active restarts, rejoins as a passive standby, and a second crash is precise",
          "[scenarios][hybrid]") {
  Topology t = hybrid_network();
  t.settings.hybrid_switch_at_ms = 500;
  t.settings.hybrid_calm_ms = 100'000;
  const auto r = test::judged_sim_run(t, {crash("aggregate", 1.0), FaultSpec{FaultKind::restart, "aggregate", "", 1.3, 0.0},
                                          crash("aggregate.backup", 2.2)});
  check_precise(r);
  CHECK(events_of(r, TraceKind::pair_restored, "aggregate.backup").size() == 1);
  const auto takeovers = events_of(r, TraceKind::takeover);
  REQUIRE(takeovers.size() == 2);
  CHECK(takeovers[0]->text == "from its live state");
  CHECK(takeovers[1]->text == "from its last checkpoint");
}
