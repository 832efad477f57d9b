// Topology files (config/topology_file.h): the example networks, error messages that name
// file:line and list what is allowed, several problems at once, the exact write/parse round
// trip of the effective config, and command-line overrides.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/topology_file.h"
#include "protocols/plan.h"
#include "protocols/topology_builders.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

const std::string kFileNetworks = std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/";

// A valid network; tests put their own lines before it or into its operator.
const std::string kMinimal = R"(
[[source]]
name = "src"
stream = "raw"

[[fragment]]
name = "work"

[[fragment.operator]]
name = "keep"
type = "filter"
input = "raw"
output = "kept"
where = "value < 80"

[[sink]]
name = "out"
input = "kept"
)";

TopologyLoad parse(const std::string& text) { return parse_topology(text, "t.toml"); }

// The minimal network with `lines` added to the operator keep (whose table ends at line 14).
TopologyLoad parse_with_operator_lines(const std::string& lines) {
  std::string text = kMinimal;
  const std::string anchor = "where = \"value < 80\"\n";
  text.insert(text.find(anchor) + anchor.size(), lines);
  return parse(text);
}

// kMinimal with one piece of text replaced.
std::string minimal_with(const std::string& from, const std::string& to) {
  std::string text = kMinimal;
  text.replace(text.find(from), from.size(), to);
  return text;
}

// Every knob changed from its default, with doubles that need all their digits.
Topology every_knob_changed() {
  Topology t;
  t.name = "every-knob.v2";
  Settings& s = t.settings;
  s.seed = 987654321987654321ull;
  s.duration_s = 12.345;
  s.ha = HaMode::upstream;
  s.batch_tuples = 250;
  s.batch_flush_ms = 7;
  s.heartbeat_interval_ms = 15;
  s.failure_timeout_ms = 95;
  s.ack_interval_ms = 33;
  s.checkpoint_interval_ms = 444;
  s.checkpoint_mode = CheckpointMode::delta;
  s.checkpoint_chunk_bytes = 65536;
  s.output_queue_tuples_max = 123456;
  s.input_queue_tuples_max = 54321;
  s.inflight_tuples_max = 7777;
  s.queue_full_policy = QueueFullPolicy::error;
  s.determinants = false;
  s.trimming = TrimmingRule::conservative;
  s.conservative_retention_ms = 3333;
  s.drain_timeout_s = 0.1 + 0.2;
  s.drain_quiet_s = 1.25;
  s.operator_cost_us_per_tuple = 12.5;
  SimSettings& m = t.sim;
  m.link_latency_ms = 0.3;
  m.link_jitter_ms = 1.0 / 3.0;
  m.bandwidth_bytes_per_s = 123456789.5;
  m.loss_ratio = 0.01;
  m.duplication_ratio = 0.002;
  m.reorder_ratio = 1e-5;
  m.cpu_us_per_tuple = 3.25;
  m.cpu_us_per_message = 0;
  m.node_capacity = 0.75;

  LinkSettings& l = t.links.defaults;
  l.latency_ms = 20.5;
  l.jitter_ms = 1.0 / 3.0;
  l.loss_ratio = 0.01;
  l.duplication_ratio = 0.001;
  l.bandwidth_bytes_per_s = 12.5e6;
  l.queue_messages_max = 500;
  l.queue_bytes_max = 1 << 20;
  LinkSpec one_way;
  one_way.from = "f1";
  one_way.to = "f2";
  one_way.both_ways = false;
  one_way.settings.latency_ms = 0.25;
  one_way.settings.queue_messages_max = 7;
  LinkSpec hosts;
  hosts.from_host = "east";
  hosts.to_host = "west";
  hosts.settings.loss_ratio = 0.0;
  t.links.links = {one_way, hosts};

  FragmentSpec a = source("a", "sa");
  a.ha = HaMode::none;
  a.host = "east";
  a.source.rate_tps = 1234.5;
  a.source.key_count = 3;
  a.source.values = {DistributionKind::normal, -5.5, 2.25};
  a.source.integer_values = false;
  a.endpoint = "tcp://127.0.0.1:6001";
  FragmentSpec b = source("b", "sb");
  b.source.rate_tps = 1000.0 / 3.0;
  b.source.values = {DistributionKind::exponential, 7.125, 100.0};

  OperatorSpec filter = op("drop_two", OperatorKind::filter, {"sa"}, "fa");
  filter.filter_field = Field::key;
  filter.filter_op = CompareOp::ne;
  filter.filter_constant = 2;
  OperatorSpec map = op("flip", OperatorKind::map, {"fa"}, "fm");
  map.map_scale = -1.5;
  map.map_offset = 1e20;
  map.map_key_modulo = 5;
  FragmentSpec f1 = fragment("f1", {filter, map, op("merge", OperatorKind::union_op, {"fm", "sb"}, "fu")});
  f1.ha = HaMode::passive;
  f1.endpoint = "tcp://127.0.0.1:6002";
  f1.standby_endpoint = "tcp://localhost:*";

  OperatorSpec agg = op("biggest", OperatorKind::aggregate, {"fu"}, "agg");
  agg.function = AggregateFunction::max;
  agg.window_ms = 300;
  agg.slide_ms = 30;
  agg.group_by_key = false;
  OperatorSpec join = op("pair", OperatorKind::join, {"sb", "sa"}, "j");
  join.join_window_ms = 0;
  join.combine = JoinCombine::right;
  FragmentSpec f2 = fragment("f2", {agg, join});

  FragmentSpec k = sink("k", {"agg", "j"});
  k.host = "west";
  k.endpoint = "tcp://127.0.0.1:*";
  t.fragments = {a, b, f1, f2, k};
  return t;
}

}  // namespace

