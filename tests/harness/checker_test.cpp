// The semantics checker on hand-made deliveries (docs/EXPERIMENTS.md, "How we measure"): each verdict, the exact
// counts behind it, the order rule for deterministic and arbitrary networks, and the split of
// the output at a failure instant.
#include <catch2/catch.hpp>

#include "judge/checker.h"

using namespace hapair;

namespace {

// A delivery on stream `s` whose identity is `lineage` and whose value is (key, value, ts).
Delivery d(TimeUs at_us, std::uint64_t lineage, double value, StreamId s = 0, TupleId id = 0) {
  Delivery x;
  x.at_us = at_us;
  x.stream = s;
  x.tuple.id = id == 0 ? lineage : id;
  x.tuple.ts_us = static_cast<TimeUs>(lineage) * 1000;
  x.tuple.key = static_cast<std::int64_t>(lineage % 3);
  x.tuple.value = value;
  x.tuple.lineage = lineage;
  return x;
}

std::vector<Delivery> reference_1_to_5() {
  return {d(1000, 1, 10), d(2000, 2, 20), d(3000, 3, 30), d(4000, 4, 40), d(5000, 5, 50)};
}

const std::vector<std::string> kDeterministic;
const std::vector<std::string> kUnion = {"merge"};

}  // namespace

TEST_CASE("identical output is precise", "[checker]") {
  auto ref = reference_1_to_5();
  auto run = ref;
  for (auto& x : run) x.at_us += 777;  // delivery times never matter
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.verdict == "precise");
  CHECK(r.lost == 0);
  CHECK(r.duplicates == 0);
  CHECK(r.differing == 0);
  CHECK(r.reference_tuples == 5);
  CHECK(r.delivered_tuples == 5);
  CHECK(r.order_matches);
  CHECK_FALSE(r.multiset_compare);
  CHECK(r.examples.empty());
  CHECK(r.note == "compared as multisets and in order (deterministic network)");
}

TEST_CASE("tuple ids are not part of an entry, so rebased ids are still precise", "[checker]") {
  auto ref = reference_1_to_5();
  std::vector<Delivery> run;
  for (const auto& x : ref) run.push_back(d(x.at_us, x.tuple.lineage, x.tuple.value, 0, x.tuple.id + 100));
  CHECK(check_semantics(ref, run, kDeterministic).verdict == "precise");
}

TEST_CASE("duplicates only give rollback", "[checker]") {
  auto ref = reference_1_to_5();
  // Tuples 2 and 3 re-delivered after a takeover, 3 twice.
  std::vector<Delivery> run = {d(1, 1, 10), d(2, 2, 20), d(3, 3, 30), d(4, 2, 20), d(5, 3, 30),
                               d(6, 3, 30), d(7, 4, 40), d(8, 5, 50)};
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.verdict == "rollback");
  CHECK(r.lost == 0);
  CHECK(r.duplicates == 3);
  CHECK(r.differing == 0);
  CHECK(r.delivered_tuples == 8);
  // With duplicates removed the order is the reference's.
  CHECK(r.order_matches);
  REQUIRE(r.examples.size() == 2);
  CHECK(r.examples[0].kind == "duplicate");
  CHECK(r.examples[0].entry.lineage == 2);
  CHECK(r.examples[0].delivered_count == 2);
  CHECK(r.examples[1].entry.lineage == 3);
  CHECK(r.examples[1].delivered_count == 3);
}

TEST_CASE("a wrong value counts as lost and differing, so the verdict is gap", "[checker]") {
  auto ref = reference_1_to_5();
  auto run = ref;
  run[2].tuple.value = 29;  // window 3 came out wrong
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.verdict == "gap");
  CHECK(r.lost == 1);
  CHECK(r.differing == 1);
  CHECK(r.duplicates == 0);
  REQUIRE(r.examples.size() == 2);
  CHECK(r.examples[0].kind == "lost");
  CHECK(r.examples[0].entry.value == 30);
  REQUIRE(r.examples[0].delivered_instead.has_value());
  CHECK(r.examples[0].delivered_instead->value == 29);
  CHECK(r.examples[1].kind == "differing");
  CHECK(r.examples[1].entry.value == 29);
  CHECK(r.examples[1].reference_count == 0);
}

