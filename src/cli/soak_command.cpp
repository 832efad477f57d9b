// `hapair soak`: repeats failure-free (or one-SIGKILL) runs of every approach on one or more
// networks and counts false detections; with --victim, the distribution of the detection and
// recovery times of the planned crash. The measurement behind docs/DETECTION.md.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include <boost/program_options.hpp>

#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "campaigns/compare.h"
#include "config/input_checks.h"
#include "campaigns/soak.h"

namespace hapair::cli {
namespace {

// More runs than this per approach and network is a typo (each run takes seconds).
constexpr std::uint64_t kSoakRunsMax = 100'000;

}  // namespace

int soak_command(const Args& args) {
  namespace po = boost::program_options;
  std::vector<std::string> topology_paths;
  std::string driver = "real", out_dir = "out/soak", victim, approaches = "upstream,passive,active", detector;
  std::string runs_text = "20", duration_text = "3", rate_text, fail_at_text = "1.5",
              cost_text = std::to_string(static_cast<int>(kCompareOperatorCostUs));
  po::options_description described("hapair soak options");
  bool lose_host = false;
  described.add_options()
      ("help,h", "show this help")
      ("topology", po::value<std::vector<std::string>>(&topology_paths),
       "a topology file; repeat for several networks (default: the built-in default network)")
      ("runs", po::value<std::string>(&runs_text)->default_value("20"), "runs per approach and network, 1 .. 100000")
      ("approaches", po::value<std::string>(&approaches)->default_value("upstream,passive,active"),
       "comma-separated subset of: none,amnesia,upstream,passive,active")
      ("victim", po::value<std::string>(&victim),
       "SIGKILL this node in every run (a primary of an operator fragment); without it the runs are failure-free")
      ("fail-at-s", po::value<std::string>(&fail_at_text)->default_value("1.5"), "when the victim is killed, 0 < S < duration")
      ("lose-host", po::bool_switch(&lose_host),
       "with --hosts and --victim, as root there: lose the victim's whole host (its links dropped, then every node "
       "there killed) instead of SIGKILLing the victim")
      ("duration-s", po::value<std::string>(&duration_text)->default_value("3"), "seconds the sources emit in each run, > 0 and <= 86400")
      ("rate-tps", po::value<std::string>(&rate_text), "tuples per second of every source (a nexmark source: its events_per_s), > 0 and <= 10000000 (default: the network's)")
      ("operator-cost-us", po::value<std::string>(&cost_text)->default_value(cost_text),
       "CPU cost of one tuple at an operator, in us, 0 .. 100000 (the experiments' load is 100)")
      ("detector", po::value<std::string>(&detector), "connection+heartbeat or heartbeat (default: the network's)")
      ("driver", po::value<std::string>(&driver)->default_value("real"), "real or sim")
      ("out", po::value<std::string>(&out_dir)->default_value("out/soak"), "directory for soak.csv and soak.txt");
  HostsArgs hosts_args;
  add_hosts_options(described, hosts_args);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair soak [options]\n\n"
                << "Counts, over many real runs, the detections and standby suspicions that no planned fault\n"
                   "explains (false detections), and with --victim the detection and recovery time of the planned\n"
                   "SIGKILL (median / p99 / max). Exit status: 0 when every run completed, no false detection or\n"
                   "suspicion happened and every precise approach (upstream, passive, active) was precise; 1\n"
                   "otherwise; 2 for bad options.\n\n"
                << described;
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair soak: %s\n(hapair soak --help lists the options)\n", e.what());
    return 2;
  }
  // Every problem at once: the options, then each network with the overrides, its victim and time.
  std::vector<std::string> problems;
  SoakOptions options;
  options.hosts = hosts_launch(hosts_args, driver, problems);
  options.lose_victim_host = lose_host;
  if (lose_host && (victim.empty() || !options.hosts.hosts))
    problems.push_back("--lose-host needs --hosts FILE and --victim NODE (the host lost is the victim's)");
  if (hosts_args.secure && hosts_args.hosts_path.empty())
    problems.push_back("--secure: hapair soak uses CURVE only across hosts (--hosts FILE), where it is always on");
  const auto runs = whole_number("--runs", runs_text, 1, kSoakRunsMax, problems);
  check_driver(driver, problems);
  const double fail_at_s = finite_number(fail_at_text).value_or(std::nan(""));
  options.driver = driver;
  options.out_dir = out_dir;
  options.runs = static_cast<std::size_t>(runs.value_or(1));
  options.approaches.clear();
  {
    std::stringstream ss(approaches);
    std::string item;
    while (std::getline(ss, item, ','))
      if (auto m = ha_mode_option("--approaches item", item, problems)) options.approaches.push_back(*m);
  }
  RunOverrides overrides;
  overrides.duration_s = real_number("--duration-s", duration_text, kDurationRange, problems);
  overrides.operator_cost_us_per_tuple = real_number("--operator-cost-us", cost_text, kOperatorCostRange, problems);
  if (vm.count("rate-tps")) overrides.rate_tps = real_number("--rate-tps", rate_text, kRateRange, problems);
  if (vm.count("detector")) {
    if (auto d = parse_detector_kind(detector)) overrides.detector = *d;
    else problems.push_back("--detector '" + detector + "' is not one of: " + allowed_detector_kinds());
  }
  if (topology_paths.empty()) topology_paths.push_back("");
  std::vector<Topology> networks;
  for (const std::string& path : topology_paths) {
    PlanLoad load = load_plan(path, overrides);
    for (auto& p : load.problems) problems.push_back(std::move(p));
    if (!load.plan) continue;
    const std::string where = path.empty() ? "" : " (network " + load.plan->topology.name + ")";
    if (!victim.empty()) {
      for (auto& p : check_victim(*load.plan, victim, "--victim")) problems.push_back(p + where);
      if (fault_time_problem(*load.plan, fail_at_s)) {
        problems.push_back(fmt::format("--fail-at-s {}: must be > 0 and < {:g} s, the duration of the run", fail_at_text,
                                       load.plan->settings().duration_s) +
                           where);
      }
    }
    if (options.hosts.hosts)
      for (auto& p : hosts_fault_problems(*load.plan, options.hosts, {})) problems.push_back(p + where);
    networks.push_back(load.plan->topology);
  }
  if (!problems.empty()) return report_problems("hapair soak", "bad input", problems);
  options.victim = victim;
  options.fail_at_s = victim.empty() ? 0 : fail_at_s;
  std::unique_ptr<Progress> progress;
  options.on_run = [&](std::size_t i, std::size_t n, const std::string& label) {
    if (progress) progress->done();
    progress = std::make_unique<Progress>("[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] " + label);
  };
  const SoakReport report = run_soak(networks, options);
  if (progress) progress->done();
  std::printf("%s", soak_table(report).c_str());
  std::printf("wrote %s/soak.csv and %s/soak.txt\n", out_dir.c_str(), out_dir.c_str());
  return soak_status(report);
}

}  // namespace hapair::cli
