// `hapair run`: runs one configuration (the built-in default network unless --topology names a
// file) on real processes or in the simulator, prints a readable summary and, with --out,
// writes summary.json, output.csv, events.csv, metrics.csv and config.ini.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "harness/run_once.h"

namespace hapair::cli {

int run_command(const Args& args) {
  namespace po = boost::program_options;
  std::string topology_path, ha, driver = "real", out_dir, control_bind, advertise;
  bool manual = false;
  std::vector<std::string> fails, pauses, restarts, partitions;
  double duration_s = 0, rate_tps = 0, operator_cost_us = 0;
  std::uint64_t seed = 0;
  po::options_description described("hapair run options");
  described.add_options()
      ("help,h", "show this help")
      ("topology", po::value<std::string>(&topology_path), "topology file (default: the built-in default network)")
      ("ha", po::value<std::string>(&ha), ("HA mode for every operator fragment: " + allowed_ha_modes()).c_str())
      ("duration-s", po::value<double>(&duration_s), "seconds the sources emit (default: the topology's duration_s)")
      ("rate-tps", po::value<double>(&rate_tps), "tuples per second of every source")
      ("seed", po::value<std::uint64_t>(&seed), "seed of the sources (and of the simulated network)")
      ("operator-cost-us", po::value<double>(&operator_cost_us), "CPU cost of one tuple at an operator, in us (operator_cost_us_per_tuple)")
      ("fail", po::value<std::vector<std::string>>(&fails), "NODE@SECONDS: SIGKILL that node at that time (repeatable)")
      ("pause", po::value<std::vector<std::string>>(&pauses), "NODE@SECONDS+DURATION: SIGSTOP, then SIGCONT (repeatable)")
      ("restart", po::value<std::vector<std::string>>(&restarts), "NODE@SECONDS: start a crashed node again; it rejoins as the standby (repeatable)")
      ("partition", po::value<std::vector<std::string>>(&partitions), "A-B@SECONDS+DURATION: cut the link between two nodes for a while (--driver sim)")
      ("driver", po::value<std::string>(&driver)->default_value("real"), "real (one process per node) or sim (simulator)")
      ("out", po::value<std::string>(&out_dir), "directory for summary.json, output.csv, events.csv, metrics.csv, config.ini")
      ("manual", po::bool_switch(&manual), "several hosts: start no node, print the `hapair node` command of each and wait")
      ("control", po::value<std::string>(&control_bind), "where the launcher's control socket binds (default tcp://127.0.0.1:*)")
      ("advertise", po::value<std::string>(&advertise), "the control address nodes dial (default: the bound one)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair run [options]\n\n" << described
                << "\nExamples:\n  hapair run --ha upstream --fail aggregate@3 --out out/upstream\n"
                << "  hapair run --topology experiments/networks/union_join.ini --driver sim --ha passive\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair run: %s\n(hapair run --help lists the options)\n", e.what());
    return 2;
  }
  std::vector<std::string> problems;
  RunOverrides overrides;
  if (vm.count("ha")) {
    if (auto m = parse_ha_mode(ha)) overrides.ha = *m;
    else problems.push_back("--ha '" + ha + "' is not an HA mode; allowed: " + allowed_ha_modes());
  }
  if (driver != "real" && driver != "sim") problems.push_back("--driver '" + driver + "' is not one of: real, sim");
  if (vm.count("duration-s")) overrides.duration_s = duration_s;
  if (vm.count("rate-tps")) overrides.rate_tps = rate_tps;
  if (vm.count("seed")) overrides.seed = seed;
  if (vm.count("operator-cost-us")) overrides.operator_cost_us_per_tuple = operator_cost_us;
  RunRequest request;
  request.driver = driver;
  request.out_dir = out_dir;
  request.manual = manual;
  if (!control_bind.empty()) request.control_bind = control_bind;
  request.control_advertise = advertise;
  if (manual && driver != "real") problems.push_back("--manual needs --driver real");
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
  if (!partitions.empty() && driver != "sim")
    problems.push_back("--partition needs --driver sim (real links are cut in the network-namespace test; see docs/FAULTS.md)");
  if (!problems.empty()) return report_problems("hapair run", "bad options", problems);
  auto plan = load_plan("hapair run", topology_path, overrides);
  if (!plan) return 2;
  auto fault_problems = validate_run_faults(*plan, request.faults);
  if (!fault_problems.empty()) return report_problems("hapair run", "bad faults", fault_problems);

  std::fprintf(stderr, "hapair run: network=%s ha=%s driver=%s seed=%llu duration=%.1fs\n",
               plan->topology.name.c_str(), to_string(plan->settings().ha), driver.c_str(),
               static_cast<unsigned long long>(plan->settings().seed), plan->settings().duration_s);
  Progress progress("hapair run");
  request.progress = [&](double e, double t) { progress.update(e, t); };
  request.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  const Reference reference = compute_reference(*plan);
  RunOutcome outcome = run_once(plan, request, reference);
  progress.done();
  std::printf("%s", outcome.summary.c_str());
  if (!out_dir.empty()) {
    if (outcome.write_error.empty()) std::printf("results written to %s\n", out_dir.c_str());
    else std::fprintf(stderr, "hapair run: could not write results: %s\n", outcome.write_error.c_str());
  }
  for (const auto& e : outcome.result.errors) std::fprintf(stderr, "hapair run: error: %s\n", e.c_str());
  return outcome.result.completed && outcome.result.errors.empty() && outcome.write_error.empty() ? 0 : 1;
}

}  // namespace hapair::cli
