// Judging networks with a Union (docs/FAULTS.md: "precise" means equal to a failure-free
// execution with the interleaving the primary actually chose; the checker recomputes the
// reference from the recorded choices): the composition of the recorded merge orders across
// takeovers (judge/merge_order.h), the reference replaying them, and runs of union_join in the
// simulator judged with them, including a corrupted order and a tampered output that must not
// pass, and the cases whose order is unknown, which are reported as not judged and never
// counted as lost.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include "judge/checker.h"
#include "judge/merge_order.h"
#include "judge/reference.h"
#include "run/run_once.h"
#include "config/topology_file.h"
#include "scenarios/faults.h"

using namespace hapair;

namespace {

const std::string kNetworks = std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/";

Topology union_join(HaMode ha, double duration_s = 3.0) {
  const TopologyLoad load = load_topology_file(kNetworks + "union_join.toml");
  REQUIRE(load.topology.has_value());
  Topology t = *load.topology;
  t.settings.ha = ha;
  t.settings.duration_s = duration_s;
  return t;
}

std::shared_ptr<const Plan> plan_of(const Topology& t) { return std::make_shared<const Plan>(make_plan(t)); }

NodeId node(const Plan& p, const std::string& name) {
  const NodeId id = p.node_id(name);
  REQUIRE(id != kNoNode);
  return id;
}

// The key of union_join's Union (merge_both, operator 0 of fragment merge).
MergeOrderKey merge_key(const Plan& p) {
  const auto deps = order_dependences(p);
  REQUIRE(deps.size() == 1);
  CHECK(deps[0].name == "merge_both");
  return deps[0].key;
}

// The composition for union_join's Union (a copy: the map is a temporary).
ComposedMergeOrder composed(const Plan& p, const std::vector<MergeOrder>& records) {
  return compose_merge_orders(p, records).at(merge_key(p));
}

MergeOrder record(NodeId n, Epoch e, bool acting, bool following, TupleId first_output, std::vector<MergeRun> runs) {
  return MergeOrder{n, e, acting, following, 0, first_output, std::move(runs)};
}

RunOutcome merge_run_sim(const Topology& t, std::vector<FaultSpec> faults = {}) {
  auto plan = plan_of(t);
  RunRequest request;
  request.driver = "sim";
  request.faults = std::move(faults);
  return run_once(plan, request, compute_reference(*plan));
}

using test::crash;

std::size_t events_named(const RunResult& r, const std::string& event) {
  return static_cast<std::size_t>(
      std::count_if(r.events.begin(), r.events.end(), [&](const TraceEvent& e) { return to_string(e.kind) == event; }));
}

}  // namespace

// ---- which streams depend on an interleaving ---------------------------------------------------

TEST_CASE("the aggregate after union_join's union depends on its interleaving, the join beside it does not", "[merge_order]") {
  const auto p = plan_of(union_join(HaMode::none));
  const auto deps = order_dependences(*p);
  REQUIRE(deps.size() == 1);
  REQUIRE(deps[0].streams.size() == 1);
  CHECK(p->streams[deps[0].streams[0]].name == "counts");
  CHECK(order_dependent_streams(*p) == deps[0].streams);
  // Filter/Map after a Union only reorder: the union network needs no recorded order.
  const TopologyLoad u = load_topology_file(kNetworks + "union.toml");
  REQUIRE(u.topology.has_value());
  const Plan union_plan = make_plan(*u.topology);
  REQUIRE(order_dependences(union_plan).size() == 1);
  CHECK(order_dependences(union_plan)[0].streams.empty());
}

// ---- composing the records -----------------------------------------------------------------------

TEST_CASE("a primary's merge order, reported in pieces, composes to its runs", "[merge_order]") {
  const auto p = plan_of(union_join(HaMode::none));
  const NodeId merge = node(*p, "merge");
  const ComposedMergeOrder m = composed(
      *p, {record(merge, 0, true, false, 1, {{0, 1, 3}, {1, 1, 2}}), record(merge, 0, true, false, 6, {{1, 3, 1}, {0, 4, 2}})});
  REQUIRE(m.known);
  CHECK(m.records == 2);
  CHECK(m.runs == std::vector<MergeRun>{{0, 1, 3}, {1, 1, 3}, {0, 4, 2}});
}