TEST_CASE("a missing tuple is a gap with exactly one lost", "[checker]") {
  auto ref = reference_1_to_5();
  auto run = ref;
  run.erase(run.begin() + 3);
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.verdict == "gap");
  CHECK(r.lost == 1);
  CHECK(r.duplicates == 0);
  CHECK(r.differing == 0);
  CHECK(r.delivered_tuples == 4);
  // What was delivered is in the reference order.
  CHECK(r.order_matches);
  REQUIRE(r.examples.size() == 1);
  CHECK(r.examples[0].entry.lineage == 4);
  CHECK_FALSE(r.examples[0].delivered_instead.has_value());
}

TEST_CASE("an entry of another stream with the same lineage is a different entry", "[checker]") {
  auto ref = reference_1_to_5();
  auto run = ref;
  run[0].stream = 1;
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.lost == 1);
  CHECK(r.differing == 1);
  CHECK(r.verdict == "gap");
}

TEST_CASE("extra tuples the reference does not have give rollback", "[checker]") {
  auto ref = reference_1_to_5();
  auto run = ref;
  run.push_back(d(9000, 6, 60));
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.verdict == "rollback");
  CHECK(r.lost == 0);
  CHECK(r.differing == 1);
  // Differing entries are counted, not judged for order.
  CHECK(r.order_matches);
}

TEST_CASE("reordering in a deterministic network is rollback", "[checker]") {
  auto ref = reference_1_to_5();
  auto run = ref;
  std::swap(run[1], run[3]);
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.lost == 0);
  CHECK(r.duplicates == 0);
  CHECK(r.differing == 0);
  CHECK_FALSE(r.order_matches);
  CHECK(r.verdict == "rollback");
  CHECK(r.note == "compared as multisets and in order (deterministic network); the delivered order differs from "
                  "the reference order");
}

TEST_CASE("reordering in a network with an arbitrary operator is precise, compared as a multiset", "[checker]") {
  auto ref = reference_1_to_5();
  auto run = ref;
  std::swap(run[1], run[3]);
  const SemanticsReport r = check_semantics(ref, run, kUnion);
  CHECK(r.verdict == "precise");
  CHECK(r.multiset_compare);
  CHECK_FALSE(r.order_matches);
  CHECK(r.arbitrary_operators == kUnion);
  CHECK(r.note.rfind("compared as multisets (network has an arbitrary operator: merge)", 0) == 0);
}

TEST_CASE("order is judged per stream, so interleaving two streams differently still matches", "[checker]") {
  std::vector<Delivery> ref = {d(1, 1, 1, 0), d(2, 1, 1, 1), d(3, 2, 2, 0), d(4, 2, 2, 1)};
  std::vector<Delivery> run = {d(1, 1, 1, 0), d(2, 2, 2, 0), d(3, 1, 1, 1), d(4, 2, 2, 1)};
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.order_matches);
  CHECK(r.verdict == "precise");
}

TEST_CASE("a duplicate delivered before its original position breaks the order", "[checker]") {
  auto ref = reference_1_to_5();
  // 3 delivered early, then 2, then 3 again: with duplicates removed (first kept) the order is
  // 1 3 2 4 5, not the reference's.
  std::vector<Delivery> run = {d(1, 1, 10), d(2, 3, 30), d(3, 2, 20), d(4, 3, 30), d(5, 4, 40), d(6, 5, 50)};
  const SemanticsReport r = check_semantics(ref, run, kDeterministic);
  CHECK(r.duplicates == 1);
  CHECK_FALSE(r.order_matches);
  CHECK(r.verdict == "rollback");
}

TEST_CASE("an entry the reference holds twice needs two deliveries", "[checker]") {
  std::vector<Delivery> ref = {d(1, 1, 10), d(2, 1, 10), d(3, 2, 20)};
  std::vector<Delivery> once = {d(1, 1, 10), d(3, 2, 20)};
  const SemanticsReport r = check_semantics(ref, once, kDeterministic);
  CHECK(r.lost == 1);
  CHECK(r.verdict == "gap");
  std::vector<Delivery> twice = {d(1, 1, 10), d(2, 1, 10), d(3, 2, 20)};
  CHECK(check_semantics(ref, twice, kDeterministic).verdict == "precise");
}

