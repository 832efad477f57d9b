// The reference run (docs/EXPERIMENTS.md, "How we measure": every run is compared with a failure-free reference
// of the same seed and input): deterministic, computed from the operators, with the count and
// contents an independent recomputation from the source generator predicts; and a Union
// network's reference accepted by the checker as a multiset.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <utility>

#include "judge/checker.h"
#include "judge/reference.h"
#include "operators/source_generator.h"

using namespace hapair;

namespace {

Plan plan_of(Topology t) {
  const std::vector<std::string> problems = validate(t);
  INFO((problems.empty() ? std::string() : problems.front()));
  REQUIRE(problems.empty());
  return make_plan(t);
}

FragmentSpec source_fragment(const std::string& name, const std::string& stream, double rate_tps) {
  FragmentSpec f;
  f.name = name;
  f.kind = FragmentKind::source;
  f.source.stream = stream;
  f.source.rate_tps = rate_tps;
  f.where = "test";
  return f;
}

FragmentSpec sink_fragment(std::vector<std::string> inputs) {
  FragmentSpec f;
  f.name = "sink";
  f.kind = FragmentKind::sink;
  f.sink_inputs = std::move(inputs);
  f.where = "test";
  return f;
}

// Two sources merged by a Union into one sink: an arbitrary network.
Topology union_topology() {
  Topology t;
  t.name = "union";
  t.settings.duration_s = 0.05;
  FragmentSpec merge;
  merge.name = "merge";
  merge.where = "test";
  OperatorSpec u;
  u.name = "merge_inputs";
  u.kind = OperatorKind::union_op;
  u.inputs = {"left", "right"};
  u.output = "merged";
  u.where = "test";
  merge.operators.push_back(u);
  t.fragments = {source_fragment("a", "left", 2000.0), source_fragment("b", "right", 1000.0), merge,
                 sink_fragment({"merged"})};
  return t;
}

}  // namespace

TEST_CASE("the reference output of the default network is the same twice", "[reference]") {
  Topology t = default_topology();
  t.settings.duration_s = 0.5;
  const Plan plan = plan_of(t);
  const std::vector<Delivery> one = reference_output(plan);
  const std::vector<Delivery> two = reference_output(plan);
  REQUIRE_FALSE(one.empty());
  CHECK(one == two);
  // A fresh plan of the same topology gives the same output too.
  CHECK(reference_output(plan_of(t)) == one);
  CHECK(check_semantics(one, two, arbitrary_operators(plan)).verdict == "precise");
}

TEST_CASE("another seed gives another reference output", "[reference]") {
  Topology t = default_topology();
  t.settings.duration_s = 0.2;
  const std::vector<Delivery> one = reference_output(plan_of(t));
  t.settings.seed = 2;
  CHECK(reference_output(plan_of(t)) != one);
}

TEST_CASE("the default network's reference for a tiny duration holds exactly the windows recomputed by hand",
          "[reference]") {
  // 0.05 s at 2000 tuples/s: the tuples with ts = i * 500 us < 50 000 us, i = 1..99.
  Topology t = default_topology();
  t.settings.duration_s = 0.05;
  const Plan plan = plan_of(t);
  const SourceSpec& source = plan.spec(plan.fragment_id("source")).source;
  REQUIRE(source_tuple_count(source, 0.05) == 99);

  // Independently: keep value < 80 (filter keep_small), then sum per key over every window
  // [k*20 ms, k*20 ms + 200 ms) that contains the tuple, windows before time 0 included.
  std::map<std::pair<TimeUs, std::int64_t>, double> sums;  // (window end, key) -> sum
  for (TupleId i = 1; i <= 99; ++i) {
    const Tuple s = source_tuple(source, t.settings.seed, i);
    if (!(s.value < 80.0)) continue;
    for (TimeUs start = (s.ts_us / 20000) * 20000; start > s.ts_us - 200000; start -= 20000) {
      sums[{start + 200000, s.key}] += s.value;
    }
  }

  const ReferenceRun run = reference_run(plan);
  CHECK(run.input_tuples == 99);
  REQUIRE(run.deliveries.size() == sums.size());
  // Windows close in start order, groups in key order: the map's order.
  std::size_t i = 0;
  for (const auto& [window, sum] : sums) {
    const Delivery& d = run.deliveries[i++];
    INFO("delivery " << i);
    CHECK(d.stream == plan.stream_id("totals"));
    CHECK(d.tuple.ts_us == window.first);
    CHECK(d.tuple.key == window.second);
    CHECK(d.tuple.value == sum);
    CHECK(d.at_us == d.tuple.ts_us);  // virtual delivery time: the tuple's ts
    CHECK(d.tuple.id == i);           // Aggregate numbers its outputs 1, 2, ...
  }
}

TEST_CASE("a filter-only network's reference is the filtered source in source order", "[reference]") {
  Topology t = default_topology();
  t.settings.duration_s = 0.1;
  t.fragments.erase(t.fragments.begin() + 2);  // drop the aggregate
  t.fragments.back().sink_inputs = {"small"};
  const Plan plan = plan_of(t);
  const SourceSpec& source = plan.spec(plan.fragment_id("source")).source;
  std::vector<Tuple> expected;
  for (TupleId i = 1; i <= source_tuple_count(source, 0.1); ++i) {
    const Tuple s = source_tuple(source, t.settings.seed, i);
    if (s.value < 80.0) expected.push_back(s);
  }
  const std::vector<Delivery> out = reference_output(plan);
  REQUIRE(out.size() == expected.size());
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i].tuple == expected[i]);
}

TEST_CASE("a union network's reference is accepted as a multiset whatever the interleaving", "[reference]") {
  const Plan plan = plan_of(union_topology());
  REQUIRE(arbitrary_operators(plan) == std::vector<std::string>{"merge_inputs"});
  const ReferenceRun ref = reference_run(plan);
  // 99 tuples from "a" (500 us apart) and 49 from "b" (1 ms apart), all passed through.
  CHECK(ref.input_tuples == 148);
  REQUIRE(ref.deliveries.size() == 148);

  // A run that merged the inputs in another order (all of "b" first) and numbered them so.
  std::vector<Delivery> run = ref.deliveries;
  std::stable_partition(run.begin(), run.end(), [](const Delivery& d) { return d.tuple.lineage % 2 == 0; });
  REQUIRE(run != ref.deliveries);
  for (std::size_t i = 0; i < run.size(); ++i) run[i].tuple.id = i + 1;

  const SemanticsReport r = check_semantics(ref.deliveries, run, arbitrary_operators(plan));
  CHECK(r.verdict == "precise");
  CHECK(r.multiset_compare);
  CHECK_FALSE(r.order_matches);
  CHECK(r.note.rfind("compared as multisets (network has an arbitrary operator: merge_inputs)", 0) == 0);
  // The same output judged as if the network were deterministic would be a rollback.
  CHECK(check_semantics(ref.deliveries, run, {}).verdict == "rollback");
}

TEST_CASE("the default network has no arbitrary operator", "[reference]") {
  CHECK(arbitrary_operators(plan_of(default_topology())).empty());
}
