#include <catch2/catch.hpp>

#include "operators/aggregate.h"
#include "operators/filter.h"
#include "operators/fragment.h"
#include "operators/support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

// A plan built by hand: one source fragment per input stream, the operator fragment under
// test (fragment id `kOps`), and one sink per exported stream.
struct HandPlan {
  Plan plan;
  FragmentId ops = kNoFragment;
};

HandPlan hand_plan(const std::vector<OperatorSpec>& operators, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& exported) {
  HandPlan h;
  Plan& p = h.plan;
  auto add_fragment = [&](const std::string& name, FragmentKind kind) {
    FragmentSpec spec;
    spec.name = name;
    spec.kind = kind;
    p.topology.fragments.push_back(spec);
    PlanFragment f;
    f.id = static_cast<FragmentId>(p.fragments.size());
    f.name = name;
    f.kind = kind;
    f.spec_index = p.topology.fragments.size() - 1;
    p.fragments.push_back(f);
    return f.id;
  };
  std::vector<FragmentId> sources;
  for (const std::string& s : inputs) sources.push_back(add_fragment("source_" + s, FragmentKind::source));
  h.ops = add_fragment("ops", FragmentKind::operators);
  p.topology.fragments.back().operators = operators;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    PlanStream s;
    s.id = static_cast<StreamId>(p.streams.size());
    s.name = inputs[i];
    s.producer = sources[i];
    s.consumers = {h.ops};
    p.streams.push_back(s);
    p.fragments[h.ops].inputs.push_back(s.id);
  }
  for (const std::string& name : exported) {
    const FragmentId sink = add_fragment("sink_" + name, FragmentKind::sink);
    PlanStream s;
    s.id = static_cast<StreamId>(p.streams.size());
    s.name = name;
    s.producer = h.ops;
    s.consumers = {sink};
    p.streams.push_back(s);
    p.fragments[h.ops].outputs.push_back(s.id);
  }
  return h;
}

OperatorSpec filter_op(const std::string& in, const std::string& out, double below) {
  OperatorSpec s = op_spec(OperatorKind::filter, {in}, out, "f_" + out);
  s.filter_op = CompareOp::lt;
  s.filter_constant = below;
  return s;
}

OperatorSpec map_op(const std::string& in, const std::string& out) {
  OperatorSpec s = op_spec(OperatorKind::map, {in}, out, "m_" + out);
  s.map_scale = 2.0;
  s.map_key_modulo = 2;
  return s;
}

OperatorSpec aggregate_op(const std::string& in, const std::string& out) {
  OperatorSpec s = aggregate_spec(AggregateFunction::sum, 200, 50);
  s.name = "agg";
  s.inputs = {in};
  s.output = out;
  return s;
}

struct StreamArrival {
  StreamId stream = kNoStream;
  Tuple tuple;
};
using StreamArrivals = std::vector<StreamArrival>;

StreamArrivals on_streams(const Arrivals& arrivals, const std::vector<StreamId>& port_streams) {
  StreamArrivals out;
  for (const Arrival& a : arrivals) out.push_back(StreamArrival{port_streams.at(a.port), a.tuple});
  return out;
}

FragmentOutputs feed(Fragment& f, const StreamArrivals& input, std::size_t from, std::size_t to) {
  FragmentOutputs out;
  for (std::size_t i = from; i < to && i < input.size(); ++i) f.process(input[i].stream, input[i].tuple, out);
  return out;
}

FragmentOutputs run_all(Fragment& f, const StreamArrivals& input) {
  FragmentOutputs out = feed(f, input, 0, input.size());
  for (StreamId s : f.inputs()) f.end_of_stream(s, out);
  return out;
}

Tuples on_stream(const FragmentOutputs& out, StreamId stream) {
  Tuples ts;
  for (const FragmentOutput& o : out)
    if (o.stream == stream) ts.push_back(o.tuple);
  return ts;
}

