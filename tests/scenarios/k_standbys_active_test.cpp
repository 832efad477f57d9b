// k standbys (issue 36) for active standby (ha = active) and hybrid standby (ha = hybrid) in the
// simulator, judged against the failure-free reference. Active standby: producers send every
// tuple to the primary and all k standbys, each a processing copy of the fragment, and trim only
// what every replica acknowledged; when the primary fails the standbys elect the one whose copy
// processed the most input (epoch, then processed input, then the lowest replica index), the
// others follow it in the new epoch and go on processing (a fragment that follows determinants
// brings them up to date from the winner's state first). Hybrid standby: the passive phase's
// checkpoints go to all k, a switch makes all k active. The primary and k - 1 standbys crashing
// together, the winner crashing before the others followed it, and a lagging standby losing the
// election all end precisely.
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

Topology k_active_network(const char* ha, std::int64_t k) {
  Topology t = default_topology();
  t.settings.ha = ApproachCatalog::builtin().find(ha)->mode;
  t.settings.standbys = k;
  t.settings.duration_s = 3.0;
  t.settings.checkpoint_interval_ms = 100;
  return t;
}

// Two sources merged by an arrival-order Union (an arbitrary fragment: active standby ships its
// interleaving as determinants), then a filter.
Topology union_network(std::int64_t k) {
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/tests/scenarios/data/union_k_standbys.toml");
  REQUIRE(load.topology.has_value());
  Topology t = *load.topology;
  t.settings.standbys = k;
  return t;
}

std::string standby(const std::string& fragment, std::int64_t i) {
  return fragment + ".backup" + (i == 1 ? std::string() : std::to_string(i));
}

using test::crash;

// The node that won the election for `fragment` (the one that recorded `elected`), or "".
std::string latest_winner_of(const test::JudgedRun& r, const std::string& fragment) {
  std::string w;
  for (const TraceEvent* e : events_of(r, TraceKind::elected))
    if (r.plan->nodes[e->node].fragment == r.plan->fragment_id(fragment)) w = node_name(r, e->node);
  return w;
}

// A one-way slow link from `from` to `to` (the lagging standby's input or checkpoints).
LinkSpec slow_link(const std::string& from, const std::string& to, double latency_ms) {
  LinkSpec slow;
  slow.from = from;
  slow.to = to;
  slow.both_ways = false;
  slow.settings.latency_ms = latency_ms;
  return slow;
}

}  // namespace

TEST_CASE("active standby with k standbys: every standby processes every tuple, the output is precise",
          "[scenarios][k_standbys]") {
  for (std::int64_t k : {2, 3}) {
    INFO("k = " << k);
    const auto r = test::judged_sim_run(k_active_network("active", k));
    check_precise(r);
    const std::int64_t processed = counter(r, "aggregate", "tuples_processed");
    CHECK(processed > 0);
    for (std::int64_t i = 1; i <= k; ++i) {
      INFO(standby("aggregate", i));
      CHECK(counter(r, standby("aggregate", i), "tuples_processed") == processed);
    }
  }
}

TEST_CASE("active standby with k standbys: a crash of the primary elects one standby, the others follow it, precise",
          "[scenarios][k_standbys]") {
  for (std::int64_t k : {2, 3}) {
    for (const std::string fragment : {"filter", "aggregate"}) {
      INFO("k = " << k << ", " << fragment);
      const auto r = test::judged_sim_run(k_active_network("active", k), {crash(fragment, 1.5)});
      check_precise(r);
      const auto elected = events_of(r, TraceKind::elected);
      REQUIRE(elected.size() == 1);
      CHECK(elected[0]->get(TraceKey::count).value_or(0) == k);
      CHECK(events_of(r, TraceKind::candidacy).size() == static_cast<std::size_t>(k));
      CHECK(events_of(r, TraceKind::follows).size() == static_cast<std::size_t>(k - 1));
      CHECK(events_of(r, TraceKind::takeover).size() == 1);
      // The winner's position is the input its copy processed, at least every candidate's.
      const auto position = elected[0]->get(TraceKey::position).value_or(-1);
      CHECK(position > 0);
      for (const TraceEvent* c : events_of(r, TraceKind::candidacy)) CHECK(c->get(TraceKey::position).value_or(-1) <= position);
      // The followers go on processing as active copies: no bootstrap for a deterministic fragment.
      CHECK(counter(r, latest_winner_of(r, fragment), "followers_bootstrapped") == 0);
    }
  }
}

