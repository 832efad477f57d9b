// Reaching other hosts with the system's OpenSSH client (docs/HOSTS.md): one
// multiplexed master connection per host (a ControlPath in a private folder), so that after the
// login (about 0.4 s) a remote command is one round trip over the open connection, not a new
// handshake; BatchMode, so ssh never waits for a password or a question. No daemon of our own:
// testbeds hand out ssh and nothing else.
//
// Each master runs in the foreground as a child of its owner (`ssh -M -N`, ControlPersist=no,
// PR_SET_PDEATHSIG): it cannot outlive the process that opened it, not even a SIGKILLed one, and
// its death closes the connection, which ends every remote session it carried (the remote
// commands read EOF). Commands take ControlMaster=no: they use the master when it is up and
// otherwise connect on their own for that one command; none starts a master that would linger.
//
// Paper: none directly; the experiments of section 6 run servers on separate machines, and the
// faults the launcher will inject there (kills, link cuts, host loss) go through this layer.
//
// Invariant: an SshHosts owns its control folder (mode 0700, removed at the end) and every
// master started through it: its destructor asks each master to exit (`ssh -O exit`), so no ssh
// process outlives it, and each master dies with it even when it is SIGKILLed. Every remote command has a timeout after which its ssh is killed; no call
// here blocks without one. Remote words are quoted for the remote shell (shell_quote), so a
// command's arguments reach the remote program as given.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proc/child_process.h"

namespace hapair {

// How to reach one host.
struct SshTarget {
  std::string name;           // for messages: "h1"
  std::string address;        // ssh's destination host
  std::string user;
  std::int64_t port = 22;
  std::string identity_file;  // empty: ssh's own choice
  std::string known_hosts_file;  // empty: SshOptions::known_hosts_file
};

struct SshOptions {
  std::string ssh_program = "/usr/bin/ssh";
  std::int64_t connect_timeout_s = 10;   // ConnectTimeout: a host that does not answer
  // StrictHostKeyChecking: "accept-new" (a testbed's fresh hosts; a changed key is still refused)
  // or "yes".
  std::string host_key_checking = "accept-new";
  std::string known_hosts_file;  // UserKnownHostsFile; empty: ssh's default
};

// How a remote command ended. ssh itself ends with 255 when it could not connect or log in.
struct RemoteResult {
  int exit_code = -1;     // the remote command's exit code (255: ssh failed); -1 when ssh did not exit
  std::string output;     // its stdout and stderr, then ssh's own messages
  bool timed_out = false; // killed after its timeout
  std::string error;      // why ssh could not be started, or how it ended if not by exit
  bool ok() const { return exit_code == 0 && !timed_out && error.empty(); }
  // "exit code 3", "timed out after 5 s", "ssh failed (exit code 255): <its message>".
  std::string describe() const;
};

// One word for a POSIX shell: 'text' with every ' written as '\''; words of safe characters
// only (letters, digits, and _ - . / : = @ , +) stay as they are.
std::string shell_quote(const std::string& word);
// The words joined by spaces, each quoted.
std::string shell_command(const std::vector<std::string>& words);

// The ssh command line (argv) that runs `remote_command` on `target` through the master whose
// socket is `control_path` (pure; the tests read it). `with_stdin`: the remote command reads
// ssh's stdin (otherwise -n: /dev/null).
std::vector<std::string> ssh_argv(const SshTarget& target, const SshOptions& options, const std::string& control_path,
                                  const std::string& remote_command, bool with_stdin = false);
// The command line of a host's master: in the foreground, no command (-N), no persistence.
std::vector<std::string> ssh_master_argv(const SshTarget& target, const SshOptions& options,
                                         const std::string& control_path);
// The ssh command line that sends the master a control request: "check" or "exit".
std::vector<std::string> ssh_control_argv(const SshTarget& target, const SshOptions& options,
                                          const std::string& control_path, const std::string& request);

// "" when the result of `binary --version` (its last line) is `hapair EXPECTED`; otherwise what is
// wrong (not found, another version, ssh failed), naming the host.
std::string hapair_version_problem(const SshTarget& target, const std::string& binary, const RemoteResult& result,
                                   const std::string& expected_version);

// Why hapair cannot be reached by ssh on this machine ("" when it can): no ssh client.
std::string ssh_unavailable(const SshOptions& options);

// A remote command under way (SshHosts::begin): its ssh client runs while the caller does other
// things. Destroying it kills the client.
class RemoteCommand {
 public:
  RemoteCommand() = default;
  ~RemoteCommand();
  RemoteCommand(RemoteCommand&& other) noexcept;
  RemoteCommand& operator=(RemoteCommand&& other) noexcept;

