// The operators the workloads need, written through the operator traits and the registration
// table (docs/OPERATORS.md): project, lookup, top, and the Filter's modulo. Each: what it
// computes, its class and order rules from its traits, its cause function (the restart-point
// property upstream backup relies on) and its snapshot.
#include <catch2/catch.hpp>

#include <set>

#include "operators/lookup.h"
#include "operators/project.h"
#include "operators/support.h"
#include "operators/top.h"
#include "operators/ysb.h"

using namespace hapair;
using namespace hapair::test;

namespace {

OperatorSpec with_params(OperatorKind kind, std::map<std::string, double> params, std::vector<std::string> inputs = {"in"}) {
  OperatorSpec s = op_spec(kind, std::move(inputs), "out", to_string(kind));
  s.params = std::move(params);
  return s;
}

// The results of count-per-key windows, as an Aggregate emits them: per window end, the groups in
// key order, all stamped with the window's end.
Tuples window_results() {
  Tuples out;
  TupleId id = 0;
  for (TimeUs end = 100'000; end <= 2'000'000; end += 100'000)
    for (std::int64_t key = 0; key < 5; ++key) {
      const double v = static_cast<double>((key * 7 + end / 100'000 * 3) % 11);  // ties happen
      out.push_back(tup(++id, end, key, v, mix64(static_cast<std::uint64_t>(end), static_cast<std::uint64_t>(key))));
    }
  return out;
}

}  // namespace

TEST_CASE("the workload operators are registered with the traits their code keeps", "[operators][traits]") {
  for (OperatorKind k : {OperatorKind::project, OperatorKind::lookup, OperatorKind::top}) {
    const OperatorTraits& t = OperatorCatalog::builtin().of(k);
    INFO(t.name);
    const auto op = make_operator(with_params(k, {}));
    CHECK(op->kind() == k);
    CHECK(op->operator_class() == t.klass(with_params(k, {})));
    CHECK(op->input_count() == t.inputs_min);
    CHECK(parse_operator_kind(t.name) == k);
  }
  CHECK(OperatorCatalog::builtin().of(OperatorKind::top).order_sensitive);
  CHECK_FALSE(OperatorCatalog::builtin().of(OperatorKind::project).order_sensitive);
  CHECK(allowed_operator_kinds() == "filter, map, union, aggregate, join, project, lookup, top");
}

TEST_CASE("project sets the key and the value from either field, divided, taken modulo, scaled", "[operators][project]") {
  const auto keep = make_operator(with_params(OperatorKind::project, {}));
  Tuples out;
  keep->process(0, tup(1, 10, 1234, 56.5), out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].key == 1234);
  CHECK(out[0].value == 56.5);
  // NEXMark q1: the price in euros, the auction kept.
  const auto euros = make_operator(with_params(OperatorKind::project, {{"scale", 0.908}}));
  euros->process(0, tup(1, 10, 7, 100.0), out);
  CHECK(out.back().value == Approx(90.8));
  // Swap the fields, the value's whole part divided by 10 and taken modulo 7 as the key.
  const auto swap = make_operator(with_params(OperatorKind::project, {{"key", 1}, {"key_divisor", 10}, {"key_modulo", 7}, {"value", 1}}));
  swap->process(0, tup(2, 20, -3, 987.9), out);
  CHECK(out.back().key == (98 % 7));
  CHECK(out.back().value == -3.0);
  CHECK(out.back().id == 2);
  CHECK(out.back().ts_us == 20);
  // A negative key modulo lands in [0, modulo); a constant key; value one.
  const auto constant = make_operator(with_params(OperatorKind::project, {{"key", 2}, {"key_constant", 42}, {"value", 2}}));
  constant->process(0, tup(3, 30, -9, 5.0), out);
  CHECK(out.back().key == 42);
  CHECK(out.back().value == 1.0);
  const auto negative = make_operator(with_params(OperatorKind::project, {{"key_modulo", 5}}));
  negative->process(0, tup(3, 30, -9, 5.0), out);
  CHECK(out.back().key == 1);
}

TEST_CASE("lookup replaces the key by its table entry and drops keys the table lacks", "[operators][lookup]") {
  // The Yahoo benchmark's campaigns: 10 ads each, 100 campaigns.
  const OperatorSpec spec = with_params(OperatorKind::lookup, {{"table_size", 1000}, {"block", 10}});
  Lookup campaigns(spec);
  std::int64_t e = 0;
  REQUIRE(campaigns.entry(0, e));
  CHECK(e == 0);
  REQUIRE(campaigns.entry(999, e));
  CHECK(e == 99);
  CHECK_FALSE(campaigns.entry(1000, e));
  CHECK_FALSE(campaigns.entry(-1, e));
  Tuples out;
  campaigns.process(0, tup(1, 10, 123, 0.0), out);
  campaigns.process(0, tup(2, 20, 5000, 1.0), out);  // not in the table: dropped
  campaigns.process(0, tup(3, 30, 7, 2.0), out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].key == 12);
  CHECK(out[1].key == 0);
  CHECK(out[1].id == 3);
  // A hash table into the value: every node computes the same entries, in range.
  const auto hashed = with_params(OperatorKind::lookup, {{"table", 1}, {"range", 13}, {"into", 1}, {"table_seed", 5}});
  Lookup a(hashed), b(hashed);
  for (std::int64_t k = 0; k < 200; ++k) {
    std::int64_t x = 0, y = 0;
    REQUIRE(a.entry(k, x));
    REQUIRE(b.entry(k, y));
    CHECK(x == y);
    CHECK((x >= 0 && x < 13));
  }
  Tuples more;
  a.process(0, tup(9, 90, 17, 3.0), more);
  REQUIRE(more.size() == 1);
  CHECK(more[0].key == 17);
  std::int64_t want = 0;
  a.entry(17, want);
  CHECK(more[0].value == static_cast<double>(want));
}

