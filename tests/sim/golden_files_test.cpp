// The simulator's result files, byte for byte, against copies committed before a refactor of the
// role cores (issue 15): for every approach, the default network with a crash of the aggregate
// at 2 s and a fixed seed. The simulator is deterministic per seed, so any difference is a change
// of behaviour (or of a file format) and must be explained, then the goldens regenerated with
//   HAPAIR_UPDATE_GOLDEN=1 build/tests/test_sim "the simulator writes the golden result files*"
// The version field of summary.json names the commit and is masked on both sides.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "run/run_once.h"
#include "config/topology_file.h"
#include "protocols/plan.h"
#include "protocols/topology.h"

namespace hapair {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// summary.json names the version (project version + git commit): the same run at another commit.
std::string mask_version(std::string text) {
  const std::string key = "\"version\": \"";
  const auto at = text.find(key);
  if (at == std::string::npos) return text;
  const auto end = text.find('"', at + key.size());
  if (end == std::string::npos) return text;
  return text.replace(at + key.size(), end - at - key.size(), "VERSION");
}

// Empty when equal; otherwise the first line where they part, from both sides.
std::string first_difference(const std::string& written, const std::string& golden) {
  std::istringstream a(written), b(golden);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return written == golden ? "" : "trailing bytes differ";
    if (!more_a || !more_b || la != lb)
      return "line " + std::to_string(line) + ": written '" + (more_a ? la : "<end>") + "', golden '" +
             (more_b ? lb : "<end>") + "'";
  }
}

// The files the simulator writes identically for the same seed (every file write_results()
// writes; a run of the default network writes no merge_order.csv).
const std::vector<std::string> kGoldenFiles = {"summary.json", "output.csv", "events.csv", "trace.jsonl", "metrics.csv",
                                               "config.toml"};

// The default network at 500 tuples/s under `ha` for `duration_s` with `seed`.
Topology default_with(HaMode ha, double duration_s, std::uint64_t seed) {
  Topology topology = default_topology();
  RunOverrides o;
  o.ha = ha;
  o.duration_s = duration_s;
  o.rate_tps = 500;
  o.seed = seed;
  REQUIRE(apply_overrides(topology, o).empty());
  return topology;
}

// One simulated run with a crash ("node@seconds"), its result files written into `out_dir`.
void run_simulated(const Topology& topology, const std::string& crash_text, const fs::path& out_dir) {
  auto plan = std::make_shared<const Plan>(make_plan(topology));
  RunRequest request;
  request.driver = "sim";
  std::string error;
  auto crash = parse_crash_fault(crash_text, error);
  REQUIRE(crash);
  request.faults.push_back(*crash);
  request.out_dir = out_dir.string();
  const RunOutcome outcome = run_once(plan, request, compute_reference(*plan));
  REQUIRE(outcome.write_error.empty());
}

TEST_CASE("the simulator writes the golden result files for every approach with a crash", "[sim][golden]") {
  const bool update = std::getenv("HAPAIR_UPDATE_GOLDEN") != nullptr;
  const fs::path golden_root = fs::path(HAPAIR_SOURCE_DIR) / "tests" / "sim" / "golden";
  const fs::path scratch = fs::temp_directory_path() / ("hapair-golden-" + std::to_string(::getpid()));
  for (const char* ha : {"none", "amnesia", "upstream", "passive", "active"}) {
    DYNAMIC_SECTION("ha " << ha) {
      const Topology topology = default_with(*parse_ha_mode(ha), 3, 7);
      run_simulated(topology, "aggregate@2", scratch / ha);
      for (const std::string& name : kGoldenFiles) {
        INFO("ha=" << ha << " file=" << name);
        const std::string written = mask_version(read_text(scratch / ha / name));
        REQUIRE_FALSE(written.empty());
        const fs::path golden = golden_root / ha / name;
        if (update) write_text(golden, written);
        REQUIRE(fs::exists(golden));
        CHECK(first_difference(written, read_text(golden)) == "");
      }
    }
  }
  fs::remove_all(scratch);
}

// What `hapair run --topology DIR/config.toml` reads: the effective config written beside the
// results is a topology file, and running it again gives the same output.
TEST_CASE("the config.toml written beside a run's results reads back as its topology and runs the same", "[sim][golden]") {
  const fs::path scratch = fs::temp_directory_path() / ("hapair-config-" + std::to_string(::getpid()));
  Topology topology = default_with(HaMode::passive, 2, 11);
  topology.fragments[1].standby_endpoint = "tcp://127.0.0.1:*";  // a non-default string survives too
  auto run = [&](const Topology& t, const std::string& dir) {
    run_simulated(t, "filter@1", scratch / dir);
    return read_text(scratch / dir / "output.csv");
  };
  const std::string first = run(topology, "first");
  const std::string config = (scratch / "first" / "config.toml").string();
  const TopologyLoad load = load_topology_file(config);
  INFO((load.problems.empty() ? std::string() : load.problems.front()));
  REQUIRE(load.topology);
  CHECK(load.topology->source_file == config);
  CHECK(write_topology(*load.topology) == read_text(config));
  Topology back = *load.topology;
  back.source_file = topology.source_file;
  back.settings.where = topology.settings.where;
  back.sim.where = topology.sim.where;
  back.links.where = topology.links.where;
  for (std::size_t i = 0; i < back.fragments.size(); ++i) {
    back.fragments[i].where = topology.fragments[i].where;
    for (std::size_t j = 0; j < back.fragments[i].operators.size(); ++j)
      back.fragments[i].operators[j].where = topology.fragments[i].operators[j].where;
  }
  CHECK(back == topology);
  CHECK(run(*load.topology, "again") == first);
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace hapair