  // The result once ssh ended (or was killed at its deadline), once; nullopt while it runs.
  std::optional<RemoteResult> poll();
  // poll() until there is a result (bounded by the command's timeout).
  RemoteResult wait();

 private:
  friend class SshHosts;
  ChildProcess child_;
  std::string output_path_;
  std::string early_error_;  // it never started (or was collected)
  double timeout_s_ = 0;
  std::chrono::steady_clock::time_point deadline_;
};

class SshHosts {
 public:
  // Makes the private control folder (under `temp_dir`, /tmp by default: a socket path must stay
  // under about 100 characters). nullopt with `error` set when it cannot.
  static std::optional<SshHosts> create(SshOptions options, std::string& error, const std::string& temp_dir = "/tmp");
  ~SshHosts();  // closes every master, removes the control folder
  SshHosts(SshHosts&& other) noexcept;
  SshHosts& operator=(SshHosts&&) = delete;
  SshHosts(const SshHosts&) = delete;
  SshHosts& operator=(const SshHosts&) = delete;

  // Adds a host; its index is returned. Nothing connects yet.
  std::size_t add(SshTarget target);
  const SshTarget& target(std::size_t host) const { return targets_.at(host); }
  std::size_t size() const { return targets_.size(); }
  const std::string& control_dir() const { return control_dir_; }
  std::string control_path(std::size_t host) const;

  // Logs in and leaves the master running, a child of this process: ok() once the master
  // answers, or why not (ssh's own message when it ended, e.g. "Connection refused").
  RemoteResult open(std::size_t host, double timeout_s);
  // open() for every host at once (the logins overlap), one result per host.
  std::vector<RemoteResult> open_all(double timeout_s);
  // Whether the host's master is up (`ssh -O check`).
  bool master_running(std::size_t host) const;
  // Runs `remote_command` (a shell command line: quote words with shell_quote) on the host.
  // `input_path` non-empty: the remote command reads that local file on its stdin (a copy:
  // `cat > FILE`).
  RemoteResult run(std::size_t host, const std::string& remote_command, double timeout_s,
                   const std::string& input_path = "") const;
  // Starts `remote_command` on the host and returns at once; its result comes from poll()/wait().
  RemoteCommand begin(std::size_t host, const std::string& remote_command, double timeout_s,
                      const std::string& input_path = "") const;
  // Runs several commands at once (host, command line), every one reading `input_path` when
  // given; the results in the same order.
  std::vector<RemoteResult> run_all(const std::vector<std::pair<std::size_t, std::string>>& commands, double timeout_s,
                                    const std::string& input_path = "") const;
  // Starts `remote_command` on the host and returns at once: the local ssh client as a child,
  // its stdin `stdin_fd`, its output (the remote command's stdout and stderr) to `output_path`
  // (appended when `append`). It ends when the remote command ends, with its exit code (255:
  // ssh failed, or the remote command was killed by a signal). It dies with this process and
  // sits in a process group of its own (a Ctrl-C at the terminal reaches only its owner).
  ChildProcess start(std::size_t host, const std::string& remote_command, int stdin_fd, const std::string& output_path,
                     bool append, std::string& error) const;
  // Asks the host's master to exit (and kills it when it does not within seconds); false when
  // none was running.
  bool close(std::size_t host);

  // "" when `binary --version` on the host prints `hapair EXPECTED`; otherwise what is wrong (not
  // found, another version, ssh failed), naming the host.
  std::string check_hapair_version(std::size_t host, const std::string& binary, const std::string& expected_version,
                                   double timeout_s) const;

 private:
  SshHosts(SshOptions options, std::string control_dir) : options_(std::move(options)), control_dir_(std::move(control_dir)) {}
  // Runs an ssh command line to its end or its timeout, output to a file in the control folder.
  RemoteResult run_argv(const std::vector<std::string>& argv, double timeout_s, const std::string& input_path = "") const;
  RemoteCommand begin_argv(const std::vector<std::string>& argv, double timeout_s, const std::string& input_path) const;
  std::vector<RemoteResult> open_all_of(const std::vector<std::size_t>& hosts, double timeout_s);

  SshOptions options_;
  std::string control_dir_;  // empty once moved from
  std::vector<SshTarget> targets_;
  std::vector<ChildProcess> masters_;  // by host; not running: no master (yet, or any more)
};

}  // namespace hapair
