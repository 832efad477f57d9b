// Faults across hosts as plain values (docs/HOSTS.md, "Faults across hosts"): which host a host
// loss names (a host of the list, or `host-of:NODE`, the host placement gives a node), and what a
// partition between two nodes on different hosts cuts (the link between their hosts, so every
// pair of nodes across those two hosts).
//
// Paper: Hwang et al. (ICDE 2005), section 2, assume fail-stop servers; a machine that loses power
// and a cut link between two machines are the failures docs/FAULTS.md adds. Across hosts a cut is
// made on the hosts (nftables on each end) and drops every packet between their addresses: hapair
// cannot cut one node's traffic from another's on the same host (they share its address), so a
// partition across hosts is the cut of the hosts' link and names every node pair it separates.
//
// Invariant: the companions of a partition have its time and duration, join two nodes on the same
// two hosts, and never repeat the partition itself; a partition within one host is a problem, never
// silently widened or dropped.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hosts/host_list.h"
#include "hosts/placement.h"
#include "protocols/plan.h"
#include "protocols/run_result.h"

namespace hapair {

// "host-of:" NODE: a host loss naming the host that holds a node of the run.
inline constexpr const char* kHostOfPrefix = "host-of:";

// The host a host loss names: a host of the list by name, or `host-of:NODE`, the host placement
// gives node NODE of the plan. nullopt with `problem` set (naming the hosts, or the nodes), which
// begins with `what` (the fault that names the host: "host loss", "host pause").
std::optional<std::size_t> lost_host(const std::string& name, const Plan& plan, const Placement& placement,
                                     const HostList& hosts, std::string& problem, const std::string& what = "host loss");

// The two hosts of a link named "A-B" (each side a host of the list or host-of:NODE; the '-'
// that splits it is the one with a host on both sides), two different hosts. nullopt with
// `problem` set (naming the hosts).
std::optional<std::pair<std::size_t, std::size_t>> named_link(const std::string& text, const Plan& plan,
                                                              const Placement& placement, const HostList& hosts,
                                                              std::string& problem);

struct HostCuts {
  // Every other node pair across the two hosts of each partition, at its time for its duration.
  std::vector<FaultSpec> companions;
  // A partition between two nodes placed on one host (no link between hosts to cut).
  std::vector<std::string> problems;
};
// What the partitions of `faults` cut when the nodes run on the hosts of `placement`.
HostCuts host_cuts(const Plan& plan, const Placement& placement, const HostList& hosts, const std::vector<FaultSpec>& faults);

}  // namespace hapair