TEST_CASE("no reported merge order is an unknown order", "[merge_order]") {
  const auto p = plan_of(union_join(HaMode::none));
  const ComposedMergeOrder m = composed(*p, {});
  CHECK_FALSE(m.known);
  CHECK(m.unknown_reason.find("no node reported") != std::string::npos);
}

TEST_CASE("passive standby: the new primary's choices after its checkpoint replace the old primary's tail", "[merge_order]") {
  const auto p = plan_of(union_join(HaMode::passive));
  const NodeId old_primary = node(*p, "merge");
  const NodeId backup = node(*p, "merge.backup");
  // The old primary merged 1..6; the checkpoint covered output 4 (inputs 0:1..2, 1:1..2); the
  // new primary merged the rest again in another order.
  const ComposedMergeOrder m = composed(*p, {record(old_primary, 0, true, false, 1, {{0, 1, 2}, {1, 1, 2}, {0, 3, 1}, {1, 3, 1}}),
                                           record(backup, 1, true, false, 5, {{1, 3, 2}, {0, 3, 1}})});
  REQUIRE(m.known);
  CHECK(m.runs == std::vector<MergeRun>{{0, 1, 2}, {1, 1, 4}, {0, 3, 1}});
}

TEST_CASE("output ids nobody reported make the order unknown: a crash took them", "[merge_order]") {
  const auto p = plan_of(union_join(HaMode::passive));
  // The old primary's reports stop at output 2, the new primary restarts after output 4.
  const ComposedMergeOrder m = composed(*p, {record(node(*p, "merge"), 0, true, false, 1, {{0, 1, 2}}),
                                           record(node(*p, "merge.backup"), 1, true, false, 5, {{1, 3, 2}})});
  CHECK_FALSE(m.known);
  CHECK(m.unknown_reason.find("output ids 3..4") != std::string::npos);
  CHECK(m.unknown_reason.find("not reported") != std::string::npos);
}

TEST_CASE("active standby: the standby's followed choices fill in what the crashed primary never reported", "[merge_order]") {
  const auto p = plan_of(union_join(HaMode::active));
  const NodeId primary = node(*p, "merge");
  const NodeId standby = node(*p, "merge.backup");
  const ComposedMergeOrder m = composed(
      *p, {record(primary, 0, true, false, 1, {{0, 1, 2}}),             // reported before the SIGKILL
           record(standby, 0, false, true, 1, {{0, 1, 2}, {1, 1, 2}}),  // applied from determinants
           record(standby, 1, true, false, 5, {{0, 3, 1}, {1, 3, 1}})});  // its own, after the takeover
  REQUIRE(m.known);
  CHECK(m.runs == std::vector<MergeRun>{{0, 1, 2}, {1, 1, 2}, {0, 3, 1}, {1, 3, 1}});
  CHECK(m.follower_conflicts == 0);
}

TEST_CASE("a standby that chose its own interleaving and took over leaves the order unknown", "[merge_order]") {
  Topology t = union_join(HaMode::active);
  t.settings.determinants = false;
  const auto p = plan_of(t);
  const NodeId primary = node(*p, "merge");
  const NodeId standby = node(*p, "merge.backup");
  const std::vector<MergeOrder> failure_free{record(primary, 0, true, false, 1, {{0, 1, 2}, {1, 1, 2}}),
                                             record(standby, 0, false, false, 1, {{1, 1, 2}, {0, 1, 2}})};
  // Failure-free, the standby's own order never reaches the output: the primary's is judged.
  CHECK(composed(*p, failure_free).known);
  std::vector<MergeOrder> taken_over = failure_free;
  taken_over.push_back(record(standby, 1, true, false, 5, {{0, 3, 1}}));
  const ComposedMergeOrder m = composed(*p, taken_over);
  CHECK_FALSE(m.known);
  CHECK(m.unknown_reason.find("without determinants") != std::string::npos);
}

