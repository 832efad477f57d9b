// `hapair bench`: one-hop throughput of hapair against raw ZeroMQ (harness/bench.h says how).
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "harness/bench.h"
#include "sim/sim_bench.h"

namespace hapair::cli {

int bench_command(const Args& args) {
  namespace po = boost::program_options;
  BenchOptions options;
  SimBenchOptions sim;
  bool sim_mode = false;
  po::options_description described("hapair bench options");
  described.add_options()
      ("help,h", "show this help")
      ("sim", po::bool_switch(&sim_mode), "instead: the simulator's scale benchmark (a chain of --nodes nodes, --tuples tuples)")
      ("nodes", po::value<std::int64_t>(&sim.nodes)->default_value(sim.nodes), "--sim: nodes in the chain (source, filters, sink)")
      ("tuples", po::value<std::int64_t>(&options.tuples)->default_value(options.tuples),
       "tuples sent in each measurement")
      ("batch-tuples", po::value<std::int64_t>(&options.batch_tuples)->default_value(options.batch_tuples),
       "tuples per message, in both measurements")
      ("repetitions", po::value<int>(&options.repetitions)->default_value(options.repetitions),
       "runs of each measurement; the best counts")
      ("timeout-s", po::value<double>(&options.timeout_s)->default_value(options.timeout_s),
       "give up on a measurement after this long");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair bench [--tuples N] [--batch-tuples B] [--repetitions R]\n"
                << "       hapair bench --sim [--nodes N] [--tuples N]\n\n"
                << "Sends the same tuples over one tcp loopback hop twice, in one process with two threads:\n"
                << "as raw ZeroMQ PUSH/PULL messages of 40-byte records, and from a real source core to a\n"
                << "real sink core through hapair's transport and codec. Prints both rates and their ratio.\n\n"
                << described;
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair bench: %s\n(hapair bench --help lists the options)\n", e.what());
    return 2;
  }
  // Every problem at once, each naming the option and the value it got.
  std::vector<std::string> problems;
  if (sim_mode) {
    sim.tuples = options.tuples;
    if (sim.nodes < 3) problems.push_back("--nodes " + std::to_string(sim.nodes) + ": must be at least 3 (source, filter, sink)");
    if (sim.tuples <= 0) problems.push_back("--tuples " + std::to_string(sim.tuples) + ": must be positive");
    if (!problems.empty()) return report_problems("hapair bench --sim", "bad input", problems);
    std::fprintf(stderr, "hapair bench --sim: %lld nodes, %lld tuples, one core...\n", static_cast<long long>(sim.nodes),
                 static_cast<long long>(sim.tuples));
    const SimBenchReport report = run_sim_scale_bench(sim);
    std::fputs(format_sim_bench_report(report).c_str(), stdout);
    return 0;
  }
  if (options.tuples <= 0) problems.push_back("--tuples " + std::to_string(options.tuples) + ": must be positive");
  if (options.batch_tuples <= 0) problems.push_back("--batch-tuples " + std::to_string(options.batch_tuples) + ": must be positive");
  if (options.repetitions <= 0) problems.push_back("--repetitions " + std::to_string(options.repetitions) + ": must be positive");
  if (!(options.timeout_s > 0) || !std::isfinite(options.timeout_s))
    problems.push_back("--timeout-s " + std::to_string(options.timeout_s) + ": must be a finite number of seconds > 0");
  if (!problems.empty()) return report_problems("hapair bench", "bad input", problems);
  const BenchReport report = run_one_hop_bench(options);
  std::fputs(format_bench_report(report).c_str(), stdout);
  return report.errors.empty() ? 0 : 1;
}

}  // namespace hapair::cli
