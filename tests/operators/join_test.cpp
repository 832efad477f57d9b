#include <catch2/catch.hpp>

#include <algorithm>

#include "operators/join.h"
#include "operators/state_io.h"
#include "operators/support.h"
#include "support/time_units.h"

using namespace hapair;
using namespace hapair::test;

namespace {

using hapair::testing::kMs;

}  // namespace

TEST_CASE("join matches equal keys within the window bound, inclusive", "[join]") {
  Join j(join_spec(10));
  Tuples out;
  const Tuple l1 = tup(1, 100 * kMs, 1, 1.0);
  const Tuple l2 = tup(2, 100 * kMs, 2, 2.0);  // another key: never matches
  const Tuple r1 = tup(1, 105 * kMs, 1, 10.0);
  const Tuple r2 = tup(2, 110 * kMs, 1, 20.0);      // exactly the window away
  const Tuple r3 = tup(3, 110 * kMs + 1, 1, 30.0);  // one microsecond beyond
  j.process(0, l1, out);
  j.process(0, l2, out);
  j.process(1, r1, out);
  j.process(1, r2, out);
  j.process(1, r3, out);
  const Tuples end = finish(j);
  out.insert(out.end(), end.begin(), end.end());
  REQUIRE(out.size() == 2);
  CHECK(out[0].id == 1);
  CHECK(out[0].ts_us == 105 * kMs);
  CHECK(out[0].key == 1);
  CHECK(out[0].value == 11.0);
  CHECK(out[0].lineage == mix64(l1.lineage, r1.lineage));
  CHECK(out[1].id == 2);
  CHECK(out[1].ts_us == 110 * kMs);
  CHECK(out[1].value == 21.0);
  CHECK(out[1].lineage == mix64(l1.lineage, r2.lineage));
  CHECK(j.has_finished());
  CHECK(j.operator_class() == OperatorClass::deterministic);
}

TEST_CASE("join combines values by sum, left, right or product, and hashes lineages left first", "[join]") {
  const std::vector<std::pair<JoinCombine, double>> cases{
      {JoinCombine::sum, 8.0}, {JoinCombine::left, 3.0}, {JoinCombine::right, 5.0}, {JoinCombine::product, 15.0}};
  for (const auto& [combine, value] : cases) {
    Join j(join_spec(50, combine));
    const Tuple r = tup(1, 10 * kMs, 4, 5.0);
    const Tuple l = tup(1, 20 * kMs, 4, 3.0);
    // The right tuple comes first, yet the lineage hashes the left one first.
    const Tuples out = run_all(j, {{1, r}, {0, l}});
    INFO(to_string(combine));
    REQUIRE(out.size() == 1);
    CHECK(out[0].value == value);
    CHECK(out[0].ts_us == 20 * kMs);
    CHECK(out[0].lineage == mix64(l.lineage, r.lineage));
  }
}

TEST_CASE("join buffers a tuple until the other input has moved past it in merge order", "[join]") {
  Join j(join_spec(20));
  Tuples out;
  j.process(0, tup(1, 100 * kMs, 1, 1.0), out);
  CHECK(j.buffered_tuples() == 1);  // the right input may still bring earlier tuples
  j.process(1, tup(1, 90 * kMs, 1, 2.0), out);
  CHECK(out.empty());
  CHECK(j.buffered_tuples() == 1);  // the right tuple was processed; the left one still waits
  j.process(1, tup(2, 100 * kMs, 1, 3.0), out);
  // (100, left) precedes (100, right): the left tuple is processed and matches the first right.
  REQUIRE(out.size() == 1);
  CHECK(out[0].value == 3.0);
  CHECK(j.buffered_tuples() == 1);
  j.end_of_stream(0, out);
  REQUIRE(out.size() == 2);
  CHECK(out[1].value == 4.0);
  CHECK(j.buffered_tuples() == 0);
}

TEST_CASE("join emits a tuple's matches in the partner's (ts, id) order and evicts tuples beyond the window", "[join]") {
  Join j(join_spec(20));
  Tuples out;
  j.process(1, tup(1, 0 * kMs, 7, 1.0), out);
  j.process(1, tup(2, 10 * kMs, 7, 2.0), out);
  j.process(1, tup(3, 15 * kMs, 7, 3.0), out);
  j.process(1, tup(4, 40 * kMs, 8, 0.0), out);
  j.process(0, tup(1, 25 * kMs, 7, 10.0), out);  // matches 10 and 15 ms, not 0 ms (25 > 20)
  REQUIRE(out.size() == 2);
  CHECK(out[0].value == 12.0);
  CHECK(out[1].value == 13.0);
  CHECK(j.state_tuples() == 3);  // the 0 ms right tuple was evicted; the left one is kept
  j.process(0, tup(2, 100 * kMs, 7, 0.0), out);
  CHECK(out.size() == 2);
}

