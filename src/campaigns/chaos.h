// The fault campaign (`hapair chaos`): many runs of random networks under random fault
// schedules, each checked against its failure-free reference and classified against the
// guarantee of its approach, so that a protocol bug shows up as a violation with the exact
// command that reproduces it.
//
// Paper: Hwang et al. (ICDE 2005) promise each approach's recovery type for a single fail-stop
// crash (section 3: precise for passive standby, active standby with determinants and, on
// deterministic networks, upstream backup; gap for amnesia). docs/FAULTS.md, "Who may act as primary" and issue 8 add
// the failures the paper assumed away: pauses shorter and longer than the failure timeout,
// partitions, message loss and duplication, a second failure during recovery, and the restart of
// a crashed node that restores the pair. docs/FAULTS.md lists every fault, what each approach
// guarantees under it, and the classification rules implemented here.
//
// Invariants: case i of seed S is a pure function of (S, i) and of the options that shape the
// case space (driver, approaches, pick rule, fault kinds, networks, duration, whether live
// switches are drawn), drawn from its own Rng streams; it never depends on --runs or on other cases, so `--case i` repeats exactly run i
// of a campaign. A run is a violation only when its schedule stayed within the guarantee of its
// approach and the verdict (or completion) broke that guarantee; a schedule that left a fragment
// without any node holding its state is "beyond the guarantee" and is reported on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "judge/checker.h"
#include "judge/guarantee_rules.h"
#include "launch/launcher.h"
#include "run/run_once.h"
#include "protocols/plan.h"
#include "protocols/run_result.h"
#include "protocols/topology.h"

namespace hapair {

// What a campaign may inject: the four process and link faults of FaultSpec, and the two network
// conditions of SimSettings (loss_ratio, duplication_ratio; simulator only).
// With hosts (--hosts), a campaign on real processes may also lose whole hosts (host_loss: the
// host of a node its links dropped, then every node there killed; docs/HOSTS.md), and its
// partitions cut the link between two hosts.
enum class ChaosFault { crash, pause, partition, restart, loss, duplication, host_loss };
inline constexpr ChaosFault kChaosFaults[] = {ChaosFault::crash,   ChaosFault::pause, ChaosFault::partition,
                                              ChaosFault::restart, ChaosFault::loss,  ChaosFault::duplication,
                                              ChaosFault::host_loss};
const char* to_string(ChaosFault);
std::optional<ChaosFault> parse_chaos_fault(const std::string&);
std::string allowed_chaos_faults();  // "crash, pause, partition, restart, loss, duplication, host-loss"
// The kinds a campaign across hosts draws by default: crash, pause, restart, partition (the cut
// of a link between two hosts) and host-loss; every one needs root on the hosts for the cuts.
std::vector<ChaosFault> chaos_faults_for_hosts();
// The kinds a driver draws by default: every kind in the simulator; crash, pause and restart with
// real processes. The same for every machine, so a case is the same everywhere.
std::vector<ChaosFault> chaos_faults_for_driver(const std::string& driver);
// The kinds a driver can inject here: the default ones, and with real processes partition too when
// this machine can place nodes in network namespaces and cut them with nftables (as root with
// `ip` and `nft`: net_isolation.h). `hapair chaos --driver real` without --faults draws from
// these, naming them in its reproduce commands.
std::vector<ChaosFault> chaos_faults_possible(const std::string& driver);

// The example networks a campaign draws from (experiments/networks/<name>.toml; "default" is the
// built-in default network).
inline constexpr const char* kChaosNetworks[] = {"default",    "chain",      "join",       "union",      "union_join", "chain6",
                                                   "merge_join", "nexmark_q0", "nexmark_q1", "nexmark_q2", "nexmark_q5", "nexmark_q7",
                                                   "nexmark_q8", "ysb"};

struct ChaosCase;
struct ChaosRun;

// The most runs one campaign may ask for (about a day in the simulator).
inline constexpr std::size_t kChaosRunsMax = 1'000'000;

struct ChaosOptions {
  // ---- the case space (every field here goes into the reproduce command) ----
  std::uint64_t seed = 1;
  std::string driver = "sim";  // "sim" or "real"
  std::vector<HaMode> approaches = ApproachCatalog::builtin().modes();
  // false: every approach in turn (case i runs approaches[i % size]); true: a random one per case.
  bool random_approach = false;
  std::vector<ChaosFault> faults;  // empty: chaos_faults_for_driver(driver)
  std::vector<std::string> networks = {std::begin(kChaosNetworks), std::end(kChaosNetworks)};
  // Seconds the sources emit; unset: 3 in the simulator, 2 with real processes.
  std::optional<double> duration_s;
  // Several hosts (--hosts; driver real): every run's nodes placed on them and started over ssh
  // (launch/remote_hosts.h). The host list shapes the cases (a partition joins nodes on two
  // hosts; a host loss names the host of a node), so it is part of the case space;
  // `hosts_arguments` is how the reproduce command names it (" --hosts FILE --remote-binary P").
  HostsLaunch hosts;
  std::string hosts_arguments;
  // Live switches (issue 36): some cases of a fragment that may switch get one or two switches
  // of its approach at random times, and some a crash around one (chaos_case.cpp,
  // pick_switches). false (--no-switches): none, the cases drawn before switches existed.
  bool switches = true;

