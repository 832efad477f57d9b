// The hosts of a run on several machines (remote_hosts.h): setting them up over ssh, starting
// nodes there, signals sent there, the clock offsets, and the cleanup at the end.
//
// Paper: section 6's servers on machines of their own; section 2's fail-stop crash as a SIGKILL
// on the victim's host.
//
// Invariant: every ssh command has a timeout (HostsLaunch::ssh_timeout_s), and every process
// this file starts is a child of the launcher that dies with it.
#include "protocols/version.h"
#include "launch/remote_hosts.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <map>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace hapair::launcher {
namespace {

std::int64_t realtime_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The value after `key ` on a line of `text` that starts with it; "" when none.
std::string line_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const std::size_t start = text.find_last_of('\n', end);
  const std::size_t from = start == std::string::npos ? 0 : start + 1;
  return text.substr(from, end + 1 - from);
}

// `script` for the remote login shell, whatever it is: `exec sh -c 'SCRIPT'`.
std::string posix_sh(const std::string& script) { return "exec sh -c " + shell_quote(script); }

std::string ssh_problem(const RemoteResult& r) {
  const std::string why = r.describe();
  const std::string said = last_line(r.output);
  return said.empty() || why.find(said) != std::string::npos ? why : why + ": " + said;
}

// Shell: SIGKILLs every node process of the run folder $d still alive (its pid files), checking
// that the pid's command line names $d, so a pid reused by another process is left alone.
const char* const kKillRunProcesses =
    "for f in \"$d\"/*.pid; do [ -f \"$f\" ] || continue; read p < \"$f\"; "
    "if tr '\\000' ' ' <\"/proc/$p/cmdline\" 2>/dev/null | grep -qF -- \"$d\"; then kill -KILL \"$p\"; "
    "echo \"hapair-run-killed $p\"; fi; done; ";

// Shell: the nftables table of a host loss in run folder $d: "hapair_" and the folder's name
// with every character but letters and digits made '_'.
const char* const kLossTable = "t=hapair_$(basename \"$d\" | tr -c 'A-Za-z0-9\\n' '_'); ";

// Shell: every address `address` resolves to on the host, in $q (a literal stays itself; exit
// 95 when it resolves to none).
std::string kPeerAddresses(const std::string& address) {
  return "q=$(getent ahosts " + shell_quote(address) + " | awk '{print $1}' | sort -u | tr '\\n' ' '); [ -n \"$q\" ] || exit 95; ";
}

// Shell: the interface the route to the first of $q takes, in $x (exit 93 when there is none).
const char* const kPeerInterface =
    "set -- $q; x=$(ip -o route get \"$1\" 2>/dev/null | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p'); "
    "[ -n \"$x\" ] || { echo \"no route to $1\"; exit 93; }; ";

// Shell: the root qdiscs of the bandwidth limits made in run folder $d (tc.devs), deleted: each
// interface gets its default qdisc back.
const char* const kRemoveLimits =
    "[ -f \"$d/tc.devs\" ] && for x in $(sort -u \"$d/tc.devs\"); do tc qdisc del dev \"$x\" root >/dev/null 2>&1; done; ";

// Shell: the nftables table of the link cuts (partitions across hosts) in run folder $d: the loss
// table's name and "_cut" (kLossTable sets $t first).
const char* const kCutTable = "c=\"${t}_cut\"; ";

}  // namespace

