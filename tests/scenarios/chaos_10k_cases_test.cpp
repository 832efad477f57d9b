// Cases of the simulated campaign of 10,000 runs (hapair chaos --driver sim --runs 10000 --seed 1,
// drawn from the six approaches none .. hybrid) that broke their approach's guarantee, each kept
// as its topology file with its loss, duplication and seed (tests/scenarios/data/) and its
// faults, and judged here against its failure-free reference by the guarantee rules, as chaos
// judges them. Each test also checks that the branch its fix added really ran.
// - Case 3863 (hybrid standby, k = 3, chain): filter, cut off from map, took a level-0 ack of
//   map.backup2 (map's live hybrid standby) in map's new epoch for a takeover by map.backup2,
//   stopped serving map, and the run never finished. A hybrid standby's acks, replay requests and
//   heartbeats imply no takeover, as an active standby's do not (RouteTable::implied_takeover).
// - Case 5189 (hybrid standby, k = 2, default): the election's winner announced its takeover,
//   the announcement to the other standby was lost, its heartbeat arrived, and the other standby
//   followed it with no standby named (fenced); the winner crashed, and nobody took over. A
//   message of a node of my own fragment in a newer epoch that names me implicitly (it heartbeats
//   me) keeps me its standby (RouteTable::implied_standbys).
// - Case 7373 (hybrid standby, k = 3, merge_join): the winner's first bootstrap had the id of the
//   old primary's, the followers dropped it as a repeat, and the producers, asked to send them
//   input after it, filled their old live copies' holes with gaps (trimmed input); the next winner
//   took over with such a copy. A follower forgets its assembler and closes its live copy's input
//   until the new primary's bootstrap is installed (HybridStandbyRole::on_followed).
// - Case 6148 (active standby without determinants, k = 2, nexmark_q0): copy.backup, the winner
//   of the first election, was paused past the time copy.backup2 took over from it (epoch 2);
//   at its resume it accepted the restarted copy's Rejoin at once, opening epoch 2 a second
//   time, and later claimed epochs 3 and 4 with its stale state: its producer had trimmed for
//   copy.backup2 (lost 133). A primary whose own heartbeat came a failure timeout late forms no
//   new pair for a failure timeout (PrimaryRole::discount_own_stall).
// - Case 7192 (active standby with determinants, nexmark_q5): aggregate.backup, paused past its
//   primary's loss timeout, found the primary failed at its first tick after the resume, before
//   it read the announcement that had dropped it, and claimed the primary's epoch with its stale
//   state; the consumer followed it, the primary yielded, and the replay found a gap (lost 24;
//   docs/FAULTS.md). A standby whose own heartbeat came a failure timeout late does not count
//   that silence against its primary (PrimaryWatch::discount_own_stall).
#include <catch2/catch.hpp>

#include <algorithm>
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

test::JudgedRun run_10k_case(const std::string& file, std::vector<FaultSpec> faults) {
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/tests/scenarios/data/" + file);
  REQUIRE(load.topology.has_value());
  return test::judged_sim_run(*load.topology, std::move(faults));
}

using test::fault;

std::string name_of(const test::JudgedRun& r, NodeId n) { return n < r.plan->nodes.size() ? r.plan->nodes[n].name : "?"; }

}  // namespace

TEST_CASE("hybrid standby with k standbys: a live standby's level-0 ack in its primary's new epoch does not make a "
          "producer cut off from the primary follow the standby (chaos case 3863 of 10,000)",
          "[scenarios][hybrid][k_standbys]") {
  const auto r = run_10k_case("chain_hybrid_k3_chaos_case3863.toml",
                          {fault(FaultKind::partition, "map", 1.146, 0.465, "map.backup"), fault(FaultKind::crash, "map.backup", 1.281),
                           fault(FaultKind::partition, "filter", 1.685, 0.22, "map"), fault(FaultKind::restart, "map.backup", 1.741)});
  // The branch: map's standbys were live (a latency switch) when map opened epoch 2 for the
  // restarted map.backup while filter was cut off from it; filter heard of epoch 2 first from a
  // live standby's ack, and asked it for the route instead of following it.
  CHECK(counter(r, "map", "hybrid_switches_to_active") >= 1);
  CHECK(events_of(r, TraceKind::rejoin_accepted, "map").size() == 1);
  CHECK(counter(r, "filter", "route_queries_sent") >= 1);
  for (const TraceEvent* e : events_of(r, TraceKind::route_change, "filter")) {
    INFO("filter followed " << name_of(r, e->node_of(TraceKey::fragment_primary)) << " at " << e->at_us << " us");
    CHECK(name_of(r, e->node_of(TraceKey::fragment_primary)) != "map.backup2");
  }
  check_precise(r);
}

