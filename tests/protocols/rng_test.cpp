// Tests of the project's seeded generator (protocols/rng.h): runs are reproducible only if the
// same seed gives the same numbers everywhere, so the sequence is pinned, ranges are checked,
// and derived streams are checked to be distinct from each other and from their parent.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "protocols/rng.h"

namespace hapair {
namespace {

std::vector<std::uint64_t> draw(Rng rng, std::size_t n) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(rng.next_u64());
  return out;
}

}  // namespace

TEST_CASE("the same seed gives the same sequence", "[rng]") {
  REQUIRE(draw(Rng(42), 1000) == draw(Rng(42), 1000));
  REQUIRE(draw(Rng(0), 1000) == draw(Rng(0), 1000));
}

TEST_CASE("different seeds give different sequences", "[rng]") {
  std::set<std::vector<std::uint64_t>> prefixes;
  for (std::uint64_t seed = 0; seed < 100; ++seed) prefixes.insert(draw(Rng(seed), 4));
  REQUIRE(prefixes.size() == 100);
}

TEST_CASE("the sequence of a seed is pinned, so recorded seeds replay the same runs", "[rng]") {
  // Values of this implementation (xoshiro256** seeded through splitmix64) at the time the
  // simulator started relying on it; a change here changes every recorded experiment.
  Rng rng(1);
  const std::vector<std::uint64_t> first = {rng.next_u64(), rng.next_u64(), rng.next_u64()};
  REQUIRE(first == std::vector<std::uint64_t>{0xf9d20113ec80c6d5ULL, 0xd16e236e5cdc6563ULL,
                                                 0x68a40f278366062aULL});
}

TEST_CASE("below(n) stays below n, at or above 0, and reaches every value of a small range", "[rng]") {
  Rng rng(7);
  for (std::uint64_t n : {1ull, 2ull, 3ull, 10ull, 1000ull, (1ull << 63) + 5, ~0ull}) {
    for (int i = 0; i < 2000; ++i) REQUIRE(rng.below(n) < n);
  }
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(rng.below(7));
  REQUIRE(seen.size() == 7);
  REQUIRE(*seen.rbegin() == 6);
}

TEST_CASE("next_unit and uniform stay in their half-open ranges", "[rng]") {
  Rng rng(9);
  double low = 1.0;
  double high = 0.0;
  for (int i = 0; i < 5000; ++i) {
    const double u = rng.next_unit();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    low = u < low ? u : low;
    high = u > high ? u : high;
    const double v = rng.uniform(-3.0, 5.0);
    REQUIRE(v >= -3.0);
    REQUIRE(v < 5.0);
  }
  REQUIRE(low < 0.01);
  REQUIRE(high > 0.99);
  REQUIRE(Rng::unit_from_bits(0) == 0.0);
  REQUIRE(Rng::unit_from_bits(~0ull) < 1.0);
}

TEST_CASE("chance(0) never fires and chance(1) always does", "[rng]") {
  Rng rng(11);
  for (int i = 0; i < 1000; ++i) {
    REQUIRE_FALSE(rng.chance(0.0));
    REQUIRE(rng.chance(1.0));
  }
}

TEST_CASE("derive gives streams independent of each other and of the parent seed", "[rng]") {
  const auto parent = draw(Rng(5), 64);
  const auto a = draw(Rng::derive(5, 1), 64);
  const auto b = draw(Rng::derive(5, 2), 64);
  REQUIRE(a != b);
  REQUIRE(a != parent);
  REQUIRE(b != parent);
  // No value shared between the streams (a 64-bit collision in 192 draws would be a bug).
  std::set<std::uint64_t> all(parent.begin(), parent.end());
  all.insert(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  REQUIRE(all.size() == 3 * 64);
  // Deriving is a pure function of (seed, purpose).
  REQUIRE(draw(Rng::derive(5, 1), 64) == a);
}

}  // namespace hapair
