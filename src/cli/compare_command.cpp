// `hapair compare`: the main job. Runs the network (the built-in default unless --topology)
// once per approach with the same input, seed and SIGKILL of the same node at the same time,
// plus a failure-free baseline without HA, and prints one table; writes compare.csv,
// compare.png and every run's result files into --out.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "harness/compare.h"

namespace hapair::cli {

int compare_command(const Args& args) {
  namespace po = boost::program_options;
  std::string topology_path, driver = "real", out_dir = "out/compare", victim = "aggregate", approaches;
  double duration_s = 0, rate_tps = 0, fail_at_s = -1, operator_cost_us = 0;
  std::uint64_t seed = 0;
  po::options_description described("hapair compare options");
  described.add_options()
      ("help,h", "show this help")
      ("topology", po::value<std::string>(&topology_path), "topology file (default: the built-in default network)")
      ("victim", po::value<std::string>(&victim)->default_value("aggregate"), "the node SIGKILLed in every run")
      ("fail-at-s", po::value<double>(&fail_at_s), "when it is killed (default: half the duration)")
      ("approaches", po::value<std::string>(&approaches), "comma-separated subset of: none,amnesia,upstream,passive,active")
      ("duration-s", po::value<double>(&duration_s), "seconds the sources emit")
      ("rate-tps", po::value<double>(&rate_tps), "tuples per second of every source")
      ("seed", po::value<std::uint64_t>(&seed), "seed of the sources")
      ("operator-cost-us", po::value<double>(&operator_cost_us),
       "CPU cost of one tuple at an operator, in us (operator_cost_us_per_tuple; default: 100 on the built-in "
       "network, as in the experiments, so reprocessing takes time; with --topology, the file's value)")
      ("driver", po::value<std::string>(&driver)->default_value("real"), "real or sim")
      ("out", po::value<std::string>(&out_dir)->default_value("out/compare"), "directory for compare.csv, compare.png, runs");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair compare [options]\n\n" << described;
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair compare: %s\n(hapair compare --help lists the options)\n", e.what());
    return 2;
  }
  std::vector<std::string> problems;
  RunOverrides overrides;
  if (vm.count("duration-s")) overrides.duration_s = duration_s;
  if (vm.count("rate-tps")) overrides.rate_tps = rate_tps;
  if (vm.count("seed")) overrides.seed = seed;
  if (vm.count("operator-cost-us")) overrides.operator_cost_us_per_tuple = operator_cost_us;
  else if (topology_path.empty()) overrides.operator_cost_us_per_tuple = kCompareOperatorCostUs;
  if (driver != "real" && driver != "sim") problems.push_back("--driver '" + driver + "' is not one of: real, sim");
  CompareOptions options;
  options.driver = driver;
  options.victim = victim;
  options.out_dir = out_dir;
  if (!approaches.empty()) {
    options.approaches.clear();
    std::stringstream ss(approaches);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (auto m = parse_ha_mode(item)) options.approaches.push_back(*m);
      else problems.push_back("--approaches: '" + item + "' is not an approach; allowed: " + allowed_ha_modes());
    }
  }
  if (!problems.empty()) return report_problems("hapair compare", "bad options", problems);
  auto plan = load_plan("hapair compare", topology_path, overrides);
  if (!plan) return 2;
  options.fail_at_s = fail_at_s >= 0 ? fail_at_s : plan->settings().duration_s / 2;
  FaultSpec crash{FaultKind::crash, victim, "", options.fail_at_s, 0};
  auto fault_problems = validate_run_faults(*plan, {crash});
  if (plan->node_id(victim) != kNoNode && plan->nodes[plan->node_id(victim)].standby)
    fault_problems.push_back("--victim '" + victim + "' is a standby; name a primary (e.g. aggregate)");
  if (!fault_problems.empty()) return report_problems("hapair compare", "bad --victim/--fail-at-s", fault_problems);

  std::fprintf(stderr,
               "hapair compare: network %s, seed %llu, driver %s, operator cost %g us/tuple, SIGKILL %s at %.1f s; %zu "
               "runs of %.1f s\n",
               plan->topology.name.c_str(), static_cast<unsigned long long>(plan->settings().seed), driver.c_str(),
               plan->settings().operator_cost_us_per_tuple, victim.c_str(), options.fail_at_s,
               options.approaches.size() + 1, plan->settings().duration_s);
  std::unique_ptr<Progress> progress;
  options.on_run = [&](std::size_t i, std::size_t n, const std::string& label) {
    if (progress) progress->done();
    progress = std::make_unique<Progress>("[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] " + label);
  };
  options.progress = [&](double e, double t) {
    if (progress) progress->update(e, t);
  };
  CompareReport report = run_compare(plan->topology, options);
  if (progress) progress->done();
  std::printf("%s", compare_table(report).c_str());
  int status = 0;
  auto check_run = [&](const std::string& label, const RunOutcome& o) {
    for (const auto& e : o.result.errors) {
      std::fprintf(stderr, "hapair compare: %s: error: %s\n", label.c_str(), e.c_str());
      status = 1;
    }
    if (!o.result.completed) status = 1;
  };
  check_run("baseline", report.baseline);
  for (const auto& r : report.rows) check_run(r.approach, r.outcome);
  if (!report.plot_error.empty()) std::fprintf(stderr, "hapair compare: no plot: %s\n", report.plot_error.c_str());
  std::printf("wrote %s/compare.csv, %s/compare.png and one folder per run\n", out_dir.c_str(), out_dir.c_str());
  return status;
}

}  // namespace hapair::cli