TEST_CASE("top emits per window the result with the largest value, ties to the smallest key", "[operators][top]") {
  Top top(with_params(OperatorKind::top, {}));
  Tuples out;
  top.process(0, tup(1, 100, 3, 5.0), out);
  top.process(0, tup(2, 100, 1, 9.0), out);
  top.process(0, tup(3, 100, 2, 9.0), out);  // a tie: key 1 wins
  CHECK(out.empty());                        // the window may still grow
  top.process(0, tup(4, 200, 4, 1.0), out);  // a later window: the first one is complete
  REQUIRE(out.size() == 1);
  CHECK(out[0].id == 1);
  CHECK(out[0].key == 1);
  CHECK(out[0].value == 9.0);
  CHECK(out[0].ts_us == 100);
  CHECK(top.output_boundary({50}) == 50);
  CHECK(top.output_boundary({500}) == 200);  // the open window's results are still to come
  // A boundary past the open window completes it.
  top.advance_boundary(0, 201, out);
  REQUIRE(out.size() == 2);
  CHECK(out[1].key == 4);
  CHECK(out[1].id == 2);
  top.end_of_stream(0, out);
  CHECK(top.has_finished());
  CHECK(out.size() == 2);
}

TEST_CASE("top drops a tuple older than its open window (a renumbered replay upstream), and goes on", "[operators][top]") {
  Top top(with_params(OperatorKind::top, {}));
  Tuples out;
  top.process(0, tup(1, 600, 3, 5.0), out);
  top.process(0, tup(2, 100, 9, 99.0), out);  // late: window 100 is past
  top.process(0, tup(3, 700, 1, 1.0), out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].ts_us == 600);
  CHECK(out[0].key == 3);  // the late 99 did not enter window 600
  top.end_of_stream(0, out);
  REQUIRE(out.size() == 2);
  CHECK(out[1].ts_us == 700);
}

TEST_CASE("the lookup's ysb table is the Yahoo benchmark's: the campaign a ysb source's events carry", "[operators][lookup]") {
  YsbSpec spec;
  spec.campaigns = 20;
  spec.ads_per_campaign = 5;
  spec.campaign_seed = 7;
  Lookup lookup(with_params(OperatorKind::lookup, {{"table", 2}, {"range", 20}, {"block", 5}, {"table_seed", 7}}));
  std::set<std::int64_t> campaigns;
  for (TupleId i = 1; i <= 400; ++i) {
    const YsbEvent e = ysb_event(spec, 3, i);  // any run seed: the table is the campaign_seed's
    std::int64_t entry = -1;
    REQUIRE(lookup.entry(e.ad, entry));
    CHECK(entry == e.campaign);
    campaigns.insert(entry);
  }
  CHECK(campaigns.size() == 20);
  std::int64_t none = 0;
  CHECK_FALSE(lookup.entry(100, none));  // 20 x 5 ads: ad 100 has no campaign (an inner join drops it)
  CHECK_FALSE(lookup.entry(-1, none));
}

TEST_CASE("the workload operators restarted from their restart points regenerate every output after the acked one",
          "[operators][restart]") {
  const Arrivals results = on_port(window_results());
  for (const OperatorSpec& spec : {with_params(OperatorKind::top, {}),
                                   with_params(OperatorKind::project, {{"key", 1}, {"value", 1}, {"key_modulo", 3}}),
                                   with_params(OperatorKind::lookup, {{"table_size", 4}, {"block", 2}})}) {
    INFO(spec.name);
    CHECK(check_restart_points([&] { return make_operator(spec); }, results) > 20);
  }
}

TEST_CASE("the workload operators' snapshots restore operators that continue identically, and refuse foreign blobs",
          "[operators][snapshot]") {
  const Arrivals input = on_port(window_results());
  for (const OperatorSpec& spec : {with_params(OperatorKind::top, {}), with_params(OperatorKind::project, {{"scale", 2}}),
                                   with_params(OperatorKind::lookup, {{"table_size", 3}})}) {
    INFO(spec.name);
    const auto whole = make_operator(spec);
    const Tuples want = run_all(*whole, input);
    for (std::size_t cut : {std::size_t{0}, input.size() / 3, input.size() - 1}) {
      const auto first = make_operator(spec);
      Tuples got = feed(*first, input, 0, cut);
      const auto second = make_operator(spec);
      REQUIRE(second->restore(first->snapshot()));
      const Tuples rest = run_all(*second, Arrivals(input.begin() + static_cast<std::ptrdiff_t>(cut), input.end()));
      got.insert(got.end(), rest.begin(), rest.end());
      CHECK(got == want);
    }
    Bytes blob = make_operator(spec)->snapshot();
    blob.push_back(0);
    CHECK_FALSE(make_operator(spec)->restore(blob));
    CHECK_FALSE(make_operator(spec)->restore(make_operator(op_spec(OperatorKind::map, {"in"}))->snapshot()));
  }
}

TEST_CASE("a filter with a modulo compares the field's remainder", "[operators][filter]") {
  OperatorSpec s = op_spec(OperatorKind::filter, {"in"});
  s.filter_field = Field::key;
  s.filter_op = CompareOp::eq;
  s.filter_constant = 0;
  s.filter_modulo = 123;
  const auto q2 = make_operator(s);
  Tuples out;
  TupleId id = 0;
  for (std::int64_t auction : {0, 122, 123, 246, 1000, -123, -1}) q2->process(0, tup(++id, 10, auction, 1.0), out);
  std::vector<std::int64_t> kept;
  for (const Tuple& t : out) kept.push_back(t.key);
  CHECK(kept == std::vector<std::int64_t>{0, 123, 246, -123});
}