TEST_CASE("active standby with k standbys: the primary and k - 1 standbys crashing together leave the last to take over, precise",
          "[scenarios][k_standbys]") {
  SECTION("k = 2: the primary and the first standby") {
    const auto r = test::judged_sim_run(k_active_network("active", 2), {crash("aggregate", 1.5), crash("aggregate.backup", 1.5)});
    check_precise(r);
    CHECK(latest_winner_of(r, "aggregate") == "aggregate.backup2");
  }
  SECTION("k = 3: the primary and two standbys") {
    const auto r = test::judged_sim_run(
        k_active_network("active", 3), {crash("aggregate", 1.5), crash("aggregate.backup", 1.5), crash("aggregate.backup3", 1.5)});
    check_precise(r);
    CHECK(latest_winner_of(r, "aggregate") == "aggregate.backup2");
  }
  SECTION("k = 3: two standbys first, then the primary") {
    const auto r = test::judged_sim_run(
        k_active_network("active", 3), {crash("aggregate.backup", 0.8), crash("aggregate.backup3", 1.1), crash("aggregate", 1.8)});
    check_precise(r);
    CHECK(events_of(r, TraceKind::standby_lost, "aggregate").size() == 2);
    CHECK(events_of(r, TraceKind::takeover, "aggregate.backup2").size() == 1);
  }
}

TEST_CASE("active standby with k standbys: the winner crashing before the others followed it leaves the next one to take over, precise",
          "[scenarios][k_standbys]") {
  for (std::int64_t k : {2, 3}) {
    for (double after_s : {0.0001, 0.0003, 0.0008, 0.005}) {
      INFO("k = " << k << ", winner crashes " << after_s << " s after the primary");
      const auto r =
          test::judged_sim_run(k_active_network("active", k), {crash("aggregate", 1.5), crash("aggregate.backup", 1.5 + after_s)});
      check_precise(r);
      CHECK(events_of(r, TraceKind::takeover, "aggregate.backup2").size() == 1);
    }
  }
}

TEST_CASE("active standby with k standbys: the standby that processed the most input wins, a lagging one loses",
          "[scenarios][k_standbys]") {
  // The filter's output reaches aggregate.backup 20 ms after the others: its copy lags 20 ms of
  // input all run long, so a crash of the primary must elect aggregate.backup2 though
  // aggregate.backup has the lower index; and a follower that is ahead of the winner
  // (aggregate.backup3 in the second run, whose link is slow too but less) emits nothing twice.
  for (std::int64_t k : {2, 3}) {
    INFO("k = " << k);
    Topology t = k_active_network("active", k);
    t.links.links = {slow_link("filter", "aggregate.backup", 20.0)};
    const auto r = test::judged_sim_run(t, {crash("aggregate", 1.5)});
    check_precise(r);
    std::map<std::string, std::int64_t> positions;
    for (const TraceEvent* c : events_of(r, TraceKind::candidacy)) positions[node_name(r, c->node)] = c->get(TraceKey::position).value_or(-1);
    REQUIRE(positions.size() == static_cast<std::size_t>(k));
    INFO("aggregate.backup " << positions["aggregate.backup"] << ", aggregate.backup2 " << positions["aggregate.backup2"]);
    CHECK(positions["aggregate.backup"] < positions["aggregate.backup2"]);
    CHECK(latest_winner_of(r, "aggregate") == "aggregate.backup2");
    CHECK(events_of(r, TraceKind::follows, "aggregate.backup").size() == 1);
  }
  SECTION("then the winner crashes too: the lagging standby, last of three replicas, takes over, precise") {
    Topology t = k_active_network("active", 2);
    t.links.links = {slow_link("filter", "aggregate.backup", 20.0)};
    const auto r = test::judged_sim_run(t, {crash("aggregate", 1.5), crash("aggregate.backup2", 1.9)});
    check_precise(r);
    CHECK(latest_winner_of(r, "aggregate") == "aggregate.backup2");
    CHECK(events_of(r, TraceKind::takeover, "aggregate.backup").size() == 1);
  }
}

