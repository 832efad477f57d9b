// `hapair chaos`: the fault campaign (campaigns/chaos.h). Runs N random cases of seed S, prints
// one progress line per run on stderr, then the table per approach on stdout; writes chaos.csv
// and chaos.txt with --out. Exit status 1 when any run violated its approach's guarantee (each
// violation is printed with the command that reproduces it), 2 for bad options, 0 otherwise.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "campaigns/chaos.h"
#include "config/input_checks.h"
#include "judge/load.h"
#include "proc/net_isolation.h"

namespace hapair::cli {
namespace {

// "a,b c" and repeated options alike: every item separated by commas or spaces.
std::vector<std::string> split_list(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    std::string item;
    for (char ch : v + ",") {
      if (ch == ',' || ch == ' ') {
        if (!item.empty()) out.push_back(item);
        item.clear();
      } else {
        item += ch;
      }
    }
  }
  return out;
}

// Whether --driver real can draw partitions here, for the help.
std::string real_partitions_here() {
  const std::string reason = net_isolation_unavailable();
  return reason.empty() ? "available here" : "not available here (" + reason + ")";
}

}  // namespace

int chaos_command(const Args& args) {
  namespace po = boost::program_options;
  ChaosOptions options;
  std::vector<std::string> approaches, faults, networks;
  std::string pick = "turn", runs_text = "100", seed_text = "1", case_text, duration_text, timeout_text = "900", jobs_text;
  bool no_isolate = false, no_switches = false;
  po::options_description described("hapair chaos options");
  described.add_options()
      ("help,h", "show this help")
      ("runs", po::value<std::string>(&runs_text)->default_value("100"), "number of runs (cases 0 .. N-1), 1 .. 1000000")
      ("seed", po::value<std::string>(&seed_text)->default_value("1"), "campaign seed, 0 .. 2^64-1: case i is a pure function of (seed, i)")
      ("case", po::value<std::string>(&case_text), "run only case I of the seed (reproduces run I of a campaign exactly)")
      ("driver", po::value<std::string>(&options.driver)->default_value("sim"), "sim (simulator) or real (one process per node)")
      ("approaches", po::value<std::vector<std::string>>(&approaches),
       ("comma-separated HA modes (default: all): " + allowed_ha_modes()).c_str())
      ("pick", po::value<std::string>(&pick)->default_value("turn"),
       "turn: the approaches in turn (case i gets approach i mod n); random: a random one per case")
      ("faults", po::value<std::vector<std::string>>(&faults),
       ("comma-separated fault kinds to draw from (default: all the driver supports): " + allowed_chaos_faults() +
        ". --driver real supports crash, pause, restart and, as root with ip and nft, partition (each node in a "
        "network namespace, cut with nftables): " + real_partitions_here()).c_str())
      ("networks", po::value<std::vector<std::string>>(&networks),
       "comma-separated example networks (default: default,chain,join,union,union_join)")
      ("networks-dir", po::value<std::string>(&options.networks_dir), "where NAME.toml files are (default: experiments/networks)")
      ("duration-s", po::value<std::string>(&duration_text), "seconds the sources emit per run, 0.5 .. 600 (default: 3 sim, 2 real)")
      ("run-timeout-s", po::value<std::string>(&timeout_text)->default_value("900"),
       "wall-clock bound of one run, > 0 and <= 86400 s; a run over it counts as hung")
      ("no-switches", po::bool_switch(&no_switches),
       ("draw no live switches (default: half the cases whose network has a fragment that may switch get one or two "
        "switches of its approach, among " + switchable_mode_names(ApproachCatalog::builtin()) +
        ", half of those a crash of its primary or standby around one)").c_str())
      ("no-isolate", po::bool_switch(&no_isolate), "run every case in this process (default: each in a forked child)")
      ("jobs", po::value<std::string>(&jobs_text),
       "cases run at once, 1 .. 256 (default: every core with --driver sim, 1 with --driver real)")
      ("out", po::value<std::string>(&options.out_dir), "directory for chaos.csv, chaos.txt (with --case: the run's result files)");
  HostsArgs hosts_args;
  add_hosts_options(described, hosts_args);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair chaos [options]\n\n" << described
                << "\nA violation is a run whose verdict breaks its approach's guarantee (docs/FAULTS.md), or\n"
                << "a run whose node, driver or harness failed, or that aborted or hung.\n"
                << "Exit status: 0 when every run gave a result within or beyond the guarantee, whatever\n"
                << "the verdict; 1 when any run was a violation (each is printed with the command that\n"
                << "reproduces it); 2 for bad input (options, networks; nothing ran).\n"
                << "Examples:\n  hapair chaos --runs 1000 --driver sim --out out/chaos\n"
                << "  hapair chaos --runs 20 --driver real --approaches passive,active --faults crash,pause\n"
                << "  sudo hapair chaos --runs 40 --driver real --faults partition,crash   (real partitions)\n"
                << "  hapair chaos --runs 30 --driver real --hosts hosts.toml --copy-binary   (host losses and link cuts\n"
                << "    among the faults: root on the hosts; docs/HOSTS.md)\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair chaos: %s\n(hapair chaos --help lists the options)\n", e.what());
    return 2;
  }
  std::vector<std::string> problems;
  options.hosts = hosts_launch(hosts_args, options.driver, problems);
  options.hosts_arguments = hosts_arguments(hosts_args);
  if (hosts_args.secure && hosts_args.hosts_path.empty())
    problems.push_back("--secure: hapair chaos uses CURVE only across hosts (--hosts FILE), where it is always on");
  if (auto runs = whole_number("--runs", runs_text, 1, kChaosRunsMax, problems)) options.runs = *runs;
  if (auto seed = whole_number("--seed", seed_text, 0, UINT64_MAX, problems)) options.seed = *seed;
  if (vm.count("case"))
    if (auto c = whole_number("--case", case_text, 0, SIZE_MAX, problems)) options.only_case = *c;
  if (vm.count("approaches")) {
    options.approaches.clear();
    for (const auto& a : split_list(approaches))
      if (auto m = ha_mode_option("--approaches item", a, problems)) options.approaches.push_back(*m);
  }
  std::vector<std::string> fault_kinds;
  for (ChaosFault k : kChaosFaults) fault_kinds.push_back(to_string(k));
  for (const auto& f : split_list(faults)) {
    if (auto k = parse_chaos_fault(f)) options.faults.push_back(*k);
    else problems.push_back(unknown_choice("--faults item", f, "a fault kind", fault_kinds));
  }
  if (vm.count("networks")) options.networks = split_list(networks);
  if (pick == "random") options.random_approach = true;
  else if (pick != "turn") problems.push_back(unknown_choice("--pick", pick, "a pick rule", {"turn", "random"}));
  if (vm.count("duration-s"))
    options.duration_s = real_number("--duration-s", duration_text, NumberRange{0.5, true, 600.0, "seconds"}, problems);
  if (auto t = real_number("--run-timeout-s", timeout_text, kTimeoutRange, problems)) options.run_timeout_s = *t;
  options.isolate = !no_isolate;
  options.switches = !no_switches;
  if (vm.count("jobs")) {
    if (auto j = whole_number("--jobs", jobs_text, 1, 256, problems)) options.jobs = *j;
  } else if (options.driver == "sim" && options.isolate) {
    options.jobs = machine_cores();
  }
  // The real driver's default kinds as this machine can inject them, named, so that the reproduce
  // commands draw the same cases on another machine.
  if (options.faults.empty() && options.hosts.hosts) options.faults = chaos_faults_for_hosts();
  else if (options.faults.empty() && options.driver == "real") options.faults = chaos_faults_possible(options.driver);
  for (const auto& p : validate_chaos_options(options)) problems.push_back(p);
  if (!problems.empty()) return report_problems("hapair chaos", "bad options", problems);

  std::fprintf(stderr, "hapair chaos: seed %llu, driver %s, %s\n", static_cast<unsigned long long>(options.seed),
               options.driver.c_str(),
               options.only_case ? ("case " + std::to_string(*options.only_case)).c_str()
                                 : (std::to_string(options.runs) + " runs").c_str());
  options.on_case = [](std::size_t k, std::size_t n, const ChaosCase& c) {
    std::fprintf(stderr, "run %zu/%zu (case %zu): %s\n", k + 1, n, c.index, c.description.c_str());
  };
  options.on_run = [](const ChaosRun& r) {
    std::fprintf(stderr, "  case %zu -> %s, lost %llu, duplicates %llu%s: %s%s%s\n", r.c.index, r.verdict.c_str(),
                 static_cast<unsigned long long>(r.lost), static_cast<unsigned long long>(r.duplicates),
                 r.completed ? "" : ", incomplete", to_string(r.klass), r.reason.empty() ? "" : ": ", r.reason.c_str());
  };
  const ChaosReport report = run_chaos(options);
  if (!report.problems.empty()) return report_problems("hapair chaos", "bad input", report.problems);
  std::printf("%s", chaos_table(report).c_str());
  if (!options.out_dir.empty()) std::printf("results written to %s (chaos.csv, chaos.txt)\n", options.out_dir.c_str());
  return report.violations() == 0 ? 0 : 1;
}

}  // namespace hapair::cli
