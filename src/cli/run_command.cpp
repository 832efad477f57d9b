// `hapair run`: runs one configuration (the built-in default network unless --topology names a
// file) on real processes or in the simulator, prints a readable summary and, with --out,
// writes summary.json, output.csv, events.csv, trace.jsonl, metrics.csv, config.toml and
// timeline.html (the run to watch, docs/TIMELINE.md).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "config/input_checks.h"
#include "driver/link_model.h"
#include "hosts/placement.h"
#include "run/guarantee.h"
#include "proc/net_isolation.h"
#include "run/run_once.h"

namespace hapair::cli {

int run_command(const Args& args) {
  namespace po = boost::program_options;
  std::string topology_path, ha, driver = "real", out_dir, control_bind, advertise, seed_text;
  std::string duration_text, rate_text, cost_text, trace_text, links_text, standbys_text, checkpoint_dir;
  bool manual = false;
  std::vector<std::string> fails, pauses, restarts, partitions, losses, host_pauses, limits, switches;
  po::options_description described("hapair run options");
  described.add_options()
      ("help,h", "show this help")
      ("topology", po::value<std::string>(&topology_path), "topology file (default: the built-in default network)")
      ("ha", po::value<std::string>(&ha), ("HA mode for every operator fragment: " + allowed_ha_modes()).c_str())
      ("duration-s", po::value<std::string>(&duration_text), "seconds the sources emit, > 0 and <= 86400 (default: the topology's duration_s)")
      ("rate-tps", po::value<std::string>(&rate_text), "tuples per second of every source (a nexmark source: its events_per_s), > 0 and <= 10000000")
      ("seed", po::value<std::string>(&seed_text), "seed of the sources (and of the simulated network), 0 .. 2^64-1")
      ("standbys", po::value<std::string>(&standbys_text), "k standbys for every processing fragment, 1 .. 3 (above 1: ha passive; docs/TOPOLOGY.md)")
      ("operator-cost-us", po::value<std::string>(&cost_text), "CPU cost of one tuple at an operator, in us, 0 .. 100000 (operator_cost_us_per_tuple)")
      ("fail", po::value<std::vector<std::string>>(&fails), "NODE@SECONDS: SIGKILL that node at that time (repeatable)")
      ("pause", po::value<std::vector<std::string>>(&pauses), "NODE@SECONDS+DURATION: SIGSTOP, then SIGCONT (repeatable)")
      ("restart", po::value<std::vector<std::string>>(&restarts), "NODE@SECONDS: start a crashed node again; it rejoins as the standby (repeatable)")
      ("switch", po::value<std::vector<std::string>>(&switches),
       "NODE=APPROACH@SECONDS: switch the approach of NODE's fragment live at that time, without losing or duplicating "
       "output (a [[switch]] of the topology; docs/ARCHITECTURE.md \"Live switching\"; repeatable)")
      ("lose-host", po::value<std::vector<std::string>>(&losses),
       "HOST@SECONDS or host-of:NODE@SECONDS (the host that holds NODE): with --hosts, as root on that host: drop "
       "every link of the host (nftables, all but ssh), then SIGKILL its nodes, so peers learn of it only by silence "
       "(repeatable)")
      ("pause-host", po::value<std::vector<std::string>>(&host_pauses),
       "HOST@SECONDS+DURATION or host-of:NODE@SECONDS+DURATION: with --hosts, SIGSTOP every node on that host at once "
       "(one command there), SIGCONT them together DURATION later; links stay up, so peers see only silence (repeatable)")
      ("limit-bandwidth", po::value<std::vector<std::string>>(&limits),
       "HOST-HOST=RATE@SECONDS[+DURATION], RATE in bits/s as tc writes it (8mbit, 500kbit): with --hosts, as root there "
       "with tc: what each of the two hosts sends the other passes a token bucket (tc tbf) of that rate, from SECONDS "
       "for DURATION (without: to the end); a host is a name or host-of:NODE (repeatable)")
      ("partition", po::value<std::vector<std::string>>(&partitions), "A-B@SECONDS+DURATION: cut the link between two nodes for a while (--driver real: as root with ip and nft, each node in a network namespace, nftables DROP rules; with --hosts: the link between their two hosts, nftables on both, as root there)")
      ("links", po::value<std::string>(&links_text),
       "emulate every link between two nodes (the [links] keys, docs/LINKS.md): KEY=VALUE,... of latency_ms, "
       "jitter_ms, loss_ratio, duplication_ratio, bandwidth_bytes_per_s, queue_messages_max, queue_bytes_max; "
       "e.g. latency_ms=20,jitter_ms=5,loss_ratio=0.01")
      ("driver", po::value<std::string>(&driver)->default_value("real"), "real (one process per node) or sim (simulator)")
      ("trace", po::value<std::string>(&trace_text),
       ("trace events the nodes record: " + allowed_trace_levels() +
        " (data adds every batch, ack and trim: the timeline's messages; default: the topology's trace_level)").c_str())
      ("out", po::value<std::string>(&out_dir),
       "directory for summary.json, output.csv, events.csv, trace.jsonl, metrics.csv, config.toml, timeline.html")
      ("manual", po::bool_switch(&manual), "several hosts: start no node, print the `hapair node` command of each and wait")
      ("control", po::value<std::string>(&control_bind), "where the launcher's control socket binds (default tcp://127.0.0.1:*)")
      ("advertise", po::value<std::string>(&advertise), "the control address nodes dial (default: the bound one)")
      ("checkpoint-dir", po::value<std::string>(&checkpoint_dir),
       "ha checkpoint, --driver real: the coordinator's durable checkpoint store, e.g. a directory every host mounts "
       "(default: checkpoints/ beside the run's topology on the coordinator's host; docs/CHECKPOINT.md)");
  HostsArgs hosts_args;
  add_hosts_options(described, hosts_args);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair run [options]\n\n" << described
                << "\nFault times must fall inside the run: 0 < SECONDS < duration_s (the sources' last second).\n"
                << "\nExit status: 0 when the run gave a result, whatever the verdict (a crash without standby\n"
                << "that stops the output is the result of ha none); 1 when the run broke its approach's\n"
                << "guarantee (docs/FAULTS.md: upstream, passive, active where precise, not precise; a recovery\n"
                << "that never came) or the harness failed (a node process, the driver, the result files);\n"
                << "2 for bad input (options, topology, faults; nothing ran). The last line says which.\n"
                << "\nExamples:\n  hapair run --ha upstream --fail aggregate@3 --out out/upstream\n"
                << "  hapair run --ha passive --fail aggregate@2 --trace data --out out/watch   (open out/watch/timeline.html)\n"
                << "  hapair run --topology experiments/networks/union_join.toml --driver sim --ha passive\n"
                << "  hapair run --hosts hosts.toml --copy-binary --ha passive --fail aggregate@2 --out out/hosts\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair run: %s\n(hapair run --help lists the options)\n", e.what());
    return 2;
  }
  // Every problem at once: the options, then the topology with the overrides, then the faults
  // against the plan (when there is one).
  std::vector<std::string> problems;
  RunOverrides overrides;
  if (vm.count("ha"))
    if (auto m = ha_mode_option("--ha", ha, problems)) overrides.ha = *m;
  check_driver(driver, problems);
  if (vm.count("trace")) {
    if (auto level = parse_trace_level(trace_text)) overrides.trace_level = *level;
    else problems.push_back("--trace '" + trace_text + "' is not a trace level; allowed: " + allowed_trace_levels());
  }
  if (vm.count("duration-s")) overrides.duration_s = real_number("--duration-s", duration_text, kDurationRange, problems);
  if (vm.count("rate-tps")) overrides.rate_tps = real_number("--rate-tps", rate_text, kRateRange, problems);
  if (vm.count("seed")) overrides.seed = whole_number("--seed", seed_text, 0, UINT64_MAX, problems);
  if (vm.count("links")) overrides.links = links_text;
  if (vm.count("standbys"))
    if (auto k = whole_number("--standbys", standbys_text, 1, kStandbysMax, problems)) overrides.standbys = static_cast<std::int64_t>(*k);
  if (vm.count("operator-cost-us"))
    overrides.operator_cost_us_per_tuple = real_number("--operator-cost-us", cost_text, kOperatorCostRange, problems);
  for (const auto& w : switches) {
    std::string error;
    if (auto s = parse_switch_option(w, error)) overrides.switches.push_back(*s);
    else problems.push_back("--switch " + error);
  }
  RunRequest request;
  request.driver = driver;
  request.out_dir = out_dir;
  request.manual = manual;
  if (!control_bind.empty()) request.control_bind = control_bind;
  request.control_advertise = advertise;
  if (manual && driver != "real") problems.push_back("--manual needs --driver real");
  request.hosts = hosts_launch(hosts_args, driver, problems);
  request.secure = hosts_args.secure;
  if (!checkpoint_dir.empty()) {
    if (driver != "real") problems.push_back("--checkpoint-dir needs --driver real (the simulator keeps its store in memory)");
    // A relative directory is this machine's: the nodes run elsewhere (their run folder).
    request.checkpoint_dir = hosts_args.hosts_path.empty() ? std::filesystem::absolute(checkpoint_dir).string() : checkpoint_dir;
  }
  if (hosts_args.secure && manual)
    problems.push_back("--secure and --manual exclude each other: the launcher hands the run's keys only to the nodes it "
                       "starts");
  add_lose_host_options(losses, request.hosts, problems);
  add_host_pause_options(host_pauses, request.hosts, problems);
  add_limit_bandwidth_options(limits, request.hosts, problems);
  if (request.hosts.hosts && manual)
    problems.push_back("--manual and --hosts exclude each other: with a hosts file the launcher starts every node");
  for (const auto& f : fails) {
    std::string error;
    if (auto fault = parse_crash_fault(f, error)) request.faults.push_back(*fault);
    else problems.push_back("--fail " + error);
  }
  for (const auto& p : pauses) {
    std::string error;
    if (auto fault = parse_pause_fault(p, error)) request.faults.push_back(*fault);
    else problems.push_back("--pause " + error);
  }
  for (const auto& r : restarts) {
    std::string error;
    if (auto fault = parse_restart_fault(r, error)) request.faults.push_back(*fault);
    else problems.push_back("--restart " + error);
  }
  for (const auto& p : partitions) {
    std::string error;
    if (auto fault = parse_partition_fault(p, error)) request.faults.push_back(*fault);
    else problems.push_back("--partition " + error);
  }
  if (!partitions.empty() && (driver != "real" || request.hosts.hosts)) {
    // said above (or a simulator partition)
  } else if (!partitions.empty() && manual)
    problems.push_back("--partition is not supported with --manual: the launcher places only the processes it starts "
                       "in network namespaces");
  else if (!partitions.empty())
    if (const std::string reason = net_isolation_unavailable(); !reason.empty())
      problems.push_back("--partition: " + real_partition_refusal(reason));
  PlanLoad load = load_plan(topology_path, overrides);
  for (auto& p : load.problems) problems.push_back(std::move(p));
  if (load.plan)
    for (auto& p : validate_run_faults(*load.plan, request.faults)) problems.push_back(std::move(p));
  if (load.plan && request.hosts.hosts)
    for (auto& p : hosts_fault_problems(*load.plan, request.hosts, request.faults)) problems.push_back(std::move(p));
  if (!problems.empty()) return report_problems("hapair run", "bad input", problems);
  const std::shared_ptr<const Plan> plan = load.plan;

  std::fprintf(stderr, "hapair run: network=%s ha=%s driver=%s seed=%llu duration=%.1fs\n",
               plan->topology.name.c_str(), to_string(plan->settings().ha), driver.c_str(),
               static_cast<unsigned long long>(plan->settings().seed), plan->settings().duration_s);
  Progress progress("hapair run");
  request.progress = [&](double e, double t) { progress.update(e, t); };
  request.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  const Reference reference = compute_reference(*plan);
  const PlannedLoad planned = planned_load(*plan, reference.run, machine_cores());
  std::fprintf(stderr, "hapair run: %s\n", describe_load(planned).c_str());
  if (planned.over_limit()) std::fprintf(stderr, "hapair run: %s\n", load_warning(planned).c_str());
  if (const std::string links = describe_links(*plan); !links.empty()) std::fprintf(stderr, "hapair run: %s\n", links.c_str());
  for (const std::string& w : link_warnings(*plan)) std::fprintf(stderr, "hapair run: warning: %s\n", w.c_str());
  RunOutcome outcome = run_once(plan, request, reference);
  progress.done();
  std::printf("%s", outcome.summary.c_str());
  if (!out_dir.empty()) {
    if (outcome.write_error.empty()) std::printf("results written to %s\n", out_dir.c_str());
    else std::fprintf(stderr, "hapair run: could not write results: %s\n", outcome.write_error.c_str());
  }
  for (const auto& e : outcome.result.errors)
    std::fprintf(stderr, "hapair run: %s: %s\n", e == outcome.result.stall ? "stopped" : "error", e.c_str());
  const GuaranteeCheck check = check_guarantee(*plan, outcome, reference);
  std::printf("%s\n", guarantee_line(check).c_str());
  return check.status == RunStatus::result ? kExitResults : kExitBroken;
}

}  // namespace hapair::cli