TEST_CASE("every example network parses and validates") {
  for (const char* name : {"default.toml", "chain.toml", "chain6.toml", "union.toml", "join.toml", "union_join.toml"}) {
    INFO(name);
    const TopologyLoad load = load_topology_file(kFileNetworks + name);
    INFO(joined(load.problems));
    CHECK(load.problems.empty());
    REQUIRE(load.topology);
    CHECK(load.topology->source_file == kFileNetworks + name);
    CHECK(std::string(name) == load.topology->name + ".toml");
    CHECK(make_plan(*load.topology).fragments.size() == load.topology->fragments.size());
  }
}

TEST_CASE("default.toml is the built-in default network written out") {
  const TopologyLoad load = load_topology_file(kFileNetworks + "default.toml");
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  CHECK(without_places(*load.topology) == without_places(default_topology()));
  // The line of the [[fragment.operator]] header of sum_per_key.
  CHECK(load.topology->fragments[2].operators[0].where == kFileNetworks + "default.toml:73");
}

TEST_CASE("the whole file in docs/TOPOLOGY.md is a valid topology") {
  std::ifstream in(std::string(HAPAIR_SOURCE_DIR) + "/docs/TOPOLOGY.md");
  std::ostringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const auto start = text.find("```toml\n");
  REQUIRE(start != std::string::npos);
  const auto end = text.find("```", start + 8);
  const TopologyLoad load = parse_topology(text.substr(start + 8, end - start - 8), "TOPOLOGY.md");
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  const Plan plan = make_plan(*load.topology);
  CHECK(plan.fragments.at(plan.fragment_id("filter")).ha == HaMode::passive);
  CHECK(plan.fragments.at(plan.fragment_id("aggregate")).ha == HaMode::active);
  CHECK(load.topology->fragments.at(3).sink_inputs == std::vector<std::string>{"totals"});
}

TEST_CASE("the example networks have the shapes their comments describe") {
  const auto chain = load_topology_file(kFileNetworks + "chain.toml");
  REQUIRE(chain.topology);
  const Plan c = make_plan(*chain.topology);
  REQUIRE(c.fragments.size() == 4);
  CHECK(c.spec(1).operators.at(0).kind == OperatorKind::filter);
  CHECK(c.spec(2).operators.at(0).kind == OperatorKind::map);
  CHECK(c.spec(2).operators.at(0).map_key_modulo == 4);

  const auto u = load_topology_file(kFileNetworks + "union.toml");
  REQUIRE(u.topology);
  const Plan up = make_plan(*u.topology);
  CHECK(up.streams.at(up.stream_id("merged")).producer_class == OperatorClass::arbitrary);
  CHECK(up.spec(up.fragment_id("merge")).operators.at(0).inputs == std::vector<std::string>{"s1", "s2"});
  CHECK(up.spec(up.fragment_id("s2")).source.values.kind == DistributionKind::normal);

  const auto j = load_topology_file(kFileNetworks + "join.toml");
  REQUIRE(j.topology);
  const Plan jp = make_plan(*j.topology);
  CHECK(jp.fragments.at(jp.fragment_id("join")).klass == OperatorClass::deterministic);
  CHECK(jp.spec(jp.fragment_id("join")).operators.at(0).join_window_ms == 20);

  const auto uj = load_topology_file(kFileNetworks + "union_join.toml");
  REQUIRE(uj.topology);
  const Plan p = make_plan(*uj.topology);
  CHECK(p.fragments.size() == 6);
  CHECK(p.fragments.at(p.fragment_id("merge")).klass == OperatorClass::arbitrary);
  CHECK(p.fragments.at(p.fragment_id("pair")).klass == OperatorClass::deterministic);
  CHECK(p.streams.at(p.stream_id("counts")).producer_class == OperatorClass::arbitrary);
  CHECK(p.streams.at(p.stream_id("pairs")).producer_class == OperatorClass::deterministic);
  CHECK(p.stream_id("merged") == kNoStream);  // internal to the merge fragment
  CHECK(p.streams.at(p.stream_id("s1")).consumers ==
        std::vector<FragmentId>{p.fragment_id("merge"), p.fragment_id("pair")});
}

