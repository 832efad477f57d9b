// Child processes: the one place hapair forks. The launcher starts node processes with it (exec
// of the hapair binary, output to the node's log, killed with the launcher), chaos runs each case
// in a forked child that calls back into this program (no exec), and the plots run matplotlib
// scripts (exec of python3 with a changed environment).
//
// One wording for how a child ended, whoever started it: "exit code 7", "signal 9 (SIGKILL)",
// "signal 6 (SIGABRT: an invariant check failed)".
//
// Invariant: a ChildProcess owns its child until it has been reaped; one that is destroyed while
// its child may still run kills it (SIGKILL) and reaps it, so no child outlives its owner and
// none is left a zombie. Everything the child needs is prepared before fork(), so that between
// fork and exec the child makes only async-signal-safe calls.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hapair {

// What waitpid(2) said about a child that ended.
struct ChildExit {
  int wait_status = 0;

  bool exited() const;                // ended by exit() / return from main
  int exit_code() const;              // its code; -1 when it did not exit
  bool signaled() const;              // ended by a signal
  int signal_number() const;          // that signal; 0 when it was not signaled
  bool exited_with(int code) const { return exited() && exit_code() == code; }
  bool clean() const { return exited_with(0); }
  std::string describe() const;       // describe_wait_status(wait_status)
};

// "exit code N", "signal N (SIGNAME)" (with ": an invariant check failed" for SIGABRT, which is
// how an always-on check ends a process), or "wait status N" for anything else.
std::string describe_wait_status(int wait_status);

// A program to start with exec.
struct ExecSpec {
  std::vector<std::string> argv;         // argv[0] is the program's path (no PATH search)
  std::string output_path;               // stdout and stderr go to this file; empty: inherited
  bool append_output = false;            // append to output_path instead of truncating it
  std::vector<std::string> environment;  // "NAME=value" entries set on top of this process's
  bool die_with_parent = false;          // PR_SET_PDEATHSIG(SIGKILL): dies when we die
  bool close_other_descriptors = false;  // close every descriptor but stdin, stdout and stderr
  // A network namespace to run in (a path such as /var/run/netns/NAME): the child joins it with
  // setns(2) before exec, so the program's pid is the child's (no wrapper like `ip netns exec`,
  // whose mount-namespace set-up can take a good part of a second on a loaded machine).
  std::string network_namespace;
  // The child's stdin: this descriptor (dup2'ed onto 0; the caller keeps its own), else
  // /dev/null when `stdin_null`, else inherited. An ssh session to another host reads the
  // launcher's end of a pipe here, so that the launcher's death reaches the remote side as EOF.
  int stdin_fd = -1;
  bool stdin_null = false;
  // setpgid(0, 0): the child leads a process group of its own, so a Ctrl-C at the terminal
  // (sent to the foreground group) reaches the launcher only, which then stops the child itself.
  bool own_process_group = false;
};

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; false when a write failed.
// Only async-signal-safe calls, so a child may use it between fork and exec.
bool write_all(int fd, std::string_view bytes);

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts `spec`. On failure (the output file cannot be opened, fork fails) returns a
  // ChildProcess that is not running and sets `error`. A program that cannot be executed ends
  // with exit code 127 after writing "hapair: cannot exec <path>" to its output.
  static ChildProcess spawn(const ExecSpec& spec, std::string& error);

  // Forks and runs `body` in the child, which then ends with the code `body` returns (through
  // _exit: no exit handlers, no flushing of the parent's buffers, which are flushed before the
  // fork). The child's fatal signals are reset to their default actions, so an abort in it ends
  // it plainly instead of running a handler the parent installed (a test framework's).
  static ChildProcess fork_call(const std::function<int()>& body, std::string& error);

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }  // started and not yet reaped

  // Sends `signal_number` (SIGKILL, SIGSTOP, SIGCONT, ...) while the child runs; false when it
  // is not running or kill(2) failed.
  bool signal(int signal_number) const;
  // Reaps the child if it has ended (WNOHANG); nothing when it still runs or is not running.
  std::optional<ChildExit> try_wait();
  // Waits until the child ends and reaps it (retrying on EINTR); nothing when it is not running.
  std::optional<ChildExit> wait();
  // SIGKILL, then wait().
  std::optional<ChildExit> kill_and_wait();

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

}  // namespace hapair
