// Network isolation for real runs with partition faults: every node process in a network
// namespace of its own, the namespaces joined by veth links to a bridge in an edge namespace,
// the launcher (which stays in the root namespace) joined to that bridge by one more veth pair,
// and a partition of nodes A and B an nftables DROP in the bridge of the frames from A to B and
// from B to A (a bridge-family set of address pairs).
// So a partition is a real cut in the kernel between separate network stacks: what the
// processes see is packets that never arrive, not an emulation inside hapair.
//
//   root namespace:   the launcher, control socket on 10.S.T.1 (link hp<pid>r)
//   hp<pid>e (edge):  bridge br0; ports uplink (to the root), n0, n1, ...; table bridge hapair
//                     whose set `cut` holds the (source, destination) address pairs dropped
//   hp<pid>n<i>:      node i, eth0 = 10.S.T.(i+2)/24
//
// S.T comes from the launcher's pid (subnet_for_pid), so two launchers at once never share
// names or addresses; a /24 that some route of the root namespace already covers is skipped.
//
// Paper: Hwang et al. (ICDE 2005) assume fail-stop crashes (section 2); partitions are the
// failure docs/FAULTS.md adds, and the simulator cuts links the same way (sim/network.h).
//
// Invariant: everything created is named hp<pid>..., deleted when the NetIsolation is destroyed,
// deleted by a watcher process when the launcher dies without doing it, and deleted by the next
// launcher when the pid it names is no longer alive. Partitions of the same pair nest: the link
// heals when every partition of it has ended, as in the simulator.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hapair {

// ---- naming and addressing (pure) --------------------------------------------------------

// The most nodes one isolated run may have (a /24 holds the launcher and 253 nodes).
inline constexpr std::size_t kIsolatedNodesMax = 253;

std::string isolation_prefix(pid_t pid);                   // "hp1234"
std::string edge_namespace_name(pid_t pid);                // "hp1234e"
std::string node_namespace_name(pid_t pid, std::size_t i);  // "hp1234n3"
std::string root_link_name(pid_t pid);                     // "hp1234r"
std::string network_namespace_path(const std::string& name);  // "/var/run/netns/NAME", as `ip netns add` makes it
// The pid a name of the scheme belongs to (hp<pid> followed by e, r or n<digits>); nullopt for
// any other name.
std::optional<pid_t> isolation_owner(const std::string& name);

// An IPv4 /24: 10.S.T.0/24 as the number of 10.S.T.0.
struct Subnet24 {
  std::uint32_t base = 0;
  std::string address(std::uint32_t host) const;  // "10.S.T.host"
  std::string prefix() const;                      // "10.S.T.0/24"
};
// The launcher's address is host 1, node i's host i + 2.
inline std::uint32_t node_host(std::size_t node_index) { return static_cast<std::uint32_t>(node_index) + 2; }

// A parsed IPv4 prefix of a route ("10.0.0.0/8", "192.0.2.7" = /32).
struct Ipv4Prefix {
  std::uint32_t address = 0;
  int length = 32;
};
std::optional<Ipv4Prefix> parse_ipv4_prefix(const std::string& text);
// The destination prefixes of `ip -4 route show table all` output ("default" routes left out).
std::vector<Ipv4Prefix> route_prefixes(const std::string& ip_route_output);
// The /24 for a launcher of this pid: 10.(128 + k / 256).(k % 256).0 for k = pid mod 32768, or
// the next candidate (k + 1, ...) while a route in `taken` overlaps it; nullopt when all 32768
// are taken.
std::optional<Subnet24> subnet_for_pid(pid_t pid, const std::vector<Ipv4Prefix>& taken);

// ---- availability ------------------------------------------------------------------------

// Where the tools are; empty paths when not found.
struct IsolationTools {
  bool root = false;
  std::string ip;   // iproute2's ip
  std::string nft;  // nftables' nft
};
IsolationTools find_isolation_tools();
// Why real partitions cannot be made with these tools, or "" when they can.
std::string isolation_unavailable_reason(const IsolationTools& tools);
// Why real partitions cannot be made on this machine now, or "".
std::string net_isolation_unavailable();
// The sentence a refused real partition is reported with: what is missing, and where
// partitions do work.
std::string real_partition_refusal(const std::string& reason);

// ---- the namespaces of one run -----------------------------------------------------------

class NetIsolation {
 public:
  // Removes what launchers that are gone left behind (their pid no longer runs), then builds the
  // namespaces for `node_count` nodes. nullptr with `error` set when something failed (what was
  // built is removed again).
  static std::unique_ptr<NetIsolation> create(std::size_t node_count, std::string& error);
  ~NetIsolation();  // deletes the namespaces and the root link
  NetIsolation(const NetIsolation&) = delete;
  NetIsolation& operator=(const NetIsolation&) = delete;

  const std::string& launcher_address() const { return launcher_address_; }
  std::string node_address(std::size_t i) const { return subnet_.address(node_host(i)); }
  std::string node_namespace(std::size_t i) const { return node_namespace_name(pid_, i); }
  // Where node i's namespace is, for ExecSpec::network_namespace (the node's own process enters
  // it: its pid stays the one the launcher signals).
  std::string node_namespace_path(std::size_t i) const { return network_namespace_path(node_namespace(i)); }
  // The command (argv) that removes everything this run made; for a watcher that runs it when
  // the launcher dies without cleaning up.
  std::vector<std::string> cleanup_command() const;

  // Cuts both directions between nodes a and b (only the first of nested partitions of a pair
  // changes the rules). False with `error` when nft failed.
  bool cut(std::size_t a, std::size_t b, std::string& error);
  // Ends one partition of the pair; the rules go when the last one ends.
  bool heal(std::size_t a, std::size_t b, std::string& error);

 private:
  NetIsolation(pid_t pid, IsolationTools tools, Subnet24 subnet, std::size_t node_count);
  bool build(std::string& error);
  bool set_cut(std::size_t a, std::size_t b, bool cut, std::string& error);
  void remove();

  pid_t pid_;
  IsolationTools tools_;
  Subnet24 subnet_;
  std::size_t node_count_;
  std::string launcher_address_;
  std::vector<std::string> namespaces_;  // created, to delete
  bool root_link_ = false;
  std::map<std::pair<std::size_t, std::size_t>, int> cuts_;  // (lower, higher) -> nesting depth
};

// Deletes namespaces and root links of the naming scheme whose pid is not alive.
void remove_stale_isolation(const IsolationTools& tools);

}  // namespace hapair
