// Plans (plan.h): ids, node naming per HA mode, producer classes, stream wiring, and validate()
// catching every kind of problem, several at once.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "protocols/plan.h"
#include "protocols/topology_builders.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

// The default network with one change has exactly one problem, naming every one of `parts`.
void expect_single_problem(const std::function<void(Topology&)>& change, std::initializer_list<std::string> parts) {
  Topology t = default_topology();
  change(t);
  const auto problems = validate(t);
  INFO(joined(problems));
  REQUIRE(problems.size() == 1);
  CHECK(has_problem(problems, parts));
}

// Two sources s1, s2; fragment "mix": union(s1, s2) -> u, aggregate(u) -> totals, filter(s1) -> kept;
// fragment "pairs": join(s1, s2) -> j, map(j) -> scaled; sinks read totals, kept and scaled.
// The aggregate is listed before the union it reads, so producer classes must not depend on
// the listing order.
Topology union_join_topology() {
  Topology t;
  t.name = "mixed";
  t.fragments.push_back(source("src1", "s1"));
  t.fragments.push_back(source("src2", "s2"));
  t.fragments.push_back(fragment("mix", {op("agg", OperatorKind::aggregate, {"u"}, "totals"),
                                         op("merge", OperatorKind::union_op, {"s1", "s2"}, "u"),
                                         op("keep", OperatorKind::filter, {"s1"}, "kept")}));
  t.fragments.push_back(fragment("pairs", {op("pair", OperatorKind::join, {"s2", "s1"}, "j"),
                                           op("scale", OperatorKind::map, {"j"}, "scaled")}));
  t.fragments.push_back(sink("out1", {"totals", "kept"}));
  t.fragments.push_back(sink("out2", {"scaled"}));
  return t;
}

}  // namespace

TEST_CASE("the default topology is valid and plans one node per fragment without HA") {
  const Topology t = default_topology();
  INFO(joined(validate(t)));
  REQUIRE(validate(t).empty());
  const Plan plan = make_plan(t);

  REQUIRE(plan.fragments.size() == 4);
  const std::vector<std::string> names{"source", "filter", "aggregate", "sink"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    CHECK(plan.fragments[i].id == i);
    CHECK(plan.fragments[i].name == names[i]);
    CHECK(plan.fragments[i].spec_index == i);
    CHECK(plan.fragments[i].ha == HaMode::none);
    CHECK(plan.fragments[i].primary == i);
    CHECK(plan.fragments[i].standbys.empty());
    CHECK(plan.spec(static_cast<FragmentId>(i)).name == names[i]);
  }
  CHECK(plan.fragments[0].kind == FragmentKind::source);
  CHECK(plan.fragments[3].kind == FragmentKind::sink);
  REQUIRE(plan.nodes.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(plan.nodes[i].id == i);
    CHECK(plan.nodes[i].name == names[i]);
    CHECK(plan.nodes[i].fragment == i);
    CHECK_FALSE(plan.nodes[i].standby);
  }

  REQUIRE(plan.streams.size() == 3);
  CHECK(plan.streams[0].name == "raw");
  CHECK(plan.streams[1].name == "small");
  CHECK(plan.streams[2].name == "totals");
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(plan.streams[i].id == i);
    CHECK(plan.streams[i].producer == i);
    CHECK(plan.streams[i].consumers == std::vector<FragmentId>{static_cast<FragmentId>(i + 1)});
  }
  CHECK(plan.streams[0].producer_class == OperatorClass::repeatable);
  CHECK(plan.streams[1].producer_class == OperatorClass::repeatable);
  CHECK(plan.streams[2].producer_class == OperatorClass::convergent_capable);

  CHECK(plan.fragments[0].inputs.empty());
  CHECK(plan.fragments[0].outputs == std::vector<StreamId>{0});
  CHECK(plan.fragments[1].inputs == std::vector<StreamId>{0});
  CHECK(plan.fragments[1].outputs == std::vector<StreamId>{1});
  CHECK(plan.fragments[2].upstream == std::vector<FragmentId>{1});
  CHECK(plan.fragments[2].downstream == std::vector<FragmentId>{3});
  CHECK(plan.fragments[3].inputs == std::vector<StreamId>{2});
  CHECK(plan.fragments[3].outputs.empty());
  CHECK(plan.fragments[3].downstream.empty());

  CHECK(plan.fragments[0].klass == OperatorClass::repeatable);
  CHECK(plan.fragments[1].klass == OperatorClass::repeatable);
  CHECK(plan.fragments[2].klass == OperatorClass::convergent_capable);
  CHECK(plan.fragments[3].klass == OperatorClass::repeatable);
}

