// The cause-function property upstream backup relies on (docs/FAULTS.md, upstream backup; paper
// section 4.3): restarted from restart_point(acked) on empty state and fed the input after
// replay_after, an operator regenerates every output after acked exactly.
#include <catch2/catch.hpp>

#include "operators/support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

void check_kind(const OperatorSpec& spec, const Arrivals& input) {
  const std::size_t checked = check_restart_points([&] { return make_operator(spec); }, input);
  CHECK(checked > 60);
}

}  // namespace

TEST_CASE("a filter restarted from its restart point regenerates every output after the acked one", "[restart][filter]") {
  OperatorSpec spec = op_spec(OperatorKind::filter, {"in"});
  spec.filter_field = Field::value;
  spec.filter_op = CompareOp::ge;
  spec.filter_constant = 30.0;
  check_kind(spec, on_port(source("in", 400, 200.0, 4)));
}

TEST_CASE("a map restarted from its restart point regenerates every output after the acked one", "[restart][map]") {
  OperatorSpec spec = op_spec(OperatorKind::map, {"in"});
  spec.map_scale = 0.5;
  spec.map_offset = 3.0;
  spec.map_key_modulo = 3;
  check_kind(spec, on_port(source("in", 400, 200.0, 4)));
}

TEST_CASE("a tumbling aggregate restarted from its restart point regenerates every output after the acked one",
          "[restart][aggregate]") {
  check_kind(aggregate_spec(AggregateFunction::sum, 100, 100), on_port(source("in", 600, 200.0, 4)));
}

TEST_CASE("a sliding aggregate restarted from its restart point regenerates every output after the acked one",
          "[restart][aggregate]") {
  for (AggregateFunction f : {AggregateFunction::count, AggregateFunction::avg, AggregateFunction::min}) {
    INFO(to_string(f));
    check_kind(aggregate_spec(f, 200, 50), on_port(source("in", 600, 200.0, 4)));
  }
  // One group, and a window of many slides.
  check_kind(aggregate_spec(AggregateFunction::max, 300, 20, false), on_port(source("in", 600, 200.0, 4)));
}

TEST_CASE("a join restarted from its restart point regenerates every output after the acked one", "[restart][join]") {
  const std::vector<Tuples> ports{source("left", 300, 300.0, 3, 5), source("right", 200, 200.0, 3, 6)};
  check_kind(join_spec(20), interleave(ports, 77));
  check_kind(join_spec(50, JoinCombine::product), merge_by_time(ports));
}

TEST_CASE("a join restart point inside a step that emitted several outputs resumes mid-step", "[restart][join]") {
  // Every right tuple has the same key, so each left tuple emits a run of outputs in one step.
  Tuples left;
  Tuples right;
  for (TupleId i = 1; i <= 20; ++i) right.push_back(tup(i, static_cast<TimeUs>(i) * 1000, 1, static_cast<double>(i)));
  for (TupleId i = 1; i <= 10; ++i) left.push_back(tup(i, static_cast<TimeUs>(i) * 2000 + 500, 1, 100.0 * i));
  const Arrivals input = merge_by_time({left, right});
  const OperatorSpec spec = join_spec(5);
  std::unique_ptr<Operator> ref = make_operator(spec);
  const Tuples reference = run_all(*ref, input);
  REQUIRE(reference.size() > 40);
  std::unique_ptr<Operator> live = make_operator(spec);
  const Tuples emitted = feed(*live, input, 0, input.size());
  for (TupleId acked = 0; acked <= emitted.size(); ++acked) {
    INFO("acked=" << acked);
    const RestartPoint point = live->restart_point(acked);
    std::unique_ptr<Operator> restarted = make_operator(spec);
    REQUIRE(restarted->restart_from(point));
    CHECK(after(replay(*restarted, input, point), acked) == after(reference, acked));
  }
}

TEST_CASE("forgetting acked outputs keeps later restart points unchanged", "[restart]") {
  const std::vector<Tuples> two{source("a", 300, 300.0, 3, 4), source("b", 200, 200.0, 3, 5)};
  const std::vector<std::pair<OperatorSpec, Arrivals>> cases{
      {aggregate_spec(AggregateFunction::sum, 200, 50), on_port(source("in", 500, 200.0, 4))},
      {join_spec(20), interleave(two, 3)},
      {op_spec(OperatorKind::union_op, {"a", "b"}), interleave(two, 4)},
  };
  for (const auto& [spec, input] : cases) {
    INFO(to_string(spec.kind));
    std::unique_ptr<Operator> op = make_operator(spec);
    const Tuples out = feed(*op, input, 0, input.size() * 2 / 3);
    REQUIRE(out.size() > 20);
    const TupleId acked = out.size() / 2;
    std::vector<RestartPoint> before;
    for (TupleId a = acked; a <= out.size(); ++a) before.push_back(op->restart_point(a));
    const std::size_t snapshot_before = op->snapshot().size();
    op->forget_up_to(acked);
    CHECK(op->snapshot().size() < snapshot_before);  // the bookkeeping really shrank
    for (TupleId a = acked; a <= out.size(); ++a) CHECK(op->restart_point(a) == before[a - acked]);
  }
}
