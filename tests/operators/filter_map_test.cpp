#include <catch2/catch.hpp>

#include <memory>

#include "operators/filter.h"
#include "operators/map.h"
#include "operators/support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

OperatorSpec filter_spec(Field field, CompareOp op, double constant) {
  OperatorSpec s = op_spec(OperatorKind::filter, {"in"}, "out", "filter");
  s.filter_field = field;
  s.filter_op = op;
  s.filter_constant = constant;
  return s;
}

OperatorSpec map_spec(double scale, double offset, std::int64_t modulo) {
  OperatorSpec s = op_spec(OperatorKind::map, {"in"}, "out", "map");
  s.map_scale = scale;
  s.map_offset = offset;
  s.map_key_modulo = modulo;
  return s;
}

}  // namespace

TEST_CASE("filter keeps the tuples where field op constant holds, unchanged", "[filter]") {
  struct Case {
    CompareOp op;
    std::vector<double> kept;
  };
  const std::vector<double> values{1.0, 2.0, 3.0};
  const std::vector<Case> cases{{CompareOp::lt, {1.0}},      {CompareOp::le, {1.0, 2.0}}, {CompareOp::gt, {3.0}},
                                {CompareOp::ge, {2.0, 3.0}}, {CompareOp::eq, {2.0}},      {CompareOp::ne, {1.0, 3.0}}};
  for (const Case& c : cases) {
    Filter f(filter_spec(Field::value, c.op, 2.0));
    Tuples in;
    for (std::size_t i = 0; i < values.size(); ++i) in.push_back(tup(i + 1, 1000 * static_cast<TimeUs>(i), 5, values[i]));
    const Tuples out = run_all(f, on_port(in));
    std::vector<double> kept;
    for (const Tuple& t : out) {
      kept.push_back(t.value);
      CHECK(t == in.at(t.id - 1));  // id, ts, key, value and lineage unchanged
    }
    CHECK(kept == c.kept);
  }
}

TEST_CASE("filter on the key field compares the key", "[filter]") {
  Filter f(filter_spec(Field::key, CompareOp::ge, 3.0));
  const Tuples out = run_all(f, on_port({tup(1, 0, 2, 100.0), tup(2, 1, 3, 0.0), tup(5, 2, 9, 0.0)}));
  REQUIRE(out.size() == 2);
  CHECK(out[0].id == 2);
  CHECK(out[1].id == 5);
  CHECK(f.operator_class() == OperatorClass::repeatable);
  CHECK(f.has_finished());
}

TEST_CASE("map computes value * scale + offset and a non-negative key modulo, keeping id, ts and lineage", "[map]") {
  Map m(map_spec(2.5, -1.0, 4));
  const Tuples in{tup(1, 10, 7, 2.0), tup(2, 20, -7, 4.0), tup(3, 30, -8, 0.0), tup(4, 40, 3, -2.0)};
  const Tuples out = run_all(m, on_port(in));
  REQUIRE(out.size() == 4);
  const std::vector<std::int64_t> keys{3, 1, 0, 3};
  const std::vector<double> values{4.0, 9.0, -1.0, -6.0};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(out[i].key == keys[i]);
    CHECK(out[i].value == values[i]);
    CHECK(out[i].id == in[i].id);
    CHECK(out[i].ts_us == in[i].ts_us);
    CHECK(out[i].lineage == in[i].lineage);
  }
}

TEST_CASE("map without a key modulo leaves keys alone", "[map]") {
  Map m(map_spec(1.0, 0.5, 0));
  const Tuples out = run_all(m, on_port({tup(1, 0, -13, 1.0)}));
  REQUIRE(out.size() == 1);
  CHECK(out[0].key == -13);
  CHECK(out[0].value == 1.5);
}

