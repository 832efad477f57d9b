// Fuzz target: the topology file parser and validation (config/topology_file.h), through its
// public functions only, so the target holds whatever the file format is.
//
// Checks, beyond "no crash, no sanitizer report, no hang": a text is either a topology or a
// non-empty list of problems, never both; the plan of an accepted topology can be made; and the
// effective config written for an accepted topology (what the launcher hands every node
// process) parses back to the same topology.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/topology_file.h"
#include "protocols/plan.h"

#include "fuzz_check.h"

namespace {

void require(bool ok, const char* what) { hapair::fuzz::require(ok, "topology_fuzz", what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hapair;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const TopologyLoad load = parse_topology(text, "fuzz.topology");
  require(load.topology.has_value() == load.problems.empty(), "a topology with problems, or neither");
  for (const auto& problem : load.problems) require(!problem.empty(), "an empty problem message");
  if (!load.topology) return 0;
  const Plan plan = make_plan(*load.topology);
  require(!plan.nodes.empty(), "an accepted topology without nodes");

  const std::string effective = write_topology(*load.topology);
  const TopologyLoad again = parse_topology(effective, "fuzz.effective");
  if (!again.topology) {
    for (const auto& problem : again.problems) std::fprintf(stderr, "  %s\n", problem.c_str());
    require(false, "the effective config of an accepted topology does not parse");
  }
  Topology a = *load.topology;
  Topology b = *again.topology;
  // `where` and `source_file` name the text each came from; everything else must be equal.
  a.source_file = b.source_file = "";
  a.settings.where = b.settings.where = "";
  a.sim.where = b.sim.where = "";
  a.links.where = b.links.where = "";
  for (auto* t : {&a, &b})
    for (auto& l : t->links.links) l.where = "";
  for (auto* t : {&a, &b}) {
    for (auto& f : t->fragments) {
      f.where = "";
      for (auto& o : f.operators) o.where = "";
    }
  }
  require(a == b, "the effective config reads back as a different topology");
  require(write_topology(b) == effective, "writing the effective config is not stable");
  return 0;
}