// The restart property for a whole fragment exporting `out`: restart a fresh fragment from
// restart_point({out: acked}), replay each input after its replay position, and every output
// after acked is the reference's.
std::size_t check_fragment_restarts(const Plan& plan, FragmentId id, const StreamArrivals& input, StreamId out_stream) {
  Fragment ref(plan, id);
  const Tuples reference = on_stream(run_all(ref, input), out_stream);
  REQUIRE(reference.size() > 30);
  std::size_t checked = 0;
  const std::size_t cuts = 20;
  for (std::size_t c = 0; c <= cuts; ++c) {
    const std::size_t cut = input.size() * c / cuts;
    Fragment live(plan, id);
    const Tuples emitted = on_stream(feed(live, input, 0, cut), out_stream);
    const TupleId last = emitted.empty() ? 0 : emitted.back().id;
    for (TupleId acked : acked_values(last)) {
      INFO("cut=" << cut << " acked=" << acked);
      const Bytes point = live.restart_point({{out_stream, acked}});
      const auto positions = Fragment::replay_positions(point);
      REQUIRE(positions.has_value());
      REQUIRE(positions->size() == live.inputs().size());
      Fragment restarted(plan, id);
      REQUIRE(restarted.restart_from(point));
      StreamArrivals needed;
      for (const StreamArrival& a : input)
        if (a.tuple.id > positions->at(a.stream)) needed.push_back(a);
      const Tuples got = after(on_stream(run_all(restarted, needed), out_stream), acked);
      const Tuples want = after(reference, acked);
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("output " << i << " got " << describe(got[i]) << " want " << describe(want[i]));
        REQUIRE(got[i] == want[i]);
      }
      ++checked;
    }
  }
  return checked;
}

}  // namespace

TEST_CASE("a fragment wires filter -> aggregate and exports only the stream other fragments read", "[fragment]") {
  const HandPlan h = hand_plan({filter_op("in", "mid", 50.0), aggregate_op("mid", "out")}, {"in"}, {"out"});
  Fragment f(h.plan, h.ops);
  CHECK(f.inputs() == std::vector<StreamId>{0});
  CHECK(f.outputs() == std::vector<StreamId>{1});
  CHECK(f.klass() == OperatorClass::convergent_capable);
  CHECK_FALSE(f.is_nondeterministic());
  const Tuples input = source("in", 400, 200.0, 4);
  const FragmentOutputs out = run_all(f, on_streams(on_port(input), {0}));
  // The same operators run by hand.
  Filter filter(filter_op("in", "mid", 50.0));
  Aggregate agg(aggregate_op("mid", "out"));
  const Tuples filtered = run_all(filter, on_port(input));
  const Tuples expected = run_all(agg, on_port(filtered));
  REQUIRE(!expected.empty());
  CHECK(on_stream(out, 1) == expected);
  CHECK(on_stream(out, 1).size() == out.size());
  CHECK(f.output_ended(1));
  CHECK(f.has_finished());
}

TEST_CASE("a fragment runs its operators in topological order whatever order the spec lists them in", "[fragment]") {
  const HandPlan ordered = hand_plan({filter_op("in", "mid", 50.0), aggregate_op("mid", "out")}, {"in"}, {"out"});
  const HandPlan reversed = hand_plan({aggregate_op("mid", "out"), filter_op("in", "mid", 50.0)}, {"in"}, {"out"});
  const StreamArrivals input = on_streams(on_port(source("in", 300, 200.0, 4)), {0});
  Fragment a(ordered.plan, ordered.ops);
  Fragment b(reversed.plan, reversed.ops);
  const Tuples want = on_stream(run_all(a, input), 1);
  REQUIRE(!want.empty());
  CHECK(on_stream(run_all(b, input), 1) == want);
  CHECK(b.has_finished());
}

