// Live switching of a fragment's approach (docs/ARCHITECTURE.md "Live switching") in the
// simulator, judged against the failure-free reference: passive -> active -> upstream backup
// mid-run without losing or duplicating output, a crash of the primary after a switch and
// during one recovered precisely, and each switch a typed trace event that names its cost.
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

HaMode mode_named(const char* name) { return ApproachCatalog::builtin().find(name)->mode; }

// source -> filter -> aggregate -> sink, every fragment passive; the aggregate switches to active
// standby at 1 s and to upstream backup at 2 s.
Topology switching_network() {
  Topology t = default_topology();
  t.settings.ha = mode_named("passive");
  t.settings.duration_s = 3.0;
  t.settings.checkpoint_interval_ms = 100;
  t.switches.push_back(SwitchSpec{"aggregate", mode_named("active"), 1.0, ""});
  t.switches.push_back(SwitchSpec{"aggregate", mode_named("upstream"), 2.0, ""});
  return t;
}

using test::crash;

// The aggregate's primary crashes at `at_s`: the output is precise, and its standby took over
// once, as the approach `ha` (the one the fragment had switched to).
test::JudgedRun crash_and_check(double at_s, const char* ha) {
  auto r = test::judged_sim_run(switching_network(), {crash("aggregate", at_s)});
  check_precise(r);
  const auto takeovers = events_of(r, TraceKind::takeover, "aggregate.backup");
  REQUIRE(takeovers.size() == 1);
  CHECK(takeovers[0]->enum_of<HaMode>(TraceKey::ha) == mode_named(ha));
  return r;
}

}  // namespace

TEST_CASE("live switch passive to active to upstream backup mid-run: precise, each switch traced with its cost",
          "[scenarios][live_switch]") {
  const auto r = test::judged_sim_run(switching_network());
  check_precise(r);
  const auto switches = events_of(r, TraceKind::approach_switch, "aggregate");
  REQUIRE(switches.size() == 2);
  CHECK(switches[0]->at_us == 1'000'000);
  CHECK(switches[0]->enum_of<HaMode>(TraceKey::ha) == mode_named("active"));
  CHECK(switches[0]->enum_of<HaMode>(TraceKey::from_ha) == mode_named("passive"));
  CHECK(switches[1]->at_us == 2'000'000);
  CHECK(switches[1]->enum_of<HaMode>(TraceKey::ha) == mode_named("upstream"));
  CHECK(switches[1]->enum_of<HaMode>(TraceKey::from_ha) == mode_named("active"));
  // To active standby the primary bootstraps its standby at once (its state goes in the switch's
  // bytes); to upstream backup it sends only the announcement.
  CHECK(switches[0]->get(TraceKey::bytes) > switches[1]->get(TraceKey::bytes));
  CHECK(switches[1]->get(TraceKey::bytes) > 0);
  // The standby followed both: an active standby that installed a bootstrap and processed, then
  // a spare of upstream backup.
  CHECK(counter(r, "aggregate.backup", "approach_switches_followed") == 2);
  CHECK(events_of(r, TraceKind::bootstrap_installed, "aggregate.backup").size() == 1);
  CHECK(counter(r, "aggregate.backup", "tuples_processed") > 0);
  // The aggregate's producer (the filter) sent the active standby its input from the bootstrap on.
  CHECK(counter(r, "filter", "standbys_subscribed") >= 1);
  INFO(r.outcome.summary);
  CHECK(r.outcome.semantics.delivered_tuples > 0);
  CHECK(r.outcome.semantics.delivered_tuples == r.outcome.semantics.reference_tuples);
  CHECK(counter(r, "aggregate", "approach_switches") == 2);
}

TEST_CASE("live switch: a crash of the primary right after each switch is recovered precisely by the new approach",
          "[scenarios][live_switch]") {
  SECTION("active standby takes over after the switch to active") {
    const auto r = crash_and_check(1.5, "active");
    // The new primary switches to upstream backup at 2 s as the schedule says (no standby left):
    // the standby followed one switch and made the next itself.
    CHECK(events_of(r, TraceKind::approach_switch, "aggregate.backup").size() == 2);
  }
  SECTION("the spare of upstream backup takes over from its restart point well after the switch") {
    const auto r = crash_and_check(2.9, "upstream");
    CHECK(counter(r, "aggregate.backup", "takeovers_from_live_copy") == 0);
  }
  SECTION("right after the switch to upstream backup the spare continues the active standby's live copy") {
    // Upstream servers trimmed at active standby's level-0 acks until 2 s: the windows open then
    // need input they no longer hold, so the copy the spare kept takes over.
    const auto r = crash_and_check(2.05, "upstream");
    CHECK(counter(r, "aggregate.backup", "takeovers_from_live_copy") == 1);
  }
}

TEST_CASE("live switch passive to upstream backup: right after it the spare continues from the last checkpoint",
          "[scenarios][live_switch]") {
  // Upstream servers trimmed to the acknowledged checkpoints until the switch: the restart point
  // of the windows open then needs input they no longer hold, so the passive standby's last
  // checkpoint is left in the node and the spare continues from it.
  Topology t = switching_network();
  t.switches = {SwitchSpec{"aggregate", mode_named("upstream"), 2.0, ""}};
  const auto r = test::judged_sim_run(t, {crash("aggregate", 2.05)});
  check_precise(r);
  CHECK(counter(r, "aggregate.backup", "checkpoint_left_in_node") == 1);
  CHECK(counter(r, "aggregate.backup", "takeovers_from_live_copy") == 1);
}

TEST_CASE("live switch: a crash of the primary during a switch is recovered precisely", "[scenarios][live_switch]") {
  SECTION("before its announcement reached the standby: the standby takes over as it was and switches itself") {
    // 10 us after the switch to active standby: the announcement and the bootstrap are still on
    // their way (the simulated link takes longer) when the connection closes.
    const auto r = crash_and_check(1.00001, "passive");
    const auto switches = events_of(r, TraceKind::approach_switch, "aggregate.backup");
    REQUIRE(switches.size() == 2);
    CHECK(switches[0]->enum_of<HaMode>(TraceKey::ha) == mode_named("active"));
    CHECK(switches[1]->enum_of<HaMode>(TraceKey::ha) == mode_named("upstream"));
    CHECK(counter(r, "aggregate.backup", "approach_switches_followed") == 0);
  }
  SECTION("once the standby has its bootstrap: it takes over as an active standby") {
    const auto r = crash_and_check(1.0005, "active");
    CHECK(counter(r, "aggregate.backup", "approach_switches_followed") == 1);
  }
}