TEST_CASE("minus zero and zero are the same value", "[checker]") {
  std::vector<Delivery> ref = {d(1, 1, 0.0)};
  std::vector<Delivery> run = {d(1, 1, -0.0)};
  CHECK(check_semantics(ref, run, kDeterministic).verdict == "precise");
}

TEST_CASE("examples are capped per kind", "[checker]") {
  std::vector<Delivery> ref;
  for (std::uint64_t i = 1; i <= 10; ++i) ref.push_back(d(static_cast<TimeUs>(i), i, 1.0));
  const SemanticsReport r = check_semantics(ref, {}, kDeterministic);
  CHECK(r.lost == 10);
  CHECK(r.examples.size() == kSemanticsExamplesPerKind);
  CHECK(r.examples.front().entry.lineage == 1);  // in reference order
}

TEST_CASE("the failure split counts what was delivered before the failure and finds the new tuples", "[checker]") {
  auto ref = reference_1_to_5();
  // Before F=3500: 1, 2, 3. After: 3 again (duplicate: not new), 2 with a wrong value (not in
  // the reference: not new), 4 (new), 4 again (not new), 5 (new).
  std::vector<Delivery> run = {d(1000, 1, 10), d(2000, 2, 20), d(3000, 3, 30), d(3600, 3, 30),
                               d(3700, 2, 21), d(3800, 4, 40), d(3900, 4, 40), d(4000, 5, 50)};
  const FailureSplit s = split_at_failure(ref, run, 3500);
  CHECK(s.failure_us == 3500);
  CHECK(s.deliveries_before == 3);
  CHECK(s.reference_delivered_before == 3);
  CHECK(s.new_deliveries == std::vector<std::size_t>{5, 7});
}

TEST_CASE("a delivery exactly at the failure instant counts as after it", "[checker]") {
  auto ref = reference_1_to_5();
  auto run = ref;
  const FailureSplit s = split_at_failure(ref, run, 3000);
  CHECK(s.deliveries_before == 2);
  CHECK(s.new_deliveries == std::vector<std::size_t>{2, 3, 4});
}

TEST_CASE("duplicates delivered before the failure fill no reference slot twice", "[checker]") {
  std::vector<Delivery> ref = {d(1, 1, 10), d(2, 2, 20)};
  std::vector<Delivery> run = {d(1, 1, 10), d(2, 1, 10), d(10, 2, 20)};
  const FailureSplit s = split_at_failure(ref, run, 5);
  CHECK(s.deliveries_before == 2);
  CHECK(s.reference_delivered_before == 1);
  CHECK(s.new_deliveries == std::vector<std::size_t>{2});
}

TEST_CASE("each delivered tuple is exact, a duplicate or differing, and the undelivered ones are missing", "[checker]") {
  // Reference 1..5 (value 10 x lineage). Delivered: 1, 2, 2 again, 4 with a wrong value, 5, 5, 5.
  const std::vector<Delivery> ref = reference_1_to_5();
  const std::vector<Delivery> got = {d(100, 1, 10.0), d(200, 2, 20.0), d(250, 2, 20.0), d(400, 4, 41.0),
                                     d(500, 5, 50.0), d(510, 5, 50.0),  d(520, 5, 50.0)};
  const OutputClassification c = classify_output(ref, got);
  using S = DeliveryStatus;
  CHECK(c.status == std::vector<S>{S::exact, S::exact, S::duplicate, S::differing, S::exact, S::duplicate, S::duplicate});
  // 3 never came, and 4 came only with the wrong value.
  CHECK(c.missing == std::vector<std::size_t>{2, 3});
  // The counts agree with the checker's.
  const SemanticsReport s = check_semantics(ref, got, {});
  std::uint64_t exact = 0, dups = 0, differing = 0;
  for (S x : c.status) (x == S::exact ? exact : x == S::duplicate ? dups : differing)++;
  CHECK(exact + c.missing.size() == ref.size());
  CHECK(c.missing.size() == s.lost);
  CHECK(dups == s.duplicates);
  CHECK(differing == s.differing);
}
