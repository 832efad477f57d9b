// The hosts of a real run on several machines, reached over OpenSSH (docs/HOSTS.md): one
// multiplexed master per host, a run folder per host, `hapair node` started on its host under an
// ssh session whose output is the node's log here, faults as signals sent on the victim's host,
// faults' instants corrected by each host's clock offset (measured by the launcher over the
// control channel, hosts/clock_probes.h), and everything removed again at the end.
//
// Paper: section 6 runs every server on its own machine and kills one; here the kill is a
// SIGKILL sent on the victim's host (fail-stop, section 2) and its instant is read there and
// carried back with the host's clock offset and its error bound.
//
// How nothing stays behind, whatever happens to the launcher:
//   - every ssh process (masters, node sessions, keepers) is the launcher's child, dies with it
//     (PR_SET_PDEATHSIG) and sits in a process group of its own (a Ctrl-C reaches the launcher,
//     which then stops them in order);
//   - every node session and every host's keeper reads the launcher's end of one pipe on stdin.
//     Nothing is written to it: it ends when the launcher closes it (the end of a run) or dies
//     (kill -9), and ssh carries that EOF to the host; so does sshd when the connection drops;
//   - a node runs with --exit-on-stdin-eof and exits at EOF; the keeper (one session per host,
//     which made the run folder) then SIGKILLs every node process of the run still alive (the
//     pid files it finds, checked against the process's command line) and removes the folder;
//   - the local control folder of the masters is removed by a CleanupWatch.
//
// Invariant: after close() (or the launcher's death) no process of the run runs on any host and
// the run folder on every host is gone; close() reports a host whose keeper did not say so.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hosts/clock_offset.h"
#include "hosts/host_list.h"
#include "launch/launcher.h"
#include "proc/child_process.h"
#include "proc/launcher_supervision.h"
#include "proc/ssh_control.h"

