// A stream tuple as a plain value.
//
// Paper: a tuple has a tuple id, a timestamp and a payload (section 2). hapair's payload is a
// (key, value) pair, enough for Filter, Map, grouped Aggregate and equi-Join. `lineage` is the
// tuple's logical identity used by the semantics checker (docs/EXPERIMENTS.md, "How we measure"): the source
// position it derives from for Filter/Map/Union, a hash of (operator, window end, key) for an
// Aggregate, a hash of both inputs' lineages for a Join. It does not depend on tuple ids, so it
// is the same in a failure-free run and a recovered one.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "protocols/ids.h"

namespace hapair {

struct Tuple {
  TupleId id = 0;
  TimeUs ts_us = 0;  // event timestamp; for a source tuple, its scheduled emission time
  std::int64_t key = 0;
  double value = 0.0;
  std::uint64_t lineage = 0;

  friend bool operator==(const Tuple&, const Tuple&) = default;
};

using Tuples = std::vector<Tuple>;

// Deterministic 64-bit mixing (splitmix64 finaliser): lineages and seeds are derived with it,
// never with std::hash (which differs between standard libraries).
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
constexpr std::uint64_t mix64(std::uint64_t a, std::uint64_t b) { return mix64(a ^ mix64(b)); }

}  // namespace hapair

namespace hapair {
// FNV-1a of a name: a stable 64-bit hash for seeding and lineages.
constexpr std::uint64_t hash_name(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return h;
}
}  // namespace hapair