TEST_CASE("an unknown key names file and line and lists the allowed keys") {
  const TopologyLoad load = parse("[network]\nname = \"x\"\nrate = 5\n" + kMinimal);
  REQUIRE_FALSE(load.topology);
  REQUIRE(load.problems.size() == 1);
  CHECK(contains(load.problems[0], "t.toml:3: unknown key 'rate' in [network]; allowed keys: name, seed, duration_s, ha,"));
  CHECK(contains(load.problems[0], "drain_timeout_s"));

  const TopologyLoad source = parse("[[source]]\nname = \"s\"\nstream = \"raw\"\nrate = 5\n" + kMinimal);
  CHECK(has_problem(source.problems,
                    {"t.toml:4: unknown key 'rate' in source 's'; allowed keys: name, stream, rate_tps, key_count, values"}));
  const TopologyLoad fragment = parse(minimal_with("name = \"work\"\n", "name = \"work\"\nfragment = \"work\"\n"));
  CHECK(has_problem(fragment.problems, {"t.toml:8: unknown key 'fragment' in fragment 'work'; allowed keys: name, ha,",
                                        "and its operators as [[fragment.operator]]"}));
}

TEST_CASE("an operator key of another operator type is refused with that type's keys") {
  const TopologyLoad load = parse_with_operator_lines("window_ms = 100\n");
  INFO(joined(load.problems));
  REQUIRE(load.problems.size() == 1);
  CHECK(contains(load.problems[0], "t.toml:15: key 'window_ms' in operator 'keep' does not apply to a filter operator; "
                                   "allowed keys for a filter: name, type, input, inputs, output, where"));
}

TEST_CASE("an unknown enum value lists the allowed values") {
  auto problems = parse("[network]\nha = \"pasive\"\ncheckpoint_mode = \"half\"\n" + kMinimal).problems;
  INFO(joined(problems));
  CHECK(problems.size() == 2);
  CHECK(has_problem(problems,
                    {"t.toml:2: [network] ha = \"pasive\": unknown value; allowed values: none, amnesia, upstream, passive, active, hybrid"}));
  CHECK(has_problem(problems, {"t.toml:3: [network] checkpoint_mode = \"half\": unknown value; allowed values: full, delta"}));

  problems = parse("[[fragment]]\nname = \"extra\"\nha = \"sometimes\"\n" + kMinimal).problems;
  CHECK(has_problem(problems, {"t.toml:3: fragment 'extra' ha = \"sometimes\"", "allowed values: default, none, amnesia, upstream, passive, active, hybrid"}));

  problems = parse(minimal_with("type = \"filter\"", "type = \"sort\"")).problems;
  INFO(joined(problems));
  CHECK(has_problem(problems, {"type = \"sort\": unknown value; allowed values: filter, map, union, aggregate, join"}));

  problems = parse_with_operator_lines("").problems;
  CHECK(problems.empty());
  problems = parse(R"toml(
[[source]]
name = "src"
stream = "raw"
values = "zipf(1, 2)"
[[fragment]]
name = "work"
[[fragment.operator]]
name = "sum"
type = "aggregate"
input = "raw"
output = "kept"
function = "median"
group_by = "value"
[[sink]]
name = "out"
input = "kept"
)toml")
                 .problems;
  INFO(joined(problems));
  CHECK(has_problem(problems, {"t.toml:5:", "unknown distribution 'zipf'; allowed values: uniform, normal, exponential"}));
  CHECK(has_problem(problems, {"t.toml:13:", "function = \"median\": unknown value; allowed values: count, sum, avg, min, max"}));
  CHECK(has_problem(problems, {"t.toml:14:", "group_by = \"value\": unknown value; allowed values: key, none"}));
}

