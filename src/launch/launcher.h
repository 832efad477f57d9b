// The launcher of real runs: one OS process per plan node (`hapair node`), a control plane to
// them, failure injection with real signals, and a RunResult of what happened.
//
// Paper: the experiments of section 6 run each server as its own process and kill one; here a
// crash fault is a real SIGKILL of the node's process (fail-stop, section 2) and a pause is a
// SIGSTOP/SIGCONT pair (a server that stops and comes back, which the paper assumed away); a
// partition cuts two nodes apart in the kernel (each node in its own network namespace, nftables
// DROP rules, net_isolation.h); a restart starts a crashed node's process again (`hapair node --rejoin`, bound to its old data
// endpoint) so that it rejoins as the standby and the pair is restored (docs/FAULTS.md, "Who may act as primary").
//
// What it does: binds a ROUTER for control, starts every node (or, in manual mode, prints the
// command for each and waits for them), waits for every Hello, sends the Directory with the run
// epoch, collects traces, stats and sink deliveries while injecting the faults on schedule,
// ends the run when every sink reported end_of_output (or, as incomplete, when the output went
// quiet for drain_quiet_s after duration_s, or at the latest when duration_s + drain_timeout_s
// passed), stops every node and reaps every child. With a hosts file (LaunchOptions::hosts)
// every node runs on the host placement gives it, started over ssh, and its faults are signals
// sent there (remote_hosts.h); a host loss drops the host's links, then kills its nodes.
//
// Invariants: no child process outlives launch_real_run (leftovers are SIGKILLed and reaped, and
// every child dies with the launcher through PR_SET_PDEATHSIG); a child that dies without the
// launcher killing it is an error in the result, never silence; the failure event of a crash
// fault carries the instant of the SIGKILL on the nodes' clock (on another host: the host's
// reading, with its error bound in hosts.json); on other hosts nothing of the run stays after
// launch_real_run, nor after the launcher's death (remote_hosts.h says how).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hosts/clock_probes.h"
#include "hosts/host_list.h"
#include "proc/ssh_control.h"
#include "protocols/plan.h"
#include "protocols/run_result.h"
#include "runtime/curve.h"

