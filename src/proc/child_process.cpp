#include "proc/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>

#include <fmt/format.h>

extern char** environ;

namespace hapair {

bool ChildExit::exited() const { return WIFEXITED(wait_status); }
int ChildExit::exit_code() const { return exited() ? WEXITSTATUS(wait_status) : -1; }
bool ChildExit::signaled() const { return WIFSIGNALED(wait_status); }
int ChildExit::signal_number() const { return signaled() ? WTERMSIG(wait_status) : 0; }
std::string ChildExit::describe() const { return describe_wait_status(wait_status); }

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exit code {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* name = sigabbrev_np(sig);
    if (name == nullptr) return fmt::format("signal {}", sig);
    return fmt::format("signal {} (SIG{}{})", sig, name, sig == SIGABRT ? ": an invariant check failed" : "");
  }
  return fmt::format("wait status {}", wait_status);
}

ChildProcess::~ChildProcess() { kill_and_wait(); }

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_wait();
    pid_ = std::exchange(other.pid_, -1);
  }
  return *this;
}

namespace {

// The environment of the child: ours, with each "NAME=value" of `changes` replacing or adding
// its NAME.
std::vector<std::string> child_environment(const std::vector<std::string>& changes) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  for (const std::string& change : changes) {
    const std::string prefix = change.substr(0, change.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.compare(0, prefix.size(), prefix) == 0; });
    env.push_back(change);
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

ChildProcess ChildProcess::spawn(const ExecSpec& spec, std::string& error) {
  if (spec.argv.empty()) {
    error = "no program to start";
    return {};
  }
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv = pointers(args);
  std::vector<std::string> env = child_environment(spec.environment);
  std::vector<char*> envp = pointers(env);
  const std::string exec_failed = "hapair: cannot exec " + spec.argv[0] + "\n";
  int output_fd = -1;
  if (!spec.output_path.empty()) {
    output_fd = ::open(spec.output_path.c_str(), O_WRONLY | O_CREAT | (spec.append_output ? O_APPEND : O_TRUNC) | O_CLOEXEC,
                       0644);
    if (output_fd < 0) {
      error = "cannot open " + spec.output_path + ": " + std::strerror(errno);
      return {};
    }
  }
  int namespace_fd = -1;
  if (!spec.network_namespace.empty()) {
    namespace_fd = ::open(spec.network_namespace.c_str(), O_RDONLY | O_CLOEXEC);
    if (namespace_fd < 0) {
      error = "cannot open the network namespace " + spec.network_namespace + ": " + std::strerror(errno);
      if (output_fd >= 0) ::close(output_fd);
      return {};
    }
  }
  int null_fd = -1;
  if (spec.stdin_fd < 0 && spec.stdin_null) {
    null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) {
      error = std::string("cannot open /dev/null: ") + std::strerror(errno);
      if (output_fd >= 0) ::close(output_fd);
      if (namespace_fd >= 0) ::close(namespace_fd);
      return {};
    }
  }
  const int input_fd = spec.stdin_fd >= 0 ? spec.stdin_fd : null_fd;
  const std::string setns_failed = "hapair: cannot enter the network namespace " + spec.network_namespace + "\n";
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("cannot fork: ") + std::strerror(errno);
    if (output_fd >= 0) ::close(output_fd);
    if (namespace_fd >= 0) ::close(namespace_fd);
    if (null_fd >= 0) ::close(null_fd);
    return {};
  }
  if (pid == 0) {
    if (spec.own_process_group) ::setpgid(0, 0);
    if (input_fd >= 0) ::dup2(input_fd, STDIN_FILENO);
    if (output_fd >= 0) {
      ::dup2(output_fd, STDOUT_FILENO);
      ::dup2(output_fd, STDERR_FILENO);
    }
    if (namespace_fd >= 0 && ::setns(namespace_fd, CLONE_NEWNET) != 0) {
      write_all(STDERR_FILENO, setns_failed);
      ::_exit(127);
    }
    if (spec.close_other_descriptors) ::close_range(3, ~0U, 0);
    if (spec.die_with_parent) {
      // The check closes the race where the parent died before prctl().
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
    }
    ::execve(argv[0], argv.data(), envp.data());
    write_all(STDERR_FILENO, exec_failed);
    ::_exit(127);
  }
  if (output_fd >= 0) ::close(output_fd);
  if (namespace_fd >= 0) ::close(namespace_fd);
  if (null_fd >= 0) ::close(null_fd);
  return ChildProcess(pid);
}

ChildProcess ChildProcess::fork_call(const std::function<int()>& body, std::string& error) {
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("cannot fork: ") + std::strerror(errno);
    return {};
  }
  if (pid == 0) {
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
    // An exception must not unwind into the parent's frames, which the child shares.
    int code = 70;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hapair: a forked child ended with an exception: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "hapair: a forked child ended with an exception\n");
    }
    std::fflush(stderr);
    ::_exit(code);
  }
  return ChildProcess(pid);
}

bool ChildProcess::signal(int signal_number) const { return running() && ::kill(pid_, signal_number) == 0; }

std::optional<ChildExit> ChildProcess::try_wait() {
  if (!running()) return std::nullopt;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  pid_ = -1;
  return ChildExit{status};
}

std::optional<ChildExit> ChildProcess::wait() {
  if (!running()) return std::nullopt;
  int status = 0;
  pid_t got = -1;
  while ((got = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (got < 0) return std::nullopt;  // not our child any more (reaped elsewhere)
  return ChildExit{status};
}

std::optional<ChildExit> ChildProcess::kill_and_wait() {
  signal(SIGKILL);
  return wait();
}

}  // namespace hapair
