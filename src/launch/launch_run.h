// The state of one real run while the launcher drives it (launcher.h): the per-node process
// state and the Launch object whose members are defined in three files along the run's seams:
// launcher.cpp (setup, starting the nodes, the run loop), launcher_faults.cpp (performing the
// fault actions: SIGKILL, SIGSTOP/SIGCONT, restart, nftables cuts between network namespaces) and launcher_results.cpp (the control
// messages, stopping and reaping every node, the RunResult).
//
// Paper: section 6's experiments, one process per server; a crash is a SIGKILL (fail-stop,
// section 2), a pause a SIGSTOP/SIGCONT pair, a restart a new process that rejoins as standby.
//
// Invariant: every child the Launch started is reaped before run() returns (stop_all, then
// kill_and_reap_all); a child that exits without the launcher killing it is an error in the
// result. Internal to the harness: only launcher*.cpp include it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "driver/fault_schedule.h"
#include "hosts/placement.h"
#include "launch/remote_hosts.h"
#include "proc/child_process.h"
#include "launch/launcher.h"
#include "proc/launcher_supervision.h"
#include "proc/net_isolation.h"
#include "protocols/quiet_drain.h"
#include "runtime/control_server.h"
#include "runtime/run_clock.h"

namespace hapair::launcher {

// NodeState::host of a node that runs on this machine.
inline constexpr std::size_t kThisMachine = static_cast<std::size_t>(-1);

// A fault performed on another host: what was sent, and when it happened by the victim's
// clock corrected to the launcher's (remote_instant), for hosts.json.
struct RemoteFaultRecord {
  std::string node;
  std::string host;
  std::string signal;         // KILL, STOP, CONT, LOSS (a host loss), HOSTSTOP, HOSTCONT (a host pause), CUT, HEAL
  TimeUs at_us = 0;           // on the run's clock (the launcher's), as in the failure event
  TimeUs error_bound_us = 0;
  TimeUs launcher_window_us = 0;  // from sending the command to its answer
};

struct NodeState {
  std::string name;
  std::string log_path;
  // Spawned mode: our child, the node itself or, on another host, the ssh session it runs
  // under (its exit is the node's). running(): spawned and not yet reaped.
  ChildProcess process;
  std::size_t host = kThisMachine;  // index into the hosts file's list
  std::string bind;                 // the data endpoint the placement gave it (several hosts)
  bool hello = false;
  std::string peer;        // control routing id
  std::string endpoint;    // data endpoint from Hello
  std::string crash_line;  // crash line endpoint from Hello (empty: none)
  bool killed = false;     // by a crash fault
  bool paused = false;     // SIGSTOPped by a pause fault
  bool fatal = false;      // reported a fatal error (trace) or exited with kNodeExitFatal
  bool fatal_traced = false;  // its "fatal" trace event (with the reason) arrived
  bool final_stats = false;
  bool stop_sent = false;
  // Restart faults: when the current incarnation was spawned (kNever: the first one, started
  // before the run), and the driver counters of the earlier incarnations.
  TimeUs restarted_at_us = kNever;
  Metrics earlier_incarnations;
};

class Launch {
 public:
  Launch(const Plan& plan, const LaunchOptions& options)
      : plan_(plan), options_(options), quiet_(plan.settings(), plan.nodes.size()) {
    result_.plan = std::make_shared<const Plan>(plan);
    result_.driver = "real";
    result_.faults = options.faults;
    for (const PlanNode& node : plan.nodes) {
      NodeState state;
      state.name = node.name;
      nodes_.push_back(std::move(state));
    }
    for (const PlanFragment& fragment : plan.fragments)
      if (fragment.kind == FragmentKind::sink && fragment.primary != kNoNode) sinks_.insert(fragment.primary);
  }

  RunResult run();

