// The workload operators in topology files: their knobs come from their traits (no code per type
// in the reader), are written back in effective configs and checked with every problem at once;
// the example networks are built into the binary by name.
#include <catch2/catch.hpp>

#include "config/builtin_networks.h"
#include "config/topology_file.h"
#include "protocols/plan.h"

using namespace hapair;

namespace {

const char* kWorkload = R"toml(
[network]
name = "workload_ops"
[[source]]
name = "bids"
stream = "bids"
[[fragment]]
name = "q"
[[fragment.operator]]
name = "euros"
type = "project"
input = "bids"
output = "priced"
key = "value"
key_divisor = 10
value = "key"
scale = 0.908
[[fragment.operator]]
name = "campaign"
type = "lookup"
input = "priced"
output = "by_campaign"
table = "hash"
range = 7
[[fragment.operator]]
name = "every"
type = "aggregate"
input = "by_campaign"
output = "counts"
function = "count"
window_ms = 100
slide_ms = 100
[[fragment.operator]]
name = "hottest"
type = "top"
input = "counts"
output = "hot"
[[fragment.operator]]
name = "q2"
type = "filter"
input = "bids"
output = "selected"
where = "key % 123 == 0"
[[sink]]
name = "sink"
inputs = ["hot", "selected"]
)toml";

}  // namespace

TEST_CASE("the workload operators' knobs are read from their traits, written back, and round-trip", "[topology][operators]") {
  const TopologyLoad load = parse_topology(kWorkload, "workload.toml");
  INFO((load.problems.empty() ? std::string() : load.problems.front()));
  REQUIRE(load.topology.has_value());
  const Topology& t = *load.topology;
  REQUIRE(validate(t).empty());
  const OperatorSpec& euros = t.fragments[1].operators[0];
  CHECK(euros.kind == OperatorKind::project);
  CHECK(operator_param(euros, "key") == 1);
  CHECK(operator_param(euros, "key_divisor") == 10);
  CHECK(operator_param(euros, "scale") == 0.908);
  CHECK(operator_param(euros, "offset") == 0);  // the default
  CHECK(operator_param(t.fragments[1].operators[1], "table") == 1);
  CHECK(t.fragments[1].operators[4].filter_modulo == 123);
  const std::string written = write_topology(t);
  CHECK(written.find("key = \"value\"") != std::string::npos);
  CHECK(written.find("table = \"hash\"") != std::string::npos);
  CHECK(written.find("table_size = 1000") != std::string::npos);  // every knob written, defaults too
  CHECK(written.find("where = \"key % 123 == 0\"") != std::string::npos);
  const TopologyLoad again = parse_topology(written, "again.toml");
  REQUIRE(again.topology.has_value());
  CHECK(write_topology(*again.topology) == written);
  const Plan plan = make_plan(t);
  CHECK(plan.fragments[1].klass == OperatorClass::deterministic);  // top's, the weakest of its operators
}

TEST_CASE("the workload operators' knobs are checked, every problem at once, naming the allowed values", "[topology][operators]") {
  std::string text = kWorkload;
  auto replace = [&](const std::string& a, const std::string& b) {
    const auto at = text.find(a);
    REQUIRE(at != std::string::npos);
    text.replace(at, a.size(), b);
  };
  const std::string good = text;
  replace("key = \"value\"", "key = \"price\"");
  replace("range = 7", "range = 2.5");
  const TopologyLoad load = parse_topology(text, "bad.toml");
  REQUIRE(load.problems.size() == 2);
  CHECK(load.problems[0].find("allowed values: key, value, constant") != std::string::npos);
  CHECK(load.problems[1].find("expected a whole number") != std::string::npos);
  // In range is validate()'s, every problem at once.
  text = good;
  replace("key_divisor = 10", "key_divisor = 0");
  replace("range = 7", "range = 0");
  const TopologyLoad out_of_range = parse_topology(text, "range.toml");
  const auto& problems = out_of_range.problems;  // reading validates too
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].find("key_divisor = 0: must be a whole number in [1,") != std::string::npos);
  CHECK(problems[1].find("range = 0: must be a whole number in [1,") != std::string::npos);
}

TEST_CASE("a top after an arrival-order union is refused: it needs its input in timestamp order", "[topology][operators]") {
  const std::string text = R"toml(
[network]
name = "bad_top"
[[source]]
name = "a"
stream = "a"
[[source]]
name = "b"
stream = "b"
[[fragment]]
name = "f"
[[fragment.operator]]
name = "both"
type = "union"
inputs = ["a", "b"]
output = "ab"
[[fragment.operator]]
name = "best"
type = "top"
input = "ab"
output = "out"
[[sink]]
name = "sink"
input = "out"
)toml";
  const TopologyLoad load = parse_topology(text, "bad_top.toml");
  const auto& problems = load.problems;  // reading validates too
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().find("a top needs an input in timestamp order, but 'ab' can go back in time") != std::string::npos);
}

TEST_CASE("the example networks are built into the binary by name, a file of that name first", "[topology]") {
  REQUIRE(builtin_network_text("union_join").has_value());
  const TopologyLoad load = load_topology_file("union_join");
  REQUIRE(load.topology.has_value());
  CHECK(load.topology->name == "union_join");
  CHECK(load.topology->source_file == "built-in network union_join");
  const TopologyLoad none = load_topology_file("no_such_network");
  REQUIRE(none.problems.size() == 1);
  CHECK(none.problems.front().find("no built-in network is called 'no_such_network'; built in: ") != std::string::npos);
  CHECK(builtin_network_names().find("merge_join") != std::string::npos);
}