RemoteInstant remote_instant(const RemoteSignal& signal, const std::optional<ClockOffset>& offset) {
  // The kill follows the "before" reading at once (the shell's builtin, after `date` printed);
  // the "after" reading bounds it: the before reading is the estimate, late by up to the window.
  const std::int64_t window = signal.host_after_us - signal.host_before_us;
  const std::int64_t reading = signal.host_before_us;
  RemoteInstant instant;
  // An estimate that admits 0 is not applied (the correction would only add its error, and
  // synchronised clocks are the common case): the reading stands, its bound widened to every
  // offset the estimate allows.
  const bool apply = offset && !offset->admits(0);
  instant.at_us = apply ? offset->to_launcher_us(reading) : reading;
  const std::int64_t offset_bound =
      !offset ? 0 : apply ? offset->error_bound_us() : std::llabs(offset->offset_us()) + offset->error_bound_us();
  instant.error_bound_us = window + offset_bound;
  // The signal certainly happened between sending the command and reading its answer.
  std::int64_t low = std::max(instant.at_us - instant.error_bound_us, signal.sent_us);
  std::int64_t high = std::min(instant.at_us + instant.error_bound_us, signal.answered_us);
  if (low > high) {
    // The host's reading contradicts the launcher's (an offset estimate that is wrong beyond its
    // bound): only the launcher's own interval is sure.
    instant.at_us = signal.sent_us + (signal.answered_us - signal.sent_us) / 2;
    instant.error_bound_us = (signal.answered_us - signal.sent_us + 1) / 2;
    return instant;
  }
  // The reading stays the estimate when it lies inside (cutting the interval does not move it);
  // the bound is its distance to the farther end.
  instant.at_us = std::clamp(instant.at_us, low, high);
  instant.error_bound_us = std::max(instant.at_us - low, high - instant.at_us);
  return instant;
}

std::string keeper_command(const std::string& work_dir) {
  const std::string w = shell_quote(work_dir);
  // SIGPIPE and SIGHUP ignored: the connection may be gone when it cleans up. A host loss's
  // nftables table goes too (nft errors ignored: no loss, or no nft), and the bandwidth limits'
  // root qdiscs (the interface gets its default one back).
  return posix_sh("trap '' PIPE HUP INT TERM; umask 077; mkdir -p " + w + " || exit 1; d=$(mktemp -d " + w +
                  "/hapair-run-XXXXXX) || exit 1; echo \"hapair-run-dir $d\"; cat >/dev/null; " + kKillRunProcesses +
                  kLossTable + kCutTable + "nft delete table inet \"$t\" >/dev/null 2>&1; nft delete table inet \"$c\" >/dev/null 2>&1; " +
                  kRemoveLimits + "rm -rf -- \"$d\" && echo \"hapair-run-removed $d\"");
}

std::string host_loss_command(const std::string& run_dir, std::int64_t ssh_port) {
  const std::string port = std::to_string(ssh_port);
  // Every link dropped but the ssh port (the launcher's master, which carries this and the
  // cleanup), in both directions, loopback kept; then the processes killed.
  const std::string rules = "table inet $t { chain lost_in { type filter hook input priority 0; policy drop; "
                            "iif lo accept; tcp dport " + port + " accept; }; chain lost_out { type filter hook output "
                            "priority 0; policy drop; oif lo accept; tcp sport " + port + " accept; }; }";
  return posix_sh("d=" + shell_quote(run_dir) + "; " + kLossTable + "echo \"" + rules +
                  "\" | nft -f - || exit 91; a=$(date +%s%N); " + kKillRunProcesses + "b=$(date +%s%N); echo \"$a $b\"");
}

std::string cut_table_command(const std::string& run_dir, std::int64_t ssh_port) {
  const std::string port = std::to_string(ssh_port);
  // Empty sets: nothing is dropped until a cut adds a peer's addresses (IPv4 and IPv6). The ssh
  // port stays open both ways (the launcher's masters carry the cuts, the heals and the cleanup).
  const std::string rules = "table inet $c { set peers4 { type ipv4_addr; }; set peers6 { type ipv6_addr; }; chain cut_in "
                            "{ type filter hook input priority 0; policy accept; tcp dport " + port + " accept; ip saddr "
                            "@peers4 drop; ip6 saddr @peers6 drop; }; chain cut_out { type filter hook output priority 0; "
                            "policy accept; tcp sport " + port + " accept; ip daddr @peers4 drop; ip6 daddr @peers6 drop; }; }";
  return posix_sh("d=" + shell_quote(run_dir) + "; " + kLossTable + kCutTable + "echo \"" + rules +
                  "\" | nft -f - 2>&1 || exit 92");
}