 private:
  // ---- setup (launcher.cpp) ---------------------------------------------------------------
  bool check_faults();
  // Several hosts: placement (before the faults are checked: a host loss becomes crashes of the
  // nodes placed there) and a host loss's crashes added to result_.faults.
  bool place_on_hosts();
  bool nodes_of_named_host(const std::string& name, const std::string& what, std::size_t& host, std::vector<NodeId>& nodes);
  bool add_host_losses();
  // A host pause's pauses of every node placed on the host added to result_.faults (so the
  // judge and the timeline see each node stopped), performed together (pause_host).
  bool add_host_pauses();
  // Bandwidth limits between hosts (HostLinkLimitSpec): each link's hosts, and its start in
  // limit_steps_ (its end is scheduled once it is in place, perform_limit).
  bool add_host_limits();
  // Partitions across hosts cut the hosts' link (hosts/host_faults.h): every other node pair
  // across the two hosts added to result_.faults as a partition at the same time (so the judge
  // and the timeline see every pair the cut separated).
  bool add_host_cut_companions();
  // The cut tables on the hosts a partition involves, made before the run (needs root there).
  bool prepare_host_cuts();
  bool prepare_files();
  // CURVE (LaunchOptions::secure): the run's keys, made here (curve_unavailable() is an error).
  bool make_keys();
  // The notices at the end of a secure run: connections refused at the nodes and the launcher.
  void report_refusals();
  bool isolate_nodes();
  void remove_isolation();
  // Several hosts (remote_hosts.h): placement, the hosts reached, the folders removed again.
  bool open_hosts();
  void close_hosts();
  std::string hosts_json() const;
  // Sends a signal to a node on its host (KILL, STOP, CONT) without holding up the run; once it
  // is done, `event` (if any) is recorded at the instant it happened (remote_instant) and the
  // signal in hosts.json. An error aborts the run.
  void signal_remote(NodeId id, const std::string& signal_name, std::optional<TraceEvent> event);
  // A host loss (HostLossSpec): every node on the host marked killed now, the links dropped and
  // the processes killed there; each node's failure event at the instant of the kill.
  void lose_host(std::size_t loss);
  // A host pause (HostPauseSpec) begins (`stop`) or ends: every node on the host still running
  // stopped (continued) by one command there; each node's failure (resume) event at its instant.
  // Called for every node's action; only the first of the pause's nodes acts.
  void pause_host(std::size_t pause, bool stop);
  // A bandwidth limit put (`on`) or lifted on both hosts of its link (tc, remote_hosts.h).
  void perform_limit(std::size_t limit, bool on);
  // The tc class 1:SLOT and filter prio SLOT of a limit on its hosts.
  static int limit_slot(std::size_t limit) { return 10 + static_cast<int>(limit); }
  // Records the signals that are done (`wait`: waits for every one, or only node `only`'s).
  void collect_remote_signals(bool wait, NodeId only = kNoNode);
  void print_manual_instructions();
  bool spawn_all();
  bool spawn(NodeId id, bool rejoin = false);
  bool wait_for_hellos();
  // Several hosts: the first round of clock probes over the control channel, before the
  // Directory; its estimates correct every time the hosts' nodes report (hosts/clock_probes.h).
  bool probe_clocks_at_start();
  // Sends the probes that are due (and starts a round every clock_probe_interval_s).
  void send_clock_probes(TimeUs now);
  // The launcher's clock as a probe reads it (node_host.cpp has the nodes' side).
  std::int64_t probe_clock_us() const;
  bool send_directory();

  // ---- the run (launcher.cpp) -------------------------------------------------------------
  void run_until_done();
  // The crashes LaunchOptions::live_faults asks for now.
  void perform_live_faults(TimeUs now);
  std::string unfinished_sinks() const;
  bool output_quiet(TimeUs now) const;
  void check_restarted_hellos(TimeUs now);
  void receive_burst(TimeUs wait_us, bool stopping);

  // ---- fault actions (launcher_faults.cpp) ------------------------------------------------
  void perform(const FaultAction& action);
  void restart(NodeId id, TimeUs now);
  void partition(const FaultAction& action, bool cut);
  // A partition across hosts, or its heal: the link between the two nodes' hosts cut (heal:
  // restored) on both hosts over ssh; nested cuts of one link heal when the last has ended. The
  // heal of a cut is scheduled from the instant the cut was in place.
  void cut_hosts(const FaultAction& action, bool cut);

  // ---- messages, the end and the result (launcher_results.cpp) ----------------------------
  void on_message(const ControlServer::Incoming& incoming, bool stopping);
  void on_hello(const std::string& peer, const Hello& hello);
  void on_restarted_hello(NodeId id, const std::string& peer, const Hello& hello);
  void stop_all();
  void kill_and_reap_all();
  bool reap(NodeId id, bool stopping);
  RunResult finish_result();

