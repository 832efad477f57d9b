// Placement (hosts/placement.h, docs/HOSTS.md): a primary and its standby never on one host,
// never in one rack when the hosts allow it, and a warning naming the pair when they must share;
// pins from the topology; deterministic and balanced; endpoints from each host's port base.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "config/topology_file.h"
#include "hosts/placement.h"
#include "protocols/plan.h"
#include "protocols/topology_builders.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

HostList hosts_in_racks(const std::vector<std::string>& racks) {
  HostList list;
  list.source_file = "hosts.toml";
  for (std::size_t i = 0; i < racks.size(); ++i) {
    HostSpec h;
    h.name = "h" + std::to_string(i + 1);
    h.address = "10.0.0." + std::to_string(i + 1);
    h.ssh_user = "root";
    h.work_dir = "/tmp/hapair";
    h.where = "hosts.toml:" + std::to_string(4 * i + 1);
    if (!racks[i].empty()) h.labels[kRackLabel] = racks[i];
    list.hosts.push_back(h);
  }
  return list;
}

HostList hosts(std::size_t n) { return hosts_in_racks(std::vector<std::string>(n, "")); }

Plan plan_with(HaMode ha, Topology t = default_topology()) {
  t.settings.ha = ha;
  const auto problems = validate(t);
  INFO(joined(problems));
  REQUIRE(problems.empty());
  return make_plan(t);
}

Placement placed_plan(const Plan& plan, const HostList& list) {
  PlacementResult r = place_nodes(plan, list);
  INFO(joined(r.problems));
  REQUIRE(r.problems.empty());
  REQUIRE(r.placement);
  REQUIRE(r.placement->nodes.size() == plan.nodes.size());
  return *r.placement;
}

// A chain of three processing fragments, so there are more pairs than hosts in a rack.
Topology chain3() {
  const TopologyLoad load = parse_topology(R"([[source]]
name = "src"
stream = "s0"

[[fragment]]
name = "f1"
[[fragment.operator]]
name = "o1"
type = "filter"
input = "s0"
output = "s1"
where = "value < 80"

[[fragment]]
name = "f2"
[[fragment.operator]]
name = "o2"
type = "map"
input = "s1"
output = "s2"

[[fragment]]
name = "f3"
[[fragment.operator]]
name = "o3"
type = "filter"
input = "s2"
output = "s3"
where = "value < 90"

[[sink]]
name = "out"
input = "s3"
)",
                                           "chain3.toml");
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  return *load.topology;
}

}  // namespace

TEST_CASE("a primary and its standby never share a host, under every approach with a standby", "[hosts][placement]") {
  for (HaMode ha : {HaMode::passive, HaMode::active, HaMode::upstream, HaMode::amnesia}) {
    const Plan plan = plan_with(ha, chain3());
    for (std::size_t n : {2u, 3u, 5u}) {
      INFO(to_string(ha) << " on " << n << " hosts");
      const Placement p = placed_plan(plan, hosts(n));
      std::size_t pairs = 0;
      for (const PlanFragment& f : plan.fragments)
        for (NodeId s : f.standbys) {
          ++pairs;
          CHECK(p.of(f.primary).host != p.of(s).host);
        }
      CHECK(pairs == 3);
      CHECK(p.warnings.empty());
    }
  }
}

TEST_CASE("with rack labels a primary and its standby go to different racks when the hosts allow it", "[hosts][placement]") {
  const Plan plan = plan_with(HaMode::passive, chain3());
  const HostList list = hosts_in_racks({"r1", "r1", "r2", "r2"});
  const Placement p = placed_plan(plan, list);
  for (const PlanFragment& f : plan.fragments)
    for (NodeId s : f.standbys) {
      INFO(f.name);
      CHECK(list.hosts[p.of(f.primary).host].rack() != list.hosts[p.of(s).host].rack());
    }
  CHECK(p.warnings.empty());
}

TEST_CASE("when the hosts are too few, each pair that shares a host or a rack is named in a warning", "[hosts][placement]") {
  const Plan plan = plan_with(HaMode::passive);  // the default network: one processing fragment pair per operator fragment
  SECTION("one host: every pair shares it") {
    const Placement p = placed_plan(plan, hosts(1));
    std::size_t pairs = 0;
    for (const PlanFragment& f : plan.fragments)
      if (f.has_standby()) {
        ++pairs;
        const std::string pair = f.name + " and " + plan.nodes[f.standbys[0]].name;
        CHECK(std::any_of(p.warnings.begin(), p.warnings.end(), [&](const std::string& w) {
          return contains(w, "warning: " + pair + " share host h1 (the hosts file has 1 host for 2 replicas)") &&
                 contains(w, "losing that host loses fragment " + f.name);
        }));
      }
    CHECK(pairs > 0);
    CHECK(p.warnings.size() == pairs);
  }
  SECTION("one rack: every pair shares it") {
    const Placement p = placed_plan(plan, hosts_in_racks({"r1", "r1", "r1"}));
    REQUIRE_FALSE(p.warnings.empty());
    for (const std::string& w : p.warnings) CHECK(contains(w, "share rack r1 (every host is in rack r1)"));
    for (const PlanFragment& f : plan.fragments)
      for (NodeId s : f.standbys) CHECK(p.of(f.primary).host != p.of(s).host);  // still apart by host
  }
  SECTION("a host without a rack label is a rack of its own") {
    const Placement p = placed_plan(plan, hosts_in_racks({"r1", "r1", ""}));
    CHECK(p.warnings.empty());
  }
}