std::string cut_command(const std::string& run_dir, const std::string& peer_address, bool cut) {
  // Every address the peer's name resolves to on this host (a literal stays itself), each in the
  // set of its family, by one nft command between the two readings.
  return posix_sh("d=" + shell_quote(run_dir) + "; " + kLossTable + kCutTable + kPeerAddresses(peer_address) +
                  "e=; for p in $q; do case \"$p\" in *:*) e=\"$e " + (cut ? "add" : "delete") +
                  " element inet $c peers6 { $p }\n\";; *) e=\"$e " + (cut ? "add" : "delete") +
                  " element inet $c peers4 { $p }\n\";; esac; done; a=$(date +%s%N); printf \"$e\" | nft -f - 2>&1 || exit 92; "
                  "b=$(date +%s%N); echo \"$a $b\"");
}

std::string limit_setup_script(const std::string& run_dir, const std::string& peer_address, int slot,
                               std::int64_t rate_bits_per_s) {
  const std::string k = std::to_string(slot);
  // tbf's bucket: 10 ms at the rate, at least 16 KiB (more than the rate over a 1000 Hz tick).
  const std::int64_t burst = std::max<std::int64_t>(16384, rate_bits_per_s / 8 / 100);
  return std::string(
      "[ \"$(id -u)\" = 0 ] || { echo 'not root'; exit 93; }; for t in tc ip; do command -v $t >/dev/null 2>&1 || { echo "
      "\"no $t (Debian: apt-get install iproute2)\"; exit 93; }; done; d=" + shell_quote(run_dir) + "; " +
      kPeerAddresses(peer_address) + kPeerInterface +
      "if ! tc qdisc show dev \"$x\" root | grep -q '^qdisc htb 1: '; then "
      "r=$(tc qdisc show dev \"$x\" root | awk 'NR==1{print $2}'); "
      "case \"$r\" in noqueue|pfifo_fast|fq_codel|mq|fq|pfifo|'') ;; *) echo \"the interface $x has a root qdisc of its "
      "own ($r): hapair does not replace it\"; exit 93;; esac; "
      "tc qdisc replace dev \"$x\" root handle 1: htb default 1 r2q 100000 2>&1 || exit 93; echo \"$x\" >> \"$d/tc.devs\"; "
      "tc class add dev \"$x\" parent 1: classid 1:1 htb rate 100gbit 2>&1 || exit 93; fi; "
      "tc class add dev \"$x\" parent 1: classid 1:" + k + " htb rate 100gbit 2>&1 || exit 93; "
      "tc qdisc add dev \"$x\" parent 1:" + k + " handle " + k + ": tbf rate " + std::to_string(rate_bits_per_s) +
      "bit burst " + std::to_string(burst) + " latency 100ms 2>&1 || exit 93; "
      // The batches that put and lift it: one tc each, nothing to resolve then.
      "rm -f \"$d/limit-" + k + ".on\"; for p in $q; do case \"$p\" in *:*) echo \"filter add dev $x parent 1: protocol "
      "ipv6 prio " + k + " u32 match ip6 dst $p/128 flowid 1:" + k + "\";; *) echo \"filter add dev $x parent 1: protocol ip "
      "prio " + k + " u32 match ip dst $p/32 flowid 1:" + k + "\";; esac; done > \"$d/limit-" + k + ".on\"; echo \"filter del dev "
      "$x parent 1: prio " + k + "\" > \"$d/limit-" + k + ".off\"; ");
}

std::string limit_command(const std::string& run_dir, int slot, bool on) {
  const std::string batch = shell_quote(run_dir + "/limit-" + std::to_string(slot) + (on ? ".on" : ".off"));
  return posix_sh("a=$(date +%s%N); tc -b " + batch + " 2>&1 || exit 93; b=$(date +%s%N); echo \"$a $b\"");
}

std::string node_session_command(const std::string& run_dir, const std::string& node_name,
                                 const std::vector<std::string>& argv) {
  return posix_sh("echo $$ > " + shell_quote(run_dir + "/" + node_name + ".pid") + " && exec " + shell_command(argv) +
                  " 2>&1");
}

