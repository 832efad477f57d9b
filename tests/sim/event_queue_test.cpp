// The event queue orders by (time, insertion sequence): the root of the simulator's determinism.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "protocols/rng.h"
#include "sim/event_queue.h"

namespace hapair::sim {
namespace {

TEST_CASE("events come out in time order, and equal times in the order they were pushed", "[sim][event_queue]") {
  EventQueue<int> q;
  q.push(30, 1);
  q.push(10, 2);
  q.push(30, 3);
  q.push(10, 4);
  q.push(20, 5);
  q.push(10, 6);
  std::vector<std::pair<TimeUs, int>> out;
  while (!q.empty()) {
    auto e = q.pop();
    out.emplace_back(e.at_us, e.payload);
  }
  CHECK(out == std::vector<std::pair<TimeUs, int>>{{10, 2}, {10, 4}, {10, 6}, {20, 5}, {30, 1}, {30, 3}});
}

TEST_CASE("the queue agrees with a stable sort on a long random interleaving of pushes and pops", "[sim][event_queue]") {
  Rng rng(42);
  EventQueue<std::uint64_t> q;
  std::vector<std::pair<TimeUs, std::uint64_t>> pending;  // (time, push order), pushed in order
  std::uint64_t pushed = 0;
  TimeUs now = 0;
  for (int round = 0; round < 20'000; ++round) {
    if (pending.empty() || rng.chance(0.6)) {
      const TimeUs t = now + static_cast<TimeUs>(rng.below(50));  // many equal times
      q.push(t, pushed);
      pending.emplace_back(t, pushed++);
    } else {
      auto expected = std::min_element(pending.begin(), pending.end());  // smallest time, then order
      auto e = q.pop();
      REQUIRE(e.at_us == expected->first);
      REQUIRE(e.payload == expected->second);
      now = e.at_us;
      pending.erase(expected);
    }
    REQUIRE(q.size() == pending.size());
  }
}

TEST_CASE("payloads are moved through the queue, so move-only payloads work", "[sim][event_queue]") {
  EventQueue<std::unique_ptr<int>> q;
  q.push(5, std::make_unique<int>(7));
  q.push(1, std::make_unique<int>(3));
  CHECK(q.next_time() == 1);
  CHECK(*q.next_payload() == 3);
  CHECK(*q.pop().payload == 3);
  // The freed slot is reused for the next push.
  q.push(2, std::make_unique<int>(9));
  CHECK(*q.pop().payload == 9);
  CHECK(*q.pop().payload == 7);
  CHECK(q.empty());
}

}  // namespace
}  // namespace hapair::sim