TEST_CASE("active standby with k standbys: a follower ahead of the winner sends nothing twice when it takes over later",
          "[scenarios][k_standbys]") {
  // Every standby is level at the election (a tie: the lowest index wins); the follower keeps
  // the input in flight to it, so it may be ahead of the winner. It sends no output while it
  // follows (checked in every standby event), and when the winner fails too it re-sends only its
  // unacknowledged log: the downstream drops what it has by id.
  int ahead_seen = 0;
  for (double second_s : {1.5002, 1.6, 2.2}) {
    INFO("winner crashes at " << second_s << " s");
    const auto r = test::judged_sim_run(k_active_network("active", 3), {crash("aggregate", 1.5), crash("aggregate.backup", second_s)});
    check_precise(r);
    CHECK(events_of(r, TraceKind::takeover, "aggregate.backup2").size() == 1);
    // The position a follower had when it followed, against the one the winner was elected with.
    const auto elected = events_of(r, TraceKind::elected);
    REQUIRE_FALSE(elected.empty());
    const std::int64_t won_at = elected.front()->get(TraceKey::position).value_or(-1);
    for (const TraceEvent* f : events_of(r, TraceKind::follows)) ahead_seen += f->get(TraceKey::position).value_or(-1) > won_at;
  }
  // The branch ran: some follower had processed more than the winner when it followed it.
  CHECK(ahead_seen > 0);
}

TEST_CASE("active standby with k standbys on a Union with determinants: the followers are bootstrapped from the winner, precise",
          "[scenarios][k_standbys]") {
  for (std::int64_t k : {2, 3}) {
    INFO("k = " << k);
    {
      const auto r = test::judged_sim_run(union_network(k));
      check_precise(r);
      for (std::int64_t i = 1; i <= k; ++i) CHECK(counter(r, standby("merge", i), "determinant_records_applied") > 0);
    }
    {
      const auto r = test::judged_sim_run(union_network(k), {crash("merge", 1.5)});
      check_precise(r);
      const std::string winner = latest_winner_of(r, "merge");
      REQUIRE_FALSE(winner.empty());
      // Every follower installs the winner's state, then applies its determinants.
      CHECK(counter(r, winner, "followers_bootstrapped") == k - 1);
      CHECK(events_of(r, TraceKind::bootstrap_installed).size() == static_cast<std::size_t>(k - 1));
    }
    for (double after_s : {0.0002, 0.002, 0.02}) {
      INFO("winner crashes " << after_s << " s after the primary");
      const auto r = test::judged_sim_run(union_network(k), {crash("merge", 1.5), crash("merge.backup", 1.5 + after_s)});
      check_precise(r);
      CHECK(events_of(r, TraceKind::takeover, "merge.backup2").size() == 1);
    }
  }
  SECTION("k = 3: the primary and two standbys crash together") {
    const auto r =
        test::judged_sim_run(union_network(3), {crash("merge", 1.5), crash("merge.backup", 1.5), crash("merge.backup2", 1.5)});
    check_precise(r);
    CHECK(latest_winner_of(r, "merge") == "merge.backup3");
  }
}

