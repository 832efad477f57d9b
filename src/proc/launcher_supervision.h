// Process supervision for the launcher of real runs (launcher.h): the deferred SIGINT/SIGTERM
// handling of a run, the watcher that removes a run's temporary folder (or network namespaces)
// when the launcher dies without doing it, and the small text helpers the launcher prints with.
//
// Paper: the experiments of section 6 run each server as its own process; these pieces keep
// those processes and their files from outliving the run that started them (fail-stop crashes
// are real SIGKILLs, section 2, so the launcher itself can be killed too).
//
// Invariant: the interrupt signal is the one piece of process-wide state (a signal handler can
// only talk to the program through a variable); the handler only sets it and the launcher's
// loops read it through interrupt_signal(). Internal to the harness: only launcher*.cpp use it.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace hapair::launcher {

// The SIGINT or SIGTERM that arrived while an InterruptGuard was alive, or 0.
int interrupt_signal();

// Installs the SIGINT/SIGTERM handlers for the duration of a run and restores the old ones.
// The launcher defers the signal only to kill and reap every node and remove its temporary
// folder; then the signal does what it would have done without the launcher: when the old
// disposition was the default (a `hapair` command), it is raised again and ends the process, so
// Ctrl-C stops `compare`, `experiment` or `soak` instead of only the run under way. A caller
// with a handler of its own (a test framework) gets the result that says "interrupted".
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_;
  struct sigaction old_term_;
};

// Cleans up after the launcher when it dies without doing it (kill -9, a test framework's
// timeout, a chaos run killed as hung): a small child process that is not a node, does not die
// with the launcher and waits for the end of a pipe the launcher holds. When the launcher
// finishes, it says so through the pipe and the child just exits; when the pipe closes without a
// word, the launcher is gone (its nodes went with it, PR_SET_PDEATHSIG) and the child becomes
// `command`: `rm -rf FOLDER` for a run's temporary folder, the removal of a run's network
// namespaces (net_isolation.h).
class CleanupWatch {
 public:
  // command[0] is an absolute path.
  explicit CleanupWatch(const std::vector<std::string>& command);
  // The launcher is done (cleaned up, or kept on purpose): the child exits.
  ~CleanupWatch();
  CleanupWatch(const CleanupWatch&) = delete;
  CleanupWatch& operator=(const CleanupWatch&) = delete;

 private:
  pid_t pid_ = -1;
  int write_fd_ = -1;
};

// `s` as one shell word: unchanged when it has only safe characters, else in single quotes.
std::string shell_quote(const std::string& s);

// The last `bytes_max` bytes of a file, for echoing a failed node's output ("...\n" first when
// cut); empty when it cannot be read.
std::string file_tail(const std::string& path, std::size_t bytes_max);

}  // namespace hapair::launcher