TEST_CASE("placement is deterministic and balanced", "[hosts][placement]") {
  const Plan plan = plan_with(HaMode::active, chain3());
  for (std::size_t n : {2u, 3u, 4u, 7u}) {
    INFO(n << " hosts");
    const HostList list = hosts(n);
    const Placement a = placed_plan(plan, list);
    const Placement b = placed_plan(plan, list);
    for (const PlanNode& node : plan.nodes) CHECK(a.of(node.id).endpoint == b.of(node.id).endpoint);
    std::vector<std::size_t> load(n);
    for (const NodePlacement& np : a.nodes) ++load[np.host];
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    CHECK(*hi - *lo <= 1);
  }
}

TEST_CASE("endpoints come from each host's address and port base, one port per node", "[hosts][placement]") {
  const Plan plan = plan_with(HaMode::passive, chain3());
  HostList list = hosts(2);
  list.hosts[1].data_port_base = 9000;
  list.hosts[1].address = "fd00::2";
  const Placement p = placed_plan(plan, list);
  std::set<std::string> endpoints;
  for (std::size_t h = 0; h < 2; ++h) {
    const std::vector<NodeId> on = p.nodes_on(h);
    for (std::size_t i = 0; i < on.size(); ++i) {
      const NodePlacement& np = p.of(on[i]);
      CHECK(np.data_port == list.hosts[h].data_port_base + static_cast<std::int64_t>(i));
      CHECK(np.endpoint == host_endpoint(list.hosts[h], np.data_port));
      endpoints.insert(np.endpoint);
    }
  }
  CHECK(endpoints.size() == plan.nodes.size());
  CHECK(p.of(plan.node_id("src")).endpoint == "tcp://10.0.0.1:7100");
  CHECK(std::count_if(endpoints.begin(), endpoints.end(), [](const std::string& e) { return contains(e, "tcp://[fd00::2]:90"); }) > 0);
}

TEST_CASE("a fragment pinned with host and standby_host runs there, the others are placed around it", "[hosts][placement]") {
  Topology t = chain3();
  t.fragments[1].host = "h3";          // f1
  t.fragments[1].standby_host = "h1";  // f1.backup
  t.fragments[0].host = "h3";          // the source
  const Plan plan = plan_with(HaMode::passive, t);
  const Placement p = placed_plan(plan, hosts(3));
  CHECK(p.of(plan.node_id("f1")).host == 2);
  CHECK(p.of(plan.node_id("f1")).pinned);
  CHECK(p.of(plan.node_id("f1.backup")).host == 0);
  CHECK(p.of(plan.node_id("src")).host == 2);
  CHECK_FALSE(p.of(plan.node_id("f2")).pinned);
  CHECK(p.warnings.empty());

  SECTION("both replicas pinned to one host: placed as asked, with a warning that says so") {
    t.fragments[1].standby_host = "h3";
    const Plan shared = plan_with(HaMode::passive, t);
    const Placement q = placed_plan(shared, hosts(3));
    REQUIRE(q.warnings.size() == 1);
    CHECK(q.warnings[0] == "warning: f1 and f1.backup share host h3 (both are pinned there): losing that host loses fragment f1");
  }
}

TEST_CASE("a pin to an unknown host, a topology endpoint and ports past 65535 are problems, all at once", "[hosts][placement]") {
  Topology t = chain3();
  t.fragments[1].host = "h9";
  t.fragments[2].standby_host = "hh2";
  t.fragments[3].endpoint = "tcp://10.0.0.1:7000";
  const Plan plan = plan_with(HaMode::passive, t);
  const PlacementResult r = place_nodes(plan, hosts(3));
  INFO(joined(r.problems));
  CHECK_FALSE(r.placement);
  CHECK(has_problem(r.problems, {"fragment 'f1' (chain3.toml:5): host = \"h9\" is not a host of hosts.toml; the hosts are: h1, h2, h3"}));
  CHECK(has_problem(r.problems, {"fragment 'f2'", "standby_host = \"hh2\" is not a host of hosts.toml"}));
  CHECK(has_problem(r.problems, {"fragment 'f3'", "endpoint 'tcp://10.0.0.1:7000' is set, but with a hosts file the placement gives every node its endpoint"}));

  HostList high = hosts(2);
  high.hosts[0].data_port_base = 65534;
  const PlacementResult ports = place_nodes(plan_with(HaMode::passive, chain3()), high);
  INFO(joined(ports.problems));
  CHECK_FALSE(ports.placement);
  CHECK(has_problem(ports.problems, {"host 'h1' (hosts.toml:1): data_port_base 65534 leaves no port for node", "choose a lower data_port_base"}));
}

