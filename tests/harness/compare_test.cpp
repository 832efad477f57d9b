// `hapair compare`, the main job (harness/compare.h), in the simulator: every approach on the
// built-in default network with the same SIGKILL, checked against the failure-free reference;
// the table, compare.csv, compare.txt, config.ini and the plot are written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/compare.h"
#include "harness/topology_file.h"

using namespace hapair;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const CompareRow& row_of(const CompareReport& r, const std::string& approach) {
  for (const auto& row : r.rows)
    if (row.approach == approach) return row;
  FAIL("no row for " << approach);
  return r.rows.front();
}

}  // namespace

TEST_CASE("compare runs every approach with the same crash and measures what each one claims", "[compare]") {
  const std::string dir = (std::filesystem::temp_directory_path() / "hapair_compare_test").string();
  std::filesystem::remove_all(dir);
  Topology t = default_topology();
  t.settings.duration_s = 2.0;
  t.settings.operator_cost_us_per_tuple = kCompareOperatorCostUs;
  CompareOptions o;
  o.driver = "sim";
  o.fail_at_s = 1.0;
  o.out_dir = dir;
  std::size_t runs_announced = 0;
  o.on_run = [&](std::size_t, std::size_t total, const std::string&) {
    ++runs_announced;
    CHECK(total == 6);
  };
  const CompareReport r = run_compare(t, o);

  CHECK(runs_announced == 6);  // the baseline and five approaches
  REQUIRE(r.rows.size() == 5);
  CHECK(r.baseline.semantics.verdict == "precise");
  CHECK(row_of(r, "none").outcome.semantics.verdict == "gap");
  // The none run stops at the crash (no standby): that is its row's result, not an error.
  CHECK(row_of(r, "none").guarantee.status == RunStatus::result);
  CHECK(row_of(r, "none").guarantee.stopped);
  CHECK(compare_note(row_of(r, "none").guarantee) == "stopped at the crash");
  CHECK(r.baseline_guarantee.status == RunStatus::result);
  for (const auto& row : r.rows) CHECK(row.guarantee.status == RunStatus::result);
  const CompareRow& amnesia = row_of(r, "amnesia");
  CHECK(amnesia.outcome.semantics.verdict == "gap");
  CHECK(amnesia.outcome.semantics.lost > 0);
  for (const char* precise : {"upstream", "passive", "active"}) {
    INFO(precise);
    const CompareRow& row = row_of(r, precise);
    CHECK(row.outcome.semantics.verdict == "precise");
    CHECK(row.outcome.semantics.lost == 0);
    CHECK(row.outcome.semantics.duplicates == 0);
    REQUIRE(row.outcome.metrics.recovery.has_value());
    REQUIRE(row.outcome.metrics.recovery->recovery_ms.has_value());
    REQUIRE(row.bandwidth_overhead_pct.has_value());
    CHECK(*row.bandwidth_overhead_pct > 0);
  }
  // The paper's order in the simulator (virtual time, deterministic): active standby recovers
  // first, passive standby replays the input since its last checkpoint, upstream backup rebuilds
  // the window; upstream backup sends the least extra, active standby the most.
  const double active_ms = *row_of(r, "active").outcome.metrics.recovery->recovery_ms;
  const double passive_ms = *row_of(r, "passive").outcome.metrics.recovery->recovery_ms;
  const double upstream_ms = *row_of(r, "upstream").outcome.metrics.recovery->recovery_ms;
  CHECK(active_ms < passive_ms);
  CHECK(passive_ms < upstream_ms);
  CHECK(*row_of(r, "upstream").bandwidth_overhead_pct < *row_of(r, "passive").bandwidth_overhead_pct);
  CHECK(*row_of(r, "passive").bandwidth_overhead_pct < *row_of(r, "active").bandwidth_overhead_pct);

  const std::string table = compare_table(r);
  CHECK(table.find("operator cost 100 us/tuple") != std::string::npos);
  for (const char* a : {"none", "amnesia", "upstream", "passive", "active"}) CHECK(table.find(a) != std::string::npos);
  const std::string csv = read_text(dir + "/compare.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 6);  // header and one row per approach
  CHECK(csv.rfind("approach,verdict,", 0) == 0);
  CHECK(read_text(dir + "/compare.txt") == table);
  CHECK(read_text(dir + "/config.ini").find("operator_cost_us_per_tuple = 100") != std::string::npos);
  CHECK(r.plot_error.empty());
  CHECK(std::filesystem::file_size(dir + "/compare.png") > 0);
}
