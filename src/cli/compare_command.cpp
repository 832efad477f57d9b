// `hapair compare`: the main job. Runs the network (the built-in default unless --topology)
// under every approach with the same input and seed, repeated in interleaved order: failure-free
// runs for the runtime overhead (against ha=none) and runs with the same SIGKILL of the same
// node for recovery; prints medians with their spread and the disturbed runs; writes
// compare.csv, compare_runs.csv, compare.png and every run's result files into --out.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include <boost/program_options.hpp>

#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "driver/link_model.h"
#include "campaigns/compare.h"
#include "campaigns/fidelity.h"
#include "run/guarantee.h"
#include "config/input_checks.h"

namespace hapair::cli {

int compare_command(const Args& args) {
  namespace po = boost::program_options;
  std::string topology_path, driver = "real", out_dir = "out/compare", victim = "aggregate", approaches, seed_text;
  std::string repeat_text = std::to_string(kCompareRepeatDefault), reruns_text = std::to_string(kCompareRerunsMax);
  std::string duration_text, rate_text, fail_at_text, cost_text, free_duration_text, links_text;
  bool lose_host = false;
  po::options_description described("hapair compare options");
  described.add_options()
      ("help,h", "show this help")
      ("topology", po::value<std::string>(&topology_path), "topology file (default: the built-in default network)")
      ("victim", po::value<std::string>(&victim), "the node SIGKILLed in every crash run: the primary of an operator fragment (default: aggregate when the network has one, else its last operator fragment; on the built-in network: filter, aggregate)")
      ("lose-host", po::bool_switch(&lose_host),
       "with --hosts, as root there: the crash runs lose the victim's whole host (its links dropped, then every node "
       "there killed: peers learn of it only by silence) instead of SIGKILLing the victim")
      ("fail-at-s", po::value<std::string>(&fail_at_text),
       "when it is killed, 0 < S < duration (default: 2 on the built-in network, else half the duration)")
      ("approaches", po::value<std::string>(&approaches), "comma-separated subset of: none,amnesia,upstream,passive,active")
      ("repeat", po::value<std::string>(&repeat_text),
       "repetitions, 1 .. 100 (default 3); each runs every approach failure-free and with the SIGKILL, in "
       "interleaved order")
      ("reruns", po::value<std::string>(&reruns_text),
       "times a disturbed run (a takeover before the failure, a false detection) is run again before it is left "
       "out of the medians, 0 .. 10 (default 2)")
      ("duration-s", po::value<std::string>(&duration_text),
       "seconds the sources emit in the crash runs, > 0 and <= 86400 (default: 3.5 on the built-in network, else the file's)")
      ("failure-free-duration-s", po::value<std::string>(&free_duration_text),
       "seconds the sources emit in the failure-free runs, > 0 and <= 86400 (default: 2.5 on the built-in network, else the "
       "crash runs')")
      ("rate-tps", po::value<std::string>(&rate_text), "tuples per second of every source (a nexmark source: its events_per_s), > 0 and <= 10000000")
      ("seed", po::value<std::string>(&seed_text), "seed of the sources, 0 .. 2^64-1")
      ("operator-cost-us", po::value<std::string>(&cost_text),
       "CPU cost of one tuple at an operator, in us, 0 .. 100000 (operator_cost_us_per_tuple; default: 100 on the built-in "
       "network, as in the experiments, so reprocessing takes time; with --topology, the file's value)")
      ("links", po::value<std::string>(&links_text),
       "emulate every link between two nodes (the [links] keys, docs/LINKS.md): KEY=VALUE,... of latency_ms, "
       "jitter_ms, loss_ratio, duplication_ratio, bandwidth_bytes_per_s, queue_messages_max, queue_bytes_max; "
       "e.g. latency_ms=20,jitter_ms=5,loss_ratio=0.01")
      ("driver", po::value<std::string>(&driver)->default_value("real"),
       "real, sim, or both: the comparison on the simulator, then on real processes, each repetition on its own "
       "seed (seed + repetition - 1), into OUT/sim and OUT/real, and the simulator's fidelity per approach and figure "
       "(OUT/fidelity.csv, fidelity.txt: docs/PERFORMANCE.md, \"Fidelity\")")
      ("out", po::value<std::string>(&out_dir)->default_value("out/compare"), "directory for compare.csv, compare_runs.csv, compare.txt, compare.png, one folder per run");
  HostsArgs hosts_args;
  add_hosts_options(described, hosts_args);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair compare [options]\n\n" << described << "\n" << compare_columns_help()
                << "\nExit status: 0 when every run gave a result, whatever the verdict (none stopping at the\n"
                << "crash, amnesia's gap); 1 when a run broke its approach's guarantee (docs/FAULTS.md:\n"
                << "upstream, passive, active where precise, not precise; a recovery that never came) or the\n"
                << "harness failed; 2 for bad input (nothing ran).\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair compare: %s\n(hapair compare --help lists the options)\n", e.what());
    return 2;
  }
  // Every problem at once: the options, the topology with the overrides, the victim and the time.
  std::vector<std::string> problems;
  RunOverrides overrides;
  if (vm.count("duration-s")) overrides.duration_s = real_number("--duration-s", duration_text, kDurationRange, problems);
  else if (topology_path.empty()) overrides.duration_s = kCompareCrashDurationS;
  const auto repeat = whole_number("--repeat", repeat_text, 1, 100, problems);
  const auto reruns = whole_number("--reruns", reruns_text, 0, 10, problems);
  std::optional<double> free_duration_s;
  if (vm.count("failure-free-duration-s"))
    free_duration_s = real_number("--failure-free-duration-s", free_duration_text, kDurationRange, problems);
  // Whether it falls inside the run is checked against the plan below (text that is no number: NaN).
  std::optional<double> fail_at_s;
  if (vm.count("fail-at-s")) fail_at_s = finite_number(fail_at_text).value_or(std::nan(""));
  if (vm.count("rate-tps")) overrides.rate_tps = real_number("--rate-tps", rate_text, kRateRange, problems);
  if (vm.count("seed")) overrides.seed = whole_number("--seed", seed_text, 0, UINT64_MAX, problems);
  if (vm.count("links")) overrides.links = links_text;
  if (vm.count("operator-cost-us"))
    overrides.operator_cost_us_per_tuple = real_number("--operator-cost-us", cost_text, kOperatorCostRange, problems);
  else if (topology_path.empty()) overrides.operator_cost_us_per_tuple = kCompareOperatorCostUs;
  const bool both = driver == "both";
  if (!both && driver != "real" && driver != "sim")
    problems.push_back(unknown_choice("--driver", driver, "a driver", {"real", "sim", "both"}));
  CompareOptions options;
  options.hosts = hosts_launch(hosts_args, both ? "real" : driver, problems);
  if (both && options.hosts.hosts) problems.push_back("--driver both runs the simulator on this machine: it does not go with --hosts");
  options.vary_seed = both;
  options.secure = hosts_args.secure;
  options.driver = driver;
  options.victim = victim;
  options.lose_victim_host = lose_host;
  if (lose_host && !options.hosts.hosts) problems.push_back("--lose-host needs --hosts FILE (on one machine the victim is SIGKILLed)");
  options.out_dir = out_dir;
  if (repeat) options.repeat = static_cast<std::size_t>(*repeat);
  if (reruns) options.reruns_max = static_cast<std::size_t>(*reruns);
  if (free_duration_s) options.failure_free_duration_s = *free_duration_s;
  else if (topology_path.empty()) options.failure_free_duration_s = kCompareFailureFreeDurationS;
  if (vm.count("approaches")) {
    options.approaches.clear();
    std::stringstream ss(approaches);
    std::string item;
    while (std::getline(ss, item, ','))
      if (auto m = ha_mode_option("--approaches item", item, problems)) options.approaches.push_back(*m);
    if (options.approaches.empty() && approaches.empty())
      problems.push_back("--approaches is empty; name at least one of: " + allowed_ha_modes());
  }
  PlanLoad load = load_plan(topology_path, overrides);
  for (auto& p : load.problems) problems.push_back(std::move(p));
  if (load.plan) {
    const double run_s = load.plan->settings().duration_s;
    options.fail_at_s = fail_at_s                                              ? *fail_at_s
                        : topology_path.empty() && !vm.count("duration-s") ? kCompareFailAtS
                                                                           : run_s / 2;
    if (!vm.count("victim") && load.plan->node_id(victim) == kNoNode) {
      // A network without an "aggregate" (a workload's): its most downstream operator fragment.
      for (const PlanFragment& f : load.plan->fragments)
        if (f.kind == FragmentKind::operators) victim = f.name;
      options.victim = victim;
    }
    for (auto& p : check_victim(*load.plan, victim, "--victim")) problems.push_back(std::move(p));
    if (options.hosts.hosts)
      for (auto& p : hosts_fault_problems(*load.plan, options.hosts, {})) problems.push_back(std::move(p));
    if (fail_at_s && fault_time_problem(*load.plan, *fail_at_s)) {
      problems.push_back(fmt::format(
          "--fail-at-s {}: must be > 0 and < {:g} s, the duration of the run (default: half of it)", fail_at_text, run_s));
    }
  }
  if (!problems.empty()) return report_problems("hapair compare", "bad input", problems);
  const std::shared_ptr<const Plan> plan = load.plan;

  const bool with_none =
      std::find(options.approaches.begin(), options.approaches.end(), ApproachCatalog::builtin().baseline()) !=
      options.approaches.end();
  const std::size_t modes = options.approaches.size() + (with_none ? 0 : 1);
  const std::size_t runs =
      options.repeat * (modes + options.approaches.size()) - (with_none ? options.repeat - 1 : 0);
  std::fprintf(stderr,
               "hapair compare: network %s, seed %llu, driver %s, operator cost %g us/tuple; %zu repetitions of "
               "%zu failure-free runs of %.1f s and %zu runs of %.1f s with a %s %s at %.1f s (none's only "
               "once): %zu runs, disturbed ones rerun up to %zu times\n",
               plan->topology.name.c_str(), static_cast<unsigned long long>(plan->settings().seed), driver.c_str(),
               plan->settings().operator_cost_us_per_tuple, options.repeat, modes,
               options.failure_free_duration_s.value_or(plan->settings().duration_s), options.approaches.size(),
               plan->settings().duration_s, lose_host ? "loss of the host of" : "SIGKILL of", victim.c_str(), options.fail_at_s, runs, options.reruns_max);
  if (const std::string links = describe_links(*plan); !links.empty()) std::fprintf(stderr, "hapair compare: %s\n", links.c_str());
  for (const std::string& w : link_warnings(*plan)) std::fprintf(stderr, "hapair compare: warning: %s\n", w.c_str());
  const auto started = std::chrono::steady_clock::now();
  auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  std::unique_ptr<Progress> progress;
  options.on_run = [&](std::size_t i, std::size_t n, const std::string& label) {
    if (progress) progress->done();
    progress = std::make_unique<Progress>(fmt::format("[{}/{}] {} [{:.0f} s]", i + 1, n, label, elapsed_s()));
  };
  options.progress = [&](double e, double t) {
    if (progress) progress->update(e, t);
  };
  std::vector<CompareReport> reports;
  for (const std::string& side : both ? std::vector<std::string>{"sim", "real"} : std::vector<std::string>{driver}) {
    CompareOptions side_options = options;
    side_options.driver = side;
    if (both) {
      side_options.out_dir = out_dir + "/" + side;
      std::fprintf(stderr, "hapair compare: driver %s into %s\n", side.c_str(), side_options.out_dir.c_str());
    }
    reports.push_back(run_compare(plan->topology, side_options));
    if (progress) progress->done();
    progress.reset();
    if (both) std::printf("== driver %s\n", side.c_str());
    std::printf("%s", compare_table(reports.back()).c_str());
  }
  const CompareReport& report = reports.back();
  // The exit status comes from each run's guarantee check (run/guarantee.h): a none run that
  // stops at the crash is that row's result, not an error.
  std::vector<GuaranteeCheck> checks;
  auto explain = [&](const std::string& label, const RunOutcome& o, const GuaranteeCheck& c) {
    checks.push_back(c);
    if (c.status == RunStatus::result) return;
    std::fprintf(stderr, "hapair compare: %s: %s\n", label.c_str(), guarantee_line(c).c_str());
    for (const auto& e : o.result.errors) std::fprintf(stderr, "hapair compare: %s: error: %s\n", label.c_str(), e.c_str());
  };
  // Every run counts, disturbed ones too: a precise approach must stay precise through a false
  // detection.
  for (const CompareReport& each : reports)
    for (const auto& r : each.runs) explain(each.driver + " " + r.label(), r.outcome, r.guarantee);
  const int status = exit_status(checks);
  if (!report.plot_error.empty()) std::fprintf(stderr, "hapair compare: no plot: %s\n", report.plot_error.c_str());
  if (both) {
    const std::vector<FidelityRow> rows = fidelity_rows(reports.front(), reports.back());
    std::printf("== fidelity: the simulator against real processes\n%s", fidelity_table(rows).c_str());
    if (const std::string error = write_fidelity(out_dir, rows); !error.empty()) {
      std::fprintf(stderr, "hapair compare: %s\n", error.c_str());
      return 1;
    }
    std::printf("wrote %s/fidelity.csv, fidelity.txt, and each driver's comparison into %s/sim and %s/real\n",
                out_dir.c_str(), out_dir.c_str(), out_dir.c_str());
  } else {
    std::printf("wrote %s/compare.csv, %s/compare_runs.csv, %s/compare.png and one folder per run\n", out_dir.c_str(),
                out_dir.c_str(), out_dir.c_str());
  }
  const double took_s = elapsed_s();
  std::size_t runs_done = 0;
  for (const CompareReport& each : reports) runs_done += each.runs.size();
  std::printf("took %d min %02d s (%zu runs)\n", static_cast<int>(took_s) / 60, static_cast<int>(took_s) % 60, runs_done);
  return status;
}

}  // namespace hapair::cli