TEST_CASE("a value of the wrong type says what was expected") {
  auto problems = parse("[network]\nbatch_tuples = 1.5\nduration_s = \"long\"\nseed = -3\nname = 7\n" + kMinimal).problems;
  INFO(joined(problems));
  CHECK(problems.size() == 4);
  CHECK(has_problem(problems, {"t.toml:2: [network] batch_tuples = 1.5: expected a whole number"}));
  CHECK(has_problem(problems, {"t.toml:3: [network] duration_s = \"long\": expected a number"}));
  CHECK(has_problem(problems, {"t.toml:4: [network] seed = -3: expected a whole number from 0 to 2^64-1"}));
  CHECK(has_problem(problems, {"t.toml:5: [network] name = 7: expected a string in quotes"}));
  problems = parse("[network]\ndeterminants = \"yes\"\n" + kMinimal).problems;
  CHECK(has_problem(problems, {"t.toml:2:", "expected true or false"}));
  problems = parse(minimal_with("input = \"raw\"", "input = [\"raw\"]")).problems;
  CHECK(has_problem(problems, {"t.toml:12: operator 'keep' input = ", "expected a stream name in quotes"}));
  problems = parse(minimal_with("input = \"raw\"", "inputs = [\"raw\", 3]")).problems;
  CHECK(has_problem(problems, {"t.toml:12: operator 'keep' inputs = ", "expected a list of stream names, like [\"a\", \"b\"]"}));
}

TEST_CASE("TOML syntax errors name file, line and column") {
  const auto duplicate = parse("[network]\nseed = 1\nseed = 2\n" + kMinimal).problems;
  INFO(joined(duplicate));
  REQUIRE(duplicate.size() == 1);
  CHECK(contains(duplicate[0], "t.toml:3: not valid TOML: "));
  CHECK(contains(duplicate[0], "seed"));
  CHECK(contains(duplicate[0], "(column "));
  const auto tables = parse("[network]\n[network]\n" + kMinimal).problems;
  CHECK(has_problem(tables, {"t.toml:2: not valid TOML: "}));
  CHECK(has_problem(parse("[network\n" + kMinimal).problems, {"t.toml:1: not valid TOML: "}));
  CHECK(has_problem(parse("[network]\njust words\n" + kMinimal).problems, {"t.toml:2: not valid TOML: "}));
  CHECK(has_problem(parse("[network]\nname = default\n" + kMinimal).problems, {"t.toml:2: not valid TOML: "}));
}

TEST_CASE("parse and validate problems are reported together, each with its line") {
  const std::string text = R"([network]
batch_tuples = "many"
colour = "blue"

[[source]]
name = "src"
stream = "raw"
rate_tps = 0

[[fragment]]
name = "work"

[[fragment.operator]]
name = "sum"
type = "aggregate"
input = "raw"
output = "kept"
window_ms = 210

[[sink]]
name = "out"
input = "kept"
)";
  const TopologyLoad load = parse(text);
  INFO(joined(load.problems));
  CHECK_FALSE(load.topology);
  CHECK(load.problems.size() == 4);
  CHECK(has_problem(load.problems, {"t.toml:2:", "batch_tuples = \"many\""}));
  CHECK(has_problem(load.problems, {"t.toml:3:", "unknown key 'colour'"}));
  CHECK(has_problem(load.problems, {"t.toml:5:", "source 'src'", "rate_tps = 0"}));
  CHECK(has_problem(load.problems, {"t.toml:13:", "operator 'sum'", "not a multiple of slide_ms"}));
  // Parse problems come in the order of their lines, whatever the order of the keys.
  CHECK(contains(load.problems[0], "t.toml:2:"));
  CHECK(contains(load.problems[1], "t.toml:3:"));
}

TEST_CASE("structural mistakes in a file are reported with their lines") {
  auto problems = parse("seed = 1\n" + kMinimal).problems;
  CHECK(has_problem(problems, {"t.toml:1: unknown key 'seed' at the top of the file; allowed tables: [network], [sim], [links], [[link]], [[source]]"}));
  problems = parse("[nodes]\nx = 1\n" + kMinimal).problems;
  INFO(joined(problems));
  REQUIRE(problems.size() == 1);  // the keys of an unknown table are not reported again
  CHECK(contains(problems[0], "t.toml:1: unknown table 'nodes' at the top of the file; allowed tables: [network], [sim], [links], [[link]], [[source]], "
                              "[[fragment]] (with its [[fragment.operator]]), [[sink]]"));
  problems = parse("[source]\nname = \"s\"\n").problems;
  CHECK(has_problem(problems, {"t.toml:1: 'source' must be an array of tables: write each one as [[source]]"}));
  problems = parse("network = 3\n" + kMinimal).problems;
  CHECK(has_problem(problems, {"t.toml:1: 'network' must be a table: write [network]"}));
  problems = parse("[[sink]]\nname = \"extra\"\nendpoint = \"tcp://127.0.0.1:*\"\n" + kMinimal).problems;
  CHECK(has_problem(problems, {"t.toml:1: sink 'extra' is missing the key 'input' or 'inputs'"}));
  problems = parse("[[sink]]\ninput = \"kept\"\n" + kMinimal).problems;
  CHECK(has_problem(problems, {"t.toml:1: [[sink]] is missing the key 'name'"}));
  problems = parse_with_operator_lines("inputs = [\"raw\", \"kept\"]\n").problems;
  CHECK(has_problem(problems, {"t.toml:15: operator 'keep': give either 'input' or 'inputs', not both"}));
  problems = parse(minimal_with("where = \"value < 80\"\n", "")).problems;
  CHECK(has_problem(problems, {"t.toml:9: operator 'keep' is missing the key 'where'"}));
  problems = parse(minimal_with("[[fragment.operator]]\n", "[fragment.operator]\n")).problems;
  CHECK(has_problem(problems, {"'fragment.operator' must be an array of tables: write each one as [[fragment.operator]]"}));
}