TEST_CASE("upstream backup re-merging what the old primary had merged in another order leaves the order unknown", "[merge_order]") {
  const auto p = plan_of(union_join(HaMode::upstream));
  const NodeId old_primary = node(*p, "merge");
  const NodeId spare = node(*p, "merge.spare");
  const MergeOrder old_record = record(old_primary, 0, true, false, 1, {{0, 1, 2}, {1, 1, 2}, {0, 3, 1}});
  // The recovery node restarts after output 2 and replays port 1 first: not what was delivered.
  const ComposedMergeOrder reordered = composed(*p, {old_record, record(spare, 1, true, false, 3, {{0, 3, 1}, {1, 1, 2}})});
  CHECK_FALSE(reordered.known);
  CHECK(reordered.unknown_reason.find("two interleavings") != std::string::npos);
  // The same order again is one interleaving.
  const ComposedMergeOrder same = composed(*p, {old_record, record(spare, 1, true, false, 3, {{1, 1, 2}, {0, 3, 2}})});
  REQUIRE(same.known);
  CHECK(same.runs == std::vector<MergeRun>{{0, 1, 2}, {1, 1, 2}, {0, 3, 2}});
}

TEST_CASE("amnesia: the spare's choices for new input follow the old primary's", "[merge_order]") {
  const auto p = plan_of(union_join(HaMode::amnesia));
  const ComposedMergeOrder m = composed(*p, {record(node(*p, "merge"), 0, true, false, 1, {{0, 1, 2}, {1, 1, 1}}),
                                           record(node(*p, "merge.spare"), 1, true, false, 1, {{1, 5, 1}, {0, 7, 1}})});
  REQUIRE(m.known);
  CHECK(m.runs == std::vector<MergeRun>{{0, 1, 2}, {1, 1, 1}, {1, 5, 1}, {0, 7, 1}});
}

// ---- runs of union_join in the simulator ---------------------------------------------------------

TEST_CASE("a failure-free union_join run in the simulator is precise against the merge order its union chose", "[merge_order][sim]") {
  const Topology t = union_join(HaMode::none);
  const RunOutcome out = merge_run_sim(t);
  REQUIRE(out.result.completed);
  REQUIRE_FALSE(out.result.merge_orders.empty());
  CHECK(out.semantics.verdict == "precise");
  CHECK(out.semantics.merge_order_replayed);
  CHECK(out.semantics.not_judged.empty());
  CHECK(out.semantics.reference_tuples == out.result.deliveries.size());
  // The defect this fixes: the one fixed (canonical) interleaving calls the same run a gap.
  const auto plan = plan_of(t);
  const SemanticsReport canonical =
      check_semantics(reference_output(*plan), out.result.deliveries, arbitrary_operators(*plan));
  CHECK(canonical.verdict == "gap");
  CHECK(canonical.lost > 0);
}

TEST_CASE("union_join: a crash of the union's primary under active standby with determinants is precise", "[merge_order][sim]") {
  const RunOutcome out = merge_run_sim(union_join(HaMode::active), {crash("merge", 1.5)});
  REQUIRE(out.result.completed);
  CHECK(events_named(out.result, "takeover") == 1);
  const auto p = plan_of(union_join(HaMode::active));
  bool standby_followed = false, standby_led = false;
  for (const MergeOrder& o : out.result.merge_orders) {
    if (o.node != node(*p, "merge.backup")) continue;
    standby_followed |= o.following && !o.acting;
    standby_led |= o.acting && !o.following;
  }
  CHECK(standby_followed);  // the old primary's choices, from its determinants
  CHECK(standby_led);       // its own, after the takeover
  CHECK(out.semantics.verdict == "precise");
  CHECK(out.semantics.merge_order_replayed);
  CHECK(out.semantics.not_judged.empty());
  CHECK(out.semantics.lost == 0);
}

TEST_CASE("union_join: a crash of the union's primary under passive standby is precise", "[merge_order][sim]") {
  const RunOutcome out = merge_run_sim(union_join(HaMode::passive), {crash("merge", 1.5)});
  REQUIRE(out.result.completed);
  CHECK(events_named(out.result, "takeover") == 1);
  CHECK(out.semantics.verdict == "precise");
  CHECK(out.semantics.not_judged.empty());
}

