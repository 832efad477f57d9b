// k standbys (issue 36) under real SIGKILLs: passive standby with standbys = 2 survives two
// SIGKILLs of one fragment's replicas (the primary, then the standby that took over from it), the
// output equals the failure-free reference, and the first election is won by the most advanced
// standby, not the first: aggregate.backup gets every message of its fragment 40 ms late (an
// emulated link), so it is a checkpoint behind aggregate.backup2 almost all the time. Active
// standby (ha = active, standbys = 2) likewise, its lagging standby's copy 40 ms of input behind
// (the filter's output reaches it 40 ms late), so it processed less and loses.
#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

// The standby that recorded the first `elected` event of fragment aggregate, and the positions
// every standby announced in that election.
struct Election {
  std::string winner;
  std::map<std::string, std::int64_t> positions;
};

Election first_election(const Plan& plan, const RunResult& r) {
  Election e;
  for (const TraceEvent& t : r.events) {
    if (t.node >= plan.nodes.size() || plan.nodes[t.node].fragment != plan.fragment_id("aggregate")) continue;
    const std::string& node = plan.nodes[t.node].name;
    if (t.kind == TraceKind::candidacy && e.winner.empty() && !e.positions.count(node))
      e.positions[node] = t.get(TraceKey::position).value_or(-1);
    if (t.kind == TraceKind::elected && e.winner.empty()) e.winner = node;
  }
  return e;
}

}  // namespace

TEST_CASE("k standbys: two SIGKILLs of one fragment's replicas are recovered precisely and the most advanced standby wins",
          "[e2e][k_standbys]") {
  auto plan = plan_of("", HaMode::passive, 3.0, [](Topology& t) {
    t.settings.standbys = 2;
    // A checkpoint every 20 ms, each waiting for both standbys' acks: with 40 ms on the way to
    // aggregate.backup, aggregate.backup2 has installed one more than it nearly always.
    t.settings.checkpoint_interval_ms = 20;
    LinkSpec slow;
    slow.from = "aggregate";  // every replica of the fragment (its candidacies too)
    slow.to = "aggregate.backup";
    slow.both_ways = false;
    slow.settings.latency_ms = 40.0;
    t.links.links = {slow};
  });
  const auto o = run_real(plan, {crash("aggregate", 1.2), crash("aggregate.backup2", 2.0)});
  check_precise(o);
  Election e = first_election(*plan, o.result);
  INFO("winner " << e.winner << "; aggregate.backup at " << e.positions["aggregate.backup"] << ", aggregate.backup2 at "
                 << e.positions["aggregate.backup2"]);
  REQUIRE(e.positions.size() == 2);
  // The winner is the most advanced (a tie goes to aggregate.backup, the lower index). The slow
  // link makes aggregate.backup2 the more advanced one in most runs, not in every one: the
  // checkpoint in flight to aggregate.backup may be installed before it announces its position
  // (a tie, seen on CI). The simulator's scenario (tests/scenarios/k_standbys_test.cpp) makes the
  // lag certain; here the rule is checked on whatever positions the real run produced.
  const bool second_ahead = e.positions["aggregate.backup2"] > e.positions["aggregate.backup"];
  const std::string winner = second_ahead ? "aggregate.backup2" : "aggregate.backup";
  const std::string other = second_ahead ? "aggregate.backup" : "aggregate.backup2";
  CHECK(e.winner == winner);
  if (!second_ahead) WARN("aggregate.backup2 was not ahead in this run: the tie rule decided");
  // The other standby followed the winner.
  CHECK(count_events(*plan, o.result, "follows", other) == 1);
  CHECK(count_events(*plan, o.result, "takeover", winner) == 1);
  // The second SIGKILL (of aggregate.backup2) hit the winner, and aggregate.backup took over from
  // it, or a follower, and aggregate.backup stayed primary: either way aggregate.backup took over
  // once and the output is precise (checked above).
  CHECK(count_events(*plan, o.result, "takeover", "aggregate.backup") == 1);
}

TEST_CASE("k standbys, active standby: two SIGKILLs of one fragment's replicas are recovered precisely and the lagging standby loses",
          "[e2e][k_standbys]") {
  auto plan = plan_of("", HaMode::active, 3.0, [](Topology& t) {
    t.settings.standbys = 2;
    LinkSpec slow;
    slow.from = "filter";  // the input of aggregate.backup only
    slow.to = "aggregate.backup";
    slow.both_ways = false;
    slow.settings.latency_ms = 40.0;
    t.links.links = {slow};
  });
  const auto o = run_real(plan, {crash("aggregate", 1.2), crash("aggregate.backup2", 2.0)});
  check_precise(o);
  Election e = first_election(*plan, o.result);
  INFO("winner " << e.winner << "; aggregate.backup at " << e.positions["aggregate.backup"] << ", aggregate.backup2 at "
                 << e.positions["aggregate.backup2"]);
  REQUIRE(e.positions.size() == 2);
  // 40 ms of input behind: the lagging standby's position is lower, and it loses.
  CHECK(e.positions["aggregate.backup"] < e.positions["aggregate.backup2"]);
  CHECK(e.winner == "aggregate.backup2");
  CHECK(count_events(*plan, o.result, "follows", "aggregate.backup") == 1);
  CHECK(count_events(*plan, o.result, "takeover", "aggregate.backup2") == 1);
  // The second SIGKILL hit the winner: the follower, the last replica, took over from it.
  CHECK(count_events(*plan, o.result, "takeover", "aggregate.backup") == 1);
}