TEST_CASE("join output does not depend on how its inputs interleave on arrival", "[join][determinism]") {
  const std::vector<Tuples> ports{source("left", 300, 300.0, 3, 5), source("right", 200, 200.0, 3, 6)};
  Join by_time(join_spec(20));
  const Tuples reference = run_all(by_time, merge_by_time(ports));
  REQUIRE(reference.size() > 100);
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    const Arrivals order = interleave(ports, seed);
    REQUIRE(order != merge_by_time(ports));
    Join j(join_spec(20));
    INFO("interleaving seed " << seed);
    CHECK(run_all(j, order) == reference);
  }
  for (std::size_t i = 0; i < reference.size(); ++i) CHECK(reference[i].id == i + 1);
}

TEST_CASE("join matches a tuple that came after a later one on its port in (ts, id) order", "[join]") {
  Join j(join_spec(20));
  Tuples out;
  j.process(1, tup(1, 50 * kMs, 7, 1.0), out);
  j.process(0, tup(1, 60 * kMs, 9, 0.0), out);   // another key; lets the right 50 ms be processed
  j.process(1, tup(2, 30 * kMs, 7, 2.0), out);   // the right port's ts goes back: held before 50 ms
  CHECK(out.empty());
  j.process(0, tup(2, 45 * kMs, 7, 10.0), out);  // matches 30 and 50 ms, in that order
  REQUIRE(out.size() == 2);
  CHECK(out[0].value == 12.0);
  CHECK(out[1].value == 11.0);
  CHECK(j.state_tuples() == 3);
  Join restored(join_spec(20));
  REQUIRE(restored.restore(j.snapshot()));
  CHECK(restored.snapshot() == j.snapshot());
}

TEST_CASE("join forgets the keys whose tuples left the window and matches a key that comes back", "[join]") {
  Join j(join_spec(20));
  Tuples out;
  for (TupleId i = 1; i <= 300; ++i) j.process(1, tup(i, static_cast<TimeUs>(i) * 10, static_cast<std::int64_t>(i), 1.0), out);
  j.process(1, tup(301, 500 * kMs, 5, 2.0), out);
  j.process(0, tup(1, 490 * kMs, 5, 10.0), out);  // evicts the 300 early tuples, each of its own key
  j.process(0, tup(2, 505 * kMs, 5, 20.0), out);
  j.end_of_stream(0, out);
  j.end_of_stream(1, out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].value == 12.0);
  CHECK(out[1].value == 22.0);
  CHECK(j.state_tuples() == 3);
}

TEST_CASE("join restores a snapshot that holds one tuple id twice without holding it twice", "[join]") {
  Join j(join_spec(20));
  Tuples out;
  const Tuple held = tup(1, 10 * kMs, 7, 1.0);
  j.process(0, held, out);
  j.end_of_stream(1, out);  // the left tuple is processed and held
  REQUIRE(j.state_tuples() == 1);
  const Bytes snapshot = j.snapshot();
  // The held count and the tuple, written again with the same id twice (another ts the second time).
  ByteWriter one, two;
  one.u64(1);
  write_tuple(one, held);
  two.u64(2);
  write_tuple(two, held);
  Tuple again = held;
  again.ts_us += 5 * kMs;
  write_tuple(two, again);
  const Bytes from = one.take(), to = two.take();
  const auto at = std::search(snapshot.begin(), snapshot.end(), from.begin(), from.end());
  REQUIRE(at != snapshot.end());
  Bytes forged(snapshot.begin(), at);
  forged.insert(forged.end(), to.begin(), to.end());
  forged.insert(forged.end(), at + static_cast<std::ptrdiff_t>(from.size()), snapshot.end());
  Join restored(join_spec(20));
  REQUIRE(restored.restore(forged));
  CHECK(restored.state_tuples() == 1);
  restored.process(0, tup(2, 100 * kMs, 7, 2.0), out);  // evicts the held tuple: no check fails
  CHECK(restored.state_tuples() == 1);
}
