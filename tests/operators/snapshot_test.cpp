#include <catch2/catch.hpp>

#include "operators/support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

struct Kind {
  std::string name;
  OperatorSpec spec;
  Arrivals input;
};

std::vector<Kind> every_kind() {
  const Tuples one = source("in", 500, 200.0, 4, 3);
  const std::vector<Tuples> two{source("a", 400, 300.0, 3, 4), source("b", 300, 200.0, 3, 5)};
  OperatorSpec filter = op_spec(OperatorKind::filter, {"in"});
  filter.filter_op = CompareOp::lt;
  filter.filter_constant = 50.0;
  OperatorSpec map = op_spec(OperatorKind::map, {"in"});
  map.map_scale = 3.0;
  map.map_key_modulo = 2;
  return {
      {"filter", filter, on_port(one)},
      {"map", map, on_port(one)},
      {"union", op_spec(OperatorKind::union_op, {"a", "b"}), interleave(two, 8)},
      {"tumbling aggregate", aggregate_spec(AggregateFunction::max, 100, 100), on_port(one)},
      {"sliding aggregate", aggregate_spec(AggregateFunction::avg, 200, 50), on_port(one)},
      {"join", join_spec(20, JoinCombine::product), interleave(two, 9)},
  };
}

}  // namespace

TEST_CASE("a snapshot/restore round trip continues identically", "[snapshot]") {
  for (const Kind& k : every_kind()) {
    for (std::size_t split : {std::size_t{0}, std::size_t{1}, k.input.size() / 3, k.input.size() / 2, k.input.size() - 40}) {
      INFO(k.name << " split at " << split);
      check_snapshot_round_trip([&] { return make_operator(k.spec); }, k.input, split);
    }
  }
}

TEST_CASE("a union snapshot keeps its buffered input, pending determinants and unsent records", "[snapshot][union]") {
  const OperatorSpec spec = op_spec(OperatorKind::union_op, {"a", "b"});
  std::unique_ptr<Operator> leader = make_operator(spec);
  std::unique_ptr<Operator> follower = make_operator(spec);
  follower->set_follow_determinants(true);
  const Arrivals input = interleave({source("a", 50, 100.0, 2, 1), source("b", 50, 100.0, 2, 2)}, 3);
  Tuples leader_out = feed(*leader, input, 0, input.size());
  const std::vector<DeterminantRecord> records = leader->take_determinants();
  Tuples follower_out;
  follower->add_determinants(std::vector<DeterminantRecord>(records.begin(), records.begin() + 10), follower_out);
  const Tuples early = feed(*follower, input, 0, 60);
  follower_out.insert(follower_out.end(), early.begin(), early.end());
  REQUIRE(follower->buffered_tuples() > 0);
  std::unique_ptr<Operator> copy = make_operator(spec);
  REQUIRE(copy->restore(follower->snapshot()));
  CHECK(copy->buffered_tuples() == follower->buffered_tuples());
  Tuples copy_out = follower_out;
  for (auto* op : {follower.get(), copy.get()}) {
    Tuples& out = op == follower.get() ? follower_out : copy_out;
    const Tuples rest = feed(*op, input, 60, input.size());
    out.insert(out.end(), rest.begin(), rest.end());
    op->add_determinants(std::vector<DeterminantRecord>(records.begin() + 10, records.end()), out);
  }
  CHECK(follower_out == leader_out);
  CHECK(copy_out == leader_out);
}

TEST_CASE("restore refuses corrupt, truncated, padded and foreign blobs", "[snapshot]") {
  const std::vector<Kind> kinds = every_kind();
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const Kind& k = kinds[i];
    INFO(k.name);
    std::unique_ptr<Operator> live = make_operator(k.spec);
    feed(*live, k.input, 0, k.input.size() / 2);
    const Bytes snap = live->snapshot();
    std::unique_ptr<Operator> target = make_operator(k.spec);
    Bytes truncated(snap.begin(), snap.end() - 1);
    CHECK_FALSE(target->restore(truncated));
    Bytes padded = snap;
    padded.push_back(0);
    CHECK_FALSE(target->restore(padded));
    CHECK_FALSE(target->restore(Bytes{}));
    // Another kind's snapshot (the map/filter pair shares a layout, but not a tag).
    std::size_t o = (i + 1) % kinds.size();
    while (kinds[o].spec.kind == k.spec.kind) o = (o + 1) % kinds.size();
    const Kind& other = kinds[o];
    std::unique_ptr<Operator> foreign = make_operator(other.spec);
    feed(*foreign, other.input, 0, 10);
    CHECK_FALSE(target->restore(foreign->snapshot()));
    // A refused blob leaves the operator usable and unchanged.
    CHECK(target->snapshot() == make_operator(k.spec)->snapshot());
    CHECK_FALSE(target->restart_from(RestartPoint{std::vector<TupleId>(target->input_count() + 1, 0), {}}));
  }
}

TEST_CASE("restart_from refuses a corrupt resume blob", "[restart]") {
  for (const Kind& k : every_kind()) {
    INFO(k.name);
    std::unique_ptr<Operator> live = make_operator(k.spec);
    feed(*live, k.input, 0, k.input.size() / 2);
    RestartPoint p = live->restart_point(1);
    if (k.spec.kind == OperatorKind::filter || k.spec.kind == OperatorKind::map) {
      p.resume.push_back(1);  // a stateless operator takes no resume blob
    } else {
      p.resume.pop_back();
    }
    CHECK_FALSE(make_operator(k.spec)->restart_from(p));
  }
}
