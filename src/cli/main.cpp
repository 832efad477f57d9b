// `hapair SUBCOMMAND [options]`: dispatches to the subcommands of commands.h.
#include <cstdio>
#include <cstring>
#include <string>

#include "protocols/version.h"
#include "cli/commands.h"

namespace {

struct Entry {
  const char* name;
  int (*fn)(const hapair::cli::Args&);
  const char* summary;
};

constexpr Entry kCommands[] = {
    {"compare", hapair::cli::compare_command, "every approach on the default network with the same crash (the main job)"},
    {"experiment", hapair::cli::experiment_command, "reproduce one of the paper's figures (or all): CSV, plot, claim check"},
    {"chaos", hapair::cli::chaos_command, "fault campaign: random networks and faults, every run checked (exit 1 on a violation)"},
    {"soak", hapair::cli::soak_command, "repeat runs per approach: count false detections; with --victim, detection/recovery distributions"},
    {"run", hapair::cli::run_command, "run one configuration (default network) and report its metrics"},
    {"demo", hapair::cli::demo_command, "serve the teaching demo on a local port: watch a failover live in a browser"},
    {"plan", hapair::cli::plan_command, "place every node on the hosts of a hosts file and print where each runs (runs nothing)"},
    {"node", hapair::cli::node_command, "run one node process (for launchers and multi-host runs)"},
    {"bench", hapair::cli::bench_command, "one-hop throughput of hapair against raw ZeroMQ"},
};

void usage(std::FILE* out) {
  std::fprintf(out, "usage: hapair SUBCOMMAND [options]   (hapair SUBCOMMAND --help for its options)\n\n");
  for (const auto& e : kCommands) std::fprintf(out, "  %-10s %s\n", e.name, e.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("hapair %s\n", hapair::version_string());
    return 0;
  }
  hapair::cli::Args args(argv + 2, argv + argc);
  for (const auto& e : kCommands)
    if (argv[1] == std::string(e.name)) return e.fn(args);
  std::fprintf(stderr, "hapair: unknown subcommand '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
