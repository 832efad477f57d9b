// `hapair plan --hosts FILE`: places every node of a plan on the hosts of a hosts file and prints
// where each one would run (node, role, host, rack, endpoint) and the warnings of the placement
// (a pair that shares a host or a rack). Runs nothing and reaches no host (docs/HOSTS.md).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "config/hosts_file.h"
#include "hosts/placement.h"

namespace hapair::cli {
namespace {

std::string table_text(const Plan& plan, const HostList& hosts, const Placement& placement) {
  std::size_t node_width = 4, host_width = 4, rack_width = 4;
  for (const PlanNode& n : plan.nodes) node_width = std::max(node_width, n.name.size());
  for (const HostSpec& h : hosts.hosts) {
    host_width = std::max(host_width, h.name.size());
    rack_width = std::max(rack_width, h.rack().size());
  }
  std::string out = fmt::format("{:<{}}  {:<8} {:<{}}  {:<{}}  {}\n", "node", node_width, "role", "host", host_width, "rack",
                                rack_width, "endpoint");
  for (const PlanNode& n : plan.nodes) {
    const NodePlacement& p = placement.of(n.id);
    const HostSpec& h = hosts.hosts[p.host];
    out += fmt::format("{:<{}}  {:<8} {:<{}}  {:<{}}  {}{}\n", n.name, node_width, placement_role(plan, n.id), h.name,
                       host_width, h.rack().empty() ? "-" : h.rack(), rack_width, p.endpoint, p.pinned ? "  (pinned)" : "");
  }
  return out;
}

std::string json_text(const Plan& plan, const HostList& hosts, const Placement& placement) {
  nlohmann::ordered_json doc;
  doc["network"] = plan.topology.name;
  doc["hosts_file"] = hosts.source_file;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const PlanNode& n : plan.nodes) {
    const NodePlacement& p = placement.of(n.id);
    const HostSpec& h = hosts.hosts[p.host];
    nlohmann::ordered_json node;
    node["node"] = n.name;
    node["fragment"] = plan.fragments[n.fragment].name;
    node["role"] = placement_role(plan, n.id);
    node["ha"] = plan.traits(n.fragment).name;
    node["host"] = h.name;
    node["address"] = h.address;
    node["rack"] = h.rack();
    node["endpoint"] = p.endpoint;
    node["pinned"] = p.pinned;
    nodes.push_back(std::move(node));
  }
  doc["nodes"] = std::move(nodes);
  doc["warnings"] = placement.warnings;
  return doc.dump(2) + "\n";
}

}  // namespace

int plan_command(const Args& args) {
  namespace po = boost::program_options;
  std::string hosts_path, topology_path, ha, standbys_text;
  bool json = false;
  po::options_description described("hapair plan options");
  described.add_options()
      ("help,h", "show this help")
      ("hosts", po::value<std::string>(&hosts_path), "the hosts file (TOML, docs/HOSTS.md); required")
      ("topology", po::value<std::string>(&topology_path), "topology file or built-in network (default: the built-in default network)")
      ("ha", po::value<std::string>(&ha), ("HA mode for every operator fragment: " + allowed_ha_modes()).c_str())
      ("standbys", po::value<std::string>(&standbys_text), "k standbys for every processing fragment, 1 .. 3 (above 1: ha passive)")
      ("json", po::bool_switch(&json), "print the placement as JSON instead of a table");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair plan --hosts FILE [--topology T] [--ha MODE] [--json]\n\n" << described
                << "\nPlaces every node of the plan on the hosts and prints where each would run: node, role, host,\n"
                << "rack (the host's `rack` label) and the data endpoint derived from the placement. A primary and\n"
                << "its standby never share a host (nor a rack, when the hosts have several); with k standbys the\n"
                << "k + 1 replicas of a fragment go to different hosts when there are enough. A fragment's `host`\n"
                << "and `standby_host` (its first standby) pin it. A warning line names every two replicas that\n"
                << "still share a host or a rack.\n"
                << "Runs nothing and connects to no host.\n"
                << "\nExit status: 0 when every node was placed (warnings or not); 2 for bad input (options, the\n"
                << "hosts file, the topology, a pin naming an unknown host).\n"
                << "\nExample:\n  hapair plan --hosts hosts.toml --ha passive\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair plan: %s\n(hapair plan --help lists the options)\n", e.what());
    return 2;
  }
  std::vector<std::string> problems;
  RunOverrides overrides;
  if (vm.count("ha"))
    if (auto m = ha_mode_option("--ha", ha, problems)) overrides.ha = *m;
  if (vm.count("standbys"))
    if (auto k = whole_number("--standbys", standbys_text, 1, kStandbysMax, problems)) overrides.standbys = static_cast<std::int64_t>(*k);
  std::optional<HostList> hosts;
  if (hosts_path.empty()) {
    problems.push_back("--hosts FILE is required: the hosts to place the nodes on (docs/HOSTS.md)");
  } else {
    HostsLoad load = load_hosts_file(hosts_path);
    for (auto& p : load.problems) problems.push_back(std::move(p));  // each names the file
    hosts = std::move(load.hosts);
  }
  PlanLoad plan = load_plan(topology_path, overrides);
  for (auto& p : plan.problems) problems.push_back(std::move(p));
  if (hosts && plan.plan) {
    PlacementResult placed = place_nodes(*plan.plan, *hosts);
    for (auto& p : placed.problems) problems.push_back(std::move(p));
    if (problems.empty()) {
      const Placement& placement = *placed.placement;
      if (json) {
        std::printf("%s", json_text(*plan.plan, *hosts, placement).c_str());
        return 0;
      }
      std::printf("network %s, ha %s: %zu nodes on %zu hosts (%s)\n", plan.plan->topology.name.c_str(),
                  to_string(plan.plan->settings().ha), plan.plan->nodes.size(), hosts->hosts.size(), hosts_path.c_str());
      std::printf("%s", table_text(*plan.plan, *hosts, placement).c_str());
      for (const std::string& w : placement.warnings) std::printf("%s\n", w.c_str());
      if (placement.warnings.empty()) std::printf("no primary shares a host or a rack with its standby (nor a standby with another)\n");
      return 0;
    }
  }
  return report_problems("hapair plan", "bad input", problems);
}

}  // namespace hapair::cli
