// Hosts files (config/hosts_file.h, docs/HOSTS.md): what a file with defaults and labels reads
// into, and that every bad field is reported at once with its file:line and the valid choices;
// the topology's pins (`host`, `standby_host`) read, validate and write back.
#include <catch2/catch.hpp>

#include <string>

#include "config/hosts_file.h"
#include "config/topology_file.h"
#include "protocols/plan.h"
#include "protocols/topology_builders.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

const std::string kThreeHosts = R"([defaults]
user = "hapair"
work_dir = "/tmp/hapair"

[[host]]
name = "h1"
address = "10.0.0.1"
labels = { rack = "r1" }

[[host]]
name = "h2"
address = "10.0.0.2"
user = "root"
port = 2222
identity_file = "/root/.ssh/id_ed25519"
data_port_base = 8000
labels = { rack = "r2", zone = "east" }

[[host]]
name = "h3"
address = "node-3.lan"
)";

HostsLoad parse(const std::string& text) { return parse_hosts(text, "hosts.toml"); }

}  // namespace

TEST_CASE("a hosts file reads every host with its defaults, ssh settings and labels", "[hosts][config]") {
  const HostsLoad load = parse(kThreeHosts);
  INFO(joined(load.problems));
  REQUIRE(load.problems.empty());
  REQUIRE(load.hosts);
  const HostList& list = *load.hosts;
  REQUIRE(list.hosts.size() == 3);
  CHECK(list.names() == std::vector<std::string>{"h1", "h2", "h3"});
  const HostSpec& h1 = list.hosts[0];
  CHECK(h1.address == "10.0.0.1");
  CHECK(h1.ssh_user == "hapair");  // from [defaults]
  CHECK(h1.ssh_port == 22);        // the default
  CHECK(h1.identity_file.empty());
  CHECK(h1.work_dir == "/tmp/hapair");
  CHECK(h1.data_port_base == kDataPortBaseDefault);
  CHECK(h1.rack() == "r1");
  CHECK(h1.where == "hosts.toml:5");
  const HostSpec& h2 = list.hosts[1];
  CHECK(h2.ssh_user == "root");  // its own beats the default
  CHECK(h2.ssh_port == 2222);
  CHECK(h2.identity_file == "/root/.ssh/id_ed25519");
  CHECK(h2.data_port_base == 8000);
  CHECK(h2.labels == std::map<std::string, std::string>{{"rack", "r2"}, {"zone", "east"}});
  CHECK(list.hosts[2].rack().empty());
  CHECK(list.index_of("h3") == std::optional<std::size_t>(2));
  CHECK_FALSE(list.index_of("h4"));
}

TEST_CASE("every problem of a hosts file at once, each with its line and what is allowed", "[hosts][config]") {
  const HostsLoad load = parse(R"([defaults]
work_dir = "/tmp/hapair"
name = "everyone"

[[host]]
name = "h1"
adress = "10.0.0.1"
user = "root"
port = "22"

[[host]]
name = "h2"
address = "10.0.0.2"
labels = { rack = 3 }

[hostz]
)");
  INFO(joined(load.problems));
  CHECK_FALSE(load.hosts);
  CHECK(has_problem(load.problems, {"hosts.toml:3: key 'name' in [defaults]: each [[host]] gives its own name"}));
  CHECK(has_problem(load.problems, {"hosts.toml:7: unknown key 'adress' in host 'h1' (did you mean 'address'?); allowed keys: name, address, user, port, identity_file, known_hosts_file, work_dir, data_port_base, labels"}));
  CHECK(has_problem(load.problems, {"hosts.toml:9: host 'h1' port = \"22\": expected a whole number, like 22"}));
  CHECK(has_problem(load.problems, {"hosts.toml:5: host 'h1' is missing the key 'address'"}));
  CHECK(has_problem(load.problems, {"hosts.toml:11: host 'h2' is missing the key 'user' (give it here or in [defaults])"}));
  CHECK(has_problem(load.problems, {"hosts.toml:14: host 'h2' labels = ", "expected a table of strings", "label 'rack' is 3"}));
  CHECK(has_problem(load.problems, {"hosts.toml:16: unknown table 'hostz' at the top of the file (did you mean 'host'?)"}));
  // In the order of their lines.
  CHECK(load.problems.front().rfind("hosts.toml:3:", 0) == 0);
}

