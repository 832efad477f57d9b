// Workload (primary/workload.h): what runs between a node's input side and its output side.
// Paper: the query fragment a server runs (section 2); a full output queue stops the server
// taking input (back-pressure), never silently.
#include <catch2/catch.hpp>

#include "operators/source_generator.h"
#include "primary/workload.h"
#include "roles/role_test_support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

using Node = Parts;

}  // namespace

TEST_CASE("a workload runs queued input through its fragment into the output queues", "[roles][workload]") {
  Node n(default_plan(HaMode::none), "filter");
  n.feed("source", "raw", 0, 3, 10.0);  // the filter keeps values below 80
  n.feed("source", "raw", 3, 2, 90.0);
  Effects eff;
  CHECK(n.workload.run(0, eff) == kNever);  // not a source: nothing falls due
  CHECK(n.inputs.queued() == 0);
  CHECK(n.outputs.at(n.stream("small")).queue().size() == 3);
  CHECK(n.workload.work_done() == 5);
  CHECK(n.workload.operator_work_done() == 5);
}

TEST_CASE("a full output queue stops input under back-pressure, traced once per episode", "[roles][workload]") {
  Node n(default_plan(HaMode::none, [](Settings& s) { s.output_queue_tuples_max = 2; }), "filter");
  n.feed("source", "raw", 0, 5, 10.0);
  Effects eff;
  n.workload.run(0, eff);
  CHECK(n.outputs.at(n.stream("small")).queue().size() == 2);
  CHECK(n.inputs.queued() == 3);  // left for when acknowledgements make room
  n.workload.run(1, eff);
  CHECK(traces_of(eff, TraceKind::backpressure) == 1);
  CHECK(n.outbox.counters().at("backpressure_episodes") == 1);
  CHECK(n.workload.fatal_error().empty());
}

TEST_CASE("a full output queue under queue_full_policy error is a fatal error that names it", "[roles][workload]") {
  Node n(default_plan(HaMode::none, [](Settings& s) {
           s.output_queue_tuples_max = 2;
           s.queue_full_policy = QueueFullPolicy::error;
         }),
         "filter");
  n.feed("source", "raw", 0, 5, 10.0);
  Effects eff;
  n.workload.run(0, eff);
  CHECK(eff.fatal_error == n.workload.fatal_error());
  CHECK(n.workload.fatal_error().find("stream 'small' on node 'filter'") != std::string::npos);
  CHECK(traces_of(eff, TraceKind::fatal) == 1);
}

TEST_CASE("a source emits the tuples due and says when the next one is", "[roles][workload]") {
  Node n(default_plan(HaMode::none, [](Settings& s) { s.duration_s = 0.01; }), "source");  // 2000 tuples/s
  const StreamId raw = n.stream("raw");
  const TupleId count = source_tuple_count(n.plan->spec(n.plan->fragment_id("source")).source, 0.01);
  REQUIRE(count >= 3);
  Effects eff;
  const TimeUs next = n.workload.run(0, eff);
  CHECK(n.outputs.at(raw).queue().size() == 0);
  CHECK(next >= 500);  // tuple 1 is due at 0.5 ms
  CHECK(n.workload.run(1'000, eff) > 1'000);
  CHECK(n.outputs.at(raw).queue().size() == 2);
  CHECK(n.workload.run(1'000'000, eff) == kNever);  // all emitted, the stream ended
  CHECK(n.outputs.at(raw).queue().size() == count);
  CHECK(n.outputs.at(raw).queue().ended());
  CHECK(n.workload.work_done() == count);
}

TEST_CASE("only a primary or an active standby processes, and a paused workload takes nothing", "[roles][workload]") {
  Node spare(default_plan(HaMode::amnesia), "filter.spare");
  CHECK(spare.role == Role::spare);
  spare.feed("source", "raw", 0, 2, 10.0);
  Effects eff;
  spare.workload.run(0, eff);
  CHECK(spare.inputs.queued() == 2);
  spare.role = Role::primary;
  spare.workload.set_paused(true);
  spare.workload.run(0, eff);
  CHECK(spare.inputs.queued() == 2);
  spare.workload.set_paused(false);
  spare.workload.run(0, eff);
  CHECK(spare.inputs.queued() == 0);
}

TEST_CASE("what an approach makes the fragment emit goes to the output queues", "[roles][workload]") {
  Node n(default_plan(HaMode::none), "filter");
  const StreamId small = n.stream("small");
  CHECK(n.workload.act_on_fragment([&](Fragment&, FragmentOutputs& outs) { outs.push_back(FragmentOutput{small, Tuple{1, 0, 0, 0, 1}}); }));
  CHECK(n.outputs.at(small).queue().last_id() == 1);
  Node source(default_plan(HaMode::none), "source");
  CHECK_FALSE(source.workload.act_on_fragment([](Fragment&, FragmentOutputs&) {}));
  CHECK(source.workload.restore(Bytes{1, 2, 3}));  // nothing to restore
}

TEST_CASE("a checkpoint's fragment state that does not restore leaves a fresh fragment", "[roles][workload]") {
  Node n(default_plan(HaMode::passive), "aggregate");
  n.feed("filter", "small", 0, 3, 10.0);
  Effects eff;
  n.workload.run(0, eff);
  const Bytes state = n.workload.fragment()->snapshot();
  CHECK(n.workload.restore(state));
  CHECK(n.workload.fragment()->snapshot() == state);
  CHECK_FALSE(n.workload.restore(Bytes{1, 2, 3}));
  REQUIRE(n.workload.fragment() != nullptr);
  CHECK(n.workload.fragment()->snapshot() == Fragment(*n.plan, n.plan->fragment_id("aggregate")).snapshot());
}

TEST_CASE("the merge order a Union chose is tagged with the epoch and role it was chosen in", "[roles][workload]") {
  Node n(network_plan("union.toml", HaMode::passive), "merge");
  n.feed("s1", "s1", 0, 2, 10.0);
  n.feed("s2", "s2", 0, 1, 10.0);
  Effects eff;
  n.workload.run(0, eff);
  n.pair.form_pair(n.id("merge.backup"), 1);  // a new epoch: what was chosen is collected first
  n.feed("s1", "s1", 2, 1, 10.0);
  n.workload.run(1, eff);
  n.workload.collect_merge_order();
  n.workload.report_merge_orders(eff);
  REQUIRE(eff.merge_orders.size() == 2);
  CHECK(eff.merge_orders[0].epoch == 0);
  CHECK(eff.merge_orders[1].epoch == 1);
  CHECK(eff.merge_orders[0].acting);
  CHECK(eff.merge_orders[0].node == n.node.self());
  Effects none;
  n.workload.report_merge_orders(none);
  CHECK(none.merge_orders.empty());
}