TEST_CASE("a corrupted recorded merge order is not precise", "[merge_order][sim]") {
  const Topology t = union_join(HaMode::none);
  RunOutcome out = merge_run_sim(t);
  REQUIRE(out.semantics.verdict == "precise");
  // A record that claims the union took every s1 tuple before any s2 tuple: the same inputs, in
  // an order that did not produce this output.
  RunResult corrupted = out.result;
  std::uint32_t per_port[2] = {0, 0};
  for (const MergeOrder& o : corrupted.merge_orders)
    for (const MergeRun& r : o.runs) per_port[r.port] += r.count;
  REQUIRE(per_port[0] > 1000);
  REQUIRE(per_port[1] > 1000);
  MergeOrder lie = corrupted.merge_orders.front();
  lie.first_output = 1;
  lie.runs = {{0, 1, per_port[0]}, {1, 1, per_port[1]}};
  corrupted.merge_orders = {lie};
  const auto plan = plan_of(t);
  const Reference reference = compute_reference(*plan);
  const SemanticsReport s = judge_run(judge_against(*plan, reference, corrupted), reference);
  CHECK(s.merge_order_replayed);
  CHECK(s.not_judged.empty());
  CHECK(s.verdict != "precise");
  CHECK(s.differing > 0);
}

TEST_CASE("a tampered union_join output is not precise against the recorded merge order", "[merge_order][sim]") {
  const Topology t = union_join(HaMode::none);
  RunOutcome out = merge_run_sim(t);
  REQUIRE(out.semantics.verdict == "precise");
  const auto plan = plan_of(t);
  const StreamId counts = plan->stream_id("counts");
  RunResult tampered = out.result;
  auto it = std::find_if(tampered.deliveries.begin(), tampered.deliveries.end(),
                         [&](const Delivery& d) { return d.stream == counts; });
  REQUIRE(it != tampered.deliveries.end());
  it->tuple.value += 1;
  const Reference reference = compute_reference(*plan);
  const SemanticsReport s = judge_run(judge_against(*plan, reference, tampered), reference);
  CHECK(s.verdict == "gap");  // the window's right count is lost, the wrong one differs
  CHECK(s.lost == 1);
  CHECK(s.differing == 1);
}

TEST_CASE("a merge order a SIGKILL took with it is reported as not judged, never as lost", "[merge_order][sim]") {
  const Topology t = union_join(HaMode::passive);
  RunOutcome out = merge_run_sim(t, {crash("merge", 1.5)});
  REQUIRE(out.semantics.verdict == "precise");
  // What a real process's last reports may lose: the old primary's last 400 records (more than
  // it merged since its last checkpoint).
  const auto plan = plan_of(t);
  const NodeId old_primary = node(*plan, "merge");
  RunResult lossy = out.result;
  lossy.merge_orders.clear();
  std::size_t old_records = 0;
  for (const MergeOrder& o : out.result.merge_orders) old_records += o.node == old_primary;
  REQUIRE(old_records > 400);
  std::size_t seen = 0;
  for (const MergeOrder& o : out.result.merge_orders)
    if (o.node != old_primary || ++seen <= old_records - 400) lossy.merge_orders.push_back(o);
  const Reference reference = compute_reference(*plan);
  const SemanticsReport s = judge_run(judge_against(*plan, reference, lossy), reference);
  REQUIRE(s.not_judged.size() == 1);
  CHECK(s.not_judged[0].stream == "counts");
  CHECK(s.not_judged[0].reason.find("not reported") != std::string::npos);
  CHECK(s.lost == 0);
  CHECK(s.verdict == "precise");  // the pairs stream, judged as before
  CHECK(s.reference_tuples < out.semantics.reference_tuples);
}

TEST_CASE("union_join under upstream backup: the re-merged counts are not judged, the pairs are", "[merge_order][sim]") {
  const RunOutcome out = merge_run_sim(union_join(HaMode::upstream), {crash("merge", 1.5)});
  REQUIRE(out.result.completed);
  REQUIRE(out.semantics.not_judged.size() == 1);
  CHECK(out.semantics.not_judged[0].stream == "counts");
  CHECK(out.semantics.not_judged[0].reason.find("two interleavings") != std::string::npos);
  CHECK(out.semantics.lost == 0);
  CHECK(out.summary.find("not judged: stream counts") != std::string::npos);
}