std::string signal_command(const std::string& run_dir, const std::string& node_name, const std::string& signal_name) {
  return posix_sh("p=$(cat " + shell_quote(run_dir + "/" + node_name + ".pid") + ") || exit 1; a=$(date +%s%N); kill -" +
                  signal_name + " \"$p\" || exit 1; b=$(date +%s%N); echo \"$a $b\"");
}

std::string host_signal_command(const std::string& run_dir, const std::string& signal_name) {
  // The run's live node processes first, then one kill between the two readings.
  return posix_sh("d=" + shell_quote(run_dir) + "; q=; for f in \"$d\"/*.pid; do [ -f \"$f\" ] || continue; read p < \"$f\"; "
                  "if tr '\\000' ' ' <\"/proc/$p/cmdline\" 2>/dev/null | grep -qF -- \"$d\"; then q=\"$q $p\"; fi; done; "
                  "a=$(date +%s%N); [ -z \"$q\" ] || kill -" + signal_name + " $q || exit 1; b=$(date +%s%N); echo \"$a $b\"");
}

RemoteHosts::RemoteHosts(HostList hosts, HostsLaunch options, SshHosts ssh)
    : hosts_(std::move(hosts)), options_(std::move(options)), ssh_(std::move(ssh)) {}

std::unique_ptr<RemoteHosts> RemoteHosts::open(const HostList& hosts, const HostsLaunch& options,
                                               const std::string& local_binary, const std::string& topology_path,
                                               const std::string& log_dir, std::vector<std::string>& problems) {
  if (const std::string reason = ssh_unavailable(options.ssh); !reason.empty()) {
    problems.push_back("cannot reach the hosts: " + reason);
    return nullptr;
  }
  std::string error;
  std::optional<SshHosts> ssh = SshHosts::create(options.ssh, error);
  if (!ssh) {
    problems.push_back(error);
    return nullptr;
  }
  for (const HostSpec& h : hosts.hosts) ssh->add(SshTarget{h.name, h.address, h.ssh_user, h.ssh_port, h.identity_file, h.known_hosts_file});
  std::unique_ptr<RemoteHosts> remote(new RemoteHosts(hosts, options, std::move(*ssh)));
  if (!remote->setup(local_binary, topology_path, log_dir, problems)) return nullptr;  // the destructor cleans up
  return remote;
}

std::string RemoteHosts::where(std::size_t host) const {
  const HostSpec& h = hosts_.hosts.at(host);
  return "host " + h.name + " (" + h.ssh_user + "@" + h.address + ")";
}

