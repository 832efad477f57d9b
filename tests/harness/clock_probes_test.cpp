// Clock probes over the control channel (hosts/clock_probes.h): rounds of NTP probes to every
// node, one outstanding per node, the best probe of a host's nodes kept; the first round's
// estimate corrects the host's times when it excludes 0, and every round bounds what remains.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "hosts/clock_probes.h"

using namespace hapair;

namespace {

// A node whose clock reads `offset_us` ahead of the launcher's answers a request sent at `t1`
// after `out_us` on the way there, holding it `hold_us`, `back_us` on the way back.
struct Answer {
  ClockReply reply;
  std::int64_t t4_us = 0;
};
Answer answer(const ClockRequest& request, std::int64_t offset_us, std::int64_t out_us, std::int64_t hold_us,
              std::int64_t back_us) {
  Answer a;
  a.reply.sequence = request.sequence;
  a.reply.t1_us = request.t1_us;
  a.reply.t2_us = request.t1_us + out_us + offset_us;
  a.reply.t3_us = a.reply.t2_us + hold_us;
  a.t4_us = request.t1_us + out_us + hold_us + back_us;
  return a;
}

// Runs a round in which every node of host h answers with host_offset[h], the i-th probe of a
// node taking `delays[i]` each way. Returns the time after the round.
std::int64_t run_round(ClockProbes& probes, std::int64_t now, const std::vector<std::size_t>& target_host,
                       const std::vector<std::int64_t>& host_offset, const std::vector<std::int64_t>& delays) {
  probes.begin_round(now);
  std::vector<std::size_t> answered(target_host.size(), 0);
  for (int step = 0; step < 100 && probes.round_under_way(); ++step) {
    for (const ClockProbes::Send& s : probes.due(now)) {
      const std::int64_t d = delays[answered[s.target] % delays.size()];
      const Answer a = answer(s.request, host_offset[target_host[s.target]], d, 5, d);
      ++answered[s.target];
      probes.on_reply(s.target, a.reply, a.t4_us);
    }
    now += 1'000;
  }
  REQUIRE_FALSE(probes.round_under_way());
  return now;
}

}  // namespace

TEST_CASE("a round probes every node its share and keeps the smallest round trip of each host's nodes",
          "[hosts][clock]") {
  const std::vector<std::size_t> target_host{0, 1, 1};
  ClockProbes probes(target_host, 2, ClockProbesConfig{3, 500'000});
  run_round(probes, 1'000'000, target_host, {0, 2'345'678}, {400, 40, 900});
  REQUIRE(probes.rounds().size() == 1);
  const HostClockRound& h0 = probes.rounds()[0].hosts[0];
  const HostClockRound& h1 = probes.rounds()[0].hosts[1];
  CHECK(h0.used == 3);
  CHECK(h1.used == 6);
  REQUIRE(h0.estimate);
  REQUIRE(h1.estimate);
  // The best probe went 40 us each way, held 5 us: round trip 80 us, bound 40 us.
  CHECK(h0.estimate->round_trip_us() == 80);
  CHECK(h0.estimate->error_bound_us() == 40);
  CHECK(h0.estimate->admits(0));
  CHECK(h1.estimate->offset_us() == 2'345'678);
  CHECK(h1.estimate->admits(2'345'678));
  // Host 1's estimate excludes 0: its times are corrected by it; host 0's admits 0: not.
  CHECK(probes.host_summary(1).correction_us == 2'345'678);
  CHECK(probes.host_summary(0).correction_us == 0);
  CHECK(probes.host_summary(1).error_bound_us == 40);
  // A time difference between the two hosts: both bounds.
  CHECK(probes.run_error_bound_us() == 80);
}

TEST_CASE("a clock that drifts after the first round widens the error that remains, never hides it", "[hosts][clock]") {
  const std::vector<std::size_t> target_host{0};
  ClockProbes probes(target_host, 1, ClockProbesConfig{2, 500'000});
  std::int64_t now = run_round(probes, 0, target_host, {10'000}, {50});
  now = run_round(probes, now + 1'000'000, target_host, {10'300}, {50});
  const HostClockSummary s = probes.host_summary(0);
  REQUIRE(s.first);
  CHECK(s.correction_us == 10'000);  // the first round's
  // The second round says the true offset is 10'300 +- 50: the correction may be 350 us off.
  CHECK(s.error_bound_us == 300 + 50);
}

TEST_CASE("an unanswered probe is written off at its timeout, a late or repeated reply is dropped as stray",
          "[hosts][clock]") {
  ClockProbes probes({0, 0}, 1, ClockProbesConfig{1, 1'000});
  probes.begin_round(0);
  const std::vector<ClockProbes::Send> sent = probes.due(0);
  REQUIRE(sent.size() == 2);
  const Answer a = answer(sent[0].request, 0, 10, 1, 10);
  probes.on_reply(sent[0].target, a.reply, a.t4_us);
  probes.on_reply(sent[0].target, a.reply, a.t4_us);  // repeated
  CHECK(probes.stray_replies() == 1);
  CHECK(probes.due(500).empty());
  CHECK(probes.round_under_way());
  CHECK(probes.due(1'000).empty());  // the second node's probe is written off, nothing is left
  CHECK_FALSE(probes.round_under_way());
  CHECK(probes.rounds()[0].hosts[0].lost == 1);
  CHECK(probes.rounds()[0].hosts[0].used == 1);
  const Answer late = answer(sent[1].request, 0, 600, 1, 600);
  probes.on_reply(sent[1].target, late.reply, late.t4_us);
  CHECK(probes.stray_replies() == 2);
}

TEST_CASE("a node that cannot answer is not probed, and a host without an estimate leaves the run's bound unknown",
          "[hosts][clock]") {
  ClockProbes probes({0, 1}, 2, ClockProbesConfig{2, 1'000});
  probes.set_reachable(1, false);
  probes.begin_round(0);
  const std::vector<ClockProbes::Send> sent = probes.due(0);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].target == 0);
  const Answer a = answer(sent[0].request, 0, 10, 1, 10);
  probes.on_reply(0, a.reply, a.t4_us);
  const std::vector<ClockProbes::Send> next = probes.due(100);
  REQUIRE(next.size() == 1);
  probes.on_reply(0, answer(next[0].request, 0, 10, 1, 10).reply, 121);
  CHECK(probes.due(200).empty());
  CHECK_FALSE(probes.round_under_way());
  CHECK_FALSE(probes.rounds()[0].hosts[1].estimate);
  CHECK(probes.host_summary(1).correction_us == 0);
  CHECK_FALSE(probes.run_error_bound_us());
}

TEST_CASE("a reply whose clocks went backwards is dropped, not used", "[hosts][clock]") {
  ClockProbes probes({0}, 1, ClockProbesConfig{1, 1'000});
  probes.begin_round(0);
  const std::vector<ClockProbes::Send> sent = probes.due(100);
  REQUIRE(sent.size() == 1);
  ClockReply reply{sent[0].request.sequence, sent[0].request.t1_us, 500, 400};  // t3 < t2
  probes.on_reply(0, reply, 200);
  CHECK(probes.rounds()[0].hosts[0].dropped == 1);
  CHECK_FALSE(probes.rounds()[0].hosts[0].estimate);
}
