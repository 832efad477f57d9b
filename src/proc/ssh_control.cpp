#include "proc/ssh_control.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "proc/child_process.h"

namespace hapair {
namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const std::size_t start = text.find_last_of('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

// The options every ssh of ours takes: never ask, one master per host, give up on a silent host.
std::vector<std::string> common_options(const SshTarget& target, const SshOptions& options, const std::string& control_path) {
  std::vector<std::string> argv{options.ssh_program,
                                "-o", "BatchMode=yes",
                                "-o", "ControlMaster=auto",
                                "-o", "ControlPath=" + control_path,
                                "-o", "ControlPersist=" + std::to_string(options.control_persist_s) + "s",
                                "-o", "ConnectTimeout=" + std::to_string(options.connect_timeout_s),
                                "-o", "StrictHostKeyChecking=" + options.host_key_checking,
                                "-o", "LogLevel=ERROR",
                                "-p", std::to_string(target.port),
                                "-l", target.user};
  if (!options.known_hosts_file.empty()) {
    argv.push_back("-o");
    argv.push_back("UserKnownHostsFile=" + options.known_hosts_file);
  }
  if (!target.identity_file.empty()) {
    argv.insert(argv.end(), {"-i", target.identity_file, "-o", "IdentitiesOnly=yes"});
  }
  return argv;
}

}  // namespace

std::string RemoteResult::describe() const {
  if (timed_out) return "timed out" + (error.empty() ? std::string() : ": " + error);
  if (!error.empty()) return error;
  if (exit_code == 255) {
    const std::string why = last_line(output);
    return "ssh failed (exit code 255)" + (why.empty() ? std::string() : ": " + why);
  }
  return "exit code " + std::to_string(exit_code);
}

std::string shell_quote(const std::string& word) {
  const bool safe = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                            "0123456789_-./:=@,+") == std::string::npos;
  if (safe) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_command(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

std::vector<std::string> ssh_argv(const SshTarget& target, const SshOptions& options, const std::string& control_path,
                                  const std::string& remote_command) {
  std::vector<std::string> argv = common_options(target, options, control_path);
  // -n: stdin from /dev/null (a remote command never reads ours); -T: no terminal.
  argv.insert(argv.end(), {"-n", "-T", "--", target.address, remote_command});
  return argv;
}

std::vector<std::string> ssh_control_argv(const SshTarget& target, const SshOptions& options,
                                          const std::string& control_path, const std::string& request) {
  std::vector<std::string> argv = common_options(target, options, control_path);
  argv.insert(argv.end(), {"-O", request, "--", target.address});
  return argv;
}

std::string ssh_unavailable(const SshOptions& options) {
  if (::access(options.ssh_program.c_str(), X_OK) != 0)
    return "no OpenSSH client at " + options.ssh_program + " (Debian: apt-get install openssh-client)";
  return "";
}

std::optional<SshHosts> SshHosts::create(SshOptions options, std::string& error, const std::string& temp_dir) {
  std::string pattern = temp_dir + "/hapair-ssh-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    error = "cannot make a control folder under " + temp_dir + ": " + std::strerror(errno);
    return std::nullopt;
  }
  ::chmod(pattern.c_str(), 0700);
  return SshHosts(std::move(options), pattern);
}

SshHosts::SshHosts(SshHosts&& other) noexcept
    : options_(std::move(other.options_)), control_dir_(std::move(other.control_dir_)), targets_(std::move(other.targets_)) {
  other.control_dir_.clear();
  other.targets_.clear();
}

SshHosts::~SshHosts() {
  if (control_dir_.empty()) return;
  for (std::size_t h = 0; h < targets_.size(); ++h) close(h);
  std::error_code ec;
  std::filesystem::remove_all(control_dir_, ec);
}

std::size_t SshHosts::add(SshTarget target) {
  targets_.push_back(std::move(target));
  return targets_.size() - 1;
}

std::string SshHosts::control_path(std::size_t host) const { return control_dir_ + "/" + std::to_string(host); }

RemoteResult SshHosts::run_argv(const std::vector<std::string>& argv, double timeout_s) const {
  RemoteResult result;
  std::string pattern = control_dir_ + "/out-XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    result.error = "cannot make an output file in " + control_dir_ + ": " + std::strerror(errno);
    return result;
  }
  ::close(fd);
  ExecSpec spec;
  spec.argv = argv;
  spec.output_path = pattern;
  spec.die_with_parent = true;
  spec.close_other_descriptors = true;
  std::string error;
  ChildProcess child = ChildProcess::spawn(spec, error);
  if (!child.running()) {
    result.error = "cannot start " + argv.front() + ": " + error;
    ::unlink(pattern.c_str());
    return result;
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::optional<ChildExit> exit;
  while (!(exit = child.try_wait())) {
    if (Clock::now() >= deadline) {
      exit = child.kill_and_wait();
      result.timed_out = true;
      result.error = "no answer within " + seconds_text(timeout_s) + "; ssh was killed";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::ifstream in(pattern, std::ios::binary);
  result.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  ::unlink(pattern.c_str());
  if (!result.timed_out && exit) {
    if (exit->exited()) result.exit_code = exit->exit_code();
    else result.error = "ssh ended with " + exit->describe();
  }
  return result;
}

RemoteResult SshHosts::open(std::size_t host, double timeout_s) {
  return run_argv(ssh_argv(targets_.at(host), options_, control_path(host), "true"), timeout_s);
}

bool SshHosts::master_running(std::size_t host) const {
  if (control_dir_.empty()) return false;
  return run_argv(ssh_control_argv(targets_.at(host), options_, control_path(host), "check"), 5.0).ok();
}

RemoteResult SshHosts::run(std::size_t host, const std::string& remote_command, double timeout_s) const {
  return run_argv(ssh_argv(targets_.at(host), options_, control_path(host), remote_command), timeout_s);
}

bool SshHosts::close(std::size_t host) {
  std::error_code ec;
  if (control_dir_.empty() || !std::filesystem::exists(control_path(host), ec)) return false;
  return run_argv(ssh_control_argv(targets_.at(host), options_, control_path(host), "exit"), 5.0).ok();
}

std::string SshHosts::check_hapair_version(std::size_t host, const std::string& binary, const std::string& expected_version,
                                           double timeout_s) const {
  const SshTarget& t = targets_.at(host);
  const std::string where = "host " + t.name + " (" + t.user + "@" + t.address + ")";
  const RemoteResult r = run(host, shell_command({binary, "--version"}), timeout_s);
  if (r.timed_out || !r.error.empty() || r.exit_code == 255) return where + ": " + r.describe();
  if (r.exit_code == 127 || r.exit_code == 126)
    return where + ": " + binary + " cannot be run there (" + r.describe() + ": " + last_line(r.output) +
           "); install hapair on the host (docs/HOSTS.md)";
  const std::string expected = "hapair " + expected_version;
  const std::string got = last_line(r.output);
  if (r.exit_code != 0) return where + ": " + binary + " --version ended with " + r.describe() + ": " + got;
  if (got != expected)
    return where + ": " + binary + " is '" + got + "', this launcher is '" + expected +
           "'; install the same build on every host";
  return "";
}

}  // namespace hapair