bool RemoteHosts::setup(const std::string& local_binary, const std::string& topology_path, const std::string& log_dir,
                        std::vector<std::string>& problems) {
  // Should the launcher die from here on, the masters die with it and this removes their sockets.
  control_dir_watch_.emplace(std::vector<std::string>{"/bin/rm", "-rf", "--", ssh_.control_dir()});
  state_.resize(hosts_.hosts.size());
  const double timeout_s = options_.ssh_timeout_s;
  const std::int64_t started_us = realtime_us();
  auto phase = [&](const char* what) {
    timing_ += (timing_.empty() ? "" : ", ") + std::string(what) + " " +
               std::to_string((realtime_us() - started_us) / 1000) + " ms";
  };
  const std::vector<RemoteResult> opened = ssh_.open_all(timeout_s);
  phase("logged in");
  for (std::size_t h = 0; h < opened.size(); ++h)
    if (!opened[h].ok()) problems.push_back(where(h) + ": cannot log in: " + ssh_problem(opened[h]));
  if (!problems.empty()) return false;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    problems.push_back("cannot make the pipe the remote sessions watch");
    return false;
  }
  stdin_read_fd_ = fds[0];
  stdin_write_fd_ = fds[1];
  if (!start_keepers(log_dir, problems)) return false;
  phase("run folders made");
  // Every host at once from here: on a loaded machine a remote command costs a process start on
  // each side (some 100 ms), so commands to several hosts overlap and each host gets as few as
  // possible.
  for (HostState& st : state_)
    st.binary = options_.copy_binary                 ? st.run_dir + "/hapair"
                : !options_.install_package.empty() ? st.run_dir + "/pkg/usr/bin/hapair"
                                                     : options_.remote_binary;
  std::vector<std::pair<std::size_t, std::string>> commands;
  if (options_.copy_binary) {
    for (std::size_t h = 0; h < state_.size(); ++h)
      commands.emplace_back(h, "cat > " + shell_quote(state_[h].binary) + " && chmod 700 " + shell_quote(state_[h].binary));
    const std::vector<RemoteResult> copied = ssh_.run_all(commands, timeout_s, local_binary);
    for (std::size_t h = 0; h < copied.size(); ++h)
      if (!copied[h].ok())
        problems.push_back(where(h) + ": cannot copy " + local_binary + " to " + state_[h].binary + ": " +
                           ssh_problem(copied[h]));
    if (!problems.empty()) return false;
    phase("binary copied");
  }
  if (!options_.install_package.empty()) {
    // The package unpacked into the run folder, never installed system-wide (that needs root,
    // and hosts that share one file system, as the tests' namespaces do, would share it); then
    // every library its hapair needs must be there (the package's Depends, installed by apt).
    commands.clear();
    for (std::size_t h = 0; h < state_.size(); ++h) {
      const std::string deb = shell_quote(state_[h].run_dir + "/hapair.deb");
      commands.emplace_back(h, "cat > " + deb + " && dpkg-deb -x " + deb + " " + shell_quote(state_[h].run_dir + "/pkg") +
                                   " && rm -f " + deb + " || exit 93; if ldd " + shell_quote(state_[h].binary) +
                                   " | grep 'not found'; then exit 94; fi");
    }
    const std::vector<RemoteResult> unpacked = ssh_.run_all(commands, timeout_s, options_.install_package);
    for (std::size_t h = 0; h < unpacked.size(); ++h) {
      const RemoteResult& r = unpacked[h];
      if (r.exit_code == 94) {
        std::string missing;
        std::istringstream lines(r.output);
        for (std::string line; std::getline(lines, line);) {
          const std::size_t start = line.find_first_not_of(" \t");
          if (start != std::string::npos) missing += (missing.empty() ? "" : ", ") + line.substr(start, line.find(' ', start) - start);
        }
        problems.push_back(where(h) + ": the hapair of " + options_.install_package + " needs libraries the host lacks (" +
                           missing + "): install the package's Depends there (apt install ./" +
                           std::filesystem::path(options_.install_package).filename().string() + " does)");
      } else if (!r.ok()) {
        problems.push_back(where(h) + ": cannot unpack " + options_.install_package + " into " + state_[h].run_dir +
                           " (dpkg-deb -x): " + ssh_problem(r));
      }
    }
    if (!problems.empty()) return false;
    phase("package unpacked");
  }
  // One command per host: the topology from stdin, the address the host sees us at, the version.
  commands.clear();
  for (std::size_t h = 0; h < state_.size(); ++h)
    commands.emplace_back(h, "cat > " + shell_quote(state_[h].run_dir + "/topology.conf") +
                                 " || exit 90; echo \"hapair-ssh-connection $SSH_CONNECTION\"; exec " +
                                 shell_command({state_[h].binary, "--version"}));
  const std::vector<RemoteResult> checked = ssh_.run_all(commands, timeout_s, topology_path);
  for (std::size_t h = 0; h < checked.size(); ++h) {
    HostState& st = state_[h];
    if (checked[h].exit_code == 90) {
      problems.push_back(where(h) + ": cannot copy the topology to " + st.run_dir + ": " + last_line(checked[h].output));
      continue;
    }
    std::istringstream words(line_value(checked[h].output, "hapair-ssh-connection"));
    words >> st.seen_from;
    const std::string wrong = hapair_version_problem(ssh_.target(h), st.binary, checked[h], version_string());
    if (!wrong.empty())
      problems.push_back(wrong + (options_.copy_binary || !options_.install_package.empty() ? "" : " (or pass --copy-binary)"));
    else if (st.seen_from.empty())
      problems.push_back(where(h) + ": $SSH_CONNECTION is empty: cannot tell which address the host reaches this "
                                    "machine at; pass --control tcp://ADDRESS:PORT");
  }
  if (!problems.empty()) return false;
  phase("topology copied, version checked");
  control_address_ = state_.front().seen_from;
  for (const HostState& st : state_)
    if (st.seen_from != control_address_) control_address_.clear();
  return true;
}