TEST_CASE("comments, blank lines, CRLF line ends and key order do not matter") {
  std::string text = "# a comment\n\n[network]   # trailing comment\n  seed = 7 # why not\nname=\"crlf\"\n" + kMinimal;
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const TopologyLoad load = parse(crlf);
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  CHECK(load.topology->settings.seed == 7);
  CHECK(load.topology->name == "crlf");
  CHECK(load.topology->settings.where == "t.toml:3");
  CHECK(load.topology->fragments.at(1).operators.at(0).filter_constant == 80);
}

TEST_CASE("fragments keep the order they are written in, whatever their kind") {
  const TopologyLoad load = parse("[[sink]]\nname = \"first\"\ninput = \"kept\"\n" + kMinimal);
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  REQUIRE(load.topology->fragments.size() == 4);
  CHECK(load.topology->fragments[0].name == "first");
  CHECK(load.topology->fragments[1].name == "src");
  CHECK(load.topology->fragments[2].name == "work");
  CHECK(load.topology->fragments[3].name == "out");
  CHECK(load.topology->fragments[2].where == "t.toml:9");
  CHECK(load.topology->fragments[2].operators.at(0).where == "t.toml:12");
}

TEST_CASE("filter conditions and value distributions accept their documented forms") {
  struct Where {
    const char* text;
    Field field;
    CompareOp op;
    double constant;
  };
  for (const Where& w : {Where{"value < 80", Field::value, CompareOp::lt, 80}, Where{"key != 3", Field::key, CompareOp::ne, 3},
                         Where{"value>=-2.5", Field::value, CompareOp::ge, -2.5}, Where{"key == 0", Field::key, CompareOp::eq, 0},
                         Where{"value <= 1e3", Field::value, CompareOp::le, 1000}, Where{"value > 7", Field::value, CompareOp::gt, 7}}) {
    INFO(w.text);
    const TopologyLoad load = parse(minimal_with("value < 80", w.text));
    INFO(joined(load.problems));
    REQUIRE(load.topology);
    const OperatorSpec& o = load.topology->fragments.at(1).operators.at(0);
    CHECK(o.filter_field == w.field);
    CHECK(o.filter_op == w.op);
    CHECK(o.filter_constant == w.constant);
  }
  for (const char* bad : {"colour < 3", "value << 3", "value < many", "value"}) {
    INFO(bad);
    const auto problems = parse(minimal_with("value < 80", bad)).problems;
    CHECK(has_problem(problems, {"t.toml:14: operator 'keep' where = ", "expected \"FIELD OP NUMBER\"",
                                 "fields: key, value; operators: <, <=, >, >=, ==, !="}));
  }

  auto load = parse(minimal_with("stream = \"raw\"\n", "stream = \"raw\"\nvalues = \"normal( 50 , 10 )\"\n"));
  REQUIRE(load.topology);
  CHECK(load.topology->fragments[0].source.values == ValueDistribution{DistributionKind::normal, 50, 10});
  for (const char* bad : {"\"uniform(1)\"", "\"normal(1, 2, 3)\"", "\"exponential(a)\"", "\"uniform 1, 2\"", "[1, 2]"}) {
    INFO(bad);
    const std::string t2 = minimal_with("stream = \"raw\"\n", std::string("stream = \"raw\"\nvalues = ") + bad + "\n");
    CHECK(has_problem(parse(t2).problems,
                      {"t.toml:5:", "expected \"uniform(MIN, MAX)\", \"normal(MEAN, STDDEV)\" or \"exponential(MEAN)\""}));
  }
}

