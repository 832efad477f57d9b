#include <catch2/catch.hpp>

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
