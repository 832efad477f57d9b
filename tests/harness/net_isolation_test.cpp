// The names and addresses of a real run's network namespaces (proc/net_isolation.h), and the
// refusal of real partitions where they cannot be made.
#include <catch2/catch.hpp>

#include "campaigns/chaos.h"
#include "launch/launcher.h"
#include "proc/net_isolation.h"
#include "protocols/topology.h"

using namespace hapair;

TEST_CASE("a launcher's namespaces and root link are named after its pid, and only those names parse back", "[net_isolation]") {
  CHECK(edge_namespace_name(4242) == "hp4242e");
  CHECK(node_namespace_name(4242, 0) == "hp4242n0");
  CHECK(node_namespace_name(4242, 12) == "hp4242n12");
  CHECK(root_link_name(4194303) == "hp4194303r");
  CHECK(root_link_name(4194303).size() <= 15);  // IFNAMSIZ - 1: the largest pid still fits
  CHECK(isolation_owner("hp4242e") == 4242);
  CHECK(isolation_owner("hp4242n12") == 4242);
  CHECK(isolation_owner("hp7r") == 7);
  for (const char* other : {"hp", "hpe", "hp12", "hp12x", "hp12n", "hp12n1x", "hp12ee", "hapair-12-edge", "eth0", "hp12r0"})
    CHECK_FALSE(isolation_owner(other).has_value());
}

TEST_CASE("each pid gets its own /24 in 10.128.0.0/9, the launcher host 1 and node i host i + 2", "[net_isolation]") {
  const auto a = subnet_for_pid(1, {});
  REQUIRE(a);
  CHECK(a->prefix() == "10.128.1.0/24");
  CHECK(a->address(1) == "10.128.1.1");
  CHECK(a->address(node_host(0)) == "10.128.1.2");
  CHECK(a->address(node_host(252)) == "10.128.1.254");
  CHECK(subnet_for_pid(32767, {})->prefix() == "10.255.255.0/24");
  CHECK(subnet_for_pid(300, {})->prefix() == "10.129.44.0/24");
  // Up to pid_max 32768 every pid has another subnet.
  CHECK(subnet_for_pid(32768 + 5, {})->prefix() == subnet_for_pid(5, {})->prefix());
}

TEST_CASE("a /24 that a route of the root namespace covers is skipped", "[net_isolation]") {
  const std::string routes =
      "default via 192.0.2.1 dev eth0\n"
      "10.128.1.0/24 dev hp1r proto kernel scope link src 10.128.1.1\n"
      "10.128.0.0/23 dev vpn0\n"
      "local 127.0.0.1 dev lo table local proto kernel scope host src 127.0.0.1\n"
      "broadcast 10.128.2.255 dev eth1 table local\n";
  const auto taken = route_prefixes(routes);
  REQUIRE(taken.size() == 4);  // the default route is no conflict
  CHECK(taken[0].length == 24);
  CHECK(taken[3].length == 32);
  // 10.128.1.0 and 10.128.0.0/23 are taken, and 10.128.2.255 lies in 10.128.2.0/24.
  CHECK(subnet_for_pid(1, taken)->prefix() == "10.128.3.0/24");
  CHECK(subnet_for_pid(0, {Ipv4Prefix{10u << 24, 8}}) == std::nullopt);  // all of 10/8 is routed elsewhere
  CHECK_FALSE(parse_ipv4_prefix("10.1.2").has_value());
  CHECK_FALSE(parse_ipv4_prefix("10.1.2.3/33").has_value());
  CHECK_FALSE(parse_ipv4_prefix("256.1.2.3").has_value());
}

TEST_CASE("real partitions are refused with every missing piece named where they cannot be made", "[net_isolation]") {
  CHECK(isolation_unavailable_reason(IsolationTools{true, "/usr/sbin/ip", "/usr/sbin/nft"}).empty());
  const std::string why = isolation_unavailable_reason(IsolationTools{false, "", ""});
  CHECK(why.find("not running as root") != std::string::npos);
  CHECK(why.find("install iproute2") != std::string::npos);
  CHECK(why.find("install nftables") != std::string::npos);
  const std::string refusal = real_partition_refusal(isolation_unavailable_reason(IsolationTools{false, "/sbin/ip", ""}));
  CHECK(refusal.find("needs network namespaces and nftables") != std::string::npos);
  CHECK(refusal.find("not running as root") != std::string::npos);
  CHECK(refusal.find("install iproute2") == std::string::npos);
  CHECK(refusal.find("--driver sim") != std::string::npos);
}

TEST_CASE("the real launcher and campaign accept partitions exactly where this machine can make them", "[net_isolation]") {
  const std::string here = net_isolation_unavailable();
  ChaosOptions o;
  o.driver = "real";
  o.faults = {ChaosFault::partition, ChaosFault::crash};
  const auto problems = validate_chaos_options(o);
  if (here.empty()) {
    CHECK(problems.empty());
  } else {
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == real_partition_refusal(here));
  }
  // The launcher in manual mode refuses a partition before it starts anything.
  const Plan plan = make_plan(default_topology());
  LaunchOptions manual;
  manual.manual = true;
  manual.faults = {FaultSpec{FaultKind::partition, "filter", "aggregate", 1.0, 0.5}};
  const RunResult r = launch_real_run(plan, manual);
  REQUIRE_FALSE(r.errors.empty());
  CHECK(r.errors[0].find("not supported in manual mode") != std::string::npos);
  CHECK_FALSE(r.completed);
}