TEST_CASE("lookups by name find nodes, fragments and streams and answer kNo* for unknown names") {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  const Plan plan = make_plan(t);
  CHECK(plan.node_id("aggregate") == 2);
  CHECK(plan.node_id("aggregate.backup") == 5);
  CHECK(plan.node_id("nope") == kNoNode);
  CHECK(plan.fragment_id("sink") == 3);
  CHECK(plan.fragment_id("aggregate.backup") == kNoFragment);
  CHECK(plan.stream_id("totals") == 2);
  CHECK(plan.stream_id("nope") == kNoStream);
}

TEST_CASE("standby nodes are named after the HA mode and appended after all primaries") {
  struct Case {
    HaMode mode;
    const char* suffix;
  };
  for (const Case c : {Case{HaMode::amnesia, ".spare"}, Case{HaMode::upstream, ".spare"},
                       Case{HaMode::passive, ".backup"}, Case{HaMode::active, ".backup"}}) {
    SECTION(to_string(c.mode)) {
      Topology t = default_topology();
      t.settings.ha = c.mode;
      t.fragments[2].standby_endpoint = "tcp://127.0.0.1:7002";
      const Plan plan = make_plan(t);
      // Sources and sinks never get standbys, whatever the network default.
      CHECK(plan.fragments[0].ha == HaMode::none);
      CHECK(plan.fragments[3].ha == HaMode::none);
      CHECK(plan.fragments[0].standbys.empty());
      CHECK(plan.fragments[3].standbys.empty());
      REQUIRE(plan.nodes.size() == 6);
      CHECK(plan.nodes[4].name == std::string("filter") + c.suffix);
      CHECK(plan.nodes[5].name == std::string("aggregate") + c.suffix);
      for (NodeId n : {NodeId{4}, NodeId{5}}) {
        CHECK(plan.nodes[n].id == n);
        CHECK(plan.nodes[n].standby);
      }
      CHECK(plan.nodes[4].fragment == 1);
      CHECK(plan.nodes[5].fragment == 2);
      CHECK(plan.nodes[5].endpoint == "tcp://127.0.0.1:7002");
      CHECK(plan.fragments[1].ha == c.mode);
      CHECK(plan.fragments[1].standbys == std::vector<NodeId>{4});
      CHECK(plan.fragments[2].standbys == std::vector<NodeId>{5});
    }
  }
}

TEST_CASE("a fragment's own HA mode overrides the network default, and only fragments that need one get a standby") {
  Topology t = default_topology();
  t.settings.ha = HaMode::upstream;
  t.fragments[1].ha = HaMode::none;
  t.fragments[0].ha = HaMode::none;  // allowed on a source: it changes nothing
  const Plan plan = make_plan(t);
  CHECK(plan.fragments[1].ha == HaMode::none);
  CHECK(plan.fragments[1].standbys.empty());
  CHECK(plan.fragments[2].ha == HaMode::upstream);
  REQUIRE(plan.nodes.size() == 5);
  CHECK(plan.nodes[4].name == "aggregate.spare");
  CHECK(plan.fragments[2].standbys == std::vector<NodeId>{4});

  t.fragments[1].ha = HaMode::active;
  t.fragments[2].ha = HaMode::passive;
  const Plan mixed = make_plan(t);
  REQUIRE(mixed.nodes.size() == 6);
  CHECK(mixed.nodes[4].name == "filter.backup");
  CHECK(mixed.nodes[5].name == "aggregate.backup");
  CHECK(mixed.fragments[1].ha == HaMode::active);
  CHECK(mixed.fragments[2].ha == HaMode::passive);
}

