// The `hapair` subcommands. Each lives in its own file (<name>_command.cpp) and parses its own
// options with Boost.Program_options; main() only dispatches. Every subcommand supports --help.
#pragma once

#include <string>
#include <vector>

namespace hapair::cli {

using Args = std::vector<std::string>;  // the arguments after the subcommand name

int run_command(const Args& args);    // run one configuration, print/write its metrics
int demo_command(const Args& args);   // serve the teaching demo (docs/DEMO.md)
int node_command(const Args& args);   // run one node process (started by a launcher or by hand)
int bench_command(const Args& args);  // one-hop throughput against raw ZeroMQ
int compare_command(const Args& args);  // every approach on one network: the main job
int experiment_command(const Args& args);  // one reproduction experiment (or all): CSV, plot, claim check
int chaos_command(const Args& args);
int plan_command(const Args& args);   // where each node would run on the hosts of a hosts file
int soak_command(const Args& args);   // repeated runs per approach: false detections, detection/recovery distributions  // the fault campaign: random networks and fault schedules, each checked

}  // namespace hapair::cli