namespace hapair::launcher {

// What a signal sent on a host took: the host's clock just before and just after kill(1), and
// the launcher's realtime clock when the command was sent and when its answer came.
struct RemoteSignal {
  bool ok = false;
  std::string error;            // why not
  std::int64_t host_before_us = 0;
  std::int64_t host_after_us = 0;
  std::int64_t sent_us = 0;     // launcher realtime
  std::int64_t answered_us = 0; // launcher realtime
};

// A signal on its way to a node on another host (RemoteHosts::begin_signal): the run goes on
// while ssh carries it.
struct PendingSignal {
  std::size_t host = 0;
  std::string node;
  std::string signal;        // KILL, STOP, CONT; LOSS: a host loss (begin_host_loss); HOSTSTOP, HOSTCONT:
                             // a host pause (begin_host_signal); CUT, HEAL: begin_cut; LIMIT,
                             // UNLIMIT: begin_limit
  std::int64_t sent_us = 0;  // launcher realtime
  RemoteCommand command;
};

// The instant of a remote signal on the launcher's realtime clock, with its error bound: the
// host's reading just before the kill (which follows it at once) corrected by the host's offset
// when the estimate excludes 0 (else taken as is, the bound covering every offset the estimate
// admits), its bound the offset's plus the before/after window; then cut to the interval in which the launcher
// knows the signal happened (between sending the command and its answer), which bounds it
// however wrong the offset is: the estimate moves only when it falls outside that interval, and
// the bound is its distance to the interval's farther end. Pure.
struct RemoteInstant {
  std::int64_t at_us = 0;
  std::int64_t error_bound_us = 0;
};
RemoteInstant remote_instant(const RemoteSignal& signal, const std::optional<ClockOffset>& offset);

// The shell scripts run on a host (pure, `sh -c` words quoted; the tests read them).
// The keeper: makes the run folder under `work_dir`, prints "hapair-run-dir PATH", waits for
// stdin to end, kills the run's node processes still alive, removes the folder, prints
// "hapair-run-removed PATH".
std::string keeper_command(const std::string& work_dir);
// A node: writes its pid to RUN_DIR/NODE.pid, then becomes `argv` (exec: the pid stays).
std::string node_session_command(const std::string& run_dir, const std::string& node_name,
                                 const std::vector<std::string>& argv);
// Sends `signal_name` (KILL, STOP, CONT) to the node whose pid file is RUN_DIR/NODE.pid and
// prints the host's clock (ns) before and after.
// A host loss: an nftables table (hapair_ and the run folder's name) that drops every packet in
// and out but loopback and the ssh port, then SIGKILL of every node process of the run there;
// prints the host's clock (ns) before and after the kills (exit 91: nft failed).
std::string host_loss_command(const std::string& run_dir, std::int64_t ssh_port);
std::string signal_command(const std::string& run_dir, const std::string& node_name, const std::string& signal_name);
// Sends `signal_name` to every node process of the run folder there (its pid files, checked
// against the process's command line) with one kill, and prints the host's clock (ns) before and
// after it.
std::string host_signal_command(const std::string& run_dir, const std::string& signal_name);
// The link cuts of a run folder on a host (partitions across hosts): an nftables table (the loss
// table's name and "_cut") whose set of peer addresses is dropped in and out, but the host's ssh
// port; empty when made (exit 92: nft failed, no root or no nftables). The keeper deletes it.
std::string cut_table_command(const std::string& run_dir, std::int64_t ssh_port);
// Adds (`cut`) or deletes every address the peer resolves to on the host (IPv4 and IPv6, each in
// its family's set); prints the host's clock (ns) before and after (exit 92: nft failed; 95: the
// address does not resolve).
std::string cut_command(const std::string& run_dir, const std::string& peer_address, bool cut);
// Bandwidth limits between hosts (HostLinkLimitSpec), made before the run so that putting one
// is a single tc command: on the interface the route to the peer takes, an htb root (made once
// per run, its interface written to RUN_DIR/tc.devs for the keeper; refused when the interface
// has a root qdisc of its own that is not a default one) and class 1:SLOT with a tbf of
// `rate_bits_per_s` (burst 10 ms at the rate, at least 16 KiB; 100 ms of queue), which nothing
// is sent through yet, and the tc batches that put and lift the limit (limit_command). A script's body (the scripts of one host run one after the other): exit 93
// with the reason: no root, no ip or tc, tc failed; 95: the peer's address does not resolve.
std::string limit_setup_script(const std::string& run_dir, const std::string& peer_address, int slot,
                               std::int64_t rate_bits_per_s);
// Puts (`on`: a u32 filter per address of the peer, prio SLOT, to class 1:SLOT) or lifts (the
// filters deleted) the limit of the traffic from the host to the peer: the batch the setup
// wrote (RUN_DIR/limit-SLOT.on or .off) by one `tc -b`; prints the host's clock (ns) before and
// after. Exit 93: tc failed.
std::string limit_command(const std::string& run_dir, int slot, bool on);

// A pipe that already holds `line`: fds[0] for a child's stdin, fds[1] for the launcher to keep
// open as long as the child should not see its stdin end. Both close-on-exec. false with `error`
// set when the pipe cannot be made or written.
bool pipe_holding(const std::string& line, int fds[2], std::string& error);

class RemoteHosts {
 public:
  // Reaches every host: opens the masters (together), makes the run folders, copies the binary
  // (options.copy_binary) and the topology, checks each host's `hapair --version` and the
  // address hosts see the launcher at. nullptr with every problem in
  // `problems` (what was started is stopped again, and the folders removed).
  static std::unique_ptr<RemoteHosts> open(const HostList& hosts, const HostsLaunch& options,
                                           const std::string& local_binary, const std::string& topology_path,
                                           const std::string& log_dir, std::vector<std::string>& problems);
  ~RemoteHosts();  // close()
  RemoteHosts(const RemoteHosts&) = delete;
  RemoteHosts& operator=(const RemoteHosts&) = delete;

  const HostList& hosts() const { return hosts_; }
  // The address every host reached us from ($SSH_CONNECTION), "" when they differ.
  const std::string& control_address() const { return control_address_; }
  // Why control_address() is empty: the addresses per host.
  std::string control_address_problem() const;
  const std::string& run_dir(std::size_t host) const { return state_.at(host).run_dir; }
  // The host's clock offset, measured by the launcher's clock probes over the control channel
  // (hosts/clock_probes.h) once the nodes said hello; nullopt before, or when none answered.
  const std::optional<ClockOffset>& offset(std::size_t host) const { return state_.at(host).offset; }
  void set_offset(std::size_t host, const std::optional<ClockOffset>& offset);
  // What to subtract from a time a node on `host` reported to put it on the launcher's clock:
  // the offset when its estimate excludes 0 (the host's clock really differs), else 0 (the
  // correction would only add the estimate's error).
  std::int64_t correction_us(std::size_t host) const;

