// `hapair plan --hosts FILE` (src/cli/plan_command.cpp, docs/HOSTS.md), run as the built binary:
// the placement table and its warnings with exit status 0, the same as JSON, and bad input (no
// hosts file, a bad one, a pin naming an unknown host) with exit status 2 and a clear message.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/shell_command.h"

using namespace hapair;

namespace {

testing::ShellResult run_hapair(const std::string& arguments, bool with_stderr = true) {
  return testing::run_shell(std::string(HAPAIR_BINARY) + " " + arguments + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

// A folder of this test process's own, removed at the end.
struct Scratch {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("hapair_plan_test-" + std::to_string(::getpid()));
  Scratch() { std::filesystem::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const auto path = dir / name;
    std::ofstream(path) << text;
    return path.string();
  }
};

const char* const kHosts = R"([defaults]
user = "root"
work_dir = "/tmp/hapair"

[[host]]
name = "h1"
address = "10.0.0.1"
labels = { rack = "r1" }

[[host]]
name = "h2"
address = "10.0.0.2"
labels = { rack = "r2" }

[[host]]
name = "h3"
address = "10.0.0.3"
labels = { rack = "r2" }
)";

}  // namespace

TEST_CASE("hapair plan prints where every node runs and exits 0, starting nothing", "[cli][hosts]") {
  const Scratch scratch;
  const std::string hosts = scratch.write("hosts.toml", kHosts);
  const testing::ShellResult c = run_hapair("plan --hosts " + hosts + " --ha passive", false);
  INFO(c.out);
  CHECK(c.status == 0);
  CHECK_THAT(c.out, Catch::Contains("network default, ha passive: 6 nodes on 3 hosts"));
  CHECK_THAT(c.out, Catch::Contains("node"));
  CHECK_THAT(c.out, Catch::Contains("endpoint"));
  // Every node has a line; the pairs are in different racks, so there is no warning.
  for (const char* node : {"source ", "filter ", "filter.backup ", "aggregate ", "aggregate.backup ", "sink "})
    CHECK_THAT(c.out, Catch::Contains(node));
  CHECK_THAT(c.out, Catch::Contains("tcp://10.0.0.1:7100"));
  CHECK_THAT(c.out, Catch::Contains("no primary shares a host or a rack with its standby"));
  CHECK_THAT(c.out, !Catch::Contains("warning"));
}

TEST_CASE("hapair plan --json gives the same placement as JSON, with the warnings", "[cli][hosts]") {
  const Scratch scratch;
  const std::string hosts = scratch.write("one.toml", "[[host]]\nname = \"solo\"\naddress = \"10.0.0.9\"\nuser = \"u\"\nwork_dir = \"/w\"\n");
  const testing::ShellResult c = run_hapair("plan --hosts " + hosts + " --ha active --json", false);
  INFO(c.out);
  REQUIRE(c.status == 0);
  const auto doc = nlohmann::json::parse(c.out);
  REQUIRE(doc["nodes"].size() == 6);
  CHECK(doc["nodes"][0]["node"] == "source");
  CHECK(doc["nodes"][0]["endpoint"] == "tcp://10.0.0.9:7100");
  CHECK(doc["nodes"][5]["endpoint"] == "tcp://10.0.0.9:7105");
  for (const auto& node : doc["nodes"]) CHECK(node["host"] == "solo");
  REQUIRE(doc["warnings"].size() == 2);  // filter's and aggregate's pairs share the one host
  CHECK_THAT(doc["warnings"][0].get<std::string>(), Catch::Contains("share host solo"));
}

TEST_CASE("hapair plan without a good hosts file or with a pin to an unknown host is bad input", "[cli][hosts][input]") {
  const Scratch scratch;
  const testing::ShellResult none = run_hapair("plan");
  CHECK(none.status == 2);
  CHECK_THAT(none.out, Catch::Contains("--hosts FILE is required"));

  const std::string bad = scratch.write("bad.toml", "[[host]]\nname = \"h1\"\nadress = \"10.0.0.1\"\n");
  const testing::ShellResult b = run_hapair("plan --hosts " + bad + " --ha pasive");
  INFO(b.out);
  CHECK(b.status == 2);
  CHECK_THAT(b.out, Catch::Contains("bad.toml:3: unknown key 'adress' in host 'h1' (did you mean 'address'?)"));
  CHECK_THAT(b.out, Catch::Contains("--ha 'pasive' is not an HA mode (did you mean 'passive'?)"));

  const std::string hosts = scratch.write("hosts.toml", kHosts);
  const std::string topology = scratch.write("pinned.toml", R"([network]
ha = "passive"

[[source]]
name = "src"
stream = "raw"

[[fragment]]
name = "work"
host = "h4"

[[fragment.operator]]
name = "keep"
type = "filter"
input = "raw"
output = "kept"
where = "value < 80"

[[sink]]
name = "out"
input = "kept"
)");
  const testing::ShellResult p = run_hapair("plan --hosts " + hosts + " --topology " + topology);
  INFO(p.out);
  CHECK(p.status == 2);
  CHECK_THAT(p.out, Catch::Contains("fragment 'work' (" + topology + ":8): host = \"h4\" is not a host of " + hosts +
                                    "; the hosts are: h1, h2, h3"));
}