TEST_CASE("primary nodes take the fragment endpoint and standbys the standby endpoint") {
  Topology t = default_topology();
  t.settings.ha = HaMode::active;
  t.fragments[1].endpoint = "tcp://10.0.0.1:7001";
  t.fragments[1].standby_endpoint = "tcp://10.0.0.2:*";
  const Plan plan = make_plan(t);
  CHECK(plan.nodes[1].endpoint == "tcp://10.0.0.1:7001");
  CHECK(plan.nodes[4].endpoint == "tcp://10.0.0.2:*");
  CHECK(plan.nodes[0].endpoint.empty());
}

TEST_CASE("the traits table says which approaches' consumers are retained for and which have a standby") {
  const ApproachCatalog& c = ApproachCatalog::builtin();
  CHECK_FALSE(c.of(HaMode::none).consumers_retain);
  CHECK_FALSE(c.of(HaMode::amnesia).consumers_retain);
  CHECK(c.of(HaMode::upstream).consumers_retain);
  CHECK(c.of(HaMode::passive).consumers_retain);
  CHECK_FALSE(c.of(HaMode::active).consumers_retain);
  CHECK_FALSE(c.of(HaMode::none).has_standby());
  for (HaMode m : {HaMode::amnesia, HaMode::upstream, HaMode::passive, HaMode::active}) CHECK(c.of(m).has_standby());
  // The plan reads them per fragment: sources and sinks have the baseline's traits.
  const Plan plan = make_plan([] {
    Topology t = default_topology();
    t.settings.ha = HaMode::upstream;
    return t;
  }());
  CHECK(plan.traits(plan.fragment_id("source")).baseline);
  CHECK(plan.traits(plan.fragment_id("filter")).name == "upstream");
  CHECK(plan.nodes[plan.fragments[plan.fragment_id("filter")].standbys.front()].name == "filter.spare");
}

TEST_CASE("plan streams are the inter-fragment streams with the weakest class on any path inside their producer") {
  const Topology t = union_join_topology();
  INFO(joined(validate(t)));
  REQUIRE(validate(t).empty());
  const Plan plan = make_plan(t);

  // u and j stay inside their fragments.
  CHECK(plan.stream_id("u") == kNoStream);
  CHECK(plan.stream_id("j") == kNoStream);
  REQUIRE(plan.streams.size() == 5);
  CHECK(plan.streams[0].name == "s1");
  CHECK(plan.streams[1].name == "s2");
  CHECK(plan.streams[2].name == "totals");
  CHECK(plan.streams[3].name == "kept");
  CHECK(plan.streams[4].name == "scaled");

  const FragmentId mix = plan.fragment_id("mix");
  const FragmentId pairs = plan.fragment_id("pairs");
  CHECK(plan.streams[0].consumers == std::vector<FragmentId>{mix, pairs});
  CHECK(plan.streams[0].producer_class == OperatorClass::repeatable);
  // totals passes through the union, kept does not.
  CHECK(plan.streams[2].producer_class == OperatorClass::arbitrary);
  CHECK(plan.streams[3].producer_class == OperatorClass::repeatable);
  CHECK(plan.streams[4].producer_class == OperatorClass::deterministic);
  CHECK(plan.streams[2].producer == mix);
  CHECK(plan.streams[4].producer == pairs);

  CHECK(plan.fragments[mix].klass == OperatorClass::arbitrary);
  CHECK(plan.fragments[pairs].klass == OperatorClass::deterministic);
  CHECK(plan.fragments[mix].inputs == std::vector<StreamId>{0, 1});
  // The join reads s2 first, so s2 is the first input of "pairs".
  CHECK(plan.fragments[pairs].inputs == std::vector<StreamId>{1, 0});
  CHECK(plan.fragments[pairs].upstream == std::vector<FragmentId>{1, 0});
  CHECK(plan.fragments[mix].outputs == std::vector<StreamId>{2, 3});
  CHECK(plan.fragments[mix].downstream == std::vector<FragmentId>{plan.fragment_id("out1")});
  CHECK(plan.fragments[0].downstream == std::vector<FragmentId>{mix, pairs});
  CHECK(plan.fragments[plan.fragment_id("out1")].inputs == std::vector<StreamId>{2, 3});
  CHECK(plan.fragments[plan.fragment_id("out1")].upstream == std::vector<FragmentId>{mix});
}