  // Starts `hapair node ARGS --exit-on-stdin-eof` on the host; its output goes to log_path here.
  // `stdin_line` (the run's keys, runtime/curve.h): the node's session gets a stdin of its own
  // that starts with this line and ends, like the shared one, when the launcher closes it or
  // dies; ssh carries the line to the host, where it is never written to a file. Empty: the
  // shared stdin.
  ChildProcess start_node(std::size_t host, const std::string& node_name, const std::vector<std::string>& args,
                          const std::string& log_path, bool append, const std::string& stdin_line, std::string& error);
  // Sends SIG`signal_name` to the node on its host: begun now, its RemoteSignal from
  // poll_signal() once done (nullopt before), or from wait_signal() (bounded by the ssh timeout).
  PendingSignal begin_signal(std::size_t host, const std::string& node_name, const std::string& signal_name) const;
  std::optional<RemoteSignal> poll_signal(PendingSignal& pending) const;
  RemoteSignal wait_signal(PendingSignal& pending) const;
  // The loss of the host (HostLossSpec): its links dropped (nftables, all but its ssh port; the
  // keeper removes the table at the end), then every node process of the run there SIGKILLed.
  // The RemoteSignal's readings surround the kills. Needs root and nft on the host.
  PendingSignal begin_host_loss(std::size_t host) const;
  // A host pause (HostPauseSpec): SIG`signal_name` (STOP, CONT) to every node process of the run
  // on the host at once (host_signal_command); the readings surround the kill.
  PendingSignal begin_host_signal(std::size_t host, const std::string& signal_name) const;
  // Partitions across hosts: the cut tables made on `hosts` (cut_table_command), before the run;
  // the problems (a host without root or nftables named with what nft said).
  std::vector<std::string> prepare_cuts(const std::vector<std::size_t>& hosts);
  // Cuts (or heals) the link from `host` to `peer` on `host`: every packet between their
  // addresses dropped there, both ways, but ssh's. A RemoteSignal like a signal's (CUT, HEAL).
  PendingSignal begin_cut(std::size_t host, std::size_t peer, bool cut) const;
  // Bandwidth limits: each made ready on its host (limit_setup_command) before the run; the
  // problems, each naming its host.
  struct LimitSetup {
    std::size_t host = 0;
    std::size_t peer = 0;
    int slot = 0;
    std::int64_t rate_bits_per_s = 0;
  };
  std::vector<std::string> prepare_limits(const std::vector<LimitSetup>& limits);
  // Puts (lifts) the limit from `host` to `peer` on `host` (limit_command): a RemoteSignal like
  // a signal's (LIMIT, UNLIMIT).
  PendingSignal begin_limit(std::size_t host, std::size_t peer, int slot, std::int64_t rate_bits_per_s, bool on) const;

  // Ends the run on every host: the pipe is closed (every session sees EOF), each keeper kills
  // what is left and removes the run folder; waits for the keepers (bounded), then closes the
  // masters. The problems: a host whose keeper did not confirm the removal. Idempotent.
  std::vector<std::string> close();

  // How long the setup took, phase by phase ("logged in 412 ms, ..."), since open() began.
  const std::string& setup_timing() const { return timing_; }

  // hosts.json: per host its address, run folder, binary and time correction (the launcher adds
  // the clock rounds).
  std::string describe_json() const;

 private:
  struct HostState {
    std::string run_dir;
    std::string binary;
    std::string seen_from;  // the launcher's address from the host's side
    std::string keeper_log;
    ChildProcess keeper;
    std::optional<ClockOffset> offset;
  };
  RemoteHosts(HostList hosts, HostsLaunch options, SshHosts ssh);
  bool setup(const std::string& local_binary, const std::string& topology_path, const std::string& log_dir,
             std::vector<std::string>& problems);
  bool start_keepers(const std::string& log_dir, std::vector<std::string>& problems);
  // `script(host)` run on each of `hosts` at once; a problem per host that exited with
  // `refused_exit` (`refused` with {} for the host, then the last line it printed) or failed.
  std::vector<std::string> prepare_on(const std::vector<std::size_t>& hosts, const std::function<std::string(std::size_t)>& script,
                                      int refused_exit, const std::string& refused, const std::string& failed);
  // `script` begun on the host over its master, as a PendingSignal of `signal` on `what`.
  PendingSignal begin_command(std::size_t host, const std::string& what, const std::string& signal,
                              const std::string& script) const;
  std::string where(std::size_t host) const;

  HostList hosts_;
  HostsLaunch options_;
  SshHosts ssh_;
  std::optional<CleanupWatch> control_dir_watch_;
  int stdin_read_fd_ = -1;
  int stdin_write_fd_ = -1;
  std::vector<int> node_stdin_write_fds_;  // start_node's own stdins, closed with the shared one
  std::vector<HostState> state_;
  std::string control_address_;
  std::string timing_;
  bool closed_ = false;
};

}  // namespace hapair::launcher
