// The project's own seeded random numbers. One generator is created from the run's seed and
// passed down; nothing else is random. The distributions are written here, not taken from
// <random>, because the standard library's distributions differ between implementations and
// the simulator must give the same run byte for byte everywhere.
#pragma once

#include <cmath>
#include <cstdint>

#include "protocols/tuple.h"

namespace hapair {

// xoshiro256** seeded through splitmix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& s : s_) {
      x += 0x9e3779b97f4a7c15ULL;
      s = mix64(x);
    }
  }
  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 bits.
  double next_unit() { return unit_from_bits(next_u64()); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * next_unit(); }
  // Uniform integer in [0, n), n > 0, without modulo bias worth caring about (128-bit multiply).
  std::uint64_t below(std::uint64_t n) { return below(next_u64(), n); }
  bool chance(double p) { return next_unit() < p; }
  double normal(double mean, double stddev) {
    // Box-Muller; log/cos/sqrt are correctly rounded enough on glibc for identical runs.
    double u1 = next_unit();
    double u2 = next_unit();
    if (u1 < 1e-300) u1 = 1e-300;
    return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  double exponential(double mean) {
    double u = next_unit();
    return -mean * std::log(1.0 - u);
  }
  // The first two outputs of Rng(seed), without the state word they do not read (the hot path
  // of a source's uniform tuples: a key and a value per tuple). Same numbers as next_u64() twice.
  struct Pair {
    std::uint64_t first, second;
  };
  static Pair first_two(std::uint64_t seed) {
    std::uint64_t x = seed;
    const std::uint64_t s0 = mix64(x += 0x9e3779b97f4a7c15ULL);
    const std::uint64_t s1 = mix64(x += 0x9e3779b97f4a7c15ULL);
    const std::uint64_t s2 = mix64(x += 0x9e3779b97f4a7c15ULL);
    return Pair{rotl(s1 * 5, 7) * 9, rotl((s1 ^ s2 ^ s0) * 5, 7) * 9};
  }
  static std::uint64_t below(std::uint64_t bits, std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(bits) * n) >> 64);
  }
  // A child generator for a named purpose, independent of how much this one was used.
  static Rng derive(std::uint64_t seed, std::uint64_t purpose) { return Rng(mix64(seed, purpose)); }

  static double unit_from_bits(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace hapair
