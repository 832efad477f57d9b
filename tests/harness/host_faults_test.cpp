// Faults across hosts as plain values (hosts/host_faults.h, docs/HOSTS.md "Faults across hosts"):
// a host loss names a host or the host of a node; a partition across hosts cuts the link between
// the two hosts, so every node pair across them; a chaos campaign across hosts draws host losses
// and cuts only between two hosts, in schedules that stay valid; the launcher's [placement] makes
// [[link]] tables by host match where the nodes really run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "campaigns/chaos.h"
#include "config/topology_file.h"
#include "driver/link_model.h"
#include "hosts/host_faults.h"
#include "hosts/placement.h"
#include "judge/guarantee_rules.h"
#include "protocols/plan.h"
#include "protocols/topology_builders.h"
#include "sim/faults.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

std::shared_ptr<const HostList> four_hosts() {
  auto list = std::make_shared<HostList>();
  list->source_file = "hosts.toml";
  for (int i = 1; i <= 4; ++i) {
    HostSpec h;
    h.name = "h" + std::to_string(i);
    h.address = "10.0.0." + std::to_string(i);
    h.ssh_user = "root";
    h.work_dir = "/tmp/hapair";
    list->hosts.push_back(h);
  }
  return list;
}

Plan passive_plan() {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  return make_plan(t);
}

Placement placed(const Plan& plan, const HostList& hosts) {
  PlacementResult r = place_nodes(plan, hosts);
  INFO(joined(r.problems));
  REQUIRE(r.placement);
  return *r.placement;
}

}  // namespace

TEST_CASE("a host loss names a host of the list or, with host-of:, the host placement gives a node", "[hosts]") {
  const auto hosts = four_hosts();
  const Plan plan = passive_plan();
  const Placement placement = placed(plan, *hosts);
  std::string problem;
  CHECK(lost_host("h3", plan, placement, *hosts, problem) == std::optional<std::size_t>(2));
  const NodeId aggregate = plan.node_id("aggregate");
  CHECK(lost_host("host-of:aggregate", plan, placement, *hosts, problem) == placement.of(aggregate).host);
  CHECK_FALSE(lost_host("h9", plan, placement, *hosts, problem));
  CHECK_THAT(problem, Catch::Contains("no such host in hosts.toml (its hosts: h1, h2, h3, h4; or host-of:NODE"));
  CHECK_FALSE(lost_host("host-of:nobody", plan, placement, *hosts, problem));
  CHECK_THAT(problem, Catch::Contains("no node 'nobody' in the plan (its nodes: source, filter"));
}

TEST_CASE("a partition across hosts cuts every node pair across its two hosts, and never two nodes of one host", "[hosts]") {
  const auto hosts = four_hosts();
  const Plan plan = passive_plan();
  const Placement placement = placed(plan, *hosts);
  const NodeId a = plan.node_id("aggregate");
  const NodeId b = plan.node_id("aggregate.backup");
  const std::size_t ha = placement.of(a).host;
  const std::size_t hb = placement.of(b).host;
  REQUIRE(ha != hb);  // anti-affinity
  const HostCuts cuts = host_cuts(plan, placement, *hosts, {FaultSpec{FaultKind::partition, "aggregate", "aggregate.backup", 1.0, 0.5}});
  CHECK(cuts.problems.empty());
  const std::size_t pairs = placement.nodes_on(ha).size() * placement.nodes_on(hb).size();
  CHECK(cuts.companions.size() == pairs - 1);
  for (const FaultSpec& f : cuts.companions) {
    INFO(describe(f));
    CHECK(f.kind == FaultKind::partition);
    CHECK(f.at_s == 1.0);
    CHECK(f.duration_s == 0.5);
    CHECK(placement.of(plan.node_id(f.node)).host == ha);
    CHECK(placement.of(plan.node_id(f.peer)).host == hb);
    CHECK_FALSE((f.node == "aggregate" && f.peer == "aggregate.backup"));
  }
  // Two nodes of one host have no link between hosts to cut.
  std::string same;
  for (NodeId n = 0; n < plan.nodes.size() && same.empty(); ++n)
    if (n != a && placement.of(n).host == ha) same = plan.nodes[n].name;
  if (!same.empty()) {
    const HostCuts refused = host_cuts(plan, placement, *hosts, {FaultSpec{FaultKind::partition, "aggregate", same, 1.0, 0.5}});
    REQUIRE(refused.problems.size() == 1);
    CHECK_THAT(refused.problems[0], Catch::Contains("both run on host " + hosts->hosts[ha].name));
  }
}

