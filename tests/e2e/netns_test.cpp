// Several hosts for real: the nodes of a passive-standby network run in three Linux network
// namespaces joined by veth links (real sockets across separate network stacks, not loopback),
// started by hand the way `hapair run --manual` tells an operator to. One run cuts the primaries'
// namespace off with an nftables DROP rule (a partition in which the primaries live on), the
// other SIGKILLs a primary inside its namespace; in both the backups take over and the output is
// precise (docs/FAULTS.md).
//
//   namespace edge (10.200.0.1): bridge br0, the launcher, source, sink
//   namespace prim (10.200.0.2): filter, aggregate          -- veth --> br0
//   namespace back (10.200.0.3): filter.backup, aggregate.backup  -- veth --> br0
//
// Needs root, `ip` (iproute2) and `nft` (nftables); otherwise it is skipped with a message.
// Everything it creates lives inside its own namespaces (named after the test's pid), so deleting
// them removes the links, the bridge and the rules; a guard does that on every exit path.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

bool tcp_reaches(const std::string& edge, const std::string& from);

// A child process with its stdout and stderr in one pipe.
struct Child {
  pid_t pid = -1;
  int out_fd = -1;
  std::string output;
  int status = 0;
  bool exited = false;
};

// pid -1 when the pipe or the fork failed (no assertion here: the guard's destructor uses it).
Child spawn(const std::vector<std::string>& argv, bool capture) {
  int fds[2] = {-1, -1};
  Child c;
  if (capture && ::pipe2(fds, O_CLOEXEC) != 0) return c;
  c.pid = ::fork();
  if (c.pid < 0) {
    if (capture) ::close(fds[0]), ::close(fds[1]);
    c.exited = true;
    return c;
  }
  if (c.pid == 0) {
    ::setpgid(0, 0);
    const int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(capture ? fds[1] : null_fd, STDOUT_FILENO);
    ::dup2(capture ? fds[1] : null_fd, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (capture) {
    ::close(fds[1]);
    c.out_fd = fds[0];
  }
  return c;
}

// Reads what the child printed for up to `timeout`; stops early when `until` appears (if given)
// or the output ends.
void read_output(Child& c, std::chrono::milliseconds timeout, const std::string& until = "") {
  if (c.out_fd < 0) return;
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (!until.empty() && c.output.find(until) != std::string::npos) return;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{c.out_fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::max<long long>(1, std::min<long long>(left.count(), 200))));
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(c.out_fd, buf, sizeof buf);
    if (n <= 0) {
      ::close(c.out_fd);
      c.out_fd = -1;
      return;
    }
    c.output.append(buf, static_cast<std::size_t>(n));
  }
}