namespace hapair {

// The loss of a whole host during a run (several hosts, as root there): at `at_s` every link of
// the host is dropped (nftables, all but its ssh port), then every node process of the run there
// is SIGKILLed, so the peers learn of it only by silence (heartbeats), as when a machine dies.
struct HostLossSpec {
  std::string host;  // a name of the hosts file
  double at_s = 0;
};

// A pause of a whole host during a run (several hosts): at `at_s` every node process of the run
// there is SIGSTOPped by one command on the host, and `duration_s` later SIGCONTed together; its
// links stay up and nothing closes, so peers see only silence, as from a machine that hangs
// (swapping, a hypervisor's pause, a long GC of every process) and comes back.
struct HostPauseSpec {
  std::string host;  // a name of the hosts file, or host-of:NODE
  double at_s = 0;
  double duration_s = 0;
};

// A bandwidth limit between two hosts (several hosts, as root there, with tc): from `at_s` on,
// for `duration_s` (0: to the end of the run), what each host sends to the other passes a token
// bucket (tc tbf) of `rate_bits_per_s` on the interface its route to the other takes; other
// traffic is not limited. Nothing is lost by it but what a full bucket's 100 ms queue drops (TCP
// sends it again): a slow link, as a WAN path or a congested uplink is.
struct HostLinkLimitSpec {
  std::string link;  // "A-B": two hosts of the file, each a name or host-of:NODE
  std::int64_t rate_bits_per_s = 0;
  double at_s = 0;
  double duration_s = 0;  // 0: until the end of the run
};

// A run on several hosts over OpenSSH (docs/HOSTS.md, remote_hosts.h): every node placed on a
// host of the list (hosts/placement.h) and started there under an ssh session.
struct HostsLaunch {
  std::shared_ptr<const HostList> hosts;  // null: every node on this machine
  // The hapair each host runs: a path or a name its PATH finds. Ignored with copy_binary.
  std::string remote_binary = "hapair";
  // Copy the launcher's own binary into each host's run folder (over the ssh master) and run
  // that: no install needed, the same build by construction.
  bool copy_binary = false;
  // A Debian package of hapair (scripts/package.sh) copied to each host and unpacked into the
  // run folder with `dpkg-deb -x` (no root, nothing outside the run folder; the keeper removes
  // it with the folder); its hapair is what runs there. Empty: none. Excludes copy_binary.
  std::string install_package;
  SshOptions ssh;              // the ssh program, known hosts file, host key checking
  double ssh_timeout_s = 30.0; // a login or a remote command; generous, never reached normally
  // Clock probes over the control channel (hosts/clock_probes.h, docs/HOSTS.md "Clock offsets"):
  // a round of probes_per_target probes to every node once every node said hello (before the
  // Directory), then a round every clock_probe_interval_s while the run goes on.
  ClockProbesConfig clock_probes;
  double clock_probe_interval_s = 1.0;
  std::vector<HostLossSpec> losses;
  std::vector<HostPauseSpec> pauses;
  std::vector<HostLinkLimitSpec> limits;
};

struct LaunchOptions {
  // The binary that has the `node` subcommand. /proc/self/exe is right when the launcher runs
  // inside `hapair` itself; tests pass the path of the built `hapair`.
  std::string hapair_binary = "/proc/self/exe";
  // The effective topology file every node reads. Empty: the launcher writes the plan's
  // topology (write_topology) as topology.conf into log_dir and hands out that.
  std::string topology_path;
  // Crash, pause, restart and partition (the last two not in manual mode). A partition needs
  // root, `ip` and `nft`: with one in the schedule every node runs in a network namespace of its
  // own and a partition is nftables DROP rules between two of them (net_isolation.h); without,
  // nothing changes. Checked with validate_faults (sim/faults.h) before anything starts.
  std::vector<FaultSpec> faults;
  // Called about every 100 ms of the run with the seconds elapsed since the epoch and the
  // configured duration_s.
  std::function<void(double elapsed_s, double total_s)> progress;
  // Manual mode (several hosts): start nothing, print the `hapair node` command of every node
  // and wait for their Hello; faults become Kill messages instead of signals.
  bool manual = false;
  // CURVE on every ZeroMQ socket of the run (runtime/curve.h; docs/HOSTS.md, "Only the run's own
  // processes get in"): a server keypair and a client keypair made for the run, handed to every
  // node on its stdin (over ssh for other hosts), never written to a file; a process without them
  // cannot get a message into a node or the launcher. Always on with hosts; off by default on
  // one machine. Not with `manual` (the launcher hands the keys only to the nodes it starts).
  bool secure = false;
  // Global checkpoints: the directory of the coordinator's durable checkpoint store, handed to
  // the coordinator's process (`hapair node --checkpoint-dir`), e.g. one the hosts share, so a
  // coordinator restarted on any of them reads it. Empty: `checkpoints/` beside the run's
  // topology on the coordinator's host.
  std::string checkpoint_dir;
  // Tests only: the keys to use instead of fresh ones (empty: fresh ones).
  CurveKeys keys;
  // Where the control ROUTER binds; a warning is printed when it is not a loopback address.
  // For several hosts bind a reachable address
  // (e.g. tcp://0.0.0.0:5555) and set control_advertise to the address nodes should dial.
  std::string control_bind = "tcp://127.0.0.1:*";
  std::string control_advertise;  // empty: the bound endpoint
  // Where each node's stdout and stderr go (NODE.log). Empty: a fresh /tmp/hapair-run-XXXXXX
  // that is removed after a run without errors (and kept, and named on stderr, otherwise).
  std::string log_dir;
  double hello_timeout_s = 30.0;          // spawned nodes
  double manual_hello_timeout_s = 600.0;  // manual mode: a person starts the nodes
  double epoch_delay_s = 0.3;             // the epoch is this long after the Directory is sent
  double stop_timeout_s = 5.0;            // wait for final stats and exits after StopRun
  // Manual-mode instructions and notices; empty: printed to stdout.
  std::function<void(const std::string&)> print;
  // Faults asked for while the run goes on (the demo's kill button): polled every few
  // milliseconds from the launcher's loop; each crash returned is performed at once and recorded
  // in the result's faults with the time it happened (other kinds are refused with a notice).
  std::function<std::vector<FaultSpec>()> live_faults;
  // Several hosts: where each node runs. The control socket then binds the address the hosts
  // reach this machine at (what their sshd saw the connection come from) unless control_bind
  // is set; never 0.0.0.0. Node logs, hosts.json (offsets, bounds, placement, fault instants)
  // go to log_dir.
  HostsLaunch hosts;
};

// Runs the plan once with real processes. Setup failures (bad faults, a node that never says
// hello, a bind failure) come back as errors in the result with completed = false.
// SIGINT/SIGTERM during the call kill every child, and the result says so.
RunResult launch_real_run(const Plan& plan, const LaunchOptions& options);

// The command line that starts `node` by hand (manual mode prints one per node).
std::string node_command_line(const std::string& hapair_binary, const std::string& topology_path,
                              const std::string& node_name, const std::string& control_endpoint);

}  // namespace hapair