TEST_CASE("validate prefixes every problem with the item's place") {
  Topology t = default_topology();
  t.fragments[2].operators[0].window_ms = 0;
  CHECK(validate(t).at(0).rfind("built-in default: ", 0) == 0);
  t.fragments[2].operators[0].where = "net.toml:12";
  CHECK(validate(t).at(0).rfind("net.toml:12: ", 0) == 0);
  CHECK(contains(validate(t).at(0), "sum_per_key"));

  Topology s = default_topology();
  s.settings.batch_tuples = 0;
  s.settings.where = "net.toml:2";
  CHECK(validate(s).at(0).rfind("net.toml:2: [network] batch_tuples = 0", 0) == 0);
  // Without a place of its own an item falls back to the file.
  s.settings.where.clear();
  s.source_file = "net.toml";
  CHECK(validate(s).at(0).rfind("net.toml: ", 0) == 0);
}

TEST_CASE("validate rejects duplicate fragment, operator and stream names") {
  expect_single_problem([](Topology& t) { t.fragments[3].name = "filter"; },
                        {"sink 'filter'", "already used by a fragment"});
  expect_single_problem([](Topology& t) { t.fragments[2].operators[0].name = "keep_small"; },
                        {"operator 'keep_small'", "already used by an operator"});
  Topology t = default_topology();
  t.fragments[2].operators.push_back(op("second", OperatorKind::filter, {"small"}, "totals"));
  const auto problems = validate(t);
  CHECK(has_problem(problems, {"operator 'second'", "stream 'totals' is already produced by operator 'sum_per_key'",
                               "exactly one producer"}));
}

TEST_CASE("validate rejects input streams nobody produces and streams nobody reads") {
  expect_single_problem([](Topology& t) { t.fragments[3].sink_inputs = {"totals", "ghost"}; },
                        {"sink 'sink'", "input stream 'ghost' is produced by no source or operator"});
  expect_single_problem(
      [](Topology& t) { t.fragments[1].operators.push_back(op("extra", OperatorKind::map, {"raw"}, "unused")); },
      {"operator 'extra'", "stream 'unused' is read by no operator or sink"});
  expect_single_problem([](Topology& t) { t.fragments[3].sink_inputs = {"totals", "totals"}; },
                        {"sink 'sink'", "reads stream 'totals' twice"});
}

TEST_CASE("validate rejects cycles between fragments and between the operators of a fragment") {
  Topology t = default_topology();
  // filter also reads the aggregate's output: filter -> aggregate -> filter.
  t.fragments[1].operators[0] = op("keep_small", OperatorKind::union_op, {"raw", "back"}, "small");
  t.fragments[2].operators.push_back(op("echo", OperatorKind::map, {"small"}, "back"));
  auto problems = validate(t);
  INFO(joined(problems));
  CHECK(has_problem(problems, {"fragments form a cycle: 'filter' -> 'aggregate' -> 'filter'"}));

  Topology u = default_topology();
  u.fragments[1].operators = {op("merge", OperatorKind::union_op, {"raw", "y"}, "x"),
                              op("loop", OperatorKind::filter, {"x"}, "y"),
                              op("out", OperatorKind::map, {"x"}, "small")};
  problems = validate(u);
  INFO(joined(problems));
  REQUIRE(problems.size() == 1);
  CHECK(has_problem(problems, {"operators of fragment 'filter' form a cycle", "'merge' -> 'loop' -> 'merge'"}));

  Topology self = default_topology();
  self.fragments[1].operators = {op("me", OperatorKind::union_op, {"raw", "mine"}, "mine"),
                                 op("out", OperatorKind::map, {"mine"}, "small")};
  CHECK(has_problem(validate(self), {"form a cycle", "'me' -> 'me'"}));
}