TEST_CASE("a missing file is reported with its path") {
  const TopologyLoad load = load_topology_file("/nonexistent/dir/net.toml");
  CHECK_FALSE(load.topology);
  REQUIRE(load.problems.size() == 1);
  CHECK(contains(load.problems[0], "cannot open /nonexistent/dir/net.toml"));
}

TEST_CASE("writing and parsing the default network reproduces it exactly") {
  const Topology t = default_topology();
  const std::string text = write_topology(t);
  const TopologyLoad load = parse_topology(text, "effective.toml");
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  CHECK(without_places(*load.topology) == without_places(t));
  CHECK(load.topology->source_file == "effective.toml");
  // And writing it again gives the same text.
  CHECK(write_topology(*load.topology) == text);
}

TEST_CASE("writing and parsing reproduces a topology with every knob changed exactly") {
  const Topology t = every_knob_changed();
  INFO(joined(validate(t)));
  REQUIRE(validate(t).empty());
  // The test is only worth something if every setting really differs from its default.
  const Settings defaults;
  const SimSettings sim_defaults;
  CHECK(t.settings.seed != defaults.seed);
  CHECK(t.settings.drain_timeout_s != defaults.drain_timeout_s);
  CHECK(t.sim.node_capacity != sim_defaults.node_capacity);

  const std::string text = write_topology(t);
  INFO(text);
  const TopologyLoad load = parse_topology(text, "effective.toml");
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  const Topology back = without_places(*load.topology);
  CHECK(back.settings == t.settings);
  CHECK(back.sim == t.sim);
  CHECK(back.links == t.links);
  REQUIRE(back.fragments.size() == t.fragments.size());
  for (std::size_t i = 0; i < t.fragments.size(); ++i) {
    INFO(t.fragments[i].name);
    CHECK(back.fragments[i] == t.fragments[i]);
  }
  CHECK(back == t);
  CHECK(contains(text, "drain_timeout_s = 0.30000000000000004"));
  CHECK(contains(text, "seed = 987654321987654321"));
  CHECK(contains(text, "[[fragment]]\nname = \"f2\"\nha = \"default\"\n"));
}

TEST_CASE("a seed beyond a TOML integer is written in quotes and reads back exactly") {
  Topology t = default_topology();
  for (std::uint64_t seed : {std::uint64_t{9223372036854775807ull}, std::uint64_t{9223372036854775808ull},
                             std::uint64_t{18446744073709551615ull}}) {
    INFO(seed);
    t.settings.seed = seed;
    const std::string text = write_topology(t);
    const TopologyLoad load = parse_topology(text, "seed.toml");
    INFO(joined(load.problems));
    REQUIRE(load.topology);
    CHECK(load.topology->settings.seed == seed);
    CHECK(contains(text, seed > 9223372036854775807ull ? "seed = \"" + std::to_string(seed) + "\"\n"
                                                       : "seed = " + std::to_string(seed) + "\n"));
  }
  for (const char* bad : {"\"18446744073709551616\"", "\"-1\"", "\"12a\"", "\"\""}) {
    INFO(bad);
    CHECK(has_problem(parse(std::string("[network]\nseed = ") + bad + "\n" + kMinimal).problems,
                      {"t.toml:2: [network] seed = ", "expected a whole number from 0 to 2^64-1"}));
  }
}

TEST_CASE("an ha override makes every processing fragment run that mode") {
  Topology t = every_knob_changed();
  RunOverrides o;
  o.ha = HaMode::active;
  const auto problems = apply_overrides(t, o);
  INFO(joined(problems));
  REQUIRE(problems.empty());
  CHECK(t.settings.ha == HaMode::active);
  CHECK_FALSE(t.fragments[2].ha.has_value());
  CHECK(t.fragments[0].ha == HaMode::none);  // sources keep theirs: they never get standbys
  const Plan plan = make_plan(t);
  CHECK(plan.fragments[2].ha == HaMode::active);
  CHECK(plan.fragments[3].ha == HaMode::active);
  CHECK(plan.fragments[0].ha == HaMode::none);
  CHECK(plan.node_id("f1.backup") != kNoNode);
  CHECK(plan.node_id("f2.backup") != kNoNode);
}

