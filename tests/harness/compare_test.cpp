// `hapair compare`, the main job (campaigns/compare.h), in the simulator: every approach on the
// built-in default network, repeated in interleaved order, failure-free runs for the overhead and
// runs with the same SIGKILL for recovery, medians with their spread; a disturbed run is run
// again or left out of the medians, and the report says which. The table, compare.csv,
// compare_runs.csv, compare.txt, config.toml and the plot are written.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "campaigns/compare.h"
#include "campaigns/fidelity.h"
#include "config/topology_file.h"
#include "support/trace_read.h"

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

Topology short_default() {
  Topology t = default_topology();
  t.settings.duration_s = 2.0;
  t.settings.operator_cost_us_per_tuple = kCompareOperatorCostUs;
  return t;
}

CompareOptions compare_sim_options() {
  CompareOptions o;
  o.driver = "sim";
  o.fail_at_s = 1.0;
  o.failure_free_duration_s = 1.5;
  o.cores = 2;
  return o;
}

// A takeover before the failure, as a false detection on a loaded machine gives.
void disturb(RunOutcome& o) {
  const NodeId backup = o.result.plan->node_id("aggregate.backup");
  o.result.events.insert(o.result.events.begin(), trace_event(o.result.plan.get(), 500000, backup, "takeover", "ha=passive"));
}

}  // namespace

