// Process supervision for the launcher (launcher_supervision.h): the interrupt guard, the
// cleanup watcher and the text helpers.
//
// Paper: section 6's one-process-per-server experiments; nothing here is protocol logic.
//
// Invariant: the watcher's child is prepared before fork() and makes only async-signal-safe
// calls until it execs, because the launcher has threads (ZeroMQ's).
#include "proc/launcher_supervision.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace hapair::launcher {
namespace {

// The one piece of process-wide state: a signal handler can only talk to the program through a
// variable like this. The handler only sets it; the launcher's loops check it.
volatile sig_atomic_t g_interrupt_signal = 0;

extern "C" void on_interrupt_signal(int signal_number) { g_interrupt_signal = signal_number; }

}  // namespace

int interrupt_signal() { return g_interrupt_signal; }

InterruptGuard::InterruptGuard() {
  g_interrupt_signal = 0;
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_interrupt_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  const int sig = g_interrupt_signal;
  const struct sigaction& old = sig == SIGTERM ? old_term_ : old_int_;
  if (sig != 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) raise(sig);
}

CleanupWatch::CleanupWatch(const std::vector<std::string>& command) {
  if (command.empty()) return;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  // Prepared before fork(): the launcher has threads (ZeroMQ's), so the child may only make
  // async-signal-safe calls until it execs.
  std::vector<std::string> args = command;
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    // A Ctrl-C reaches the whole process group; the launcher handles it and cleans up itself,
    // and this child must outlive it in any case.
    struct sigaction ignore;
    std::memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, nullptr);
    sigaction(SIGTERM, &ignore, nullptr);
    dup2(fds[0], STDIN_FILENO);
    close_range(3, ~0U, 0);
    char byte = 0;
    ssize_t n = 0;
    do n = read(STDIN_FILENO, &byte, 1);
    while (n < 0 && errno == EINTR);
    if (n == 1) _exit(0);  // the launcher finished and cleaned up itself
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[0]);
  pid_ = pid;
  write_fd_ = fds[1];
}

CleanupWatch::~CleanupWatch() {
  if (pid_ < 0) return;
  const char done = 'd';
  [[maybe_unused]] const ssize_t ignored = write(write_fd_, &done, 1);
  close(write_fd_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=*@") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The last `bytes_max` bytes of a file, for echoing a failed node's output.
std::string file_tail(const std::string& path, std::size_t bytes_max) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(bytes_max) ? size - static_cast<std::streamoff>(bytes_max) : 0;
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return start > 0 ? "...\n" + text : text;
}

// Counters that the driver fills and that add up over a node's incarnations (a restarted process
// starts them from zero), as the simulator keeps its own counters across restarts. The core's

}  // namespace hapair::launcher
