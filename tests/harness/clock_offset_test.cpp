// Clock offsets (hosts/clock_offset.h): NTP's four timestamps give offset = ((t2-t1)+(t3-t4))/2
// within ± round trip / 2 however the round trip splits between the directions; of N probes the
// one with the smallest round trip is kept; probes whose clocks go backwards are dropped.
#include <catch2/catch.hpp>

#include <cstdint>

#include "hosts/clock_offset.h"

using namespace hapair;

namespace {

// A probe of a host whose clock reads `offset_us` more than the launcher's, sent at launcher
// time `t1`, `out_us` on the way there, held `hold_us`, `back_us` on the way back.
ClockProbe probe(std::int64_t t1, std::int64_t offset_us, std::int64_t out_us, std::int64_t hold_us, std::int64_t back_us) {
  ClockProbe p;
  p.t1_us = t1;
  p.t2_us = t1 + out_us + offset_us;
  p.t3_us = p.t2_us + hold_us;
  p.t4_us = t1 + out_us + hold_us + back_us;
  return p;
}

}  // namespace

TEST_CASE("equal delays both ways give the exact offset, the bound is half the round trip", "[hosts][clock]") {
  const ClockOffset c = ClockOffset::from_probe(probe(1'000'000, 250'000, 400, 30, 400));
  CHECK(c.offset_us() == 250'000);
  CHECK(c.round_trip_us() == 800);
  CHECK(c.error_bound_us() == 400);
  CHECK(c.to_launcher_us(5'250'000) == 5'000'000);
  CHECK(c.admits(250'000));
  CHECK(c.admits(250'400));
  CHECK_FALSE(c.admits(250'401));
}

TEST_CASE("an injected offset is recovered within the bound however the round trip splits", "[hosts][clock]") {
  for (std::int64_t offset : {-3'000'000'000LL, -17LL, 0LL, 1LL, 42'000LL}) {
    for (std::int64_t out = 0; out <= 41; out += 7) {
      for (std::int64_t back = 0; back <= 41; back += 5) {
        INFO("offset " << offset << " out " << out << " back " << back);
        const ClockOffset c = ClockOffset::from_probe(probe(77, offset, out, 3, back));
        CHECK(c.admits(offset));
        CHECK(c.round_trip_us() == out + back);
        CHECK(c.error_bound_us() * 2 >= c.round_trip_us());
        CHECK(c.error_bound_us() * 2 <= c.round_trip_us() + 1);  // floor/ceil of an odd half: one more at most
        // A host time corrected lands within the bound of the launcher time.
        const std::int64_t launcher = 10'000;
        const std::int64_t corrected = c.to_launcher_us(launcher + offset);
        CHECK(corrected >= launcher - c.error_bound_us());
        CHECK(corrected <= launcher + c.error_bound_us());
      }
    }
  }
}

TEST_CASE("of N probes the one with the smallest round trip is kept, the earlier of equals", "[hosts][clock]") {
  ClockOffsetEstimator e(4);
  CHECK_FALSE(e.best());
  CHECK(e.add(probe(0, 1000, 900, 10, 100)));  // rtt 1000, skewed: estimate 1400
  CHECK(e.add(probe(5000, 1000, 60, 10, 40)));   // rtt 100: estimate 1010
  CHECK(e.add(probe(9000, 1000, 30, 10, 70)));   // rtt 100 too, later: not taken
  REQUIRE(e.best());
  CHECK(e.best()->round_trip_us() == 100);
  CHECK(e.best()->offset_us() == 1010);
  CHECK(e.best()->admits(1000));
  CHECK_FALSE(e.complete());
  CHECK(e.add(probe(12000, 1000, 5, 10, 5)));  // rtt 10: the best
  CHECK(e.complete());
  CHECK(e.best()->offset_us() == 1000);
  CHECK(e.best()->error_bound_us() == 5);
  CHECK_FALSE(e.add(probe(20000, 1000, 0, 10, 0)));  // the N were taken
  CHECK(e.used() == 4);
  CHECK(e.best()->round_trip_us() == 10);
}

TEST_CASE("probes whose clocks go backwards are counted and dropped, not trusted", "[hosts][clock]") {
  ClockOffsetEstimator e(3);
  ClockProbe launcher_back = probe(1000, 0, 10, 1, 10);
  launcher_back.t4_us = 900;
  CHECK_FALSE(e.add(launcher_back));
  CHECK_THAT(e.last_problem(), Catch::Contains("the launcher's clock went backwards"));
  ClockProbe host_back = probe(1000, 0, 10, 1, 10);
  host_back.t3_us = host_back.t2_us - 1;
  CHECK_FALSE(e.add(host_back));
  CHECK_THAT(e.last_problem(), Catch::Contains("the host's clock went backwards"));
  ClockProbe held_too_long = probe(1000, 0, 10, 1, 10);
  held_too_long.t3_us = held_too_long.t2_us + 500;
  CHECK_FALSE(e.add(held_too_long));
  CHECK_THAT(e.last_problem(), Catch::Contains("longer than its round trip"));
  ClockProbe absurd = probe(1000, 0, 10, 1, 10);
  absurd.t2_us = INT64_MAX;
  CHECK_FALSE(e.add(absurd));
  CHECK_THAT(e.last_problem(), Catch::Contains("out of range"));
  CHECK(e.dropped() == 4);
  CHECK(e.used() == 0);
  CHECK_FALSE(e.best());
  CHECK(e.add(probe(1000, -5, 10, 1, 10)));
  CHECK(e.best()->offset_us() == -5);
}

TEST_CASE("a host on the launcher's clock is 0 within the bound", "[hosts][clock]") {
  ClockOffsetEstimator e(8);
  for (std::int64_t i = 0; i < 8; ++i) CHECK(e.add(probe(i * 1000, 0, 20 + i, 4, 25 - i)));
  REQUIRE(e.best());
  CHECK(e.best()->admits(0));
  CHECK(e.best()->round_trip_us() == 45);
}
