#include <catch2/catch.hpp>

#include "operators/support.h"
#include "operators/union.h"

using namespace hapair;
using namespace hapair::test;

namespace {

OperatorSpec union_spec(std::size_t ports = 2) {
  std::vector<std::string> inputs;
  for (std::size_t p = 0; p < ports; ++p) inputs.push_back("in" + std::to_string(p));
  return op_spec(OperatorKind::union_op, inputs, "out", "union");
}

std::vector<Tuples> two_sources() { return {source("a", 60, 300.0, 4, 1), source("b", 40, 200.0, 4, 2)}; }

}  // namespace

TEST_CASE("union emits every input at once in arrival order, numbered 1, 2, 3", "[union]") {
  UnionOperator u(union_spec(3));
  Tuples out;
  const Tuple a = tup(1, 500, 1, 1.0);
  const Tuple b = tup(1, 100, 2, 2.0);
  const Tuple c = tup(7, 900, 3, 3.0);
  u.process(2, a, out);
  CHECK(out.size() == 1);
  u.process(0, b, out);
  u.process(2, c, out);
  REQUIRE(out.size() == 3);
  const Tuples in{a, b, c};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(out[i].id == i + 1);
    CHECK(out[i].ts_us == in[i].ts_us);
    CHECK(out[i].key == in[i].key);
    CHECK(out[i].value == in[i].value);
    CHECK(out[i].lineage == in[i].lineage);
  }
  CHECK(u.operator_class() == OperatorClass::arbitrary);
  CHECK(u.is_nondeterministic());
  CHECK_FALSE(u.has_finished());
  finish(u);
  CHECK(u.has_finished());
}

TEST_CASE("Union's output order depends on arrival order", "[union]") {
  const std::vector<Tuples> ports = two_sources();
  UnionOperator first(union_spec());
  UnionOperator second(union_spec());
  const Tuples x = run_all(first, interleave(ports, 11));
  const Tuples y = run_all(second, interleave(ports, 12));
  REQUIRE(x.size() == 100);
  CHECK(x != y);
  CHECK(contents(x) == contents(y));  // the same tuples, in another order
}

TEST_CASE("union determinants are run-length records of the emission order, taken incrementally", "[union][determinants]") {
  UnionOperator u(union_spec());
  Tuples out;
  u.process(0, tup(1, 0, 0, 0), out);
  u.process(0, tup(2, 0, 0, 0), out);
  u.process(1, tup(1, 0, 0, 0), out);
  CHECK(u.take_determinants() == std::vector<DeterminantRecord>{{0, 2}, {1, 1}});
  CHECK(u.take_determinants().empty());
  // A run continuing after a take starts a new record: the old one may already be on the wire.
  u.process(1, tup(2, 0, 0, 0), out);
  u.process(1, tup(3, 0, 0, 0), out);
  u.process(0, tup(3, 0, 0, 0), out);
  CHECK(u.take_determinants() == std::vector<DeterminantRecord>{{1, 2}, {0, 1}});
}

TEST_CASE("determinants make a following union reproduce the leader's output exactly", "[union][determinants]") {
  const std::vector<Tuples> ports = two_sources();
  UnionOperator leader(union_spec());
  const Arrivals leader_order = interleave(ports, 21);
  Tuples leader_out;
  std::vector<std::vector<DeterminantRecord>> shipped;
  for (std::size_t i = 0; i < leader_order.size(); ++i) {
    leader.process(leader_order[i].port, leader_order[i].tuple, leader_out);
    if (i % 7 == 6) shipped.push_back(leader.take_determinants());
  }
  shipped.push_back(leader.take_determinants());

  // The follower sees another interleaving, and the determinants arrive in between.
  UnionOperator follower(union_spec());
  follower.set_follow_determinants(true);
  const Arrivals follower_order = interleave(ports, 22);
  REQUIRE(follower_order.size() == leader_order.size());
  Tuples follower_out;
  std::size_t next_record = 0;
  for (std::size_t i = 0; i < follower_order.size(); ++i) {
    follower.process(follower_order[i].port, follower_order[i].tuple, follower_out);
    if (i % 9 == 0 && next_record < shipped.size()) follower.add_determinants(shipped[next_record++], follower_out);
  }
  // Without all determinants the follower holds input back rather than guess an order.
  CHECK(follower_out.size() < leader_out.size());
  while (next_record < shipped.size()) follower.add_determinants(shipped[next_record++], follower_out);
  const Tuples end = finish(follower);
  follower_out.insert(follower_out.end(), end.begin(), end.end());
  CHECK(follower.take_determinants().empty());  // a follower does not record
  CHECK(follower_out == leader_out);
  CHECK(follower.has_finished());
  CHECK(follower.buffered_tuples() == 0);
}