// One keeper session per host (keeper_command): its first line names the run folder.
bool RemoteHosts::start_keepers(const std::string& log_dir, std::vector<std::string>& problems) {
  for (std::size_t h = 0; h < state_.size(); ++h) {
    HostState& s = state_[h];
    s.keeper_log = log_dir + "/host-" + hosts_.hosts[h].name + ".log";
    std::string error;
    s.keeper = ssh_.start(h, keeper_command(hosts_.hosts[h].work_dir), stdin_read_fd_, s.keeper_log, false, error);
    if (!s.keeper.running()) problems.push_back(where(h) + ": cannot start ssh: " + error);
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.ssh_timeout_s));
  for (std::size_t h = 0; h < state_.size(); ++h) {
    HostState& s = state_[h];
    while (s.keeper.running()) {
      s.run_dir = line_value(read_file(s.keeper_log), "hapair-run-dir");
      if (!s.run_dir.empty()) break;
      if (const auto exit = s.keeper.try_wait()) {
        problems.push_back(where(h) + ": cannot make a run folder under " + hosts_.hosts[h].work_dir + " (" +
                           exit->describe() + "): " + last_line(read_file(s.keeper_log)));
        break;
      }
      if (Clock::now() >= deadline) {
        problems.push_back(where(h) + ": no run folder under " + hosts_.hosts[h].work_dir + " within " +
                           std::to_string(options_.ssh_timeout_s) + " s");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return problems.empty();
}

void RemoteHosts::set_offset(std::size_t host, const std::optional<ClockOffset>& offset) {
  state_.at(host).offset = offset;
}

std::int64_t RemoteHosts::correction_us(std::size_t host) const {
  const std::optional<ClockOffset>& o = state_.at(host).offset;
  return o && !o->admits(0) ? o->offset_us() : 0;
}

std::string RemoteHosts::control_address_problem() const {
  std::string out = "the hosts reach this machine at different addresses (";
  for (std::size_t h = 0; h < state_.size(); ++h)
    out += (h ? ", " : "") + hosts_.hosts[h].name + ": " + state_[h].seen_from;
  return out + "); pass --control tcp://ADDRESS:PORT with one they all reach";
}

bool pipe_holding(const std::string& line, int fds[2], std::string& error) {
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return false;
  }
  // A key line is far below the pipe's buffer: the write never blocks.
  if (::write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    error = std::string("cannot write to a pipe: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    fds[0] = fds[1] = -1;
    return false;
  }
  return true;
}

ChildProcess RemoteHosts::start_node(std::size_t host, const std::string& node_name, const std::vector<std::string>& args,
                                     const std::string& log_path, bool append, const std::string& stdin_line,
                                     std::string& error) {
  const HostState& s = state_.at(host);
  std::vector<std::string> argv{s.binary, "node", "--topology", s.run_dir + "/topology.conf", "--name", node_name};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--exit-on-stdin-eof");
  const std::string command = node_session_command(s.run_dir, node_name, argv);
  if (stdin_line.empty()) return ssh_.start(host, command, stdin_read_fd_, log_path, append, error);
  int fds[2];
  if (!pipe_holding(stdin_line, fds, error)) return ChildProcess();
  ChildProcess session = ssh_.start(host, command, fds[0], log_path, append, error);
  ::close(fds[0]);
  node_stdin_write_fds_.push_back(fds[1]);
  return session;
}

PendingSignal RemoteHosts::begin_command(std::size_t host, const std::string& what, const std::string& signal,
                                         const std::string& script) const {
  PendingSignal pending;
  pending.host = host;
  pending.node = what;
  pending.signal = signal;
  pending.sent_us = realtime_us();
  pending.command = ssh_.begin(host, script, options_.ssh_timeout_s);
  return pending;
}

PendingSignal RemoteHosts::begin_signal(std::size_t host, const std::string& node_name,
                                        const std::string& signal_name) const {
  return begin_command(host, node_name, signal_name, signal_command(state_.at(host).run_dir, node_name, signal_name));
}

PendingSignal RemoteHosts::begin_host_loss(std::size_t host) const {
  return begin_command(host, "every node of the run", "LOSS",
                       host_loss_command(state_.at(host).run_dir, hosts_.hosts.at(host).ssh_port));
}

PendingSignal RemoteHosts::begin_host_signal(std::size_t host, const std::string& signal_name) const {
  return begin_command(host, "every node of the run", "HOST" + signal_name,
                       host_signal_command(state_.at(host).run_dir, signal_name));
}

std::vector<std::string> RemoteHosts::prepare_on(const std::vector<std::size_t>& hosts,
                                                const std::function<std::string(std::size_t)>& script, int refused_exit,
                                                const std::string& refused, const std::string& failed) {
  std::vector<std::pair<std::size_t, std::string>> commands;
  for (const std::size_t h : hosts) commands.emplace_back(h, script(h));
  const std::vector<RemoteResult> done = ssh_.run_all(commands, options_.ssh_timeout_s);
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < done.size(); ++i) {
    const RemoteResult& r = done[i];
    if (r.exit_code == refused_exit) {
      std::string text = refused;
      text.replace(text.find("{}"), 2, where(commands[i].first));
      problems.push_back(text + last_line(r.output));
    }
    else if (!r.ok())
      problems.push_back(where(commands[i].first) + ": " + failed + ": " + ssh_problem(r));
  }
  return problems;
}

std::vector<std::string> RemoteHosts::prepare_cuts(const std::vector<std::size_t>& hosts) {
  return prepare_on(
      hosts, [&](std::size_t h) { return cut_table_command(state_.at(h).run_dir, hosts_.hosts.at(h).ssh_port); }, 92,
      "a partition across hosts cuts the link on {}, which needs root and nftables there; nft said: ",
      "cannot prepare the link cuts");
}

std::vector<std::string> RemoteHosts::prepare_limits(const std::vector<LimitSetup>& limits) {
  // One script per host, its limits one after the other (they share the interface's root).
  std::map<std::size_t, std::string> scripts;
  for (const LimitSetup& l : limits)
    scripts[l.host] += limit_setup_script(state_.at(l.host).run_dir, hosts_.hosts.at(l.peer).address, l.slot, l.rate_bits_per_s);
  std::vector<std::size_t> hosts;
  for (const auto& entry : scripts) hosts.push_back(entry.first);
  return prepare_on(
      hosts, [&](std::size_t h) { return posix_sh(scripts.at(h)); }, 93,
      "a bandwidth limit between hosts is made with tc on {}, which needs root, ip and tc (iproute2) there: ",
      "cannot prepare the bandwidth limits");
}

PendingSignal RemoteHosts::begin_limit(std::size_t host, std::size_t peer, int slot, std::int64_t rate_bits_per_s,
                                       bool on) const {
  return begin_command(host,
                       "the link to " + hosts_.hosts.at(peer).name + (on ? " at " + std::to_string(rate_bits_per_s) + " bit/s" : ""),
                       on ? "LIMIT" : "UNLIMIT",
                       limit_command(state_.at(host).run_dir, slot, on));
}

PendingSignal RemoteHosts::begin_cut(std::size_t host, std::size_t peer, bool cut) const {
  return begin_command(host, "the link to " + hosts_.hosts.at(peer).name, cut ? "CUT" : "HEAL",
                       cut_command(state_.at(host).run_dir, hosts_.hosts.at(peer).address, cut));
}

std::optional<RemoteSignal> RemoteHosts::poll_signal(PendingSignal& pending) const {
  const std::optional<RemoteResult> r = pending.command.poll();
  if (!r) return std::nullopt;
  RemoteSignal out;
  out.sent_us = pending.sent_us;
  out.answered_us = realtime_us();
  long long before = 0, after = 0;
  const bool limit = pending.signal == "LIMIT" || pending.signal == "UNLIMIT";
  if (r->exit_code == 92 || r->exit_code == 93 || r->exit_code == 95) {
    out.error = (limit ? (pending.signal == "LIMIT" ? "the bandwidth limit of " : "the end of the bandwidth limit of ")
                       : (pending.signal == "CUT" ? "the cut of " : "the heal of ")) +
                pending.node + " on " + where(pending.host) +
                (r->exit_code == 95 ? " failed: the host cannot resolve the peer's address"
                 : limit            ? " failed (root, ip and tc needed there); it said: " + last_line(r->output)
                                    : " failed (root and nftables needed there); nft said: " + last_line(r->output));
    return out;
  }
  if (r->exit_code == 91) {
    out.error = "the loss of " + where(pending.host) + " needs root and nftables there; nft said: " +
                r->output.substr(0, r->output.find('\n'));
    return out;
  }
  if (!r->ok() || std::sscanf(last_line(r->output).c_str(), "%lld %lld", &before, &after) != 2) {
    out.error = pending.signal + " of " + pending.node + " on " + where(pending.host) + " failed: " + ssh_problem(*r);
    return out;
  }
  out.ok = true;
  out.host_before_us = before / 1000;
  out.host_after_us = after / 1000;
  return out;
}

RemoteSignal RemoteHosts::wait_signal(PendingSignal& pending) const {
  for (;;) {
    if (std::optional<RemoteSignal> s = poll_signal(pending)) return *s;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::vector<std::string> RemoteHosts::close() {
  std::vector<std::string> problems;
  if (closed_) return problems;
  closed_ = true;
  if (stdin_write_fd_ >= 0) ::close(stdin_write_fd_);  // every session on every host sees EOF
  stdin_write_fd_ = -1;
  for (const int fd : node_stdin_write_fds_) ::close(fd);
  node_stdin_write_fds_.clear();
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.ssh_timeout_s));
  for (std::size_t h = 0; h < state_.size(); ++h) {
    HostState& s = state_[h];
    while (s.keeper.running() && !s.keeper.try_wait()) {
      if (Clock::now() >= deadline) {
        s.keeper.kill_and_wait();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!s.run_dir.empty() && line_value(read_file(s.keeper_log), "hapair-run-removed") != s.run_dir) {
      // The keeper did not say so: try once more directly.
      const RemoteResult r = ssh_.run(h, "rm -rf -- " + shell_quote(s.run_dir), options_.ssh_timeout_s);
      if (!r.ok())
        problems.push_back(where(h) + ": the run folder " + s.run_dir + " may be left there (" + ssh_problem(r) + ")");
    }
  }
  for (std::size_t h = 0; h < ssh_.size(); ++h) ssh_.close(h);
  if (stdin_read_fd_ >= 0) ::close(stdin_read_fd_);
  stdin_read_fd_ = -1;
  return problems;
}

RemoteHosts::~RemoteHosts() { close(); }

std::string RemoteHosts::describe_json() const {
  nlohmann::ordered_json doc = nlohmann::ordered_json::array();
  for (std::size_t h = 0; h < state_.size(); ++h) {
    const HostState& s = state_[h];
    nlohmann::ordered_json host;
    host["host"] = hosts_.hosts[h].name;
    host["address"] = hosts_.hosts[h].address;
    host["run_dir"] = s.run_dir;
    host["binary"] = s.binary;
    host["launcher_seen_as"] = s.seen_from;
    // The first round of clock probes (the launcher's "clocks" has every round).
    host["clock_offset_us"] = s.offset ? nlohmann::ordered_json(s.offset->offset_us()) : nlohmann::ordered_json(nullptr);
    host["clock_error_bound_us"] =
        s.offset ? nlohmann::ordered_json(s.offset->error_bound_us()) : nlohmann::ordered_json(nullptr);
    host["clock_round_trip_us"] =
        s.offset ? nlohmann::ordered_json(s.offset->round_trip_us()) : nlohmann::ordered_json(nullptr);
    host["time_correction_us"] = correction_us(h);
    doc.push_back(std::move(host));
  }
  return doc.dump(2);
}

}  // namespace hapair::launcher
