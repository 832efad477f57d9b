#include "proc/ssh_control.h"

#include <fcntl.h>
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
#include <utility>

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

// The options every ssh of ours takes: never ask, one master per host (`master`: this is it;
// otherwise use it when it is up and never start one), give up on a silent host.
std::vector<std::string> common_options(const SshTarget& target, const SshOptions& options, const std::string& control_path,
                                        bool master = false) {
  std::vector<std::string> argv{options.ssh_program,
                                "-o", "BatchMode=yes",
                                "-o", master ? "ControlMaster=yes" : "ControlMaster=no",
                                "-o", "ControlPath=" + control_path,
                                "-o", "ControlPersist=no",
                                "-o", "ConnectTimeout=" + std::to_string(options.connect_timeout_s),
                                "-o", "StrictHostKeyChecking=" + options.host_key_checking,
                                "-o", "LogLevel=ERROR",
                                "-p", std::to_string(target.port),
                                "-l", target.user};
  const std::string& known_hosts = target.known_hosts_file.empty() ? options.known_hosts_file : target.known_hosts_file;
  if (!known_hosts.empty()) {
    argv.push_back("-o");
    argv.push_back("UserKnownHostsFile=" + known_hosts);
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
                                  const std::string& remote_command, bool with_stdin) {
  std::vector<std::string> argv = common_options(target, options, control_path);
  // -n: stdin from /dev/null (unless the remote command reads ours); -T: no terminal.
  if (!with_stdin) argv.push_back("-n");
  argv.insert(argv.end(), {"-T", "--", target.address, remote_command});
  return argv;
}

std::vector<std::string> ssh_master_argv(const SshTarget& target, const SshOptions& options,
                                         const std::string& control_path) {
  std::vector<std::string> argv = common_options(target, options, control_path, true);
  // -N: no command, the connection only; -n -T: no stdin, no terminal. No -f: the master stays
  // in the foreground, our child. A host that stops answering ends it within 30 s (and with it
  // every session it carried), rather than when TCP gives up.
  argv.insert(argv.end(), {"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=6", "-N", "-n", "-T", "--",
                           target.address});
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
    : options_(std::move(other.options_)),
      control_dir_(std::move(other.control_dir_)),
      targets_(std::move(other.targets_)),
      masters_(std::move(other.masters_)) {
  other.control_dir_.clear();
  other.targets_.clear();
  other.masters_.clear();
}

SshHosts::~SshHosts() {
  if (control_dir_.empty()) return;
  for (std::size_t h = 0; h < targets_.size(); ++h) close(h);
  std::error_code ec;
  std::filesystem::remove_all(control_dir_, ec);
}

std::size_t SshHosts::add(SshTarget target) {
  targets_.push_back(std::move(target));
  masters_.emplace_back();
  return targets_.size() - 1;
}

std::string SshHosts::control_path(std::size_t host) const { return control_dir_ + "/" + std::to_string(host); }

RemoteCommand SshHosts::begin_argv(const std::vector<std::string>& argv, double timeout_s, const std::string& input_path) const {
  RemoteCommand command;
  command.timeout_s_ = timeout_s;
  using Clock = std::chrono::steady_clock;
  command.deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string pattern = control_dir_ + "/out-XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    command.early_error_ = "cannot make an output file in " + control_dir_ + ": " + std::strerror(errno);
    return command;
  }
  ::close(fd);
  command.output_path_ = pattern;
  int input_fd = -1;
  if (!input_path.empty()) {
    input_fd = ::open(input_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (input_fd < 0) {
      command.early_error_ = "cannot read " + input_path + ": " + std::strerror(errno);
      return command;
    }
  }
  ExecSpec spec;
  spec.argv = argv;
  spec.output_path = pattern;
  spec.die_with_parent = true;
  spec.close_other_descriptors = true;
  spec.own_process_group = true;
  spec.stdin_fd = input_fd;
  spec.stdin_null = input_fd < 0;
  std::string error;
  command.child_ = ChildProcess::spawn(spec, error);
  if (input_fd >= 0) ::close(input_fd);
  if (!command.child_.running()) command.early_error_ = "cannot start " + argv.front() + ": " + error;
  return command;
}

RemoteCommand::RemoteCommand(RemoteCommand&& other) noexcept
    : child_(std::move(other.child_)),
      output_path_(std::exchange(other.output_path_, std::string())),
      early_error_(std::exchange(other.early_error_, std::string("moved from"))),
      timeout_s_(other.timeout_s_),
      deadline_(other.deadline_) {}

RemoteCommand& RemoteCommand::operator=(RemoteCommand&& other) noexcept {
  if (this != &other) {
    child_ = std::move(other.child_);  // kills and reaps ours first
    if (!output_path_.empty()) ::unlink(output_path_.c_str());
    output_path_ = std::exchange(other.output_path_, std::string());
    early_error_ = std::exchange(other.early_error_, std::string("moved from"));
    timeout_s_ = other.timeout_s_;
    deadline_ = other.deadline_;
  }
  return *this;
}

RemoteCommand::~RemoteCommand() {
  child_.kill_and_wait();
  if (!output_path_.empty()) ::unlink(output_path_.c_str());
}

std::optional<RemoteResult> RemoteCommand::poll() {
  RemoteResult result;
  std::optional<ChildExit> exit;
  if (early_error_.empty()) {
    exit = child_.try_wait();
    if (!exit) {
      if (std::chrono::steady_clock::now() < deadline_) return std::nullopt;
      exit = child_.kill_and_wait();
      result.timed_out = true;
      result.error = "no answer within " + seconds_text(timeout_s_) + "; ssh was killed";
    }
  } else {
    result.error = early_error_;
  }
  if (!output_path_.empty()) {
    std::ifstream in(output_path_, std::ios::binary);
    result.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    ::unlink(output_path_.c_str());
    output_path_.clear();
  }
  if (!result.timed_out && exit) {
    if (exit->exited()) result.exit_code = exit->exit_code();
    else result.error = "ssh ended with " + exit->describe();
  }
  early_error_ = "already collected";
  return result;
}

RemoteResult RemoteCommand::wait() {
  for (;;) {
    if (std::optional<RemoteResult> r = poll()) return *r;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

RemoteResult SshHosts::run_argv(const std::vector<std::string>& argv, double timeout_s, const std::string& input_path) const {
  return begin_argv(argv, timeout_s, input_path).wait();
}

RemoteCommand SshHosts::begin(std::size_t host, const std::string& remote_command, double timeout_s,
                              const std::string& input_path) const {
  return begin_argv(ssh_argv(targets_.at(host), options_, control_path(host), remote_command, !input_path.empty()),
                    timeout_s, input_path);
}

std::vector<RemoteResult> SshHosts::run_all(const std::vector<std::pair<std::size_t, std::string>>& commands,
                                            double timeout_s, const std::string& input_path) const {
  std::vector<RemoteCommand> running;
  for (const auto& command : commands) running.push_back(begin(command.first, command.second, timeout_s, input_path));
  std::vector<RemoteResult> results;
  for (RemoteCommand& r : running) results.push_back(r.wait());
  return results;
}

RemoteResult SshHosts::open(std::size_t host, double timeout_s) { return open_all_of({host}, timeout_s).front(); }

std::vector<RemoteResult> SshHosts::open_all(double timeout_s) {
  std::vector<std::size_t> all;
  for (std::size_t h = 0; h < targets_.size(); ++h) all.push_back(h);
  return open_all_of(all, timeout_s);
}

// Starts the masters of `hosts` (those not up yet) together, then waits until each answers
// `-O check`, ends (its log says why) or the time is up.
std::vector<RemoteResult> SshHosts::open_all_of(const std::vector<std::size_t>& hosts, double timeout_s) {
  std::vector<RemoteResult> results(hosts.size());
  std::vector<bool> waiting(hosts.size(), false);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::size_t h = hosts[i];
    if (masters_.at(h).running()) {
      results[i].exit_code = 0;
      continue;
    }
    ExecSpec spec;
    spec.argv = ssh_master_argv(targets_[h], options_, control_path(h));
    spec.output_path = control_path(h) + ".log";
    spec.die_with_parent = true;
    spec.close_other_descriptors = true;
    spec.own_process_group = true;
    spec.stdin_null = true;
    std::string error;
    masters_[h] = ChildProcess::spawn(spec, error);
    if (!masters_[h].running()) results[i].error = "cannot start " + spec.argv.front() + ": " + error;
    else waiting[i] = true;
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  for (bool any = true; any;) {
    any = false;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      if (!waiting[i]) continue;
      const std::size_t h = hosts[i];
      std::ifstream log(control_path(h) + ".log", std::ios::binary);
      const std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      if (const std::optional<ChildExit> exit = masters_[h].try_wait()) {
        results[i].output = output;
        if (exit->exited()) results[i].exit_code = exit->exit_code() == 0 ? 255 : exit->exit_code();
        else results[i].error = "ssh ended with " + exit->describe();
        waiting[i] = false;
      } else if (master_running(h)) {
        results[i].exit_code = 0;
        waiting[i] = false;
      } else if (Clock::now() >= deadline) {
        masters_[h].kill_and_wait();
        results[i].output = output;
        results[i].timed_out = true;
        results[i].error = "no login within " + seconds_text(timeout_s) + "; ssh was killed";
        waiting[i] = false;
      } else {
        any = true;
      }
    }
    if (any) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return results;
}

bool SshHosts::master_running(std::size_t host) const {
  std::error_code ec;
  if (control_dir_.empty() || !std::filesystem::exists(control_path(host), ec)) return false;
  return run_argv(ssh_control_argv(targets_.at(host), options_, control_path(host), "check"), 5.0).ok();
}

RemoteResult SshHosts::run(std::size_t host, const std::string& remote_command, double timeout_s,
                           const std::string& input_path) const {
  return begin(host, remote_command, timeout_s, input_path).wait();
}

ChildProcess SshHosts::start(std::size_t host, const std::string& remote_command, int stdin_fd,
                             const std::string& output_path, bool append, std::string& error) const {
  ExecSpec spec;
  spec.argv = ssh_argv(targets_.at(host), options_, control_path(host), remote_command, true);
  spec.output_path = output_path;
  spec.append_output = append;
  spec.stdin_fd = stdin_fd;
  spec.stdin_null = stdin_fd < 0;
  spec.die_with_parent = true;
  spec.close_other_descriptors = true;
  spec.own_process_group = true;
  return ChildProcess::spawn(spec, error);
}

bool SshHosts::close(std::size_t host) {
  if (control_dir_.empty() || !masters_.at(host).running()) return false;
  const bool asked = run_argv(ssh_control_argv(targets_.at(host), options_, control_path(host), "exit"), 5.0).ok();
  // The master exits once it has said goodbye; a master that hangs is killed after 5 s.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!masters_[host].try_wait()) {
    if (Clock::now() >= deadline) {
      masters_[host].kill_and_wait();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return asked;
}

std::string hapair_version_problem(const SshTarget& t, const std::string& binary, const RemoteResult& r,
                                   const std::string& expected_version) {
  const std::string where = "host " + t.name + " (" + t.user + "@" + t.address + ")";
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

std::string SshHosts::check_hapair_version(std::size_t host, const std::string& binary, const std::string& expected_version,
                                           double timeout_s) const {
  return hapair_version_problem(targets_.at(host), binary, run(host, shell_command({binary, "--version"}), timeout_s),
                                expected_version);
}

}  // namespace hapair
