// `hapair experiment NAME|all [--quick] [--driver real|sim] [--seeds N] [--out DIR] [--config FILE]`
// and `hapair experiment --list`: the reproduction experiments of campaigns/experiments.h, one per
// figure of the paper. Prints each run's progress on stderr, then per experiment the medians, the
// parts of the claim check and exactly `claim holds` or `claim differs: ...` on stdout.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <string>

#include <boost/program_options.hpp>

#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "campaigns/experiments.h"
#include "config/input_checks.h"

namespace hapair::cli {
namespace {

void print_list() {
  std::printf("experiments (hapair experiment NAME, or all; folders under experiments/):\n");
  for (const ExperimentInfo& i : experiment_infos()) {
    std::printf("  %-22s %s\n", i.name.c_str(), i.title.c_str());
    std::printf("  %-22s claim: %s\n", "", i.claim.c_str());
  }
}

// "40 s", "12 min", "1 h 5 min": an estimate's length, rounded as coarsely as it deserves.
std::string duration_text(double seconds) {
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  const long minutes = std::lround(seconds / 60);
  if (minutes < 60) return fmt::format("{} min", minutes);
  return fmt::format("{} h {} min", minutes / 60, minutes % 60);
}

}  // namespace

int experiment_command(const Args& args) {
  namespace po = boost::program_options;
  std::string name, driver, out_dir, config_path;
  std::string seeds_text;
  po::options_description described("hapair experiment options");
  described.add_options()
      ("help,h", "show this help")
      ("list", "list the experiments and the claim each checks")
      ("quick", "the small version: 1 seed, 2 points, ~1.5 s runs, the simulator unless --driver is given")
      ("driver", po::value<std::string>(&driver), "real (one process per node; the default) or sim (the simulator)")
      ("seeds", po::value<std::string>(&seeds_text), "runs per point, 1 .. 100 (default: the experiment's seeds, 3)")
      ("out", po::value<std::string>(&out_dir), "output directory (default out/NAME; for all: out, one folder each)")
      ("config", po::value<std::string>(&config_path),
       "experiment file to run instead of experiments/NAME/experiment.toml (e.g. a written config.toml)");
  HostsArgs hosts_args;
  add_hosts_options(described, hosts_args);
  po::options_description hidden;
  hidden.add_options()("name", po::value<std::string>(&name));
  po::options_description all_options;
  all_options.add(described).add(hidden);
  po::positional_options_description positional;
  positional.add("name", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all_options).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair experiment NAME|all [options]\n       hapair experiment --list\n\n" << described
                << "\nExit status: 0 when every run gave a result, whatever the verdicts and whether the claim\n"
                << "holds or differs; 1 when a run broke its approach's guarantee (docs/FAULTS.md: upstream,\n"
                << "passive, active where precise, not precise) or the harness failed (a run, a result file);\n"
                << "2 for bad input (an unknown experiment, bad options or config; nothing ran).\n"
                << "\nExamples:\n  hapair experiment recovery_vs_interval\n  hapair experiment all --quick --out /tmp/exp\n"
                << "  hapair experiment recovery_vs_interval --quick --hosts hosts.toml --copy-binary   (docs/HOSTS.md)\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair experiment: %s\n(hapair experiment --help lists the options)\n", e.what());
    return 2;
  }
  if (vm.count("list")) {
    print_list();
    return 0;
  }
  std::vector<std::string> problems;
  // Across hosts only real processes run (--quick then too, unless --driver sim is asked for,
  // which is refused).
  const HostsLaunch hosts = hosts_launch(hosts_args, vm.count("driver") ? driver : "real", problems);
  if (name.empty()) problems.push_back("name an experiment, or all (hapair experiment --list shows them)");
  else if (name != "all" && !is_experiment(name)) {
    std::vector<std::string> names = {"all"};
    for (const ExperimentInfo& i : experiment_infos()) names.push_back(i.name);
    problems.push_back(unknown_choice("experiment", name, "an experiment", names) + " (hapair experiment --list shows them)");
  }
  if (vm.count("driver")) check_driver(driver, problems);
  std::optional<std::uint64_t> seeds;
  if (vm.count("seeds")) seeds = whole_number("--seeds", seeds_text, 1, 100, problems);
  if (name == "all" && vm.count("config")) problems.push_back("--config names one experiment's file; it does not go with all");
  if (!problems.empty()) return report_problems("hapair experiment", "bad options", problems);

  std::vector<std::string> names;
  if (name == "all")
    for (const ExperimentInfo& i : experiment_infos()) names.push_back(i.name);
  else
    names.push_back(name);

  auto options_for = [&](const std::string& n) {
    ExperimentOptions options;
    options.quick = vm.count("quick") != 0;
    options.driver = driver;
    if (seeds) options.seeds = static_cast<std::int64_t>(*seeds);
    options.out_dir = name == "all" ? (out_dir.empty() ? "out" : out_dir) + "/" + n : (out_dir.empty() ? "out/" + n : out_dir);
    options.config_path = config_path;
    options.hosts = hosts;
    return options;
  };
  // How long it will take, before anything runs (an experiment that cannot be planned says why
  // below, when its turn comes).
  {
    std::vector<std::pair<std::string, std::vector<PlannedRun>>> plans;
    std::set<std::string> drivers;
    for (const std::string& n : names) {
      ExperimentPlan plan = plan_experiment(n, options_for(n));
      if (!plan.problems.empty()) continue;
      drivers.insert(plan.driver);
      plans.emplace_back(plan.driver, std::move(plan.runs));
    }
    const TimeEstimate e = estimate_time(plans);
    std::string on;
    for (const std::string& d : drivers) on += (on.empty() ? "" : " and ") + std::string(d == "sim" ? "the simulator" : "real processes");
    std::fprintf(stderr, "hapair experiment %s: %zu runs%s on %s, about %s (an estimate from this repository's committed runs on 2 cores)\n",
                 name.c_str(), e.runs, e.reused ? fmt::format(" ({} more shared between experiments, run once)", e.reused).c_str() : "",
                 on.empty() ? "nothing" : on.c_str(), duration_text(e.seconds).c_str());
  }

  RunCache cache;
  int status = 0;
  std::vector<std::string> overview;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string& n = names[k];
    ExperimentOptions options = options_for(n);
    const std::string prefix = names.size() > 1 ? "[" + std::to_string(k + 1) + "/" + std::to_string(names.size()) + " " + n + "] " : n + " ";
    std::unique_ptr<Progress> progress;
    options.on_run = [&](std::size_t i, std::size_t total, const std::string& label, bool reused) {
      if (progress) progress->done();
      progress.reset();
      const std::string line = prefix + "run " + std::to_string(i + 1) + "/" + std::to_string(total) + ": " + label;
      if (reused) std::fprintf(stderr, "%s: reused (the same run ran earlier in this invocation)\n", line.c_str());
      else progress = std::make_unique<Progress>(line);
    };
    options.progress = [&](double e, double t) {
      if (progress) progress->update(e, t);
    };
    std::fprintf(stderr, "hapair experiment %s: starting (out %s)\n", n.c_str(), options.out_dir.c_str());
    ExperimentReport report = run_experiment(n, options, cache);
    if (progress) progress->done();
    if (!report.problems.empty()) {
      report_problems("hapair experiment " + n, "the experiment cannot run", report.problems);
      status = 2;
      overview.push_back(n + ": did not run (bad configuration)");
      continue;
    }
    std::printf("== %s (driver %s, %zu runs, %zu reused, wall time %.0f s)\n%s%s", n.c_str(), report.driver.c_str(),
                report.runs, report.reused_runs, report.wall_s, report.summary.c_str(), report.claim.text().c_str());
    std::fflush(stdout);
    for (const std::string& e : report.run_errors) std::fprintf(stderr, "hapair experiment %s: run failed: %s\n", n.c_str(), e.c_str());
    for (const std::string& e : report.write_errors) std::fprintf(stderr, "hapair experiment %s: %s\n", n.c_str(), e.c_str());
    if (!report.plot_error.empty()) std::fprintf(stderr, "hapair experiment %s: no plot: %s\n", n.c_str(), report.plot_error.c_str());
    std::printf("wrote %s, %s, %s, %s/seed.txt, config.toml, version.txt and runs/\n", report.csv_path.c_str(),
                report.png_path.c_str(), report.pdf_path.c_str(), report.out_dir.c_str());
    if (report.failed() && status == 0) status = 1;
    overview.push_back(fmt::format("{}: {} ({:.0f} s, {} runs)", n, report.claim.line(), report.wall_s, report.runs));
  }
  if (names.size() > 1) {
    std::printf("== summary\n");
    for (const std::string& o : overview) std::printf("  %s\n", o.c_str());
  }
  return status;
}

}  // namespace hapair::cli