TEST_CASE("duration, rate, seed and operator cost overrides apply and are re-validated") {
  Topology t = every_knob_changed();
  RunOverrides o;
  o.duration_s = 2.5;
  o.rate_tps = 500;
  o.seed = 99;
  o.operator_cost_us_per_tuple = 75;
  REQUIRE(apply_overrides(t, o).empty());
  CHECK(t.settings.operator_cost_us_per_tuple == 75);
  CHECK(t.settings.duration_s == 2.5);
  CHECK(t.settings.seed == 99);
  CHECK(t.fragments[0].source.rate_tps == 500);
  CHECK(t.fragments[1].source.rate_tps == 500);
  CHECK(t.settings.ha == HaMode::upstream);  // untouched without an ha override
  CHECK(t.fragments[2].ha == HaMode::passive);

  RunOverrides bad;
  bad.rate_tps = 2e7;
  bad.duration_s = 0;
  bad.operator_cost_us_per_tuple = -5;
  const auto problems = apply_overrides(t, bad);
  INFO(joined(problems));
  CHECK(problems.size() == 4);  // two sources, the duration and the operator cost
  CHECK(has_problem(problems, {"operator_cost_us_per_tuple = -5", "(after the command-line overrides)"}));
  CHECK(has_problem(problems, {"source 'a'", "rate_tps = 20000000", "(after the command-line overrides)"}));
  CHECK(has_problem(problems, {"duration_s = 0"}));

  Topology d = default_topology();
  CHECK(apply_overrides(d, RunOverrides{}).empty());
  CHECK(without_places(d) == without_places(default_topology()));
}

TEST_CASE("the links and link tables read every key, and a network without them writes neither") {
  const TopologyLoad load = parse(R"([links]
latency_ms = 5
jitter_ms = 2
loss_ratio = 0.01

[[link]]
from = "src"
to = "work"
latency_ms = 20
bandwidth_bytes_per_s = 12500000
both_ways = false
)" + kMinimal);
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  const LinkTable& links = load.topology->links;
  CHECK(links.defaults.latency_ms == 5.0);
  CHECK(links.defaults.jitter_ms == 2.0);
  CHECK(links.defaults.loss_ratio == 0.01);
  CHECK(links.defaults.duplication_ratio == 0.0);
  REQUIRE(links.links.size() == 1);
  CHECK(links.links[0].where == "t.toml:6");
  CHECK(links.links[0].settings.latency_ms == 20.0);
  CHECK_FALSE(links.links[0].settings.jitter_ms.has_value());
  CHECK_FALSE(links.links[0].both_ways);
  CHECK_FALSE(contains(write_topology(default_topology()), "[links]"));
  CHECK_FALSE(contains(write_topology(default_topology()), "[[link]]"));
}

TEST_CASE("a bad link value names the table, the key, the value and the valid range") {
  const TopologyLoad load = parse(R"([links]
latency_ms = -1
loss_ratio = 1.5
queue_messages_max = 0

[[link]]
from = "src"
to = "nowhere"
jitter_ms = 70000

[[link]]
from = "src"
from_host = "east"
to = "work"

[[link]]
from_host = "east"
to_host = "west"

[[link]]
from = "src"
to = "work"
delay_ms = 3
bandwidth_bytes_per_s = "fast"
)" + kMinimal);
  const std::vector<std::string>& p = load.problems;
  INFO(joined(p));
  CHECK(has_problem(p, {"t.toml:1: [links] latency_ms = -1: must be a number of milliseconds in [0, 60000]"}));
  CHECK(has_problem(p, {"t.toml:1: [links] loss_ratio = 1.5: must be a ratio in [0, 1]"}));
  CHECK(has_problem(p, {"[links] queue_messages_max = 0: must be in 1..10000000"}));
  CHECK(has_problem(p, {"t.toml:6: [[link]] 'src' -> 'nowhere': 'nowhere' is neither a fragment nor a node of the network; allowed: src, work, out"}));
  CHECK(has_problem(p, {"t.toml:6: [[link]] 'src' -> 'nowhere' jitter_ms = 70000: must be a number of milliseconds in [0, 60000]"}));
  CHECK(has_problem(p, {"t.toml:11:", "give either from and to (node or fragment names) or from_host and to_host"}));
  // Nothing is pinned here, so hosts are left to a hosts file's placement (host_faults_test.cpp
  // checks a topology that pins nodes).
  CHECK_FALSE(has_problem(p, {"t.toml:16: [[link]] host 'east' -> host 'west': no node is pinned to host 'east'"}));
  CHECK(has_problem(p, {"t.toml:23: unknown key 'delay_ms' in [[link]]; allowed keys: from, to, from_host, to_host, both_ways, latency_ms"}));
  CHECK(has_problem(p, {"t.toml:24: [[link]] bandwidth_bytes_per_s = \"fast\": expected a number"}));
  const TopologyLoad small = parse("[links]\nlatency_ms = 1\nqueue_bytes_max = 100000\n" + kMinimal);
  CHECK(has_problem(small.problems, {"t.toml:1: [links] queue_bytes_max = 100000: must be > checkpoint_chunk_bytes (1048576), "
                                     "or a checkpoint chunk could never cross the link"}));
}

