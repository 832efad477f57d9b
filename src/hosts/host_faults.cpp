#include "hosts/host_faults.h"

#include <algorithm>

namespace hapair {

std::optional<std::size_t> lost_host(const std::string& name, const Plan& plan, const Placement& placement,
                                     const HostList& hosts, std::string& problem, const std::string& what) {
  const std::string prefix = kHostOfPrefix;
  if (name.rfind(prefix, 0) == 0) {
    const std::string node = name.substr(prefix.size());
    const NodeId id = plan.node_id(node);
    if (id == kNoNode) {
      std::string names;
      for (const PlanNode& n : plan.nodes) names += (names.empty() ? "" : ", ") + n.name;
      problem = what + " of '" + name + "': no node '" + node + "' in the plan (its nodes: " + names + ")";
      return std::nullopt;
    }
    return placement.of(id).host;
  }
  if (const std::optional<std::size_t> host = hosts.index_of(name)) return host;
  std::string names;
  for (const std::string& n : hosts.names()) names += (names.empty() ? "" : ", ") + n;
  problem = what + " of '" + name + "': no such host in " + hosts.source_file + " (its hosts: " + names +
            "; or host-of:NODE, the host that holds a node)";
  return std::nullopt;
}

std::optional<std::pair<std::size_t, std::size_t>> named_link(const std::string& text, const Plan& plan,
                                                              const Placement& placement, const HostList& hosts,
                                                              std::string& problem) {
  for (std::size_t dash = text.find('-'); dash != std::string::npos; dash = text.find('-', dash + 1)) {
    std::string ignored;
    const std::optional<std::size_t> a = lost_host(text.substr(0, dash), plan, placement, hosts, ignored);
    const std::optional<std::size_t> b = lost_host(text.substr(dash + 1), plan, placement, hosts, ignored);
    if (!a || !b) continue;
    if (*a == *b) {
      problem = "link '" + text + "': both ends are host " + hosts.hosts.at(*a).name + "; a link joins two hosts";
      return std::nullopt;
    }
    return std::make_pair(*a, *b);
  }
  std::string names;
  for (const std::string& n : hosts.names()) names += (names.empty() ? "" : ", ") + n;
  problem = "link '" + text + "' is not HOST-HOST with two hosts of " + hosts.source_file + " (its hosts: " + names +
            "; or host-of:NODE, the host that holds a node)";
  return std::nullopt;
}

HostCuts host_cuts(const Plan& plan, const Placement& placement, const HostList& hosts, const std::vector<FaultSpec>& faults) {
  HostCuts out;
  for (const FaultSpec& f : faults) {
    if (f.kind != FaultKind::partition) continue;
    const NodeId a = plan.node_id(f.node);
    const NodeId b = plan.node_id(f.peer);
    if (a == kNoNode || b == kNoNode) continue;  // validate_faults names it
    const std::size_t ha = placement.of(a).host;
    const std::size_t hb = placement.of(b).host;
    if (ha == hb) {
      out.problems.push_back("partition " + f.node + "-" + f.peer + ": both run on host " + hosts.hosts.at(ha).name +
                             "; across hosts a partition cuts the link between two hosts (nftables on each), so its "
                             "nodes must be placed on different hosts (pin them: host = \"...\" in the topology)");
      continue;
    }
    for (const NodeId x : placement.nodes_on(ha))
      for (const NodeId y : placement.nodes_on(hb)) {
        if (x == a && y == b) continue;
        out.companions.push_back(FaultSpec{FaultKind::partition, plan.nodes[x].name, plan.nodes[y].name, f.at_s, f.duration_s});
      }
  }
  return out;
}

}  // namespace hapair