TEST_CASE("hosts with a duplicate name or address, a bad port or a relative work_dir are refused", "[hosts][config]") {
  const HostsLoad load = parse(R"([defaults]
user = "u"
work_dir = "relative/dir"

[[host]]
name = "h1"
address = "10.0.0.1"
port = 70000

[[host]]
name = "h1"
address = "10.0.0.1"
data_port_base = 80

[[host]]
name = "h 3"
address = "10.0.0.3; rm -rf /"
)");
  INFO(joined(load.problems));
  CHECK_FALSE(load.hosts);
  CHECK(has_problem(load.problems, {"hosts.toml:5: host 'h1': port = 70000: the ssh port must be 1 to 65535"}));
  CHECK(has_problem(load.problems, {"hosts.toml:10: host 'h1': the name is already used by the host at hosts.toml:5"}));
  CHECK(has_problem(load.problems, {"hosts.toml:10: host 'h1': address '10.0.0.1' is already used by the host at hosts.toml:5"}));
  CHECK(has_problem(load.problems, {"hosts.toml:10: host 'h1': data_port_base = 80: must be 1024 to 65535"}));
  CHECK(has_problem(load.problems, {"work_dir 'relative/dir' must be an absolute path"}));
  CHECK(has_problem(load.problems, {"hosts.toml:15: host 'h 3': name must be 1 to 64 letters"}));
  CHECK(has_problem(load.problems, {"address '10.0.0.3; rm -rf /' must be a host name or an IP address"}));
}

TEST_CASE("a hosts file that is not TOML, or names no host, says so", "[hosts][config]") {
  const HostsLoad bad = parse("[[host]\nname = \"h1\"\n");
  REQUIRE(bad.problems.size() == 1);
  CHECK_THAT(bad.problems[0], Catch::StartsWith("hosts.toml:1: not valid TOML"));
  const HostsLoad empty = parse("[defaults]\nuser = \"u\"\n");
  CHECK(has_problem(empty.problems, {"hosts.toml: names no host; write one [[host]] table per host"}));
  const HostsLoad missing = load_hosts_file("/nonexistent/hosts.toml");
  CHECK(has_problem(missing.problems, {"cannot open /nonexistent/hosts.toml"}));
}

TEST_CASE("host endpoints put IPv6 addresses in brackets", "[hosts]") {
  HostSpec h;
  h.address = "10.0.0.7";
  CHECK(host_endpoint(h, 7100) == "tcp://10.0.0.7:7100");
  h.address = "fd00::7";
  CHECK(host_endpoint(h, 7101) == "tcp://[fd00::7]:7101");
}

TEST_CASE("a topology pins fragments to hosts with host and standby_host, written back only when set", "[hosts][config]") {
  const std::string text = R"([network]
ha = "passive"

[[source]]
name = "src"
stream = "raw"
host = "h1"

[[fragment]]
name = "work"
host = "h2"
standby_host = "h3"

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
  const TopologyLoad load = parse_topology(text, "t.toml");
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  CHECK(load.topology->fragments[0].host == "h1");
  CHECK(load.topology->fragments[1].host == "h2");
  CHECK(load.topology->fragments[1].standby_host == "h3");
  const std::string written = write_topology(*load.topology);
  CHECK_THAT(written, Catch::Contains("host = \"h2\"\nstandby_host = \"h3\"\n"));
  const TopologyLoad again = parse_topology(written, "again.toml");
  REQUIRE(again.topology);
  CHECK(again.topology->fragments[1].standby_host == "h3");
  // Without pins nothing is written: a run on one host writes its config.toml as before.
  CHECK_THAT(write_topology(default_topology()), !Catch::Contains("host ="));

  const TopologyLoad bad = parse_topology(R"([[source]]
name = "src"
stream = "raw"
standby_host = "h2"
host = "not a host"

[[sink]]
name = "out"
input = "raw"
)",
                                          "t.toml");
  INFO(joined(bad.problems));
  CHECK(has_problem(bad.problems, {"source 'src'", "standby_host is set, but sources and sinks never get standbys"}));
  CHECK(has_problem(bad.problems, {"host 'not a host' must be the name of a host in the hosts file"}));
}