  // ---- helpers ----------------------------------------------------------------------------
  void echo_log(NodeId id);
  void error(const std::string& message) { result_.errors.push_back(message); }
  void say(const std::string& text) const;
  std::string isolated_bind(NodeId id) const;
  static std::string format_seconds(double s) { return fmt::format("{:g}", s); }
  static bool interrupted() { return interrupt_signal() != 0; }
  TimeUs now_or_zero() const { return clock_ ? clock_->now_us() : 0; }

  const Plan& plan_;
  const LaunchOptions& options_;
  RunResult result_;
  std::vector<NodeState> nodes_;
  std::set<NodeId> sinks_;
  std::set<NodeId> ended_sinks_;
  std::map<std::string, NodeId> by_peer_;
  std::vector<FaultAction> actions_;
  std::size_t next_action_ = 0;  // the first action of actions_ not yet performed
  Directory directory_;          // as sent at the start; restarted nodes get the same
  QuietDrain quiet_;
  bool abort_run_ = false;       // a setup failure during the run (a restarted node's)
  std::unique_ptr<ControlServer> control_;
  CurveKeys keys_;  // off unless the run is secure
  std::optional<RunClock> clock_;
  std::string advertised_;
  std::string log_dir_;
  bool log_dir_is_temp_ = false;
  std::optional<CleanupWatch> temp_dir_watch_;  // only for a temporary log_dir_
  // Partition faults: every node in a network namespace of its own (net_isolation.h), removed
  // after the nodes were reaped; the watch removes them if the launcher dies first.
  bool wants_isolation_ = false;
  std::unique_ptr<NetIsolation> isolation_;
  std::optional<CleanupWatch> isolation_watch_;
  std::string topology_path_;
  std::int64_t unknown_messages_ = 0;
  // Several hosts: where each node runs, and the hosts reached over ssh.
  std::optional<Placement> placement_;
  std::unique_ptr<RemoteHosts> remote_;
  std::vector<RemoteFaultRecord> remote_faults_;
  struct SignalUnderWay {
    NodeId node = kNoNode;
    PendingSignal pending;
    std::optional<TraceEvent> event;
    // A host loss or pause: the other nodes it hit at the same instant (each gets `event` with
    // its own node).
    std::vector<NodeId> also;
    std::vector<TraceEvent> more_events;  // a cut: the partitions of the other pairs (same instant)
    std::vector<FaultAction> ends;        // a cut: the heals, scheduled from its instant
    std::optional<std::pair<std::size_t, std::size_t>> link;  // a cut or heal under way: its hosts
    std::optional<std::size_t> limit_begun;  // a bandwidth limit put: its end is scheduled from its instant
  };
  std::map<std::size_t, std::size_t> loss_of_fault_;  // result_.faults index -> HostLossSpec index
  std::set<std::size_t> losses_done_;
  std::vector<std::size_t> loss_hosts_;  // the host of each HostLossSpec (host-of:NODE resolved)
  std::map<std::size_t, std::size_t> host_pause_of_fault_;  // result_.faults index -> HostPauseSpec index
  std::vector<std::size_t> pause_hosts_;                    // the host of each HostPauseSpec
  std::set<std::size_t> host_pauses_begun_, host_pauses_ended_;
  std::vector<std::pair<std::size_t, std::size_t>> limit_links_;  // the hosts of each HostLinkLimitSpec
  struct LimitStep {
    TimeUs at_us = 0;
    std::size_t limit = 0;
    bool on = true;
  };
  std::vector<LimitStep> limit_steps_;  // in time order
  std::size_t next_limit_step_ = 0;
  std::map<std::pair<std::size_t, std::size_t>, int> cut_links_;  // hosts (lower first) -> cuts in force
  // Heals of pairs whose link stays cut for another partition: traced when the link heals.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<TraceEvent>> heals_waiting_;
  std::vector<SignalUnderWay> signals_under_way_;
  std::string hosts_json_;  // written at close_hosts()
  std::optional<ClockProbes> clock_probes_;
  TimeUs next_clock_round_us_ = 0;  // on the run's clock
};

}  // namespace hapair::launcher
