// The hosts of a run on several machines (docs/HOSTS.md): where each one is, how the
// launcher reaches it over OpenSSH, where its files go, and labels such as its rack. Plain
// values; src/config/hosts_file.h reads them from a TOML hosts file.
//
// Paper: Hwang et al. (ICDE 2005) put every server of a process pair on its own machine
// (section 2: a primary and its backup fail independently); the hosts are those machines.
//
// Invariant: a HostList that validate_hosts() accepted has at least one host, unique non-empty
// names and addresses, ssh ports in 1..65535, a data port range inside 1..65535, and only
// labels with non-empty keys; placement (hosts/placement.h) relies on each of these.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hapair {

// The label whose value names a host's rack: placement keeps a primary and its standby in
// different racks when the hosts allow it.
inline constexpr const char* kRackLabel = "rack";
inline constexpr std::int64_t kSshPortDefault = 22;
// The first data port of the nodes placed on a host; the next node gets the next port.
inline constexpr std::int64_t kDataPortBaseDefault = 7100;
inline constexpr std::size_t kHostsMax = 1024;

struct HostSpec {
  std::string name;     // how topologies pin to it and tables show it: "h1"
  std::string address;  // what the other hosts and ssh reach it by: "10.0.0.2", "node-2.lan"
  std::string ssh_user;
  std::int64_t ssh_port = kSshPortDefault;
  std::string identity_file;  // ssh -i; empty: ssh's own choice
  std::string known_hosts_file;  // ssh's UserKnownHostsFile; empty: ssh's own (~/.ssh/known_hosts)
  std::string work_dir;       // where the run's files go on the host
  std::int64_t data_port_base = kDataPortBaseDefault;
  std::map<std::string, std::string> labels;  // rack = "r1", ...
  std::string where;  // "file:line" of its [[host]] table, for messages

  // The rack label's value; empty when the host has none (then it shares a rack with no host).
  std::string rack() const;
  friend bool operator==(const HostSpec&, const HostSpec&) = default;
};

struct HostList {
  std::vector<HostSpec> hosts;
  std::string source_file;  // the file they were read from, for messages

  // The index of the host of that name; nullopt when absent.
  std::optional<std::size_t> index_of(const std::string& name) const;
  std::vector<std::string> names() const;
  friend bool operator==(const HostList&, const HostList&) = default;
};

// Every problem of a host list at once (empty: valid), each naming the host's file:line and
// what is wrong.
std::vector<std::string> validate_hosts(const HostList& hosts);

// The endpoint a node on this host binds: tcp://ADDRESS:PORT (an IPv6 address in brackets).
std::string host_endpoint(const HostSpec& host, std::int64_t port);

}  // namespace hapair