TEST_CASE("active standby with k standbys: followers bootstrapped from a winner that then crashes apply no choice twice (chaos case 375)",
          "[scenarios][k_standbys]") {
  // The winner's bootstrap captured the Union's choices made at its takeover before they were
  // numbered; the followers applied them once from the state and once from the winner's
  // determinants, and after the winner's crash the next primary's output differed from what the
  // sink had: a gap. The choices are numbered (shipped) before the capture now.
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/tests/scenarios/data/union_active_k3_chaos_case375.toml");
  REQUIRE(load.topology.has_value());
  const auto r = test::judged_sim_run(*load.topology, {crash("merge", 0.877), crash("merge.backup", 0.8794)});
  check_precise(r);
  // The branch ran: both followers installed the winner's bootstrap before it crashed, and the
  // next winner bootstrapped the last follower in turn.
  CHECK(counter(r, "merge.backup", "followers_bootstrapped") == 2);
  CHECK(events_of(r, TraceKind::pair_restored, "merge.backup").size() == 2);
  CHECK(events_of(r, TraceKind::takeover, "merge.backup2").size() == 1);
  CHECK(counter(r, "merge.backup2", "followers_bootstrapped") == 1);
}

TEST_CASE("hybrid standby with k standbys: checkpoints to all k, a switch makes all k active, crashes leave it precise",
          "[scenarios][k_standbys]") {
  Topology t = k_active_network("hybrid", 2);
  t.settings.hybrid_switch_at_ms = 1000;
  t.settings.hybrid_calm_ms = 5000;
  SECTION("no crash: both standbys install every checkpoint and the bootstrap") {
    const auto r = test::judged_sim_run(t);
    check_precise(r);
    CHECK(counter(r, "aggregate", "checkpoint_copies_sent") == counter(r, "aggregate", "checkpoints_sent"));
    CHECK(counter(r, "aggregate", "hybrid_activations") == 1);
    for (const std::string s : {"aggregate.backup", "aggregate.backup2"}) {
      INFO(s);
      CHECK(counter(r, s, "hybrid_bootstraps_installed") == 1);
      CHECK(counter(r, s, "tuples_processed") > 0);
    }
  }
  SECTION("the primary and one standby crash together, while passive and while active") {
    for (double at_s : {0.7, 1.5}) {
      INFO("at " << at_s << " s");
      const auto r = test::judged_sim_run(t, {crash("aggregate", at_s), crash("aggregate.backup", at_s)});
      check_precise(r);
      CHECK(latest_winner_of(r, "aggregate") == "aggregate.backup2");
    }
  }
  SECTION("the winner crashes before the other followed it, while passive and while active") {
    for (double at_s : {0.7, 1.5}) {
      for (double after_s : {0.0001, 0.0008, 0.005}) {
        INFO("at " << at_s << " s, winner " << after_s << " s later");
        const auto r = test::judged_sim_run(t, {crash("aggregate", at_s), crash("aggregate.backup", at_s + after_s)});
        check_precise(r);
        CHECK(events_of(r, TraceKind::takeover, "aggregate.backup2").size() == 1);
      }
    }
  }
  SECTION("a lagging standby loses the election (its checkpoints and input 20 ms late)") {
    Topology lag = t;
    lag.links.links = {slow_link("aggregate", "aggregate.backup", 20.0), slow_link("filter", "aggregate.backup", 20.0)};
    const auto r = test::judged_sim_run(lag, {crash("aggregate", 1.5)});
    check_precise(r);
    std::map<std::string, std::int64_t> positions;
    for (const TraceEvent* c : events_of(r, TraceKind::candidacy)) positions[node_name(r, c->node)] = c->get(TraceKey::position).value_or(-1);
    INFO("aggregate.backup " << positions["aggregate.backup"] << ", aggregate.backup2 " << positions["aggregate.backup2"]);
    CHECK(positions["aggregate.backup"] < positions["aggregate.backup2"]);
    CHECK(latest_winner_of(r, "aggregate") == "aggregate.backup2");
  }
}