  // ---- what runs ----
  std::size_t runs = 100;               // cases 0 .. runs-1
  std::optional<std::size_t> only_case;  // set: run exactly this case (runs is ignored)
  std::string out_dir;                  // chaos.csv and chaos.txt; with only_case the run's result files too
  std::string networks_dir;             // empty: source_dir()/experiments/networks
  std::string hapair_binary = "/proc/self/exe";
  // Each run in its own forked child, so that an aborted invariant check or a hang in one run is
  // reported as that run's violation instead of ending the campaign. A child that has not
  // answered after run_timeout_s of wall-clock time is killed and counted as hung.
  bool isolate = true;
  double run_timeout_s = 900.0;
  // Isolated runs at once (each a forked child): the simulator's cases are independent, so a
  // campaign uses every core; the report is in case order whatever order they end in. Real runs
  // take 1: two at once would disturb each other's timing.
  std::size_t jobs = 1;

  // ---- hooks ----
  // Before each run: its position (from 0), the number of runs, the case.
  std::function<void(std::size_t, std::size_t, const ChaosCase&)> on_case;
  // After each run.
  std::function<void(const ChaosRun&)> on_run;
  // Test hook: changes a run's outcome before it is classified (e.g. removes a delivery, as a
  // deliberately broken approach would), so that the campaign's detection can be tested.
  std::function<void(const ChaosCase&, RunOutcome&)> tamper;
};

// One case: a network with random legal settings, an approach and a fault schedule.
struct ChaosCase {
  std::size_t index = 0;
  std::uint64_t seed = 0;  // mix64(campaign seed, index); the sources' and the network's seed
  std::string network;     // the example network it varies
  HaMode approach = kNoHa;
  Topology topology;       // with the picked settings; settings.seed == seed
  std::vector<FaultSpec> faults;  // passes validate_run_faults for make_plan(topology)
  // With hosts: the host losses ("host-of:NODE" at a time); with the crashes they imply, the
  // schedule still passes validate_run_faults.
  std::vector<HostLossSpec> host_losses;
  // Whether the schedule is a crash around one of the live switches (topology.switches; both
  // drawn by pick_switches) rather than the usual one.
  bool faults_around_switch = false;
  std::string description;        // the picks on one line
};

// Every problem of the options at once (unknown networks or approaches, kinds the driver cannot
// inject, a bad duration); empty: a campaign can run.
std::vector<std::string> validate_chaos_options(const ChaosOptions& options);

// Loads the options' networks (the built-in default for "default"); problems name the file.
std::map<std::string, Topology> load_chaos_networks(const ChaosOptions& options, std::vector<std::string>& problems);

// Case `index` of the options' seed. `networks` comes from load_chaos_networks(options).
ChaosCase chaos_case(const ChaosOptions& options, const std::map<std::string, Topology>& networks, std::size_t index);

// ---- the campaign ------------------------------------------------------------------------

// One row of chaos.csv: the case and what its run gave.
struct ChaosRun {
  ChaosCase c;
  std::string verdict;  // the checker's "precise", "rollback" or "gap"; "none" when the run died
  std::uint64_t lost = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t differing = 0;
  std::uint64_t delivered = 0;
  std::uint64_t reference = 0;
  // Names of the sink streams left out: the merge order they depend on is unknown
  // (SemanticsReport::not_judged), and the first one's reason.
  std::vector<std::string> unjudged;
  std::string unjudged_reason;
  bool completed = false;
  std::string first_error;  // the first of the run's errors, if any
  std::size_t takeovers = 0;
  std::optional<double> restore_ms;  // the run's time to restore the pair (metrics)
  // Takeovers or detections the schedule did not ask for (disturbance.h): before the first
  // fault, or of a node no fault touched; and which detectors fired ("heartbeat 2").
  bool disturbed = false;
  std::string disturbance;
  std::string detectors;
  GuaranteeClass klass = GuaranteeClass::ok;
  std::string reason;
};

struct ChaosReport {
  ChaosOptions options;
  std::vector<std::string> problems;  // set: nothing ran
  std::vector<ChaosRun> runs;
  std::size_t violations() const;
};

ChaosReport run_chaos(const ChaosOptions& options);

// One case, in this process: run_once, tamper, check the judged streams against the reference,
// classify.
ChaosRun run_chaos_case(const ChaosOptions& options, const ChaosCase& c);

// The answer of an isolated run's child to the campaign: the run's result fields (all but the
// case, which the parent has) as one JSON object. read_chaos_run_json() fills `r` from it and
// returns "" when every field is there with its type, else what is wrong (then `r` is unchanged).
std::string chaos_run_json(const ChaosRun& r);
std::string read_chaos_run_json(const std::string& text, ChaosRun& r);

// The table per approach (runs within the guarantee, faults injected by kind, verdicts, lost,
// duplicates, violations), the runs beyond the guarantee, and one reproduce command per violation.
std::string chaos_table(const ChaosReport& report);
// One row per run, the header first; identical for identical simulated campaigns.
std::string chaos_csv(const ChaosReport& report);
// `hapair chaos --runs 1 --seed S --case I ...` with every option that shapes the case space.
std::string chaos_reproduce_command(const ChaosOptions& options, std::size_t index);
// The same run as `hapair run` (the case's topology written to `topology_path`: it holds the
// seed and the simulated network), with its faults as --fail/--pause/--restart/--partition.
// With hosts, `hosts_arguments` (ChaosOptions) and the host losses as --lose-host.
std::string chaos_run_command(const ChaosCase& c, const std::string& driver, const std::string& topology_path,
                              const std::string& hosts_arguments = "");

}  // namespace hapair
