// `hapair bench`: one-hop throughput of hapair against raw ZeroMQ (campaigns/bench.h says how).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <sstream>

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "campaigns/bench.h"
#include "campaigns/chain_bench.h"
#include "sim/sim_bench.h"

namespace hapair::cli {
namespace {

// Bounds of the benchmark's sizes: beyond them a run takes hours or the memory of the machine.
constexpr std::uint64_t kBenchTuplesMax = 1'000'000'000;
constexpr std::uint64_t kBenchNodesMax = 10'000;

// `hapair bench --chain` (campaigns/chain_bench.h): its own options, parsed from the same arguments.
int chain_bench(const Args& args) {
  namespace po = boost::program_options;
  ChainBenchOptions options;
  std::string tuples_text = std::to_string(options.tuples), repetitions_text = std::to_string(options.repetitions),
              interval_text = std::to_string(options.checkpoint_interval_ms),
              ack_text = std::to_string(options.ack_interval_ms), driver = options.driver, approaches,
              mode_text = to_string(options.checkpoint_mode),
              out_dir = "out/chain_bench";
  po::options_description described("hapair bench --chain options");
  described.add_options()
      ("help,h", "show this help")
      ("chain", "the chain benchmark (this)")
      ("driver", po::value<std::string>(&driver)->default_value(driver), "real (one process per node) or sim")
      ("secure", po::bool_switch(&options.secure),
       "CURVE on every ZeroMQ socket of each run (as --hosts always has): what authentication costs")
      ("tuples", po::value<std::string>(&tuples_text)->default_value(tuples_text), "tuples the source emits per run, 1 .. 100000000")
      ("repetitions", po::value<std::string>(&repetitions_text)->default_value(repetitions_text),
       "rounds of every approach, in interleaved order, 1 .. 100")
      ("approaches", po::value<std::string>(&approaches), "comma-separated subset of: none,amnesia,upstream,passive,active "
       "(default none,upstream,passive,active; none is the baseline and always runs)")
      ("checkpoint-interval-ms", po::value<std::string>(&interval_text)->default_value(interval_text),
       "passive standby's checkpoint interval, 1 .. 60000")
      ("ack-interval-ms", po::value<std::string>(&ack_text)->default_value(ack_text),
       "every approach's level-0 and level-1 ack interval (upstream backup's trimming rounds), 1 .. 60000; "
       "the default is the networks'")
      ("checkpoint-mode", po::value<std::string>(&mode_text)->default_value(mode_text),
       "passive standby's checkpoints: full (the whole retained state each time, the networks' default) or delta")
      ("out", po::value<std::string>(&out_dir)->default_value(out_dir),
       "directory for chain_bench.csv, chain_bench_runs.csv, chain_bench.txt and one folder per run");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair bench --chain [--driver real|sim] [--secure] [--tuples N] [--repetitions R] [--approaches a,b]\n"
                << "                            [--checkpoint-interval-ms MS] [--ack-interval-ms MS] [--checkpoint-mode full|delta]\n"
                << "                            [--out DIR]\n\n"
                << "Runs source -> filter -> map -> aggregate -> sink, every fragment its own process, operators\n"
                << "without cost, the source as fast as flow control lets it, under every approach in interleaved\n"
                << "order, and prints the throughput each sustains relative to none (targets on 2 cores: upstream\n"
                << ">= 0.9, passive >= 0.8, active >= 0.5), and bytes and CPU per tuple by message kind.\n\n"
                << described;
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair bench --chain: %s\n(hapair bench --chain --help lists the options)\n", e.what());
    return 2;
  }
  std::vector<std::string> problems;
  check_driver(driver, problems);
  if (options.secure && driver != "real") problems.push_back("--secure needs --driver real (the simulator has no sockets)");
  options.driver = driver;
  if (auto n = whole_number("--tuples", tuples_text, 1, 100'000'000, problems)) options.tuples = static_cast<std::int64_t>(*n);
  if (auto n = whole_number("--repetitions", repetitions_text, 1, 100, problems)) options.repetitions = *n;
  if (auto n = whole_number("--checkpoint-interval-ms", interval_text, 1, 60'000, problems))
    options.checkpoint_interval_ms = static_cast<std::int64_t>(*n);
  if (auto n = whole_number("--ack-interval-ms", ack_text, 1, 60'000, problems)) options.ack_interval_ms = static_cast<std::int64_t>(*n);
  if (auto m = parse_checkpoint_mode(mode_text)) options.checkpoint_mode = *m;
  else problems.push_back("--checkpoint-mode: '" + mode_text + "' is not one of " + allowed_checkpoint_modes());
  if (vm.count("approaches")) {
    const HaMode baseline = ApproachCatalog::builtin().baseline();
    options.approaches = {baseline};
    std::stringstream ss(approaches);
    std::string item;
    while (std::getline(ss, item, ','))
      if (auto m = ha_mode_option("--approaches item", item, problems))
        if (*m != baseline) options.approaches.push_back(*m);
  }
  if (!problems.empty()) return report_problems("hapair bench --chain", "bad input", problems);
  options.out_dir = out_dir;
  std::fprintf(stderr, "hapair bench --chain: %lld tuples per run, %zu repetitions of %zu approaches, driver %s%s\n",
               static_cast<long long>(options.tuples), options.repetitions, options.approaches.size(), driver.c_str(),
               options.secure ? ", CURVE on every socket" : "");
  const auto started = std::chrono::steady_clock::now();
  std::unique_ptr<Progress> progress;
  options.on_run = [&](std::size_t i, std::size_t n, const std::string& label) {
    if (progress) progress->done();
    const double at_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    progress = std::make_unique<Progress>("[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] " + label + " [" +
                                          std::to_string(static_cast<int>(at_s)) + " s]");
  };
  options.progress = [&](double e, double t) {
    if (progress) progress->update(e, t);
  };
  const ChainBenchReport report = run_chain_bench(options);
  if (progress) progress->done();
  std::fputs(chain_bench_table(report).c_str(), stdout);
  for (const std::string& e : report.write_errors) std::fprintf(stderr, "hapair bench --chain: %s\n", e.c_str());
  std::printf("wrote %s/chain_bench.csv, %s/chain_bench_runs.csv, %s/chain_bench.txt and one folder per run\n",
              out_dir.c_str(), out_dir.c_str(), out_dir.c_str());
  bool failed = !report.write_errors.empty();
  for (const ChainBenchRow& r : report.rows) failed = failed || r.runs == 0;
  return failed ? 1 : 0;
}

}  // namespace

int bench_command(const Args& args) {
  namespace po = boost::program_options;
  for (const std::string& a : args)
    if (a == "--chain") return chain_bench(args);
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
      ("chain", "instead: every approach's throughput on a chain of real processes (hapair bench --chain --help)")
      ("nodes", po::value<std::string>(&nodes_text)->default_value(nodes_text),
       "--sim: nodes in the chain (source, filters, sink), 3 .. 10000")
      ("tuples", po::value<std::string>(&tuples_text)->default_value(tuples_text),
       "tuples sent in each measurement, 1 .. 1000000000")
      ("batch-tuples", po::value<std::string>(&batch_text)->default_value(batch_text),
       "tuples per message, in both measurements, 1 .. 100000")
      ("repetitions", po::value<std::string>(&repetitions_text)->default_value(repetitions_text),
       "interleaved runs of both measurements, 1 .. 100; the median ratio counts, with its spread")
      ("timeout-s", po::value<std::string>(&timeout_text)->default_value(timeout_text),
       "give up on a measurement after this long, > 0 and <= 86400 s")
      ("secure", po::bool_switch(&options.secure),
       "CURVE on both measurements' sockets (as --hosts runs have): what authentication costs");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair bench [--tuples N] [--batch-tuples B] [--repetitions R] [--secure]\n"
                << "       hapair bench --sim [--nodes N] [--tuples N]\n"
                << "       hapair bench --chain [...]   (hapair bench --chain --help)\n\n"
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
    if (options.secure) problems.push_back("--secure does not apply to --sim (the simulator has no sockets)");
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