TEST_CASE("validate checks operator port counts") {
  Topology none = default_topology();
  none.fragments[1].operators[0].inputs = {};
  CHECK(has_problem(validate(none), {"operator 'keep_small'", "has 0 inputs; a filter reads exactly 1"}));
  Topology t = union_join_topology();
  t.fragments[3].operators[0].inputs = {"s1"};
  CHECK(has_problem(validate(t), {"operator 'pair'", "has 1 inputs; a join reads exactly 2"}));
  t = union_join_topology();
  t.fragments[2].operators[1].inputs = {"s1"};
  t.fragments[3].operators[0].inputs = {"s1", "s2"};
  CHECK(has_problem(validate(t), {"operator 'merge'", "a union reads at least 2"}));
  t = union_join_topology();
  t.fragments[2].operators[0].inputs = {"u", "s2"};
  CHECK(has_problem(validate(t), {"operator 'agg'", "has 2 inputs; a aggregate reads exactly 1"}));
  t = union_join_topology();
  t.fragments[2].operators[1].inputs = {"s1", "s2", "s1"};
  CHECK(has_problem(validate(t), {"operator 'merge'", "reads stream 's1' twice"}));
}

TEST_CASE("validate checks windows and join windows") {
  auto agg = [](Topology& t) -> OperatorSpec& { return t.fragments[2].operators[0]; };
  expect_single_problem([&](Topology& t) { agg(t).window_ms = 0; }, {"window_ms = 0: must be > 0"});
  expect_single_problem([&](Topology& t) { agg(t).slide_ms = -5; }, {"slide_ms = -5: must be > 0"});
  expect_single_problem([&](Topology& t) { agg(t).window_ms = 210; }, {"window_ms = 210 is not a multiple of slide_ms = 20"});
  expect_single_problem([&](Topology& t) { agg(t).slide_ms = 1, agg(t).window_ms = 20000; }, {"more than 10000 windows"});
  Topology t = union_join_topology();
  t.fragments[3].operators[0].join_window_ms = -1;
  CHECK(has_problem(validate(t), {"operator 'pair'", "window_ms = -1: must be >= 0"}));
  t.fragments[3].operators[0].join_window_ms = 0;
  CHECK(validate(t).empty());
}

TEST_CASE("validate checks source rates, key counts and value distributions") {
  auto src = [](Topology& t) -> SourceSpec& { return t.fragments[0].source; };
  expect_single_problem([&](Topology& t) { src(t).rate_tps = 0; }, {"source 'source'", "rate_tps = 0: must be > 0"});
  expect_single_problem([&](Topology& t) { src(t).rate_tps = 2e7; }, {"rate_tps = 20000000", "<= 10000000"});
  expect_single_problem([&](Topology& t) { src(t).rate_tps = std::nan(""); }, {"rate_tps = nan"});
  expect_single_problem([&](Topology& t) { src(t).key_count = 0; }, {"key_count = 0: must be >= 1"});
  expect_single_problem([&](Topology& t) { src(t).values = {DistributionKind::uniform, 5, 5}; },
                        {"uniform(5, 5)", "max > min"});
  expect_single_problem([&](Topology& t) { src(t).values = {DistributionKind::normal, 50, -1}; },
                        {"normal(50, -1)", "stddev >= 0"});
  expect_single_problem([&](Topology& t) { src(t).values = {DistributionKind::exponential, 0, 0}; },
                        {"exponential(0)", "mean > 0"});
  Topology ok = default_topology();
  src(ok).values = {DistributionKind::normal, 50, 0};
  CHECK(validate(ok).empty());
  src(ok).rate_tps = 10'000'000.0;
  CHECK(validate(ok).empty());
}