TEST_CASE("a chaos campaign across hosts draws host losses and cuts between two hosts, in valid schedules", "[hosts][chaos]") {
  ChaosOptions o;
  o.seed = 11;
  o.driver = "real";
  o.networks_dir = std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks";
  o.networks = {"default", "chain", "join", "union"};
  o.approaches = {HaMode::upstream, HaMode::passive, HaMode::active};
  o.hosts.hosts = four_hosts();
  o.faults = chaos_faults_for_hosts();
  REQUIRE(validate_chaos_options(o).empty());
  std::vector<std::string> problems;
  const auto nets = load_chaos_networks(o, problems);
  REQUIRE(problems.empty());
  int losses = 0, cuts = 0;
  for (std::size_t i = 0; i < 200; ++i) {
    const ChaosCase c = chaos_case(o, nets, i);
    INFO("case " << i << ": " << c.description);
    const Plan plan = make_plan(c.topology);
    const Placement placement = placed(plan, *o.hosts.hosts);
    // The schedule with the crashes every loss implies stays valid, as the launcher checks it.
    std::vector<FaultSpec> all = c.faults;
    for (const HostLossSpec& l : c.host_losses) {
      ++losses;
      std::string problem;
      const auto host = lost_host(l.host, plan, placement, *o.hosts.hosts, problem);
      REQUIRE(host);
      for (NodeId n : placement.nodes_on(*host)) {
        // Never a host with a source or a sink (no standby: beyond every guarantee).
        CHECK(plan.fragments[plan.nodes[n].fragment].kind == FragmentKind::operators);
        all.push_back(FaultSpec{FaultKind::crash, plan.nodes[n].name, "", l.at_s, 0.0});
        for (const FaultSpec& f : c.faults) CHECK_FALSE((f.kind == FaultKind::restart && f.node == plan.nodes[n].name));
      }
    }
    std::stable_sort(all.begin(), all.end(), [](const FaultSpec& a, const FaultSpec& b) { return a.at_s < b.at_s; });
    CHECK(validate_run_faults(plan, all).empty());
    CHECK(host_cuts(plan, placement, *o.hosts.hosts, c.faults).problems.empty());
    for (const FaultSpec& f : c.faults) cuts += f.kind == FaultKind::partition;
    CHECK(chaos_case(o, nets, i).description == c.description);  // a pure function of the options
  }
  CHECK(losses > 20);
  CHECK(cuts > 20);
  // The reproduce command names the hosts; host-loss needs them.
  o.hosts_arguments = " --hosts hosts.toml --copy-binary";
  const std::string reproduce = chaos_reproduce_command(o, 3);
  CHECK_THAT(reproduce, Catch::Contains("--faults crash,pause,restart,partition,host-loss "));
  CHECK_THAT(reproduce, Catch::EndsWith(" --hosts hosts.toml --copy-binary"));
  ChaosOptions here = o;
  here.hosts = {};
  CHECK_THAT(joined(validate_chaos_options(here)), Catch::Contains("fault kind host-loss needs --hosts FILE"));
}

TEST_CASE("link tables by host match the launcher's placement table, which the effective topology carries", "[hosts]") {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  LinkSpec wan;
  wan.from_host = "h1";
  wan.to_host = "h2";
  wan.both_ways = true;
  wan.settings.latency_ms = 20.0;
  t.links.links.push_back(wan);
  // Nothing pinned: accepted, and said to emulate nothing on one machine.
  CHECK(validate(t).empty());
  const Plan bare = make_plan(t);
  CHECK(link_warnings(bare).size() == 1);
  CHECK_FALSE(link_settings(bare, bare.node_id("filter"), bare.node_id("aggregate")).emulated());
  // Placed: the pair across h1 and h2 is emulated both ways, a pair on one host or elsewhere not.
  t.placement = {{"source", "h3"}, {"filter", "h1"}, {"filter.backup", "h3"}, {"aggregate", "h2"}, {"aggregate.backup", "h4"}, {"sink", "h1"}};
  const TopologyLoad again = parse_topology(write_topology(t), "effective.toml");
  INFO(joined(again.problems));
  REQUIRE(again.topology);
  CHECK(again.topology->placement == t.placement);
  const Plan plan = make_plan(*again.topology);
  CHECK(link_settings(plan, plan.node_id("filter"), plan.node_id("aggregate")).latency_ms == 20.0);
  CHECK(link_settings(plan, plan.node_id("aggregate"), plan.node_id("sink")).latency_ms == 20.0);
  CHECK_FALSE(link_settings(plan, plan.node_id("filter"), plan.node_id("sink")).emulated());
  CHECK_FALSE(link_settings(plan, plan.node_id("filter.backup"), plan.node_id("aggregate.backup")).emulated());
  CHECK(link_warnings(plan).empty());
  // A topology that pins nodes names its hosts by those pins.
  Topology pinned = default_topology();
  pinned.fragments[1].host = "h1";
  pinned.links.links.push_back(wan);
  CHECK_THAT(joined(validate(pinned)), Catch::Contains("no node is pinned to host 'h2'"));
}


TEST_CASE("the loss of a sink or a source (with its host) is beyond the guarantee, never a violation", "[hosts]") {
  const Plan plan = passive_plan();
  for (const char* node : {"sink", "source"}) {
    RunResult r;
    r.events.push_back(TraceEvent(500'000, plan.node_id(node), TraceKind::failure).with(TraceKey::fault, FaultKind::crash));
    const std::optional<std::string> beyond = beyond_guarantee(plan, r);
    REQUIRE(beyond);
    CHECK_THAT(*beyond, Catch::Contains(std::string("a ") + node + " has no standby"));
  }
}