TEST_CASE("the placement table names each node's role", "[hosts][placement]") {
  const Plan passive = plan_with(HaMode::passive, chain3());
  CHECK(placement_role(passive, passive.node_id("src")) == "source");
  CHECK(placement_role(passive, passive.node_id("out")) == "sink");
  CHECK(placement_role(passive, passive.node_id("f1")) == "primary");
  CHECK(placement_role(passive, passive.node_id("f1.backup")) == "backup");
  const Plan upstream = plan_with(HaMode::upstream, chain3());
  CHECK(placement_role(upstream, upstream.node_id("f1.spare")) == "spare");
}

TEST_CASE("k standbys: the k + 1 replicas of a fragment go to different hosts when there are enough, a warning says when not",
          "[hosts][placement][k_standbys]") {
  // Every approach that has k standbys (passive, active and hybrid standby) is placed alike.
  for (const char* ha : {"passive", "active", "hybrid"}) {
    for (std::int64_t k : {2, 3}) {
      Topology t = chain3();
      t.settings.standbys = k;
      const Plan plan = plan_with(ApproachCatalog::builtin().find(ha)->mode, t);
      const auto replicas = static_cast<std::size_t>(k + 1);
      SECTION(std::string("enough hosts, ha = ") + ha + ", k = " + std::to_string(k)) {
        const Placement p = placed_plan(plan, hosts(replicas + 1));
        for (const PlanFragment& f : plan.fragments) {
          if (f.kind != FragmentKind::operators) continue;
          INFO(f.name);
          REQUIRE(f.replicas().size() == replicas);
          std::set<std::size_t> used;
          for (NodeId n : f.replicas()) used.insert(p.of(n).host);
          CHECK(used.size() == replicas);
        }
        CHECK(p.warnings.empty());
      }
      SECTION(std::string("one host too few, ha = ") + ha + ", k = " + std::to_string(k)) {
        const Placement p = placed_plan(plan, hosts(replicas - 1));
        REQUIRE_FALSE(p.warnings.empty());
        for (const std::string& w : p.warnings)
          CHECK(contains(w, "losing that host loses two of the " + std::to_string(replicas) + " replicas of fragment"));
        // As apart as the hosts allow: exactly two replicas of a fragment share a host.
        for (const PlanFragment& f : plan.fragments) {
          if (f.kind != FragmentKind::operators) continue;
          std::set<std::size_t> used;
          for (NodeId n : f.replicas()) used.insert(p.of(n).host);
          CHECK(used.size() == replicas - 1);
        }
      }
    }
  }
}

TEST_CASE("k standbys: standby_host pins the first standby, the others are spread around it", "[hosts][placement][k_standbys]") {
  Topology t = chain3();
  t.settings.standbys = 2;
  for (FragmentSpec& f : t.fragments)
    if (f.name == "f2") {
      f.host = "h1";
      f.standby_host = "h2";
    }
  const Plan plan = plan_with(HaMode::passive, t);
  const Placement p = placed_plan(plan, hosts(3));
  const PlanFragment& f2 = plan.fragments[plan.fragment_id("f2")];
  CHECK(p.of(f2.primary).host == 0);
  CHECK(p.of(f2.standbys[0]).host == 1);
  CHECK(p.of(f2.standbys[1]).host == 2);
  CHECK(p.warnings.empty());
}

TEST_CASE("the coordinator of global checkpoints goes to the host with the fewest nodes", "[hosts][placement]") {
  Topology t = default_topology();
  t.settings.ha = static_cast<HaMode>(204);
  const Plan plan = make_plan(t, coordinated_catalog(static_cast<HaMode>(204)));
  REQUIRE(plan.coordinator != kNoNode);
  // Six fragment nodes on four hosts: two hosts hold two, the coordinator joins one that holds one.
  const Placement p = placed_plan(plan, hosts(4));
  std::vector<std::size_t> load(4);
  for (const NodePlacement& np : p.nodes)
    if (np.node != plan.coordinator) ++load[np.host];
  CHECK(load[p.of(plan.coordinator).host] == 1);
  CHECK_FALSE(p.of(plan.coordinator).pinned);
  CHECK(placement_role(plan, plan.coordinator) == "coordinator");
}