TEST_CASE("filter restart point: the acked output when outputs are unacked, the last input otherwise", "[filter][restart]") {
  Filter f(filter_spec(Field::value, CompareOp::lt, 10.0));
  Tuples out;
  f.process(0, tup(1, 0, 0, 5.0), out);   // kept
  f.process(0, tup(2, 1, 0, 50.0), out);  // dropped
  f.process(0, tup(4, 2, 0, 5.0), out);   // kept
  f.process(0, tup(6, 3, 0, 50.0), out);  // dropped
  CHECK(f.restart_point(0).replay_after == std::vector<TupleId>{0});
  CHECK(f.restart_point(1).replay_after == std::vector<TupleId>{1});
  CHECK(f.restart_point(3).replay_after == std::vector<TupleId>{3});
  CHECK(f.restart_point(4).replay_after == std::vector<TupleId>{6});
  CHECK(f.restart_point(9).replay_after == std::vector<TupleId>{6});
  CHECK(f.restart_point(4).resume.empty());
}

TEST_CASE("a filter's and a map's run give what process gives tuple by tuple, and stop once their room is used", "[filter]") {
  // Operator::process_run's contract, for the loops Filter and Map run with their own transform
  // (every comparison, on the value and on the key, with and without a modulo).
  Tuples input;
  for (TupleId id = 1; id <= 60; ++id)
    input.push_back(tup(id * 2, static_cast<TimeUs>(id) * 100, static_cast<std::int64_t>(id % 9) - 4, static_cast<double>(id % 13) - 6.5));
  std::vector<OperatorSpec> specs;
  for (const CompareOp op : {CompareOp::lt, CompareOp::le, CompareOp::gt, CompareOp::ge, CompareOp::eq, CompareOp::ne})
    for (const Field field : {Field::value, Field::key})
      for (const std::int64_t modulo : {std::int64_t{0}, std::int64_t{3}}) {
        OperatorSpec s = filter_spec(field, op, field == Field::key || modulo > 0 ? 1.0 : 0.5);
        s.filter_modulo = modulo;
        specs.push_back(s);
      }
  specs.push_back(map_spec(2.0, 1.0, 5));
  for (const OperatorSpec& spec : specs) {
    auto make = [&spec]() -> std::unique_ptr<Operator> {
      if (spec.kind == OperatorKind::map) return std::make_unique<Map>(spec);
      return std::make_unique<Filter>(spec);
    };
    std::unique_ptr<Operator> reference = make();
    Tuples expected;
    for (const Tuple& t : input) reference->process(0, t, expected);
    REQUIRE(!expected.empty());
    // The whole run at once, with room to spare.
    std::unique_ptr<Operator> whole = make();
    Tuples out;
    CHECK(whole->process_run(0, input.data(), input.size(), out, 1'000) == input.size());
    CHECK(out == expected);
    // In pieces that stop at a room of 3 outputs, after 2 outputs already in `out`: each call stops
    // right after the input that made its third output, and the pieces add up to the whole.
    std::unique_ptr<Operator> pieces = make();
    Tuples all;
    std::size_t at = 0;
    while (at < input.size()) {
      Tuples part{tup(1, 0, 0, 0.0), tup(1, 0, 0, 0.0)};
      const std::size_t taken = pieces->process_run(0, input.data() + at, input.size() - at, part, 5);
      REQUIRE(taken >= 1);
      REQUIRE(part.size() <= 5);
      if (at + taken < input.size()) CHECK(part.size() == 5);
      all.insert(all.end(), part.begin() + 2, part.end());
      at += taken;
    }
    CHECK(all == expected);
    // A run that starts with `out` beyond its room stops at its first output.
    std::unique_ptr<Operator> full = make();
    Tuples crowded{tup(1, 0, 0, 0.0), tup(1, 0, 0, 0.0), tup(1, 0, 0, 0.0)};
    const std::size_t taken = full->process_run(0, input.data(), input.size(), crowded, 2);
    CHECK(crowded.size() == 4);
    CHECK(crowded.back() == expected.front());
    CHECK(input[taken - 1].id == expected.front().id);
  }
}