TEST_CASE("validate needs at least one source and one sink") {
  Topology t = default_topology();
  t.fragments.erase(t.fragments.begin() + 3);
  auto problems = validate(t);
  CHECK(has_problem(problems, {"no sink"}));
  CHECK(has_problem(problems, {"stream 'totals' is read by no operator or sink"}));
  t = default_topology();
  t.fragments.erase(t.fragments.begin());
  problems = validate(t);
  CHECK(has_problem(problems, {"no source"}));
  CHECK(has_problem(problems, {"input stream 'raw' is produced by no source or operator"}));
  Topology empty_fragment = default_topology();
  empty_fragment.fragments[1].operators.clear();
  CHECK(has_problem(validate(empty_fragment), {"fragment 'filter'", "has no operators"}));
}

TEST_CASE("validate checks every network setting's range") {
  struct Case {
    std::function<void(Settings&)> change;
    const char* message;
  };
  const std::vector<Case> cases{
      {[](Settings& s) { s.duration_s = 0; }, "duration_s = 0"},
      {[](Settings& s) { s.duration_s = INFINITY; }, "duration_s = inf"},
      {[](Settings& s) { s.batch_tuples = 0; }, "batch_tuples = 0: must be in 1..100000"},
      {[](Settings& s) { s.batch_tuples = 100'001, s.inflight_tuples_max = 200'000, s.input_queue_tuples_max = 200'000; },
       "batch_tuples = 100001"},
      {[](Settings& s) { s.batch_flush_ms = 0; }, "batch_flush_ms = 0"},
      {[](Settings& s) { s.heartbeat_interval_ms = 0; }, "heartbeat_interval_ms = 0"},
      {[](Settings& s) { s.failure_timeout_ms = 10; }, "failure_timeout_ms = 10: must be > heartbeat_interval_ms (10)"},
      {[](Settings& s) { s.ack_interval_ms = -1; }, "ack_interval_ms = -1"},
      {[](Settings& s) { s.checkpoint_interval_ms = 0; }, "checkpoint_interval_ms = 0"},
      {[](Settings& s) { s.checkpoint_chunk_bytes = 1023; }, "checkpoint_chunk_bytes = 1023"},
      {[](Settings& s) { s.output_queue_tuples_max = 0; }, "output_queue_tuples_max = 0: must be >= 1"},
      {[](Settings& s) { s.input_queue_tuples_max = 0; }, "input_queue_tuples_max = 0: must be >= 1"},
      {[](Settings& s) { s.inflight_tuples_max = 99; }, "inflight_tuples_max = 99: must be >= batch_tuples (100)"},
      {[](Settings& s) { s.input_queue_tuples_max = 50'000; },
       "inflight_tuples_max = 100000: must be <= input_queue_tuples_max (50000), or a producer may send more than its consumer queues"},
      {[](Settings& s) { s.conservative_retention_ms = 0; }, "conservative_retention_ms = 0"},
      {[](Settings& s) { s.drain_timeout_s = -1; }, "drain_timeout_s = -1"},
      {[](Settings& s) { s.drain_quiet_s = 0; }, "drain_quiet_s = 0: must be a finite number of seconds > 0"},
      {[](Settings& s) { s.operator_cost_us_per_tuple = -1; }, "operator_cost_us_per_tuple = -1: must be a number of microseconds in [0, 100000]"},
      {[](Settings& s) { s.operator_cost_us_per_tuple = 1e9; }, "operator_cost_us_per_tuple = 1000000000: must be a number"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    expect_single_problem([&](Topology& t) { c.change(t.settings); }, {std::string("[network] ") + c.message});
  }
  Topology edge = default_topology();
  edge.settings.checkpoint_chunk_bytes = 1024;
  edge.settings.batch_tuples = 1;
  edge.settings.inflight_tuples_max = 1;
  edge.settings.failure_timeout_ms = 11;
  CHECK(validate(edge).empty());
}

TEST_CASE("validate checks every simulator setting's range") {
  struct Case {
    std::function<void(SimSettings&)> change;
    const char* message;
  };
  const std::vector<Case> cases{
      {[](SimSettings& s) { s.link_latency_ms = -0.1; }, "link_latency_ms = -0.1"},
      {[](SimSettings& s) { s.link_jitter_ms = -1; }, "link_jitter_ms = -1"},
      {[](SimSettings& s) { s.bandwidth_bytes_per_s = 0; }, "bandwidth_bytes_per_s = 0: must be a finite number > 0"},
      {[](SimSettings& s) { s.loss_ratio = 1.5; }, "loss_ratio = 1.5: must be a ratio in [0, 1]"},
      {[](SimSettings& s) { s.duplication_ratio = -0.5; }, "duplication_ratio = -0.5"},
      {[](SimSettings& s) { s.reorder_ratio = std::nan(""); }, "reorder_ratio = nan"},
      {[](SimSettings& s) { s.cpu_us_per_tuple = -1; }, "cpu_us_per_tuple = -1"},
      {[](SimSettings& s) { s.cpu_us_per_message = -1; }, "cpu_us_per_message = -1"},
      {[](SimSettings& s) { s.node_capacity = 0; }, "node_capacity = 0"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    expect_single_problem([&](Topology& t) { c.change(t.sim); }, {std::string("[sim] ") + c.message});
  }
  Topology edge = default_topology();
  edge.sim.loss_ratio = 1.0;
  edge.sim.link_latency_ms = 0;
  edge.sim.cpu_us_per_tuple = 0;
  CHECK(validate(edge).empty());
}

TEST_CASE("validate refuses HA modes and standby endpoints on sources and sinks") {
  expect_single_problem([](Topology& t) { t.fragments[0].ha = HaMode::passive; },
                        {"source 'source'", "ha = passive", "never get standbys"});
  expect_single_problem([](Topology& t) { t.fragments[3].ha = HaMode::upstream; }, {"sink 'sink'", "never get standbys"});
  expect_single_problem([](Topology& t) { t.fragments[3].standby_endpoint = "tcp://127.0.0.1:*"; },
                        {"sink 'sink'", "standby_endpoint"});
}

TEST_CASE("validate checks endpoint syntax and refuses an endpoint used by two nodes") {
  for (const char* bad : {"127.0.0.1:5000", "tcp://127.0.0.1", "tcp://:5000", "tcp://host:0", "tcp://host:70000",
                          "tcp://host:50a", "ipc:///tmp/x", "tcp://ho st:1"}) {
    INFO(bad);
    expect_single_problem([&](Topology& t) { t.fragments[1].endpoint = bad; },
                          {"fragment 'filter'", std::string("endpoint '") + bad + "' must look like tcp://HOST:PORT"});
  }
  Topology ok = default_topology();
  ok.fragments[0].endpoint = "tcp://127.0.0.1:*";
  ok.fragments[1].endpoint = "tcp://127.0.0.1:*";
  ok.fragments[2].endpoint = "tcp://[::1]:6000";
  ok.fragments[2].standby_endpoint = "tcp://node-2.example:6001";
  INFO(joined(validate(ok)));
  CHECK(validate(ok).empty());

  expect_single_problem(
      [](Topology& t) {
        t.fragments[1].endpoint = "tcp://10.0.0.1:7000";
        t.fragments[2].standby_endpoint = "tcp://10.0.0.1:7000";
      },
      {"fragment 'aggregate' standby_endpoint 'tcp://10.0.0.1:7000' is already used by the fragment 'filter' endpoint"});
}

TEST_CASE("validate checks names and operator parameters") {
  expect_single_problem([](Topology& t) { t.fragments[1].name = "filter.backup"; }, {"the name must be 1 to 64 letters"});
  Topology nameless = default_topology();
  nameless.fragments[2].operators[0].output = "";
  CHECK(has_problem(validate(nameless), {"operator 'sum_per_key'", "has no output stream"}));
  Topology t = union_join_topology();
  t.fragments[3].operators[1].map_key_modulo = -2;
  CHECK(has_problem(validate(t), {"operator 'scale'", "key_modulo = -2"}));
  expect_single_problem([](Topology& t2) { t2.name = "bad name"; }, {"[network] name = 'bad name'"});
}

TEST_CASE("validate reports several problems at once") {
  Topology t = default_topology();
  t.settings.batch_tuples = 0;
  t.sim.loss_ratio = 2;
  t.fragments[0].source.rate_tps = -1;
  t.fragments[2].operators[0].slide_ms = 0;
  t.fragments[3].sink_inputs = {"totals", "ghost"};
  const auto problems = validate(t);
  INFO(joined(problems));
  CHECK(problems.size() == 5);
  CHECK(has_problem(problems, {"batch_tuples = 0"}));
  CHECK(has_problem(problems, {"loss_ratio = 2"}));
  CHECK(has_problem(problems, {"rate_tps = -1"}));
  CHECK(has_problem(problems, {"slide_ms = 0"}));
  CHECK(has_problem(problems, {"'ghost'"}));
}

TEST_CASE("an approach with a coordinator adds one node of no fragment, after every replica") {
  const ApproachCatalog catalog = coordinated_catalog(static_cast<HaMode>(201));
  Topology t = default_topology();
  t.settings.ha = static_cast<HaMode>(201);
  const Plan plan = make_plan(t, catalog);
  // Fragments' nodes keep their ids: primaries 0..3, the spares 4 and 5, then the coordinator.
  REQUIRE(plan.nodes.size() == 7);
  CHECK(plan.nodes[4].name == "filter.spare");
  CHECK(plan.nodes[5].name == "aggregate.spare");
  CHECK(plan.coordinator == 6);
  CHECK(plan.nodes[6].name == kCoordinatorNodeName);
  CHECK(plan.nodes[6].id == 6);
  CHECK(plan.nodes[6].fragment == kNoFragment);
  CHECK_FALSE(plan.nodes[6].standby);
  CHECK(plan.node_id("coordinator") == 6);
  CHECK_FALSE(plan.runs_fragment(6));
  for (NodeId n = 0; n < 6; ++n) CHECK(plan.runs_fragment(n));
  for (const PlanFragment& f : plan.fragments) CHECK_FALSE(f.is_replica(6));

  // One fragment using it is enough; none: no coordinator.
  Topology one = default_topology();
  one.fragments[2].ha = static_cast<HaMode>(201);
  const Plan partial = make_plan(one, catalog);
  REQUIRE(partial.nodes.size() == 6);
  CHECK(partial.coordinator == 5);
  CHECK(partial.nodes[5].name == kCoordinatorNodeName);
  CHECK(make_plan(default_topology(), catalog).coordinator == kNoNode);
}

TEST_CASE("no fragment may take the coordinator's name when the network needs a coordinator") {
  const ApproachCatalog catalog = coordinated_catalog(static_cast<HaMode>(201));
  Topology t = default_topology();
  t.settings.ha = static_cast<HaMode>(201);
  t.fragments[1].name = "coordinator";
  const auto problems = validate(t, catalog);
  INFO(joined(problems));
  REQUIRE(problems.size() == 1);
  CHECK(has_problem(problems, {"'coordinator'", "coordinator's", "rename"}));
  // Without such an approach the name is free.
  t.settings.ha = HaMode::passive;
  CHECK(validate(t, catalog).empty());
}
