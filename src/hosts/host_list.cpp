#include "hosts/host_list.h"

namespace hapair {

std::string HostSpec::rack() const {
  const auto it = labels.find(kRackLabel);
  return it == labels.end() ? std::string() : it->second;
}

std::optional<std::size_t> HostList::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < hosts.size(); ++i)
    if (hosts[i].name == name) return i;
  return std::nullopt;
}

std::vector<std::string> HostList::names() const {
  std::vector<std::string> out;
  for (const HostSpec& h : hosts) out.push_back(h.name);
  return out;
}

namespace {

bool valid_host_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  return true;
}

// What ssh and ZeroMQ both take: letters, digits, '.', '-', ':' (IPv6), no spaces or shell text.
bool valid_address(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':'))
      return false;
  return true;
}

// A user name ssh passes on: no '@', spaces or shell metacharacters.
bool valid_user(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

}  // namespace

std::vector<std::string> validate_hosts(const HostList& list) {
  std::vector<std::string> problems;
  const std::string file = list.source_file.empty() ? "the hosts" : list.source_file;
  if (list.hosts.empty()) problems.push_back(file + ": names no host; write one [[host]] table per host");
  if (list.hosts.size() > kHostsMax)
    problems.push_back(file + ": names " + std::to_string(list.hosts.size()) + " hosts, at most " +
                       std::to_string(kHostsMax) + " are supported");
  std::map<std::string, std::string> name_where, address_where;
  for (const HostSpec& h : list.hosts) {
    const std::string at = (h.where.empty() ? file : h.where) + ": ";
    const std::string d = h.name.empty() ? "[[host]]" : "host '" + h.name + "'";
    if (!valid_host_name(h.name))
      problems.push_back(at + d + ": name must be 1 to 64 letters, digits, '_' or '-'");
    else if (auto [it, fresh] = name_where.emplace(h.name, h.where); !fresh)
      problems.push_back(at + d + ": the name is already used by the host at " + it->second);
    if (!valid_address(h.address))
      problems.push_back(at + d + ": address '" + h.address +
                         "' must be a host name or an IP address (letters, digits, '.', '-', ':')");
    else if (auto [it, fresh] = address_where.emplace(h.address, h.where); !fresh)
      problems.push_back(at + d + ": address '" + h.address + "' is already used by the host at " + it->second +
                         " (two names for one machine would put a primary and its standby on it)");
    if (!valid_user(h.ssh_user))
      problems.push_back(at + d + ": user '" + h.ssh_user + "' must be 1 to 32 letters, digits, '_', '-' or '.'");
    if (h.ssh_port < 1 || h.ssh_port > 65535)
      problems.push_back(at + d + ": port = " + std::to_string(h.ssh_port) + ": the ssh port must be 1 to 65535");
    if (h.data_port_base < 1024 || h.data_port_base > 65535)
      problems.push_back(at + d + ": data_port_base = " + std::to_string(h.data_port_base) +
                         ": must be 1024 to 65535 (the first data port of the nodes placed on the host)");
    if (h.work_dir.empty() || h.work_dir.front() != '/')
      problems.push_back(at + d + ": work_dir '" + h.work_dir + "' must be an absolute path, like \"/tmp/hapair\"");
    for (const auto& [key, value] : h.labels)
      if (key.empty()) problems.push_back(at + d + ": a label needs a non-empty key");
  }
  return problems;
}

std::string host_endpoint(const HostSpec& host, std::int64_t port) {
  const bool v6 = host.address.find(':') != std::string::npos;
  return "tcp://" + (v6 ? "[" + host.address + "]" : host.address) + ":" + std::to_string(port);
}

}  // namespace hapair
