#include "ssh_testbed.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

namespace hapair::testing {
namespace {

constexpr const char* kSshd = "/usr/sbin/sshd";
constexpr const char* kSshKeygen = "/usr/bin/ssh-keygen";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs a program to its end (bounded by the caller's programs: ssh-keygen ends at once).
bool run_program(const std::vector<std::string>& argv, const std::string& log, std::string& error) {
  ExecSpec spec;
  spec.argv = argv;
  spec.output_path = log;
  spec.die_with_parent = true;
  ChildProcess child = ChildProcess::spawn(spec, error);
  if (!child.running()) return false;
  const auto exit = child.wait();
  if (!exit || !exit->clean()) {
    error = argv.front() + " ended with " + (exit ? exit->describe() : "no status") + ": " + read_file(log);
    return false;
  }
  return true;
}

}  // namespace

// A process's command line, spaces for NULs; "" when it is gone (reading /proc/PID/cmdline of a
// process that exits meanwhile fails with ESRCH, which std::ifstream turns into an exception).
std::string command_line(const std::string& pid) {
  const int fd = ::open(("/proc/" + pid + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  for (char& c : out)
    if (c == '\0') c = ' ';
  return out;
}

// Processes whose command line mentions `text`, as "pid: cmdline".
std::vector<std::string> processes_naming(const std::string& text) {
  std::vector<std::string> out;
  const std::string self = std::to_string(::getpid());
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || name == self) continue;
    const std::string cmdline = command_line(name);
    if (cmdline.find(text) != std::string::npos) out.push_back(name + ": " + cmdline);
  }
  return out;
}

std::string ssh_testbed_unavailable() {
  if (::geteuid() != 0) return "not root (network namespaces and sshd need root)";
  for (const char* tool : {kSshd, kSshKeygen, "/usr/bin/ssh"})
    if (::access(tool, X_OK) != 0)
      return std::string("no ") + tool + " (Debian: apt-get install openssh-server openssh-client)";
  if (const std::string reason = net_isolation_unavailable(); !reason.empty()) return reason;
  return "";
}

std::unique_ptr<SshTestbed> SshTestbed::create(std::size_t hosts, std::size_t with_sshd, std::string& error,
                                               const std::vector<std::string>& session_environment) {
  std::unique_ptr<SshTestbed> bed(new SshTestbed());
  bed->hosts_ = hosts;
  if (!bed->build(with_sshd, session_environment, error)) return nullptr;
  return bed;
}

bool SshTestbed::build(std::size_t with_sshd, const std::vector<std::string>& session_environment, std::string& error) {
  std::string pattern = "/tmp/hapair-sshbed-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    error = "cannot make the testbed folder";
    return false;
  }
  dir_ = pattern;
  if (!run_program({kSshKeygen, "-q", "-t", "ed25519", "-N", "", "-f", dir_ + "/host_key"}, dir_ + "/keygen.log", error) ||
      !run_program({kSshKeygen, "-q", "-t", "ed25519", "-N", "", "-f", dir_ + "/user_key"}, dir_ + "/keygen.log", error))
    return false;
  std::filesystem::copy_file(dir_ + "/user_key.pub", dir_ + "/authorized_keys");
  std::error_code ec;
  std::filesystem::create_directories("/run/sshd", ec);  // sshd's privilege separation folder
  isolation_ = NetIsolation::create(hosts_, error);
  if (!isolation_) return false;
  // IPv6 beside IPv4 (no duplicate address detection: usable at once).
  const std::string ip = find_isolation_tools().ip;
  if (!run_program({ip, "addr", "add", ipv6_of(isolation_->launcher_address()) + "/64", "dev", root_link_name(::getpid()), "nodad"},
                   dir_ + "/ip.log", error))
    return false;
  for (std::size_t i = 0; i < hosts_; ++i)
    if (!run_program({ip, "-n", namespace_name(i), "addr", "add", address6(i) + "/64", "dev", "eth0", "nodad"}, dir_ + "/ip.log",
                     error))
      return false;
  for (std::size_t i = 0; i < with_sshd; ++i) {
    const std::string config = dir_ + "/sshd_config_" + std::to_string(i);
    std::ofstream(config) << "Port 22\n"
                          << "ListenAddress " << address(i) << "\n"
                          << "ListenAddress " << address6(i) << "\n"
                          << "HostKey " << dir_ << "/host_key\n"
                          << "AuthorizedKeysFile " << dir_ << "/authorized_keys\n"
                          << "PidFile " << dir_ << "/sshd_" << i << ".pid\n"
                          << "UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
                          << "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                          << "X11Forwarding no\nPrintMotd no\nMaxStartups 100\n";
    if (i < session_environment.size() && !session_environment[i].empty())
      std::ofstream(config, std::ios::app) << "SetEnv " << session_environment[i] << "\n";
    ExecSpec spec;
    spec.argv = {kSshd, "-D", "-e", "-f", config};
    spec.output_path = dir_ + "/sshd_" + std::to_string(i) + ".log";
    spec.die_with_parent = true;
    spec.close_other_descriptors = true;
    spec.network_namespace = isolation_->node_namespace_path(i);
    sshd_.push_back(ChildProcess::spawn(spec, error));
    if (!sshd_.back().running()) return false;
  }
  // Each sshd says when it listens; wait for that (bounded), or for its end.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (std::size_t i = 0; i < with_sshd; ++i) {
    while (read_file(dir_ + "/sshd_" + std::to_string(i) + ".log").find("Server listening") == std::string::npos) {
      if (auto exit = sshd_[i].try_wait()) {
        error = "sshd " + std::to_string(i) + " ended with " + exit->describe() + ": " + sshd_log(i);
        return false;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        error = "sshd " + std::to_string(i) + " did not listen within 20 s: " + sshd_log(i);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  return true;
}

std::string SshTestbed::ipv6_of(const std::string& ipv4) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  std::sscanf(ipv4.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d);
  return "fd68:0:" + std::to_string(b) + ":" + std::to_string(c) + "::" + std::to_string(d);
}

SshTestbed::~SshTestbed() {
  for (ChildProcess& p : sshd_) p.kill_and_wait();
  sshd_.clear();
  isolation_.reset();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

SshTarget SshTestbed::target(std::size_t host) const {
  SshTarget t;
  t.name = "h" + std::to_string(host + 1);
  t.address = address(host);
  t.user = "root";
  t.identity_file = dir_ + "/user_key";
  return t;
}

SshOptions SshTestbed::options() const {
  SshOptions o;
  o.known_hosts_file = dir_ + "/known_hosts";
  o.connect_timeout_s = 10;
  return o;
}

std::string SshTestbed::sshd_log(std::size_t host) const { return read_file(dir_ + "/sshd_" + std::to_string(host) + ".log"); }

std::vector<pid_t> SshTestbed::sshd_pids() const {
  std::vector<pid_t> out;
  for (const ChildProcess& p : sshd_)
    if (p.running()) out.push_back(p.pid());
  return out;
}

}  // namespace hapair::testing
