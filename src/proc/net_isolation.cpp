// Network isolation for real runs with partition faults (net_isolation.h): the names and
// addresses, the `ip` and `nft` commands that build and cut the namespaces, and their removal.
//
// Paper: partitions are a failure docs/FAULTS.md adds to the paper's fail-stop crashes.
//
// Invariant: every command runs as a child process of ours (ChildProcess, dying with us), its
// output in a temporary file that is removed afterwards; a failing command is an error that
// names the command and what it printed.
#include "proc/net_isolation.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "proc/child_process.h"

namespace hapair {

// ---- naming and addressing ---------------------------------------------------------------

std::string isolation_prefix(pid_t pid) { return fmt::format("hp{}", pid); }
std::string edge_namespace_name(pid_t pid) { return isolation_prefix(pid) + "e"; }
std::string node_namespace_name(pid_t pid, std::size_t i) { return fmt::format("{}n{}", isolation_prefix(pid), i); }
std::string root_link_name(pid_t pid) { return isolation_prefix(pid) + "r"; }
std::string network_namespace_path(const std::string& name) { return "/var/run/netns/" + name; }

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string dotted(std::uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

bool overlaps(const Ipv4Prefix& p, std::uint32_t base, int length) {
  const int shorter = std::min(p.length, length);
  const std::uint32_t mask = shorter == 0 ? 0 : ~std::uint32_t{0} << (32 - shorter);
  return (p.address & mask) == (base & mask);
}

}  // namespace

std::optional<pid_t> isolation_owner(const std::string& name) {
  if (name.rfind("hp", 0) != 0) return std::nullopt;
  std::size_t end = 2;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  const std::string_view digits(name.data() + 2, end - 2);
  if (!all_digits(digits) || digits.size() > 9 || end >= name.size()) return std::nullopt;
  const std::string_view rest(name.data() + end + 1, name.size() - end - 1);
  const char kind = name[end];
  const bool ok = ((kind == 'e' || kind == 'r') && rest.empty()) || (kind == 'n' && all_digits(rest));
  if (!ok) return std::nullopt;
  pid_t pid = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  return pid;
}

std::string Subnet24::address(std::uint32_t host) const { return dotted(base + host); }
std::string Subnet24::prefix() const { return dotted(base) + "/24"; }

std::optional<Ipv4Prefix> parse_ipv4_prefix(const std::string& text) {
  const std::size_t slash = text.find('/');
  const std::string addr = text.substr(0, slash);
  Ipv4Prefix p;
  int parts = 0;
  std::size_t at = 0;
  while (parts < 4) {
    const std::size_t dot = addr.find('.', at);
    const std::string part = addr.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (!all_digits(part) || part.size() > 3) return std::nullopt;
    const int value = std::atoi(part.c_str());
    if (value > 255) return std::nullopt;
    p.address = (p.address << 8) | static_cast<std::uint32_t>(value);
    ++parts;
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  if (parts != 4 || addr.find('.', at) != std::string::npos) return std::nullopt;
  if (slash != std::string::npos) {
    const std::string length = text.substr(slash + 1);
    if (!all_digits(length) || length.size() > 2 || std::atoi(length.c_str()) > 32) return std::nullopt;
    p.length = std::atoi(length.c_str());
  }
  return p;
}

std::vector<Ipv4Prefix> route_prefixes(const std::string& ip_route_output) {
  std::vector<Ipv4Prefix> out;
  std::istringstream lines(ip_route_output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    // The destination is the first word, or the second after a route type (local, broadcast, ...).
    for (std::string word; words >> word;) {
      if (auto p = parse_ipv4_prefix(word)) {
        out.push_back(*p);
        break;
      }
      if (word == "default" || word.find_first_of("0123456789") != std::string::npos) break;
    }
  }
  return out;
}

std::optional<Subnet24> subnet_for_pid(pid_t pid, const std::vector<Ipv4Prefix>& taken) {
  constexpr std::uint32_t kCandidates = 32768;
  const std::uint32_t first = static_cast<std::uint32_t>(pid) % kCandidates;
  for (std::uint32_t n = 0; n < kCandidates; ++n) {
    const std::uint32_t k = (first + n) % kCandidates;
    const std::uint32_t base = (10u << 24) | ((128u + k / 256) << 16) | ((k % 256) << 8);
    if (std::none_of(taken.begin(), taken.end(), [&](const Ipv4Prefix& p) { return overlaps(p, base, 24); }))
      return Subnet24{base};
  }
  return std::nullopt;
}

// ---- availability ------------------------------------------------------------------------

namespace {

std::string find_tool(const char* name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    const std::string path = std::string(dir) + name;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

}  // namespace

IsolationTools find_isolation_tools() { return IsolationTools{::geteuid() == 0, find_tool("ip"), find_tool("nft")}; }

std::string isolation_unavailable_reason(const IsolationTools& tools) {
  std::vector<std::string> missing;
  if (!tools.root) missing.push_back("not running as root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)");
  if (tools.ip.empty()) missing.push_back("no `ip` in /usr/sbin, /sbin, /usr/bin or /bin (install iproute2)");
  if (tools.nft.empty()) missing.push_back("no `nft` in /usr/sbin, /sbin, /usr/bin or /bin (install nftables)");
  return fmt::format("{}", fmt::join(missing, "; "));
}

std::string net_isolation_unavailable() { return isolation_unavailable_reason(find_isolation_tools()); }

std::string real_partition_refusal(const std::string& reason) {
  return "fault kind partition with real processes needs network namespaces and nftables, which are not available "
         "here: " + reason + " (the simulator, --driver sim, has partitions everywhere)";
}

// ---- running ip and nft ------------------------------------------------------------------

namespace {

struct ToolRun {
  bool ok = false;
  std::string output;
};

std::string command_text(const std::vector<std::string>& argv) { return fmt::format("{}", fmt::join(argv, " ")); }

// Runs argv[0] (an absolute path) to its end, in network namespace `ns` (a name of
// /var/run/netns; empty: ours); what it printed, and whether it exited with 0. A namespace is
// entered with setns(2) by our own child, not with `ip -n` or `ip netns exec`, whose
// mount-namespace set-up can take a second on a loaded machine.
ToolRun run_tool(const std::vector<std::string>& argv, const std::string& ns = "") {
  ToolRun r;
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && tmp[0] == '/' ? tmp : "/tmp") + "/hapair-net-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    r.output = std::string("cannot create a temporary file: ") + std::strerror(errno);
    return r;
  }
  ::close(fd);
  ExecSpec spec;
  spec.argv = argv;
  spec.output_path = path;
  spec.die_with_parent = true;
  spec.close_other_descriptors = true;
  if (!ns.empty()) spec.network_namespace = network_namespace_path(ns);
  std::string why;
  ChildProcess child = ChildProcess::spawn(spec, why);
  const std::optional<ChildExit> exit = child.wait();
  std::ifstream in(path);
  r.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  ::unlink(path.c_str());
  if (!why.empty()) r.output = why;
  r.ok = exit && exit->clean();
  while (!r.output.empty() && (r.output.back() == '\n' || r.output.back() == ' ')) r.output.pop_back();
  return r;
}

bool run_step(const std::vector<std::string>& argv, std::string& error, const std::string& ns = "") {
  const ToolRun r = run_tool(argv, ns);
  if (!r.ok)
    error = "`" + command_text(argv) + "`" + (ns.empty() ? "" : " in namespace " + ns) + " failed" +
            (r.output.empty() ? "" : ": " + r.output);
  return r.ok;
}

// Serializes the choice of a subnet and its route between launchers that start at once.
class IsolationLock {
 public:
  IsolationLock() {
    fd_ = ::open("/run/lock/hapair-netns.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) fd_ = ::open("/tmp/hapair-netns.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~IsolationLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  IsolationLock(const IsolationLock&) = delete;
  IsolationLock& operator=(const IsolationLock&) = delete;

 private:
  int fd_ = -1;
};

bool pid_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

void remove_stale_isolation(const IsolationTools& tools) {
  const pid_t self = ::getpid();
  auto stale = [&](const std::string& name) {
    const auto owner = isolation_owner(name);
    return owner && *owner != self && !pid_alive(*owner);
  };
  std::istringstream namespaces(run_tool({tools.ip, "netns", "list"}).output);
  for (std::string line; std::getline(namespaces, line);) {
    const std::string name = line.substr(0, line.find(' '));
    if (stale(name)) run_tool({tools.ip, "netns", "del", name});
  }
  // A root link goes with its edge namespace; one whose namespace was removed by hand stays.
  std::istringstream links(run_tool({tools.ip, "-o", "link", "show"}).output);
  for (std::string line; std::getline(links, line);) {
    // "7: hp123r@if6: <...": the name is between ": " and "@" or ":".
    const std::size_t from = line.find(": ");
    if (from == std::string::npos) continue;
    const std::size_t to = line.find_first_of("@:", from + 2);
    const std::string name = line.substr(from + 2, to == std::string::npos ? std::string::npos : to - from - 2);
    if (stale(name)) run_tool({tools.ip, "link", "del", name});
  }
}

// ---- the namespaces of one run -----------------------------------------------------------

NetIsolation::NetIsolation(pid_t pid, IsolationTools tools, Subnet24 subnet, std::size_t node_count)
    : pid_(pid), tools_(std::move(tools)), subnet_(subnet), node_count_(node_count), launcher_address_(subnet.address(1)) {}

std::unique_ptr<NetIsolation> NetIsolation::create(std::size_t node_count, std::string& error) {
  IsolationTools tools = find_isolation_tools();
  if (const std::string reason = isolation_unavailable_reason(tools); !reason.empty()) {
    error = real_partition_refusal(reason);
    return nullptr;
  }
  if (node_count > kIsolatedNodesMax) {
    error = fmt::format("partitions with real processes place each node in a /24: at most {} nodes, not {}",
                        kIsolatedNodesMax, node_count);
    return nullptr;
  }
  const IsolationLock lock;
  remove_stale_isolation(tools);
  const ToolRun routes = run_tool({tools.ip, "-4", "route", "show", "table", "all"});
  if (!routes.ok) {
    error = "cannot list the routes (`ip -4 route show table all`): " + routes.output;
    return nullptr;
  }
  const auto subnet = subnet_for_pid(::getpid(), route_prefixes(routes.output));
  if (!subnet) {
    error = "no free /24 in 10.128.0.0/9 for the nodes' namespaces";
    return nullptr;
  }
  std::unique_ptr<NetIsolation> isolation(new NetIsolation(::getpid(), std::move(tools), *subnet, node_count));
  if (!isolation->build(error)) {
    error = "cannot build the network namespaces for partitions: " + error;
    return nullptr;  // the destructor removed what was built
  }
  return isolation;
}

bool NetIsolation::build(std::string& error) {
  const std::string& ip = tools_.ip;
  const std::string edge = edge_namespace_name(pid_);
  const std::string root = root_link_name(pid_);
  auto add_namespace = [&](const std::string& ns) {
    if (!run_step({ip, "netns", "add", ns}, error)) return false;
    namespaces_.push_back(ns);
    return run_step({ip, "link", "set", "lo", "up"}, error, ns);
  };
  if (!add_namespace(edge)) return false;
  if (!run_step({ip, "link", "add", "br0", "type", "bridge"}, error, edge) ||
      !run_step({ip, "link", "set", "br0", "up"}, error, edge))
    return false;
  // The switch drops every frame from a cut pair's one end to the other: the senders see
  // silence, as across a real cut (a DROP on a sender's output would fail its sends at once).
  if (!run_step({tools_.nft,
                 "add table bridge hapair; add set bridge hapair cut { type ipv4_addr . ipv4_addr; }; "
                 "add chain bridge hapair forward { type filter hook forward priority 0; policy accept; }; "
                 "add rule bridge hapair forward ip saddr . ip daddr @cut counter drop"},
                error, edge))
    return false;
  // The launcher's end of the bridge: the one name in the root namespace.
  if (!run_step({ip, "link", "add", root, "type", "veth", "peer", "name", "uplink", "netns", edge}, error)) return false;
  root_link_ = true;
  if (!run_step({ip, "addr", "add", launcher_address_ + "/24", "dev", root}, error) ||
      !run_step({ip, "link", "set", root, "up"}, error) ||
      !run_step({ip, "link", "set", "uplink", "master", "br0", "up"}, error, edge))
    return false;
  for (std::size_t i = 0; i < node_count_; ++i) {
    const std::string ns = node_namespace(i);
    const std::string port = fmt::format("n{}", i);
    if (!add_namespace(ns) ||
        !run_step({ip, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns}, error, edge) ||
        !run_step({ip, "link", "set", port, "master", "br0", "up"}, error, edge) ||
        !run_step({ip, "addr", "add", node_address(i) + "/24", "dev", "eth0"}, error, ns) ||
        !run_step({ip, "link", "set", "eth0", "up"}, error, ns))
      return false;
  }
  return true;
}

NetIsolation::~NetIsolation() { remove(); }

void NetIsolation::remove() {
  // The root link first: it would go with the edge namespace, but the kernel removes a deleted
  // namespace's links later, asynchronously, and nothing may be left when the run returns.
  if (root_link_) run_tool({tools_.ip, "link", "del", root_link_name(pid_)});
  root_link_ = false;
  // Deleting a namespace deletes the links in it and their veth peers, the bridge and its rules.
  for (auto it = namespaces_.rbegin(); it != namespaces_.rend(); ++it) run_tool({tools_.ip, "netns", "del", *it});
  namespaces_.clear();
}

std::vector<std::string> NetIsolation::cleanup_command() const {
  std::string script = tools_.ip + " link del " + root_link_name(pid_) + " 2>/dev/null; ";
  for (const std::string& ns : namespaces_) script += tools_.ip + " netns del " + ns + " 2>/dev/null; ";
  script += "exit 0";
  return {"/bin/sh", "-c", script};
}

bool NetIsolation::set_cut(std::size_t a, std::size_t b, bool cut, std::string& error) {
  // Both directions in one nft transaction.
  const std::string pairs = fmt::format("{{ {0} . {1}, {1} . {0} }}", node_address(a), node_address(b));
  return run_step({tools_.nft, cut ? "add" : "delete", "element", "bridge", "hapair", "cut", pairs}, error,
                  edge_namespace_name(pid_));
}

bool NetIsolation::cut(std::size_t a, std::size_t b, std::string& error) {
  int& depth = cuts_[{std::min(a, b), std::max(a, b)}];
  if (++depth > 1) return true;
  return set_cut(a, b, true, error);
}

bool NetIsolation::heal(std::size_t a, std::size_t b, std::string& error) {
  const auto key = std::pair{std::min(a, b), std::max(a, b)};
  const auto it = cuts_.find(key);
  if (it == cuts_.end() || it->second == 0) return true;
  if (--it->second > 0) return true;
  return set_cut(a, b, false, error);
}

}  // namespace hapair