TEST_CASE("a link table may name a standby node of the approach its fragment runs") {
  CHECK(parse("[network]\nha = \"passive\"\n[[link]]\nfrom = \"work.backup\"\nto = \"out\"\nlatency_ms = 1\n" + kMinimal).problems.empty());
  const TopologyLoad spare = parse("[network]\nha = \"passive\"\n[[link]]\nfrom = \"work.spare\"\nto = \"out\"\n" + kMinimal);
  CHECK(has_problem(spare.problems, {"'work.spare' is neither a fragment nor a node of the network; allowed: src, work, work.backup, out"}));
}

TEST_CASE("the option --links sets the keys of the links table and is validated like them") {
  Topology t = default_topology();
  RunOverrides o;
  o.links = "latency_ms=20,jitter_ms=5,loss_ratio=0.01";
  CHECK(apply_overrides(t, o).empty());
  CHECK(t.links.defaults.latency_ms == 20.0);
  CHECK(t.links.defaults.jitter_ms == 5.0);
  CHECK(t.links.defaults.loss_ratio == 0.01);
  Topology u = default_topology();
  o.links = "latency_ms=-3";
  CHECK(has_problem(apply_overrides(u, o), {"[links] latency_ms = -3: must be a number of milliseconds in [0, 60000] (after the command-line overrides)"}));
  Topology v = default_topology();
  o.links = "delay=3";
  CHECK(has_problem(apply_overrides(v, o), {"--links: unknown key 'delay'; allowed keys: latency_ms, jitter_ms"}));
  Topology w = default_topology();
  o.links = "latency_ms=";
  CHECK(has_problem(apply_overrides(w, o), {"--links 'latency_ms=': expected KEY=VALUE pairs"}));
}

TEST_CASE("a live switch schedule: the switch tables and --switch, written back, bad input named with the valid choices") {
  const std::string ha = "[network]\nha = \"passive\"\nduration_s = 4.0\n";
  const std::string text = ha + kMinimal + "\n[[switch]]\nfragment = \"work\"\nto = \"active\"\nat_s = 1.5\n";
  const auto load = parse(text);
  INFO((load.problems.empty() ? std::string() : load.problems.front()));
  REQUIRE(load.topology);
  REQUIRE(load.topology->switches.size() == 1);
  CHECK(load.topology->switches[0].fragment == "work");
  CHECK(load.topology->switches[0].to == HaMode::active);
  CHECK(load.topology->switches[0].at_s == 1.5);
  // The effective config carries the schedule to every node.
  const auto again = parse(write_topology(*load.topology));
  REQUIRE(again.topology);
  CHECK(again.topology->switches == load.topology->switches);
  const Plan plan = make_plan(*again.topology);
  REQUIRE(plan.switches.size() == 1);
  CHECK(plan.switches[0].at_us == 1'500'000);
  CHECK(plan.scheduled_mode(plan.fragment_id("work"), 1'499'999) == std::nullopt);
  CHECK(plan.scheduled_mode(plan.fragment_id("work"), 1'500'000) == HaMode::active);
  CHECK(plan.next_switch_us(plan.fragment_id("work"), 0) == 1'500'000);

  // --switch NODE=APPROACH@SECONDS joins the same schedule.
  std::string error;
  const auto s = parse_switch_option("work=upstream@2.5", error);
  REQUIRE(s);
  CHECK(s->to == HaMode::upstream);
  CHECK(s->at_s == 2.5);
  CHECK_FALSE(parse_switch_option("work=fastest@2", error));
  CHECK(error.find("unknown approach 'fastest'") != std::string::npos);
  CHECK(error.find("passive") != std::string::npos);
  CHECK_FALSE(parse_switch_option("work@2", error));
  CHECK(error.find("NODE=APPROACH@SECONDS") != std::string::npos);

  // What validate() refuses: an approach that cannot be switched live (the valid ones named), a
  // fragment that does not exist, a time outside the run.
  Topology t = *load.topology;
  t.switches = {SwitchSpec{"work", HaMode::amnesia, 1.0, "--switch work=amnesia@1"}, SwitchSpec{"nowhere", HaMode::active, 1.0, ""},
                SwitchSpec{"work", HaMode::active, 9.0, ""}};
  const auto problems = validate(t);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].find("approach 'amnesia' cannot be switched to live; allowed: upstream, passive, active, hybrid") != std::string::npos);
  CHECK(problems[1].find("no operator fragment of that name; the network's: work") != std::string::npos);
  CHECK(problems[2].find("before duration_s = 4") != std::string::npos);
}
