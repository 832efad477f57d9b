// Placement: which host runs each node (process) of a plan on several hosts, and the data
// endpoint each node binds there (docs/HOSTS.md).
//
// Paper: Hwang et al. (ICDE 2005), section 2: a process pair protects a fragment only when the
// primary and its backup fail independently, so they run on different machines; upstream
// backup's recovery node likewise. We add racks: with a `rack` label on the hosts, a primary
// and its standby go to different racks when the hosts allow it.
//
// The rule, in order: nodes pinned in the topology (`host`, `standby_host`) go where they are
// pinned; every other node, fragment by fragment in plan order (primary, then its standbys),
// goes to the host that (1) holds the fewest replicas of its fragment, (2) then the fewest in
// the same rack, (3) then the fewest nodes, (4) then comes first in the hosts file. So the
// result is deterministic (a function of the plan and the host list) and balanced (a node goes
// to a least-loaded host unless anti-affinity says otherwise). Where a pair still shares a host
// or a rack (too few hosts or racks, or pins), a warning says which pair and why. A node's data
// port is its host's data_port_base plus its rank among that host's nodes in plan order.
//
// Invariant: a Placement holds one entry per plan node, indexed by NodeId, each naming a host
// of the list; the endpoints are distinct (distinct ports on a host, distinct addresses across
// hosts, validate_hosts()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hosts/host_list.h"
#include "protocols/plan.h"

namespace hapair {

struct NodePlacement {
  NodeId node = kNoNode;
  std::size_t host = 0;  // index into HostList::hosts
  std::int64_t data_port = 0;
  std::string endpoint;  // tcp://ADDRESS:PORT
  bool pinned = false;   // the topology chose the host
};

struct Placement {
  std::vector<NodePlacement> nodes;  // by NodeId
  // One sentence per pair that shares a host or a rack, with the reason.
  std::vector<std::string> warnings;

  const NodePlacement& of(NodeId n) const;
  // The nodes on a host, in plan order.
  std::vector<NodeId> nodes_on(std::size_t host) const;
};

struct PlacementResult {
  std::optional<Placement> placement;  // set only when `problems` is empty
  std::vector<std::string> problems;   // every problem at once
};

// Places every node of the plan on the hosts (which validate_hosts() accepted). Problems: a pin
// that names no host of the list (the hosts are listed), a topology endpoint (with hosts the
// placement gives every endpoint), a host whose data ports would pass 65535.
PlacementResult place_nodes(const Plan& plan, const HostList& hosts);

// What a node is in a placement table: "source", "sink", "primary", or its standby's kind
// ("backup", "spare": the approach's standby suffix).
std::string placement_role(const Plan& plan, NodeId n);

}  // namespace hapair