TEST_CASE("hybrid standby with k standbys: a standby that hears the winner before its announcement stays its standby "
          "and takes over when the winner crashes (chaos case 5189 of 10,000)",
          "[scenarios][hybrid][k_standbys]") {
  const auto r = run_10k_case("default_hybrid_k2_chaos_case5189.toml",
                          {fault(FaultKind::crash, "aggregate", 1.092), fault(FaultKind::crash, "aggregate.backup", 1.0961)});
  // The branch: aggregate.backup won the election and crashed; aggregate.backup2 learned the new
  // epoch from a message that implied it (its announcement was lost), stayed a standby and took
  // over in turn.
  CHECK(events_of(r, TraceKind::elected, "aggregate.backup").size() == 1);
  CHECK(counter(r, "aggregate.backup2", "implied_takeovers") >= 1);
  CHECK(events_of(r, TraceKind::fenced, "aggregate.backup2").empty());
  CHECK(events_of(r, TraceKind::takeover, "aggregate.backup2").size() == 1);
  check_precise(r);
}

TEST_CASE("hybrid standby with k standbys: followers of a new primary install its bootstrap, and their old live "
          "copies take no input meant for it (chaos case 7373 of 10,000)",
          "[scenarios][hybrid][k_standbys]") {
  const auto r = run_10k_case("merge_join_hybrid_k3_chaos_case7373.toml",
                          {fault(FaultKind::crash, "merge", 1.479), fault(FaultKind::crash, "merge.backup", 1.4831),
                           fault(FaultKind::restart, "merge.backup", 1.867), fault(FaultKind::restart, "merge", 2.003)});
  // The branch: the followers' live copies (active since the command at 91 ms) closed their input
  // when they followed merge.backup, which switched at once and bootstrapped them.
  CHECK(events_of(r, TraceKind::elected, "merge.backup").size() == 1);
  CHECK(counter(r, "merge.backup2", "hybrid_live_input_closed_on_follow") >= 1);
  CHECK(counter(r, "merge.backup3", "hybrid_live_input_closed_on_follow") >= 1);
  std::vector<std::string> installed_after_takeover;
  for (const TraceEvent* e : events_of(r, TraceKind::bootstrap_installed))
    if (e->at_us > 1'479'000) installed_after_takeover.push_back(name_of(r, e->node));
  INFO("bootstraps installed after the first crash: " << installed_after_takeover.size());
  CHECK(std::count(installed_after_takeover.begin(), installed_after_takeover.end(), "merge.backup2") >= 1);
  check_precise(r);
}

TEST_CASE("active standby with k standbys: a winner paused past the next standby's takeover forms no pair in its epoch "
          "when it resumes (chaos case 6148 of 10,000)",
          "[scenarios][active][k_standbys]") {
  const auto r = run_10k_case("nexmark_q0_active_k2_chaos_case6148.toml",
                          {fault(FaultKind::crash, "copy", 0.995), fault(FaultKind::pause, "copy.backup", 1.111, 0.106),
                           fault(FaultKind::partition, "copy.backup", 1.151, 0.482, "sink"), fault(FaultKind::restart, "copy", 1.166)});
  // The branch: copy.backup won the first election, copy.backup2 took over from it while it was
  // paused; at the resume copy.backup discounted its own stall and deferred copy's Rejoin until
  // copy.backup2's answer to its heartbeat fenced it.
  CHECK(events_of(r, TraceKind::elected, "copy.backup").size() == 1);
  CHECK(events_of(r, TraceKind::takeover, "copy.backup2").size() == 1);
  CHECK(counter(r, "copy.backup", "own_stalls_discounted") >= 1);
  CHECK(counter(r, "copy.backup", "rejoins_deferred_after_own_stall") >= 1);
  CHECK(events_of(r, TraceKind::rejoin_accepted, "copy.backup").empty());
  check_precise(r);
}

TEST_CASE("active standby: a standby paused past its primary's loss timeout reads the primary's announcement before "
          "it suspects the primary (chaos case 7192 of 10,000)",
          "[scenarios][active]") {
  const auto r = run_10k_case("nexmark_q5_active_chaos_case7192.toml",
                          {fault(FaultKind::crash, "hottest", 0.597), fault(FaultKind::partition, "aggregate", 0.764, 0.556, "hottest.backup"),
                           fault(FaultKind::pause, "aggregate.backup", 1.022, 0.195)});
  // The branch: aggregate dissolved its pair while aggregate.backup was paused; at the resume
  // aggregate.backup discounted its own stall, read the new epoch, was fenced and rejoined,
  // and never claimed aggregate's epoch.
  CHECK(events_of(r, TraceKind::standby_lost, "aggregate").size() == 1);
  CHECK(counter(r, "aggregate.backup", "own_stalls_discounted") >= 1);
  CHECK(events_of(r, TraceKind::takeover, "aggregate.backup").empty());
  CHECK(events_of(r, TraceKind::fenced, "aggregate").empty());
  check_precise(r);
}