// Waits up to `timeout` for the child to exit (reading its output meanwhile); true when it did.
bool netns_wait_exit(Child& c, std::chrono::milliseconds timeout) {
  if (c.pid < 0) return true;
  const auto deadline = Clock::now() + timeout;
  while (!c.exited) {
    const pid_t got = ::waitpid(c.pid, &c.status, WNOHANG);
    if (got == c.pid) {
      c.exited = true;
      break;
    }
    if (Clock::now() >= deadline) return false;
    if (c.out_fd >= 0) read_output(c, std::chrono::milliseconds(100));
    else std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  read_output(c, std::chrono::milliseconds(500));
  return true;
}

// Runs a command to its end (bounded) and returns its exit status (-1: did not exit in time).
int run(const std::vector<std::string>& argv, std::string* output = nullptr) {
  Child c = spawn(argv, true);
  if (c.pid < 0) return -1;
  if (!netns_wait_exit(c, std::chrono::seconds(20))) {
    ::kill(c.pid, SIGKILL);
    netns_wait_exit(c, std::chrono::seconds(5));
    return -1;
  }
  if (output) *output = c.output;
  return WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1;
}

bool have_tool(const char* name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"})
    if (::access((std::string(dir) + name).c_str(), X_OK) == 0) return true;
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The three namespaces and their links; the destructor kills every process the test started in
// them and deletes the namespaces (which removes the veth links, the bridge and nftables rules).
class NetnsLab {
 public:
  NetnsLab() {
    const std::string tag = "hapair-" + std::to_string(::getpid());
    edge = tag + "-edge";
    prim = tag + "-prim";
    back = tag + "-back";
    remove_stale();
  }
  ~NetnsLab() {
    for (Child* c : children_)
      if (!c->exited) {
        ::kill(c->pid, SIGKILL);
        netns_wait_exit(*c, std::chrono::seconds(5));
      }
    for (const auto& ns : created_) run({"ip", "netns", "del", ns});
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  // Builds the namespaces; returns "" or what failed (the caller skips: the sandbox forbids it).
  std::string build() {
    for (const auto& ns : {edge, prim, back}) {
      std::string out;
      if (run({"ip", "netns", "add", ns}, &out) != 0) return "ip netns add " + ns + " failed: " + out;
      created_.push_back(ns);
      if (run({"ip", "-n", ns, "link", "set", "lo", "up"}, &out) != 0) return "lo up in " + ns + ": " + out;
    }
    const std::vector<std::vector<std::string>> steps = {
        {"ip", "-n", edge, "link", "add", "br0", "type", "bridge"},
        {"ip", "-n", edge, "addr", "add", "10.200.0.1/24", "dev", "br0"},
        {"ip", "-n", edge, "link", "set", "br0", "up"},
        // Both ends of each link are created inside the namespaces, so nothing is ever named in
        // the root namespace (two runs of this test at once cannot collide).
        {"ip", "-n", edge, "link", "add", "to-prim", "type", "veth", "peer", "name", "eth0", "netns", prim},
        {"ip", "-n", edge, "link", "add", "to-back", "type", "veth", "peer", "name", "eth0", "netns", back},
        {"ip", "-n", edge, "link", "set", "to-prim", "master", "br0", "up"},
        {"ip", "-n", edge, "link", "set", "to-back", "master", "br0", "up"},
        {"ip", "-n", prim, "addr", "add", "10.200.0.2/24", "dev", "eth0"},
        {"ip", "-n", prim, "link", "set", "eth0", "up"},
        {"ip", "-n", back, "addr", "add", "10.200.0.3/24", "dev", "eth0"},
        {"ip", "-n", back, "link", "set", "eth0", "up"},
    };
    for (const auto& s : steps) {
      std::string out;
      if (run(s, &out) != 0) {
        std::string cmd;
        for (const auto& a : s) cmd += a + " ";
        return cmd + "failed: " + out;
      }
    }
    for (const auto& ns : {prim, back})
      if (!tcp_reaches(edge, ns)) return "no TCP connection from namespace " + ns + " to 10.200.0.1 in " + edge;
    return "";
  }

  // Starts a command inside namespace `ns` (ip netns exec execs it, so the pid is the command's).
  Child* start(const std::string& ns, const std::vector<std::string>& argv, bool capture) {
    std::vector<std::string> full = {"ip", "netns", "exec", ns};
    full.insert(full.end(), argv.begin(), argv.end());
    owned_.push_back(std::make_unique<Child>(spawn(full, capture)));
    children_.push_back(owned_.back().get());
    return owned_.back().get();
  }

  // Drops everything on the namespace's only link, both ways, counting what it dropped.
  std::string cut(const std::string& ns) {
    const std::string rules =
        "table inet hapair_cut {\n"
        "  chain input { type filter hook input priority 0; policy accept; iifname \"eth0\" counter drop; }\n"
        "  chain output { type filter hook output priority 0; policy accept; oifname \"eth0\" counter drop; }\n"
        "}\n";
    const std::string file = dir + "/cut.nft";
    std::ofstream(file) << rules;
    std::string out;
    if (run({"ip", "netns", "exec", ns, "nft", "-f", file}, &out) != 0) return "nft -f failed: " + out;
    return "";
  }
  // Packets the cut dropped so far.
  long long dropped(const std::string& ns) {
    std::string out;
    run({"ip", "netns", "exec", ns, "nft", "list", "table", "inet", "hapair_cut"}, &out);
    long long total = 0;
    for (std::size_t at = out.find("packets "); at != std::string::npos; at = out.find("packets ", at + 1))
      total += std::atoll(out.c_str() + at + 8);
    return total;
  }
  void heal(const std::string& ns) { run({"ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "hapair_cut"}); }

  std::string edge, prim, back, dir;

 private:
  // Namespaces left by an earlier run of this test that was killed before its guard ran.
  void remove_stale() {
    std::string out;
    run({"ip", "netns", "list"}, &out);
    std::istringstream is(out);
    for (std::string line; std::getline(is, line);) {
      const std::string name = line.substr(0, line.find(' '));
      if (name.rfind("hapair-", 0) != 0) continue;
      const std::string pid = name.substr(7, name.find('-', 7) - 7);
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (std::to_string(::getpid()) != pid && ::access(("/proc/" + pid).c_str(), F_OK) != 0)
        run({"ip", "netns", "del", name});
    }
  }

  std::vector<std::string> created_;
  std::vector<std::unique_ptr<Child>> owned_;
  std::vector<Child*> children_;
};

// Runs `body` in a forked child inside network namespace `ns`; its exit status (-1: failed).
int in_namespace(const std::string& ns, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int fd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) ::_exit(90);
    ::_exit(body());
  }
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 200; ++i) {  // at most 10 s
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// Whether a TCP connection from namespace `from` reaches 10.200.0.1:47999 in namespace `edge`
// (no ping or netcat needed: a listener and a client, each a forked child in its namespace).
bool tcp_reaches(const std::string& edge, const std::string& from) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(47999);
  ::inet_pton(AF_INET, "10.200.0.1", &addr.sin_addr);
  const pid_t listener = in_namespace(edge, [addr]() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(s, 1) != 0) return 91;
    pollfd p{s, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return 92;
    return ::accept(s, nullptr, nullptr) >= 0 ? 0 : 93;
  });
  if (listener < 0) return false;
  const pid_t client = in_namespace(from, [addr]() {
    for (int attempt = 0; attempt < 40; ++attempt) {  // the listener may not be up yet
      const int s = ::socket(AF_INET, SOCK_STREAM, 0);
      if (::connect(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return 0;
      ::close(s);
      ::usleep(100'000);
    }
    return 94;
  });
  const bool client_ok = client >= 0 && wait_child(client) == 0;
  const bool listener_ok = wait_child(listener) == 0;
  return client_ok && listener_ok;
}

// Why the test cannot run here, or "".
std::string skip_reason() {
  if (::geteuid() != 0) return "not root: network namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN";
  if (!have_tool("ip")) return "no `ip` (install iproute2)";
  if (!have_tool("nft")) return "no `nft` (install nftables)";
  return "";
}

const char* kTopology = R"toml([network]
name = "netns"
duration_s = 6
ha = "passive"
heartbeat_interval_ms = 20
failure_timeout_ms = 150
checkpoint_interval_ms = 100

[[source]]
name = "source"
stream = "raw"
rate_tps = 1000
key_count = 8
values = "uniform(0, 100)"
endpoint = "tcp://10.200.0.1:*"

[[fragment]]
name = "filter"
endpoint = "tcp://10.200.0.2:*"
standby_endpoint = "tcp://10.200.0.3:*"

[[fragment.operator]]
name = "keep_small"
type = "filter"
input = "raw"
output = "small"
where = "value < 80"

[[fragment]]
name = "aggregate"
endpoint = "tcp://10.200.0.2:*"
standby_endpoint = "tcp://10.200.0.3:*"

[[fragment.operator]]
name = "sum_per_key"
type = "aggregate"
input = "small"
output = "totals"
function = "sum"
window_ms = 200
slide_ms = 20
group_by = "key"

[[sink]]
name = "sink"
input = "totals"
endpoint = "tcp://10.200.0.1:*"
)toml";

const char* kNodes[] = {"source", "sink", "filter", "aggregate", "filter.backup", "aggregate.backup"};

struct Outcome {
  std::string launcher_output;
  int launcher_status = 0;
  std::string summary;  // summary.json
  std::string events;   // events.csv
  std::map<std::string, int> node_status;
  long long dropped = 0;
};

// One manual-mode run: the launcher in the edge namespace, each node started by hand in its own
// namespace; `fault` runs while the run is in progress (after the nodes started).
Outcome run_across_namespaces(NetnsLab& lab, const std::vector<std::string>& launcher_extra,
                              const std::function<void(NetnsLab&)>& fault) {
  const std::string topology = lab.dir + "/netns.toml";
  std::ofstream(topology) << kTopology;
  const std::string out_dir = lab.dir + "/out";
  std::vector<std::string> launcher = {HAPAIR_BINARY, "run", "--driver", "real", "--topology", topology, "--manual",
                                       "--control", "tcp://10.200.0.1:47000", "--advertise", "tcp://10.200.0.1:47000",
                                       "--out", out_dir};
  launcher.insert(launcher.end(), launcher_extra.begin(), launcher_extra.end());
  Child* l = lab.start(lab.edge, launcher, true);
  // The launcher prints where the effective topology is and one `hapair node` line per node.
  read_output(*l, std::chrono::seconds(30), "aggregate.backup");
  const std::string& text = l->output;
  const auto copy = text.find("Copy ");
  const auto to = text.find(" to every host");
  INFO("launcher said:\n" << text);
  REQUIRE(copy != std::string::npos);
  REQUIRE(to != std::string::npos);
  const std::string effective = text.substr(copy + 5, to - copy - 5);
  REQUIRE(std::filesystem::exists(effective));

  std::map<std::string, Child*> nodes;
  for (const char* name : kNodes) {
    const std::string n = name;
    const std::string ns = (n == "source" || n == "sink") ? lab.edge : (n.find(".backup") != std::string::npos ? lab.back : lab.prim);
    nodes[n] = lab.start(ns, {HAPAIR_BINARY, "node", "--topology", effective, "--name", n, "--control", "tcp://10.200.0.1:47000"}, false);
  }
  fault(lab);

  Outcome o;
  const bool ended = netns_wait_exit(*l, std::chrono::seconds(120));
  CHECK(ended);
  o.launcher_output = l->output;
  o.launcher_status = ended && WIFEXITED(l->status) ? WEXITSTATUS(l->status) : -1;
  for (auto& [name, child] : nodes) {
    if (!netns_wait_exit(*child, std::chrono::seconds(10))) {
      ::kill(child->pid, SIGKILL);
      netns_wait_exit(*child, std::chrono::seconds(5));
    }
    o.node_status[name] = child->status;
  }
  o.summary = read_file(out_dir + "/summary.json");
  o.events = read_file(out_dir + "/events.csv");
  return o;
}

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("hapair-netns-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

bool netns_has_event(const std::string& events, const std::string& node, const std::string& event) {
  return events.find("," + node + "," + event + ",") != std::string::npos;
}

// Builds the lab; false (with a warning that says why) when this machine cannot run the test.
bool prepare(NetnsLab& lab, const std::string& name) {
  std::string why = skip_reason();
  if (why.empty()) {
    lab.dir = temp_dir(name);
    const std::string failed = lab.build();
    if (!failed.empty()) why = "cannot build network namespaces here: " + failed;
  }
  if (!why.empty()) WARN("netns test skipped: " << why);
  return why.empty();
}

}  // namespace

TEST_CASE("across network namespaces, an nftables cut of the primaries' host makes the backups take over, and the output stays precise", "[e2e][netns]") {
  NetnsLab lab;
  if (!prepare(lab, "cut")) return;
  const Outcome o = run_across_namespaces(lab, {}, [](NetnsLab& l) {
    // About 1.5 s into the run (the epoch starts once every node said hello), for 1.5 s: the
    // primaries live on, cut off from their backups, their upstream, their downstream and the
    // launcher; after the heal they learn the newer epoch, are fenced and rejoin as standbys.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    REQUIRE(l.cut(l.prim).empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const long long dropped = l.dropped(l.prim);
    l.heal(l.prim);
    CHECK(dropped > 0);  // the cut really dropped traffic
  });
  INFO("launcher output:\n" << o.launcher_output);
  INFO("events:\n" << o.events);
  CHECK(o.launcher_status == 0);
  CHECK(o.summary.find("\"verdict\": \"precise\"") != std::string::npos);
  CHECK(o.summary.find("\"completed\": true") != std::string::npos);
  // Both backups (in their own namespace) took over while the primaries were alive.
  CHECK(netns_has_event(o.events, "filter.backup", "takeover"));
  CHECK(netns_has_event(o.events, "aggregate.backup", "takeover"));
  // The primaries never died: they were fenced once they heard of the newer epoch.
  CHECK((netns_has_event(o.events, "filter", "fenced") || netns_has_event(o.events, "aggregate", "fenced")));
  for (const auto& [name, status] : o.node_status) {
    INFO("node " << name);
    CHECK(WIFEXITED(status));
  }
}

TEST_CASE("across network namespaces, a primary SIGKILLed inside its namespace is replaced by its backup precisely", "[e2e][netns]") {
  NetnsLab lab;
  if (!prepare(lab, "kill")) return;
  // In manual mode the launcher delivers a crash as a Kill message: the node raises SIGKILL on
  // itself, inside its namespace, at 2.5 s of the run.
  const Outcome o = run_across_namespaces(lab, {"--fail", "aggregate@2.5"}, [](NetnsLab&) {});
  INFO("launcher output:\n" << o.launcher_output);
  INFO("events:\n" << o.events);
  CHECK(o.launcher_status == 0);
  CHECK(o.summary.find("\"verdict\": \"precise\"") != std::string::npos);
  const int killed = o.node_status.at("aggregate");
  CHECK(WIFSIGNALED(killed));
  CHECK((WIFSIGNALED(killed) && WTERMSIG(killed) == SIGKILL));
  CHECK(netns_has_event(o.events, "aggregate.backup", "takeover"));
  CHECK_FALSE(netns_has_event(o.events, "filter.backup", "takeover"));
}
