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
namespace {

// Bounds of the benchmark's sizes: beyond them a run takes hours or the memory of the machine.
constexpr std::uint64_t kBenchTuplesMax = 1'000'000'000;
constexpr std::uint64_t kBenchNodesMax = 10'000;

}  // namespace

int bench_command(const Args& args) {
  namespace po = boost::program_options;
  BenchOptions options;
  SimBenchOptions sim;
  bool sim_mode = false;
  std::string nodes_text = std::to_string(sim.nodes), tuples_text = std::to_string(options.tuples),
              batch_text = std::to_string(options.batch_tuples), repetitions_text = std::to_string(options.repetitions),
              timeout_text = "120";
  po::options_description described("hapair bench options");
  described.add_options()
      ("help,h", "show this help")
      ("sim", po::bool_switch(&sim_mode), "instead: the simulator's scale benchmark (a chain of --nodes nodes, --tuples tuples)")
      ("nodes", po::value<std::string>(&nodes_text)->default_value(nodes_text),
       "--sim: nodes in the chain (source, filters, sink), 3 .. 10000")
      ("tuples", po::value<std::string>(&tuples_text)->default_value(tuples_text),
       "tuples sent in each measurement, 1 .. 1000000000")
      ("batch-tuples", po::value<std::string>(&batch_text)->default_value(batch_text),
       "tuples per message, in both measurements, 1 .. 100000")
      ("repetitions", po::value<std::string>(&repetitions_text)->default_value(repetitions_text),
       "interleaved runs of both measurements, 1 .. 100; the median ratio counts, with its spread")
      ("timeout-s", po::value<std::string>(&timeout_text)->default_value(timeout_text),
       "give up on a measurement after this long, > 0 and <= 86400 s");
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
  if (auto n = whole_number("--tuples", tuples_text, 1, kBenchTuplesMax, problems)) options.tuples = static_cast<std::int64_t>(*n);
  if (sim_mode) {
    sim.tuples = options.tuples;
    // Three: a source, a filter and a sink; each node is a core with its queues in one process.
    if (auto n = whole_number("--nodes", nodes_text, 3, kBenchNodesMax, problems)) sim.nodes = static_cast<std::int64_t>(*n);
    if (!problems.empty()) return report_problems("hapair bench --sim", "bad input", problems);
    std::fprintf(stderr, "hapair bench --sim: %lld nodes, %lld tuples, one core...\n", static_cast<long long>(sim.nodes),
                 static_cast<long long>(sim.tuples));
    const SimBenchReport report = run_sim_scale_bench(sim);
    std::fputs(format_sim_bench_report(report).c_str(), stdout);
    return 0;
  }
  if (auto n = whole_number("--batch-tuples", batch_text, 1, static_cast<std::uint64_t>(kBatchTuplesMax), problems))
    options.batch_tuples = static_cast<std::int64_t>(*n);
  if (auto n = whole_number("--repetitions", repetitions_text, 1, 100, problems)) options.repetitions = static_cast<int>(*n);
  if (auto t = real_number("--timeout-s", timeout_text, kTimeoutRange, problems)) options.timeout_s = *t;
  if (!problems.empty()) return report_problems("hapair bench", "bad input", problems);
  const BenchReport report = run_one_hop_bench(options);
  std::fputs(format_bench_report(report).c_str(), stdout);
  return report.errors.empty() ? 0 : 1;
}

}  // namespace hapair::cli