TEST_CASE("a follower emits what a determinant allows and keeps the rest of it pending", "[union][determinants]") {
  UnionOperator u(union_spec());
  u.set_follow_determinants(true);
  Tuples out;
  u.process(1, tup(1, 0, 1, 0), out);
  u.process(0, tup(1, 0, 0, 0), out);
  CHECK(out.empty());
  CHECK(u.buffered_tuples() == 2);
  u.add_determinants({{0, 3}, {1, 1}}, out);
  REQUIRE(out.size() == 1);  // only one port-0 tuple so far
  CHECK(out[0].key == 0);
  u.process(1, tup(2, 0, 1, 0), out);
  CHECK(out.size() == 1);  // the port-1 tuples wait behind the pending port-0 record
  u.process(0, tup(2, 0, 0, 0), out);
  u.process(0, tup(3, 0, 0, 0), out);
  REQUIRE(out.size() == 4);  // {0,3} done, then {1,1}
  CHECK(out[3].key == 1);
  CHECK(out[3].id == 4);
  CHECK(u.buffered_tuples() == 1);
}

TEST_CASE("a follower that takes over honours pending determinants, then merges in arrival order", "[union][determinants]") {
  UnionOperator u(union_spec());
  u.set_follow_determinants(true);
  Tuples out;
  u.add_determinants({{1, 1}}, out);
  u.process(0, tup(1, 0, 0, 0), out);
  u.process(0, tup(2, 0, 0, 0), out);
  CHECK(out.empty());
  u.set_follow_determinants(false);
  u.process(1, tup(1, 0, 1, 0), out);
  REQUIRE(out.size() == 3);
  CHECK(out[0].key == 1);  // the pending record first
  CHECK(out[1].key == 0);
  CHECK(out[2].key == 0);
  // As the leader now, it records what it emitted for a future standby.
  CHECK(u.take_determinants() == std::vector<DeterminantRecord>{{1, 1}, {0, 2}});
}

TEST_CASE("union refuses determinants for ports that do not exist or tuples that never come", "[union][determinants]") {
  UnionOperator u(union_spec());
  u.set_follow_determinants(true);
  Tuples out;
  u.add_determinants({{5, 1}}, out);
  CHECK(u.rejected_determinant_records() == 1);
  u.process(0, tup(1, 0, 0, 0), out);
  u.add_determinants({{0, 2}, {1, 1}}, out);
  CHECK(out.size() == 1);
  u.end_of_stream(0, out);  // port 0 will never deliver the second tuple
  CHECK(u.rejected_determinant_records() == 2);
  u.process(1, tup(1, 0, 1, 0), out);
  CHECK(out.size() == 2);
}

TEST_CASE("union restart point: per port, the last input emitted at or before the acked output", "[union][restart]") {
  UnionOperator u(union_spec());
  Tuples out;
  u.process(0, tup(1, 0, 0, 0), out);  // output 1
  u.process(1, tup(4, 0, 0, 0), out);  // output 2
  u.process(0, tup(2, 0, 0, 0), out);  // output 3
  u.process(1, tup(9, 0, 0, 0), out);  // output 4
  CHECK(u.restart_point(0).replay_after == std::vector<TupleId>{0, 0});
  CHECK(u.restart_point(1).replay_after == std::vector<TupleId>{1, 0});
  CHECK(u.restart_point(2).replay_after == std::vector<TupleId>{1, 4});
  CHECK(u.restart_point(3).replay_after == std::vector<TupleId>{2, 4});
  CHECK(u.restart_point(4).replay_after == std::vector<TupleId>{2, 9});
  // Forgetting trims the bookkeeping without changing later answers.
  u.forget_up_to(2);
  CHECK(u.restart_point(3).replay_after == std::vector<TupleId>{2, 4});
  CHECK(u.restart_point(4).replay_after == std::vector<TupleId>{2, 9});
  UnionOperator restarted(union_spec());
  REQUIRE(restarted.restart_from(u.restart_point(3)));
  Tuples again;
  restarted.process(1, tup(9, 0, 0, 0), again);
  REQUIRE(again.size() == 1);
  CHECK(again[0].id == 4);
}

TEST_CASE("a restarted union regenerates the same multiset of tuples after the cut", "[union][restart]") {
  const std::vector<Tuples> ports = two_sources();
  const Arrivals input = interleave(ports, 31);
  UnionOperator ref(union_spec());
  const Tuples reference = run_all(ref, input);
  std::size_t checked = 0;
  for (std::size_t cut = 0; cut <= input.size(); cut += 9) {
    UnionOperator live(union_spec());
    const Tuples emitted = feed(live, input, 0, cut);
    for (TupleId acked : acked_values(emitted.size())) {
      INFO("cut=" << cut << " acked=" << acked);
      const RestartPoint point = live.restart_point(acked);
      UnionOperator restarted(union_spec());
      REQUIRE(restarted.restart_from(point));
      // Replay in a different interleaving than the original.
      Arrivals needed;
      for (const Arrival& a : interleave(ports, 1000 + cut))
        if (a.tuple.id > point.replay_after[a.port]) needed.push_back(a);
      const Tuples got = run_all(restarted, needed);
      REQUIRE(contents(got) == contents(after(reference, acked)));
      for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i].id == acked + 1 + i);
      ++checked;
    }
  }
  CHECK(checked > 40);
}

