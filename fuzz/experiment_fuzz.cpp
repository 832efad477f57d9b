// Fuzz target: the experiment file parser (config/experiment_config.h), through its public
// functions only, so the target holds whatever the file format is.
//
// Checks, beyond "no crash, no sanitizer report, no hang": a text is either a config or a
// non-empty list of problems, never both; and the [experiment] section written back for an
// accepted config, with the effective topology, parses back to the same section.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/experiment_config.h"
#include "config/topology_file.h"

#include "fuzz_check.h"

namespace {

void require(bool ok, const char* what) { hapair::fuzz::require(ok, "experiment_fuzz", what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hapair;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const ExperimentConfigLoad load = parse_experiment_config(text, "fuzz.experiment");
  require(load.config.has_value() == load.problems.empty(), "a config with problems, or neither");
  for (const auto& problem : load.problems) require(!problem.empty(), "an empty problem message");
  if (!load.config) return 0;

  const std::string written =
      write_experiment_section(load.config->experiment) + "\n" + write_topology(load.config->topology);
  const ExperimentConfigLoad again = parse_experiment_config(written, "fuzz.effective");
  if (!again.config) {
    for (const auto& problem : again.problems) std::fprintf(stderr, "  %s\n", problem.c_str());
    require(false, "the written config of an accepted experiment does not parse");
  }
  require(again.config->experiment == load.config->experiment,
          "the written [experiment] section reads back differently");
  // Every approach label and sweep an accepted config names must apply to its topology.
  for (const auto& label : load.config->experiment.approaches) {
    Topology t = load.config->topology;
    (void)apply_approach(t, label);
  }
  return 0;
}
