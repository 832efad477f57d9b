// The serializing Union (order = "timestamp", Borealis's SUnion): the same output for every
// arrival interleaving, emission as soon as no other port can precede (its own last tuple or an
// announced boundary), its cause function, and its snapshots.
#include <catch2/catch.hpp>

#include "operators/serializing_union.h"
#include "operators/support.h"
#include "operators/union.h"

using namespace hapair;
using namespace hapair::test;

namespace {

OperatorSpec sunion_spec(std::size_t ports = 2) {
  std::vector<std::string> inputs;
  for (std::size_t p = 0; p < ports; ++p) inputs.push_back("in" + std::to_string(p));
  OperatorSpec s = op_spec(OperatorKind::union_op, inputs, "out", "sunion");
  s.union_order = UnionOrder::timestamp;
  return s;
}

std::vector<Tuples> three_sources() {
  return {source("a", 60, 300.0, 4, 1), source("b", 40, 200.0, 4, 2), source("c", 50, 250.0, 4, 3)};
}

}  // namespace

TEST_CASE("a Union in timestamp order is made by make_operator and is deterministic", "[sunion]") {
  const auto op = make_operator(sunion_spec());
  CHECK(dynamic_cast<SerializingUnion*>(op.get()) != nullptr);
  CHECK(op->operator_class() == OperatorClass::deterministic);
  CHECK_FALSE(op->is_nondeterministic());
  OperatorSpec arrival = sunion_spec();
  arrival.union_order = UnionOrder::arrival;
  CHECK(dynamic_cast<UnionOperator*>(make_operator(arrival).get()) != nullptr);
}

TEST_CASE("a serializing Union gives the same output, ids and order for every arrival interleaving", "[sunion]") {
  const std::vector<Tuples> ports = three_sources();
  SerializingUnion reference(sunion_spec(3));
  const Tuples want = run_all(reference, merge_by_time(ports));
  REQUIRE(want.size() == 150);
  for (std::size_t i = 1; i < want.size(); ++i) {
    INFO("output " << i);
    CHECK(want[i].id == want[i - 1].id + 1);
    CHECK(want[i].ts_us >= want[i - 1].ts_us);
  }
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SerializingUnion u(sunion_spec(3));
    INFO("seed " << seed);
    CHECK(run_all(u, interleave(ports, seed)) == want);
  }
  // The arrival-order Union over the same interleavings does differ: the serializing one is what
  // makes the merge deterministic.
  UnionOperator a(sunion_spec(3)), b(sunion_spec(3));
  CHECK(run_all(a, interleave(ports, 1)) != run_all(b, interleave(ports, 2)));
}

TEST_CASE("a serializing Union emits a tuple once no other port can still deliver an earlier one", "[sunion]") {
  SerializingUnion u(sunion_spec());
  Tuples out;
  u.process(0, tup(1, 100, 1, 1.0), out);
  CHECK(out.empty());  // port 1 might still deliver ts < 100
  u.process(1, tup(1, 300, 2, 2.0), out);
  REQUIRE(out.size() == 1);  // port 1 is past 100: port 0's tuple goes
  CHECK(out[0].ts_us == 100);
  CHECK(u.buffered_tuples() == 1);
  // A boundary on port 0 says nothing below 400 will come there: port 1's tuple at 300 goes.
  u.advance_boundary(0, 400, out);
  REQUIRE(out.size() == 2);
  CHECK(out[1].ts_us == 300);
  CHECK(out[1].id == 2);
  // Ties go to the lower port: port 1 at 500 waits while port 0 may still send 500.
  u.process(1, tup(2, 500, 3, 3.0), out);
  CHECK(out.size() == 2);
  u.process(0, tup(2, 500, 4, 4.0), out);
  REQUIRE(out.size() == 3);
  CHECK(out[2].key == 4);  // port 0's 500 first
  u.advance_boundary(0, 501, out);
  REQUIRE(out.size() == 4);
  CHECK(out[3].key == 3);
  // A boundary never moves back, and an ended port holds nothing up.
  u.advance_boundary(0, 10, out);
  u.process(1, tup(3, 900, 5, 5.0), out);
  CHECK(out.size() == 4);
  u.end_of_stream(0, out);
  CHECK(out.size() == 5);
  CHECK(u.output_boundary({}) == 900);
  u.end_of_stream(1, out);
  CHECK(u.has_finished());
}

TEST_CASE("a serializing Union's output boundary is its smallest buffered or promised timestamp", "[sunion]") {
  SerializingUnion u(sunion_spec());
  Tuples out;
  CHECK(u.output_boundary({}) == 0);
  u.process(0, tup(1, 100, 1, 1.0), out);
  u.advance_boundary(1, 80, out);
  CHECK(out.empty());
  CHECK(u.output_boundary({}) == 80);   // port 1 may still send 80
  u.advance_boundary(1, 150, out);
  CHECK(out.size() == 1);
  CHECK(u.output_boundary({}) == 100);  // port 0's last tuple: later ones are at 100 or after
}

TEST_CASE("a serializing Union restarted from its restart point regenerates every output after the acked one",
          "[sunion][restart]") {
  const std::vector<Tuples> ports = three_sources();
  const OperatorSpec spec = sunion_spec(3);
  for (std::uint64_t seed : {3u, 4u}) {
    INFO("interleaving " << seed);
    const std::size_t checked = check_restart_points([&] { return make_operator(spec); }, interleave(ports, seed));
    CHECK(checked > 20);
  }
}

TEST_CASE("a serializing Union's snapshot restores an operator that continues identically", "[sunion][snapshot]") {
  const std::vector<Tuples> ports = three_sources();
  const Arrivals input = interleave(ports, 9);
  SerializingUnion whole(sunion_spec(3));
  const Tuples want = run_all(whole, input);
  for (std::size_t cut : {std::size_t{0}, input.size() / 3, input.size() / 2, input.size() - 1}) {
    INFO("cut " << cut);
    SerializingUnion first(sunion_spec(3));
    Tuples got = feed(first, input, 0, cut);
    SerializingUnion second(sunion_spec(3));
    REQUIRE(second.restore(first.snapshot()));
    CHECK(second.snapshot() == first.snapshot());
    Tuples rest = feed(second, input, cut, input.size());
    const Tuples last = finish(second);
    got.insert(got.end(), rest.begin(), rest.end());
    got.insert(got.end(), last.begin(), last.end());
    CHECK(got == want);
  }
  // Corrupt or foreign blobs are refused, not asserted.
  SerializingUnion u(sunion_spec(3));
  Bytes blob = u.snapshot();
  blob.pop_back();
  CHECK_FALSE(u.restore(blob));
  CHECK_FALSE(u.restore(SerializingUnion(sunion_spec(2)).snapshot()));
  UnionOperator arrival(sunion_spec(3));
  CHECK_FALSE(u.restore(arrival.snapshot()));
}
