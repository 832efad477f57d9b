// No false verdicts on networks with merges (issue: a failure-free run of a Union feeding a Join
// was judged "gap"). experiments/networks/merge_join.toml: two sources merged by a Union, the
// merged stream joined with a third source, the join counted per key. With the Union in arrival
// order the Join's output depends on how its two inputs interleaved on arrival, which no node
// records: the stream is "not judged", with the reason, and the run is never called a gap. With
// order = "timestamp" (the serializing Union) the merge is deterministic: every approach is
// precise failure free and after a crash it promises to recover.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "config/topology_file.h"
#include "judge/merge_order.h"
#include "judged_run.h"

using namespace hapair;

namespace {

Topology merge_join(UnionOrder order, HaMode ha) {
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/merge_join.toml");
  REQUIRE(load.topology.has_value());
  Topology t = *load.topology;
  for (auto& f : t.fragments)
    for (auto& o : f.operators)
      if (o.kind == OperatorKind::union_op) o.union_order = order;
  t.settings.ha = ha;
  t.settings.duration_s = 2.0;
  return t;
}

test::JudgedRun run_sim(const Topology& t, std::vector<FaultSpec> faults = {}) { return test::judged_sim_run(t, std::move(faults)); }

}  // namespace

TEST_CASE("a Union in arrival order feeding a Join: a failure-free run is not judged, and says why, never gap",
          "[scenarios][merge]") {
  const Topology t = merge_join(UnionOrder::arrival, HaMode::none);
  const Plan plan = make_plan(t);
  const auto unrecorded = unrecorded_interleavings(plan);
  REQUIRE(unrecorded.size() == 1);
  CHECK(plan.streams[unrecorded.begin()->first].name == "counts");
  CHECK(unrecorded.begin()->second.find("interleaved on arrival") != std::string::npos);
  for (HaMode ha : {HaMode::none, HaMode::passive}) {
    INFO("ha " << to_string(ha));
    const test::JudgedRun r = run_sim(merge_join(UnionOrder::arrival, ha));
    const SemanticsReport& s = r.outcome.semantics;
    REQUIRE(r.outcome.result.completed);
    REQUIRE(s.not_judged.size() == 1);
    CHECK(s.not_judged.front().stream == "counts");
    CHECK(s.not_judged.front().reason.find("order = \"timestamp\"") != std::string::npos);
    CHECK(s.verdict != "gap");
    CHECK(s.lost == 0);
    CHECK(r.check.status == RunStatus::result);
  }
}

TEST_CASE("a Union in timestamp order feeding a Join: every approach is precise failure free", "[scenarios][merge]") {
  CHECK(unrecorded_interleavings(make_plan(merge_join(UnionOrder::timestamp, HaMode::none))).empty());
  for (HaMode ha : ApproachCatalog::builtin().modes()) {
    INFO("ha " << to_string(ha));
    const test::JudgedRun r = run_sim(merge_join(UnionOrder::timestamp, ha));
    const SemanticsReport& s = r.outcome.semantics;
    REQUIRE(r.outcome.result.completed);
    CHECK(s.not_judged.empty());
    CHECK(s.verdict == "precise");
    CHECK(s.delivered_tuples > 500);
    CHECK(r.check.status == RunStatus::result);
    CHECK_FALSE(r.check.beyond);
  }
}

TEST_CASE("a serializing Union's fragment and the Join after it recover precisely from a crash under every precise approach",
          "[scenarios][merge]") {
  for (const char* victim : {"merge", "enrich"})
    for (HaMode ha : ApproachCatalog::builtin().precise_modes()) {
      INFO("ha " << to_string(ha) << ", crash of " << victim);
      const test::JudgedRun r = run_sim(merge_join(UnionOrder::timestamp, ha), {FaultSpec{FaultKind::crash, victim, "", 1.0, 0.0}});
      const SemanticsReport& s = r.outcome.semantics;
      INFO(s.note << " / " << r.check.reason);
      REQUIRE(r.outcome.result.completed);
      CHECK(s.verdict == "precise");
      CHECK(s.lost == 0);
      CHECK(s.duplicates == 0);
      CHECK(r.check.status == RunStatus::result);
    }
}

