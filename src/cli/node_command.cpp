// `hapair node`: runs one node process of a topology. The launcher starts one per plan node;
// for runs on several hosts a person starts them by hand with the command the launcher prints.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "config/topology_file.h"
#include "node/node_factory.h"
#include "runtime/checkpoint_file_store.h"
#include "runtime/node_host.h"

namespace hapair::cli {

int node_command(const Args& args) {
  namespace po = boost::program_options;
  NodeProcessOptions options;
  std::string directory_timeout_text = "30";
  std::string checkpoint_dir;
  po::options_description described("hapair node options");
  described.add_options()
      ("help,h", "show this help")
      ("topology", po::value<std::string>(&options.topology_path)->required(),
       "the run's effective topology file (the launcher writes it)")
      ("name", po::value<std::string>(&options.node_name)->required(),
       "the plan node to run, e.g. filter, aggregate.backup, aggregate.spare")
      ("control", po::value<std::string>(&options.control_endpoint)->required(),
       "the launcher's control endpoint, e.g. tcp://10.0.0.1:5555")
      ("bind", po::value<std::string>(&options.bind_endpoint),
       "where the data socket binds (default: the topology's endpoint for this node, else tcp://127.0.0.1:*)")
      ("crash-line", po::value<std::string>(&options.crash_line_bind),
       "where the crash line listens, tcp://HOST:PORT (default: the data endpoint's host, a free port)")
      ("rejoin", po::bool_switch(&options.rejoin),
       "this process replaces one that crashed: rejoin the fragment as the standby of its current primary")
      ("exit-on-stdin-eof", po::bool_switch(&options.exit_on_stdin_eof),
       "exit at once when stdin ends: the launcher starts remote nodes so, under its ssh session, so that a node never "
       "outlives its launcher")
      ("keys-from-stdin", po::bool_switch(&options.keys_from_stdin),
       "read the run's CURVE keys from the first line of stdin (the launcher writes them there with --secure or "
       "--hosts; never on a command line or in a file) and use CURVE on every socket")
      ("checkpoint-dir", po::value<std::string>(&checkpoint_dir),
       "the coordinator of global checkpoints (ha = checkpoint): the checkpoint store's directory (default: "
       "checkpoints/ beside the topology file, the run's folder)")
      ("directory-timeout-s", po::value<std::string>(&directory_timeout_text)->default_value("30"),
       "how long to wait for the launcher's directory before giving up, > 0 and <= 86400 s");

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair node --topology FILE --name NODE --control ENDPOINT [--bind ENDPOINT] [--rejoin]\n\n"
                << described << "\nExit status: 0 after the launcher's StopRun, 1 when setting up failed (bind, no\n"
                << "directory in time), 2 on bad options or a bad topology, " << kNodeExitFatal
                << " when the node hit a fatal error, " << kNodeExitLauncherGone
                << " when stdin ended\n(--exit-on-stdin-eof).\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair node: %s\n(hapair node --help lists the options)\n", e.what());
    return 2;
  }

  std::vector<std::string> problems;
  if (auto t = real_number("--directory-timeout-s", directory_timeout_text, kTimeoutRange, problems))
    options.directory_timeout_s = *t;
  // A test's injected clock offset (docs/HOSTS.md, "Clock offsets"): the node runs, and answers
  // clock probes, as if its host's clock were this many microseconds ahead. From the
  // environment, not an option, so that a test sets it per host (its sshd's SetEnv) without the
  // launcher knowing; it is never set in a real run.
  if (const char* shift = std::getenv("HAPAIR_TEST_CLOCK_SHIFT_US"); shift && *shift) {
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(shift, &end, 10);
    if (*end != '\0' || errno == ERANGE || value < -kClockShiftMaxUs || value > kClockShiftMaxUs)
      problems.push_back("HAPAIR_TEST_CLOCK_SHIFT_US='" + std::string(shift) +
                         "': expected a whole number of microseconds within +-" + std::to_string(kClockShiftMaxUs));
    else
      options.clock_shift_us = value;
  }
  if (!problems.empty()) return report_problems("hapair node", "bad options", problems);
  TopologyLoad load = load_topology_file(options.topology_path);
  if (!load.problems.empty() || !load.topology) {
    std::fprintf(stderr, "hapair node: the topology %s has %zu problem(s):\n", options.topology_path.c_str(),
                 load.problems.size());
    for (const std::string& problem : load.problems) std::fprintf(stderr, "  %s\n", problem.c_str());
    return 2;
  }
  options.plan = std::make_shared<const Plan>(make_plan(*load.topology));
  if (options.plan->coordinator != kNoNode) {
    // The coordinator writes the run's checkpoints durably; a restarted one reads them back.
    // Under local recovery every fragment's node keeps its snapshots' copies in its host's
    // directory beside the run's topology, where a replacement on the same host finds them.
    const std::filesystem::path run_dir = std::filesystem::path(options.topology_path).parent_path();
    if (checkpoint_dir.empty()) checkpoint_dir = (run_dir / "checkpoints").string();
    const bool coordinator = options.plan->node_id(options.node_name) == options.plan->coordinator;
    try {
      std::shared_ptr<CheckpointStore> store = coordinator ? std::shared_ptr<CheckpointStore>(std::make_shared<FileCheckpointStore>(checkpoint_dir))
                                                           : std::make_shared<MemoryCheckpointStore>();  // not used
      options.core_factory =
          run_node_cores(std::move(store), std::make_shared<FileLocalSnapshots>((run_dir / "local-snapshots").string()));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hapair node: the checkpoint store %s: %s\n", checkpoint_dir.c_str(), e.what());
      return 1;
    }
  }
  return run_node_process(options);
}

}  // namespace hapair::cli