TEST_CASE("compare repeats every approach in interleaved order and reports medians and spread", "[compare]") {
  const std::string dir = (std::filesystem::temp_directory_path() / ("hapair_compare_test-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  CompareOptions o = compare_sim_options();
  o.out_dir = dir;
  std::size_t runs_announced = 0;
  o.on_run = [&](std::size_t i, std::size_t total, const std::string&) {
    CHECK(i == runs_announced);
    ++runs_announced;
    CHECK(total == 40);
  };
  const CompareReport r = run_compare(short_default(), o);

  // 3 repetitions of 7 failure-free runs (none is the baseline) and 6 crash runs, plus none's
  // crash run in the first.
  CHECK(runs_announced == 40);
  REQUIRE(r.runs.size() == 40);
  std::vector<std::tuple<std::size_t, bool, std::string>> expected;
  const std::vector<std::string> order = {"none", "amnesia", "upstream", "passive", "active", "hybrid", "checkpoint"};
  for (std::size_t rep = 1; rep <= 3; ++rep) {
    for (const auto& a : order) expected.emplace_back(rep, false, a);
    for (const auto& a : order)
      if (a != "none" || rep == 1) expected.emplace_back(rep, true, a);
  }
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const CompareRun& run = r.runs[i];
    INFO("run " << i << ": " << run.label());
    CHECK(run.repetition == std::get<0>(expected[i]));
    CHECK(run.failure == std::get<1>(expected[i]));
    CHECK(run.approach == std::get<2>(expected[i]));
    CHECK(run.attempt == 0);
    CHECK(run.used);
    CHECK_FALSE(run.disturbed);
    CHECK(run.outcome.result.faults.size() == (run.failure ? 1u : 0u));
    // Failure-free runs are the shorter ones.
    CHECK(run.outcome.result.plan->settings().duration_s == (run.failure ? 2.0 : 1.5));
  }
  REQUIRE(r.rows.size() == 7);
  CHECK(r.disturbed_notes.empty());

  // The none row: its stop (gap, lost output) and no overhead.
  const CompareRow& none = row_of(r, "none");
  CHECK(none.crash_runs == 1);
  CHECK(none.failure_free_runs == 3);
  CHECK(none.excluded == 0);
  CHECK(none.verdict == "gap");
  CHECK(none.lost.count == 1);
  CHECK(none.lost.median > 0);
  CHECK(none.bandwidth_overhead_pct.count == 0);
  CHECK(none.cpu_overhead_pct.count == 0);
  CHECK(none.added_latency_p99_ms.count == 0);
  // The none run stops at the crash (no standby): that is its row's result, not an error.
  CHECK(none.note == "stopped at the crash");
  for (const auto& run : r.runs) {
    INFO(run.label());
    CHECK(run.guarantee.status == RunStatus::result);
    CHECK(run.guarantee.stopped == (run.approach == "none" && run.failure));
  }
  CHECK(compare_note(r.runs[7].guarantee) == "stopped at the crash");  // none's crash run

  CHECK(row_of(r, "amnesia").verdict == "gap");
  for (const char* precise : {"upstream", "passive", "active", "hybrid", "checkpoint"}) {
    INFO(precise);
    const CompareRow& row = row_of(r, precise);
    CHECK(row.verdict == "precise");
    CHECK(row.lost.median == 0);
    CHECK(row.crash_runs == 3);
    CHECK(row.failure_free_runs == 3);
    REQUIRE(row.recovery_ms.count == 3);
    // The simulator is deterministic: the same seed gives the same run each repetition.
    CHECK(row.recovery_ms.min == row.recovery_ms.max);
    CHECK(row.detector == "connection");  // the default detector finds a crash from the closed connection
    REQUIRE(row.bandwidth_overhead_pct.count == 3);
    CHECK(row.bandwidth_overhead_pct.median > 0);
  }

  // Overheads come from the failure-free runs (no recovery traffic), against none's failure-free
  // run of the same repetition.
  auto run_at = [&](const std::string& approach, bool failure, std::size_t rep) -> const CompareRun& {
    for (const auto& run : r.runs)
      if (run.approach == approach && run.failure == failure && run.repetition == rep) return run;
    FAIL("no run");
    return r.runs.front();
  };
  const double base_bytes = static_cast<double>(run_at("none", false, 1).outcome.metrics.overhead.bytes_total);
  const double active_bytes = static_cast<double>(run_at("active", false, 1).outcome.metrics.overhead.bytes_total);
  CHECK(row_of(r, "active").bandwidth_overhead_pct.median == Approx(100.0 * (active_bytes - base_bytes) / base_bytes));

  // The paper's order in the simulator: active standby recovers first, passive standby replays
  // the input since its last checkpoint, upstream backup rebuilds the window; upstream backup
  // sends less extra during normal operation than passive standby, whose standby does not
  // process, so active standby costs the most CPU. (With the aggregate sliding every 5 ms its
  // checkpoints, which carry the retained output, outweigh active standby's second input copy in
  // bytes.)
  CHECK(row_of(r, "active").recovery_ms.median < row_of(r, "passive").recovery_ms.median);
  CHECK(row_of(r, "passive").recovery_ms.median < row_of(r, "upstream").recovery_ms.median);
  CHECK(row_of(r, "upstream").bandwidth_overhead_pct.median < row_of(r, "passive").bandwidth_overhead_pct.median);
  CHECK(row_of(r, "passive").cpu_overhead_pct.median < row_of(r, "active").cpu_overhead_pct.median);
  // Active standby's standby processes every tuple too: twice the planned load.
  CHECK(row_of(r, "active").load.utilisation_pct == Approx(2 * row_of(r, "passive").load.utilisation_pct));

  const std::string table = compare_table(r);
  INFO(table);
  CHECK(table.find("operator cost 100 us/tuple; 3 repetitions in interleaved order") != std::string::npos);
  CHECK(table.find("planned CPU load of 2 cores: none ") != std::string::npos);
  CHECK(table.find("(the baseline)") != std::string::npos);
  CHECK(table.find("no run was disturbed") != std::string::npos);
  CHECK(table.find("none crash run, repetition 1: outcome: the output stopped at the failure") != std::string::npos);
  for (const char* a : {"none", "amnesia", "upstream", "passive", "active", "hybrid", "checkpoint"})
    CHECK(table.find(a) != std::string::npos);
  const std::string csv = read_text(dir + "/compare.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 8);  // header and one row per approach
  CHECK(csv.rfind("approach,crash_runs,failure_free_runs,disturbed,reruns,excluded,verdict,", 0) == 0);
  CHECK(csv.find("recovery_ms_median,recovery_ms_min,recovery_ms_max") != std::string::npos);
  const std::string runs_csv = read_text(dir + "/compare_runs.csv");
  CHECK(std::count(runs_csv.begin(), runs_csv.end(), '\n') == 41);
  CHECK(read_text(dir + "/compare.txt") == table);
  CHECK(read_text(dir + "/config.toml").find("operator_cost_us_per_tuple = 100") != std::string::npos);
  CHECK(std::filesystem::exists(dir + "/active_crash_rep3/summary.json"));
  CHECK(r.plot_error.empty());
  CHECK(std::filesystem::file_size(dir + "/compare.png") > 0);
}

TEST_CASE("compare runs a disturbed run again, and leaves out one disturbed on every attempt", "[compare]") {
  CompareOptions o = compare_sim_options();
  o.approaches = {HaMode::none, HaMode::passive, HaMode::active};
  // Active's crash run of repetition 2 is disturbed once (its rerun is clean); passive's
  // failure-free run of repetition 3 on every attempt.
  o.tamper = [](const CompareRun& run, RunOutcome& outcome) {
    if (run.approach == "active" && run.failure && run.repetition == 2 && run.attempt == 0) disturb(outcome);
    if (run.approach == "passive" && !run.failure && run.repetition == 3) disturb(outcome);
  };
  const CompareReport r = run_compare(short_default(), o);
  // 3 x (3 failure-free + 2 crash) runs and none's crash run, one rerun of active, two of passive.
  REQUIRE(r.runs.size() == 16 + 1 + 2);

  const CompareRow& active = row_of(r, "active");
  CHECK(active.crash_runs == 3);  // the rerun stands in for the disturbed run
  CHECK(active.disturbed == 1);
  CHECK(active.reruns == 1);
  CHECK(active.excluded == 0);
  CHECK(active.recovery_ms.count == 3);
  const CompareRow& passive = row_of(r, "passive");
  CHECK(passive.failure_free_runs == 2);  // left out of the overhead medians
  CHECK(passive.bandwidth_overhead_pct.count == 2);
  CHECK(passive.disturbed == 3);
  CHECK(passive.reruns == 2);
  CHECK(passive.excluded == 1);
  CHECK(passive.crash_runs == 3);

  std::size_t unused = 0;
  for (const auto& run : r.runs) {
    unused += !run.used;
    if (run.disturbed) CHECK(run.disturbance.find("1 takeover") != std::string::npos);
  }
  CHECK(unused == 4);  // active's first attempt, passive's three

  const std::string table = compare_table(r);
  INFO(table);
  // The SIGKILL then hit the old primary, by then the standby: named too.
  CHECK(table.find("active crash run, repetition 2: aggregate was the standby (planned: primary) at its crash at "
                   "1.00 s: aggregate.backup took over at 0.50 s; 1 takeover before the failure (aggregate.backup at "
                   "0.50 s); run again") != std::string::npos);
  CHECK(table.find("active crash run, repetition 2, rerun 1: undisturbed, used") != std::string::npos);
  CHECK(table.find("passive failure-free run, repetition 3, rerun 2: 1 takeover in a failure-free run "
                   "(aggregate.backup at 0.50 s); disturbed on every attempt, left out of the medians") !=
        std::string::npos);
  const std::string runs_csv = compare_runs_csv(r);
  CHECK(runs_csv.find("active,crash,2,1,1,0,") != std::string::npos);  // the rerun, used, undisturbed
}

TEST_CASE("hapair compare prints the tables, the disturbed runs and how long it took, and refuses bad counts",
          "[compare]") {
  const auto dir = std::filesystem::temp_directory_path() / ("hapair-compare-test-cli-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string bin = HAPAIR_BINARY;
  const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
  int status = std::system((bin + " compare --driver sim --repeat 2 --approaches none,active --duration-s 2 "
                                  "--fail-at-s 1 --failure-free-duration-s 1 --out " +
                            (dir / "out").string() + " >" + out + " 2>" + err)
                               .c_str());
  REQUIRE(WIFEXITED(status));
  const std::string text = read_text(out);
  INFO(text << read_text(err));
  CHECK(text.find("2 repetitions in interleaved order") != std::string::npos);
  CHECK(text.find("runtime overhead during normal operation") != std::string::npos);
  CHECK(text.find("no run was disturbed") != std::string::npos);
  CHECK(text.find("took 0 min ") != std::string::npos);
  CHECK(text.find("(7 runs)") != std::string::npos);  // 2 x (2 failure-free + active's crash) + none's crash
  CHECK(read_text(err).find("[7/7] repetition 2/2: active (SIGKILL aggregate at 1.0 s)") != std::string::npos);
  for (const char* bad : {"--repeat 0", "--repeat -1", "--reruns -1", "--repeat 101"}) {
    INFO(bad);
    status = std::system((bin + " compare --driver sim " + bad + " >" + out + " 2>" + err).c_str());
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(read_text(err).find(std::string(bad).substr(0, std::string(bad).find(' '))) != std::string::npos);
    CHECK(read_text(err).find("must be a whole number from") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare with vary_seed runs repetition r on seed + r - 1, so the simulator's repetitions differ and its spread means something",
          "[compare]") {
  CompareOptions o = compare_sim_options();
  o.approaches = {HaMode::passive};
  o.repeat = 3;
  o.vary_seed = true;
  Topology t = short_default();
  t.settings.seed = 40;
  const CompareReport r = run_compare(t, o);
  std::set<std::uint64_t> seeds;
  for (const CompareRun& run : r.runs) {
    INFO(run.label());
    CHECK(run.outcome.result.plan->settings().seed == 40 + run.repetition - 1);
    seeds.insert(run.outcome.result.plan->settings().seed);
    // Each run judged against the reference of its own seed: precise.
    if (run.approach == "passive" && run.failure) CHECK(run.outcome.semantics.verdict == "precise");
  }
  CHECK(seeds == std::set<std::uint64_t>{40, 41, 42});
  const CompareRow& passive = row_of(r, "passive");
  REQUIRE(passive.recovery_ms.count == 3);
  CHECK(passive.recovery_ms.min < passive.recovery_ms.max);  // different inputs, different recoveries
  CHECK_THAT(compare_table(r), Catch::Contains("seeds 40..42 (one per repetition)"));
  // Without it every repetition repeats the topology's seed (and the simulator the run).
  o.vary_seed = false;
  const CompareReport same = run_compare(t, o);
  CHECK(row_of(same, "passive").recovery_ms.min == row_of(same, "passive").recovery_ms.max);
}

TEST_CASE("fidelity rows put the simulator's median beside the real one, within 20 percent or 0.5 ms for times and 3 points for overheads",
          "[compare]") {
  auto spread = [](double median, std::size_t count = 3) {
    CompareSpread s;
    s.median = s.min = s.max = median;
    s.count = count;
    return s;
  };
  CompareRow sim_row, real_row;
  sim_row.approach = real_row.approach = "passive";
  sim_row.detection_ms = spread(0.1);
  real_row.detection_ms = spread(0.5);      // 0.4 ms off: within the 0.5 ms floor
  sim_row.recovery_ms = spread(18.0);
  real_row.recovery_ms = spread(21.0);      // 3 ms off, allowed 4.2: within
  sim_row.catchup_ms = spread(10.0);
  real_row.catchup_ms = spread(20.0);       // 10 ms off, allowed 4: outside
  sim_row.bandwidth_overhead_pct = spread(39.0);
  real_row.bandwidth_overhead_pct = spread(24.0);  // 15 points: outside
  sim_row.cpu_overhead_pct = spread(1.0);
  real_row.cpu_overhead_pct = spread(0.0, 0);      // the real side did not measure it
  CompareRow none;
  none.approach = "none";
  CompareReport sim, real;
  sim.rows = {none, sim_row};
  real.rows = {none, real_row};
  const std::vector<FidelityRow> rows = fidelity_rows(sim, real);
  REQUIRE(rows.size() == 5);  // none is the baseline: no row
  std::map<std::string, FidelityRow> by_figure;
  for (const FidelityRow& row : rows) by_figure[row.figure] = row;
  CHECK(by_figure.at("detection_ms").verdict == "within");
  CHECK(by_figure.at("detection_ms").allowed == Approx(0.5));
  CHECK(by_figure.at("recovery_ms").verdict == "within");
  CHECK(by_figure.at("recovery_ms").difference == Approx(-3.0));
  CHECK(by_figure.at("recovery_ms").allowed == Approx(4.2));
  CHECK(by_figure.at("catchup_ms").verdict == "outside");
  CHECK(by_figure.at("bandwidth_overhead_pct").verdict == "outside");
  CHECK(by_figure.at("bandwidth_overhead_pct").allowed == Approx(3.0));
  CHECK(by_figure.at("cpu_overhead_pct").verdict == "not measured");
  CHECK_THAT(fidelity_table(rows), Catch::Contains("fidelity: 2 within the goal, 2 outside, 1 not measured"));
  const std::string csv = fidelity_csv(rows);
  CHECK_THAT(csv, Catch::StartsWith("approach,figure,sim_median,"));
  CHECK_THAT(csv, Catch::Contains("passive,recovery_ms,18.000,18.000,18.000,3,21.000,21.000,21.000,3,-3.000,4.200,within\n"));
  CHECK_THAT(csv, Catch::Contains("passive,cpu_overhead_pct,1.000,1.000,1.000,3,,,,0,,3.000,not measured\n"));
}