// ---- merge order (docs/FAULTS.md: the checker recomputes the reference from the recorded
// choices) -------------------------------------------------------------------------------------

TEST_CASE("union logs every emission as runs of consecutive inputs per port, leading or following", "[union][merge_order]") {
  UnionOperator u(union_spec());
  Tuples out;
  u.process(0, tup(1, 0, 0, 0), out);
  u.process(0, tup(2, 0, 0, 0), out);
  u.process(1, tup(5, 0, 0, 0), out);
  u.process(0, tup(4, 0, 0, 0), out);  // input 3 of port 0 never came: a new run
  CHECK(u.take_merge_order() ==
        std::vector<MergeSegment>{{1, false, {{0, 1, 2}, {1, 5, 1}, {0, 4, 1}}}});
  CHECK(u.take_merge_order().empty());
  // Taking does not break the numbering: the next segment starts at output 5.
  u.set_follow_determinants(true);
  u.process(1, tup(6, 0, 0, 0), out);
  u.add_determinants({{1, 1}}, out);
  u.set_follow_determinants(false);
  u.process(0, tup(5, 0, 0, 0), out);
  CHECK(u.take_merge_order() == std::vector<MergeSegment>{{5, true, {{1, 6, 1}}}, {6, false, {{0, 5, 1}}}});
}

TEST_CASE("the merge log is a report: restoring a snapshot neither carries nor clears it", "[union][merge_order]") {
  UnionOperator u(union_spec());
  Tuples out;
  u.process(0, tup(1, 0, 0, 0), out);
  const Bytes snap = u.snapshot();
  u.process(1, tup(1, 0, 0, 0), out);
  REQUIRE(u.restore(snap));
  CHECK(u.take_merge_order() == std::vector<MergeSegment>{{1, false, {{0, 1, 1}, {1, 1, 1}}}});
  UnionOperator fresh(union_spec());
  REQUIRE(fresh.restore(snap));
  CHECK(fresh.take_merge_order().empty());
}

TEST_CASE("a union replaying a recorded merge order reproduces the recorded output exactly", "[union][merge_order]") {
  const std::vector<Tuples> ports = two_sources();
  UnionOperator leader(union_spec());
  const Tuples leader_out = run_all(leader, interleave(ports, 41));
  std::vector<MergeRun> runs;
  for (const MergeSegment& s : leader.take_merge_order()) runs.insert(runs.end(), s.runs.begin(), s.runs.end());
  // The replay sees another arrival order, as the reference does.
  UnionOperator replay(union_spec());
  REQUIRE(replay.replay_merge_order(runs));
  const Tuples replayed = run_all(replay, interleave(ports, 42));
  CHECK(replayed == leader_out);
  CHECK(replay.unmatched_merge_runs() == 0);
  CHECK(replay.has_finished());
}

TEST_CASE("a replayed merge order fills inputs it skips, ignores inputs already emitted, then merges in arrival order", "[union][merge_order]") {
  UnionOperator u(union_spec());
  // Port 0 inputs 3..4 (1..2 were never recorded: they go first), port 1 input 1, port 0
  // input 2 again (already emitted), then nothing: the rest in arrival order.
  REQUIRE(u.replay_merge_order({{0, 3, 2}, {1, 1, 1}, {0, 2, 1}}));
  Tuples out;
  u.process(1, tup(1, 0, 11, 0), out);
  u.process(1, tup(2, 0, 12, 0), out);
  CHECK(out.empty());
  for (TupleId i = 1; i <= 5; ++i) u.process(0, tup(i, 0, static_cast<std::int64_t>(i), 0), out);
  CHECK(finish(u).empty());
  std::vector<std::int64_t> keys;
  for (const Tuple& t : out) keys.push_back(t.key);
  // Port 0's 1..4, port 1's 1, then in arrival order: port 1's 2 (arrived first), port 0's 5.
  CHECK(keys == std::vector<std::int64_t>{1, 2, 3, 4, 11, 12, 5});
  CHECK(u.unmatched_merge_runs() == 0);
}

TEST_CASE("a replayed run naming an input its port never delivers is counted, not waited for forever", "[union][merge_order]") {
  UnionOperator u(union_spec());
  REQUIRE(u.replay_merge_order({{0, 1, 5}, {7, 1, 1}, {1, 1, 1}}));
  Tuples out;
  u.process(0, tup(1, 0, 0, 0), out);
  u.process(1, tup(1, 0, 1, 0), out);
  CHECK(out.size() == 1);  // waits for port 0's input 5
  const Tuples rest = finish(u);
  REQUIRE(rest.size() == 1);
  CHECK(rest[0].key == 1);
  CHECK(u.unmatched_merge_runs() == 2);  // port 0 ended at 1; port 7 does not exist
  CHECK(u.has_finished());
}