TEST_CASE("a fragment stream read inside and by another fragment is both routed and exported", "[fragment]") {
  const HandPlan h = hand_plan({filter_op("in", "mid", 50.0), aggregate_op("mid", "out")}, {"in"}, {"mid", "out"});
  Fragment f(h.plan, h.ops);
  CHECK(f.outputs() == std::vector<StreamId>{1, 2});
  const Tuples input = source("in", 200, 200.0, 4);
  const FragmentOutputs out = run_all(f, on_streams(on_port(input), {0}));
  Filter filter(filter_op("in", "mid", 50.0));
  CHECK(on_stream(out, 1) == run_all(filter, on_port(input)));
  CHECK(!on_stream(out, 2).empty());
  // Depth first: an aggregate result appears right after the filter output that closed its window.
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i].stream == 2 && out[i - 1].stream == 1) CHECK(out[i].tuple.ts_us <= out[i - 1].tuple.ts_us);
  }
}

TEST_CASE("end of stream propagates through a fragment once an operator finishes", "[fragment]") {
  const HandPlan h =
      hand_plan({op_spec(OperatorKind::union_op, {"a", "b"}, "u", "union"), aggregate_op("u", "out")}, {"a", "b"}, {"out"});
  Fragment f(h.plan, h.ops);
  FragmentOutputs out;
  f.process(0, tup(1, 10'000, 1, 1.0), out);
  f.process(1, tup(1, 20'000, 1, 2.0), out);
  f.end_of_stream(0, out);
  CHECK_FALSE(f.output_ended(2));
  CHECK(out.empty());
  f.end_of_stream(1, out);  // union finishes, then the aggregate closes its windows
  CHECK(f.output_ended(2));
  CHECK(f.has_finished());
  CHECK(!out.empty());
  CHECK(f.dropped_inputs() == 0);
  f.process(0, tup(2, 30'000, 1, 1.0), out);  // after end of stream: refused and counted
  f.process(7, tup(1, 30'000, 1, 1.0), out);  // a stream the fragment does not read
  CHECK(f.dropped_inputs() == 2);
}

TEST_CASE("a filter -> aggregate fragment restarted from its restart point regenerates every output after the ack",
          "[fragment][restart]") {
  const HandPlan h = hand_plan({filter_op("in", "mid", 60.0), aggregate_op("mid", "out")}, {"in"}, {"out"});
  const StreamArrivals input = on_streams(on_port(source("in", 600, 200.0, 4)), {0});
  CHECK(check_fragment_restarts(h.plan, h.ops, input, 1) > 60);
}

TEST_CASE("a union -> aggregate fragment restarted from its restart point regenerates every output after the ack",
          "[fragment][restart]") {
  const HandPlan h =
      hand_plan({op_spec(OperatorKind::union_op, {"a", "b"}, "u", "union"), aggregate_op("u", "out")}, {"a", "b"}, {"out"});
  // Arrivals in time order, so the union's interleaving (and thus the aggregate) is reproducible.
  const Arrivals merged = merge_by_time({source("a", 400, 200.0, 3, 1), source("b", 300, 150.0, 3, 2)});
  CHECK(check_fragment_restarts(h.plan, h.ops, on_streams(merged, {0, 1}), 2) > 60);
}

TEST_CASE("a fragment reading one input through two operators skips what each already covers", "[fragment][restart]") {
  // in -> filter -> x, in -> map -> y, join(x, y): the two readers of `in` need different positions.
  OperatorSpec join = join_spec(20);
  join.inputs = {"x", "y"};
  join.output = "out";
  const HandPlan h = hand_plan({filter_op("in", "x", 50.0), map_op("in", "y"), join}, {"in"}, {"out"});
  const StreamArrivals input = on_streams(on_port(source("in", 400, 200.0, 4)), {0});
  CHECK(check_fragment_restarts(h.plan, h.ops, input, 1) > 60);
}

TEST_CASE("a fragment snapshot/restore round trip continues identically", "[fragment][snapshot]") {
  const HandPlan h =
      hand_plan({op_spec(OperatorKind::union_op, {"a", "b"}, "u", "union"), aggregate_op("u", "out")}, {"a", "b"}, {"out"});
  const StreamArrivals input = on_streams(interleave({source("a", 300, 200.0, 3, 1), source("b", 200, 150.0, 3, 2)}, 5), {0, 1});
  Fragment live(h.plan, h.ops);
  feed(live, input, 0, 250);
  Fragment restored(h.plan, h.ops);
  REQUIRE(restored.restore(live.snapshot()));
  CHECK(restored.snapshot() == live.snapshot());
  FragmentOutputs a = feed(live, input, 250, input.size());
  FragmentOutputs b = feed(restored, input, 250, input.size());
  for (StreamId s : {0, 1}) {
    live.end_of_stream(static_cast<StreamId>(s), a);
    restored.end_of_stream(static_cast<StreamId>(s), b);
  }
  REQUIRE(!a.empty());
  CHECK(on_stream(a, 2) == on_stream(b, 2));
  CHECK(live.snapshot() == restored.snapshot());
  CHECK(restored.has_finished());
  Bytes bad = live.snapshot();
  bad.pop_back();
  CHECK_FALSE(restored.restore(bad));
}

TEST_CASE("fragment delta checkpoints rebuild the state from per-operator versions", "[fragment][delta]") {
  const HandPlan h = hand_plan({filter_op("in", "mid", 80.0), aggregate_op("mid", "out")}, {"in"}, {"out"});
  const StreamArrivals input = on_streams(on_port(source("in", 3000, 5000.0, 2000)), {0});
  Fragment live(h.plan, h.ops);
  CHECK(live.supports_delta());
  feed(live, input, 0, 1000);
  const Bytes full = live.snapshot();
  std::vector<std::uint64_t> versions = live.state_versions();
  REQUIRE(versions.size() == 2);
  Fragment standby(h.plan, h.ops);
  REQUIRE(standby.restore(full));
  feed(live, input, 1000, 1010);
  const Bytes small = live.snapshot_delta(versions);
  CHECK(small.size() * 10 < full.size());
  REQUIRE(standby.apply_delta(small));
  CHECK(standby.snapshot() == live.snapshot());
  versions = live.state_versions();
  feed(live, input, 1010, 2000);  // windows close in between
  REQUIRE(standby.apply_delta(live.snapshot_delta(versions)));
  CHECK(standby.snapshot() == live.snapshot());
  CHECK(on_stream(feed(standby, input, 2000, 3000), 1) == on_stream(feed(live, input, 2000, 3000), 1));
  CHECK_FALSE(standby.apply_delta(full));
}

TEST_CASE("fragment determinants make a following fragment reproduce the leader's output", "[fragment][determinants]") {
  const HandPlan h =
      hand_plan({op_spec(OperatorKind::union_op, {"a", "b"}, "u", "union"), aggregate_op("u", "out")}, {"a", "b"}, {"out"});
  const std::vector<Tuples> ports{source("a", 300, 200.0, 3, 1), source("b", 200, 150.0, 3, 2)};
  Fragment leader(h.plan, h.ops);
  CHECK(leader.is_nondeterministic());
  CHECK(leader.klass() == OperatorClass::arbitrary);
  const StreamArrivals leader_input = on_streams(interleave(ports, 41), {0, 1});
  FragmentOutputs leader_out;
  std::vector<Determinants> shipped;
  std::uint64_t next_seq = 1;
  for (std::size_t i = 0; i < leader_input.size(); ++i) {
    leader.process(leader_input[i].stream, leader_input[i].tuple, leader_out);
    if (i % 13 == 12) {
      for (Determinants& d : leader.take_determinants()) {
        CHECK(d.op_index == 0);
        CHECK(d.first_seq == next_seq);  // numbered per operator from 1, without gaps
        next_seq += d.records.size();
        shipped.push_back(std::move(d));
      }
    }
  }
  for (Determinants& d : leader.take_determinants()) shipped.push_back(std::move(d));
  for (StreamId s : {0, 1}) leader.end_of_stream(static_cast<StreamId>(s), leader_out);
  REQUIRE(shipped.size() > 5);

  Fragment follower(h.plan, h.ops);
  follower.set_follow_determinants(true);
  const StreamArrivals follower_input = on_streams(interleave(ports, 42), {0, 1});
  FragmentOutputs follower_out;
  for (const StreamArrival& a : follower_input) follower.process(a.stream, a.tuple, follower_out);
  for (StreamId s : {0, 1}) follower.end_of_stream(static_cast<StreamId>(s), follower_out);
  CHECK_FALSE(follower.has_finished());  // still waiting for the leader's interleaving
  CHECK(follower.buffered_tuples() > 0);
  follower.add_determinants(shipped[1], follower_out);  // a gap: refused
  CHECK(follower.dropped_inputs() == shipped[1].records.size());
  CHECK(follower.determinants_applied(0) == 0);  // nothing a standby may acknowledge yet
  follower.add_determinants(shipped[0], follower_out);
  CHECK(follower.determinants_applied(0) == shipped[0].records.size());
  // Records 1..n of the first message again, merged with the second: only the new ones apply.
  Determinants overlapping = shipped[0];
  overlapping.records.insert(overlapping.records.end(), shipped[1].records.begin(), shipped[1].records.end());
  const std::uint64_t dropped_before_overlap = follower.dropped_inputs();
  follower.add_determinants(overlapping, follower_out);
  CHECK(follower.dropped_inputs() == dropped_before_overlap + shipped[0].records.size());
  for (std::size_t i = 2; i < shipped.size(); ++i) {
    follower.add_determinants(shipped[i], follower_out);
    follower.add_determinants(shipped[i], follower_out);  // a duplicate: already applied
  }
  CHECK(on_stream(follower_out, 2) == on_stream(leader_out, 2));
  CHECK(follower.has_finished());
  CHECK(follower.output_ended(2));
  Determinants wrong_op;
  wrong_op.op_index = 1;  // the aggregate is deterministic
  wrong_op.first_seq = 1;
  wrong_op.records = {{0, 1}};
  const std::uint64_t dropped = follower.dropped_inputs();
  follower.add_determinants(wrong_op, follower_out);
  CHECK(follower.dropped_inputs() == dropped + 1);
}

TEST_CASE("fragment restart point blobs are checked before use", "[fragment][restart]") {
  const HandPlan h = hand_plan({filter_op("in", "mid", 50.0), aggregate_op("mid", "out")}, {"in"}, {"out"});
  Fragment live(h.plan, h.ops);
  feed(live, on_streams(on_port(source("in", 300, 200.0, 4)), {0}), 0, 300);
  const Bytes point = live.restart_point({{1, 3}});
  const auto positions = Fragment::replay_positions(point);
  REQUIRE(positions.has_value());
  CHECK(positions->count(0) == 1);
  Bytes truncated(point.begin(), point.end() - 1);
  CHECK_FALSE(Fragment::replay_positions(truncated).has_value());
  Fragment target(h.plan, h.ops);
  CHECK_FALSE(target.restart_from(truncated));
  CHECK_FALSE(target.restart_from(live.snapshot()));
  // Another fragment's restart point has the wrong shape.
  const HandPlan other = hand_plan({filter_op("in", "out", 50.0)}, {"in"}, {"out"});
  Fragment single(other.plan, other.ops);
  CHECK_FALSE(target.restart_from(single.restart_point({})));
  CHECK(target.restart_from(point));
}

TEST_CASE("fragment forget_up_to keeps the restart points of later acks", "[fragment][restart]") {
  const HandPlan h =
      hand_plan({op_spec(OperatorKind::union_op, {"a", "b"}, "u", "union"), aggregate_op("u", "out")}, {"a", "b"}, {"out"});
  const StreamArrivals input = on_streams(merge_by_time({source("a", 300, 200.0, 3, 1), source("b", 200, 150.0, 3, 2)}), {0, 1});
  Fragment f(h.plan, h.ops);
  const Tuples out = on_stream(feed(f, input, 0, input.size()), 2);
  REQUIRE(out.size() > 20);
  const TupleId acked = out.size() / 2;
  std::vector<Bytes> before;
  for (TupleId a = acked; a <= out.size(); ++a) before.push_back(f.restart_point({{2, a}}));
  const std::size_t size_before = f.snapshot().size();
  f.forget_up_to({{2, acked}});
  CHECK(f.snapshot().size() < size_before);
  for (TupleId a = acked; a <= out.size(); ++a) CHECK(f.restart_point({{2, a}}) == before[a - acked]);
}