TEST_CASE("a Union in timestamp order after an arrival-order one is refused, naming both choices", "[scenarios][merge]") {
  Topology t = merge_join(UnionOrder::arrival, HaMode::none);
  // A second, serializing Union reads the arrival-order merge: its input goes back in time.
  FragmentSpec& merge = t.fragments[3];
  REQUIRE(merge.name == "merge");
  OperatorSpec again;
  again.name = "serialize_again";
  again.kind = OperatorKind::union_op;
  again.union_order = UnionOrder::timestamp;
  again.inputs = {"events", "views_copy"};
  again.output = "events2";
  OperatorSpec copy;
  copy.name = "copy_views";
  copy.kind = OperatorKind::filter;
  copy.filter_op = CompareOp::ge;
  copy.filter_constant = -1;
  copy.inputs = {"views"};
  copy.output = "views_copy";
  merge.operators.push_back(copy);
  merge.operators.push_back(again);
  for (auto& f : t.fragments)
    for (auto& o : f.operators)
      for (auto& in : o.inputs)
        if (o.name == "with_profile" && in == "events") in = "events2";
  const auto problems = validate(t);
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().find("operator 'serialize_again': order = \"timestamp\" merges by timestamp, but input 'events' "
                              "can go back in time") != std::string::npos);
}

namespace {

// Two sources merged in timestamp order, one of them through a filter (a fragment of its own)
// that passes only a few tuples: without boundaries the merge would wait for the quiet input's
// next tuple; with them it waits for the quiet stream's next boundary.
Topology quiet_merge(std::int64_t boundary_interval_ms) {
  Topology t = merge_join(UnionOrder::timestamp, HaMode::none);
  FragmentSpec thin;
  thin.name = "thin";
  thin.kind = FragmentKind::operators;
  OperatorSpec rare;
  rare.name = "rare_views";
  rare.kind = OperatorKind::filter;
  rare.filter_field = Field::value;
  rare.filter_op = CompareOp::ge;
  rare.filter_constant = 99.5;
  rare.inputs = {"views"};
  rare.output = "rare";
  thin.operators.push_back(rare);
  for (auto& f : t.fragments)
    for (auto& o : f.operators)
      if (o.name == "merge_events") o.inputs = {"clicks", "rare"};
  t.fragments.insert(t.fragments.begin() + 3, thin);
  t.settings.boundary_interval_ms = boundary_interval_ms;
  REQUIRE(validate(t).empty());
  return t;
}

// The median delay of the sink's deliveries behind their timestamps (virtual time).
TimeUs median_delay_us(const RunOutcome& o) {
  std::vector<TimeUs> d;
  for (const Delivery& x : o.result.deliveries) d.push_back(x.at_us - x.tuple.ts_us);
  REQUIRE(!d.empty());
  std::sort(d.begin(), d.end());
  return d[d.size() / 2];
}

}  // namespace

TEST_CASE("a quiet input delays a serializing Union by about one boundary interval, not until its next tuple",
          "[scenarios][merge]") {
  const test::JudgedRun often = run_sim(quiet_merge(10));
  const test::JudgedRun rarely = run_sim(quiet_merge(2000));
  REQUIRE(often.outcome.result.completed);
  REQUIRE(rarely.outcome.result.completed);
  CHECK(often.outcome.semantics.verdict == "precise");
  CHECK(rarely.outcome.semantics.verdict == "precise");
  // Batches with only a boundary went out for the quiet stream, far more often at 10 ms.
  const auto boundary_batches = [](const test::JudgedRun& r) {
    const auto& c = r.outcome.result.counters.at("thin");
    const auto it = c.find("boundary_batches");
    return it == c.end() ? std::int64_t{0} : it->second;
  };
  CHECK(boundary_batches(often) > 10 * boundary_batches(rarely));
  const TimeUs fast = median_delay_us(often.outcome);
  const TimeUs slow = median_delay_us(rarely.outcome);
  INFO("median delay " << fast << " us with 10 ms boundaries, " << slow << " us with 2 s");
  // Counts close when a later window's tuple arrives; the merge adds at most about a boundary
  // interval on top: far less than with boundaries every 2 s.
  CHECK(slow > 4 * fast);
}
