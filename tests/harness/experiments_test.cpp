// The reproduction experiments (campaigns/experiments.h): (every experiment's quick version is
// tests/sweeps/quick_experiments_test.cpp, in the Release build) the experiment config format; the claim checks on hand-made rows (they hold and differ when they should, with
// the numbers); identical runs are shared; the `hapair experiment` command.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "protocols/version.h"
#include "config/experiment_config.h"
#include "campaigns/experiments.h"
#include "support/experiment_files.h"
#include "config/topology_file.h"

using namespace hapair;
using namespace hapair::testing;

namespace {


struct ExperimentCommand {
  int status = -1;
  std::string out;
};

ExperimentCommand run_command(const std::string& command) {
  ExperimentCommand c;
  FILE* p = popen((command + " 2>/dev/null").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) c.out.append(buf.data(), n);
  const int status = pclose(p);
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

// A row of a failure run for the claim checks.
ExperimentRow row(const std::string& approach, const std::string& sweep, double x, double recovery_ms,
                  std::uint64_t seed = 1) {
  ExperimentRow r;
  r.approach = approach;
  r.sweep = sweep;
  r.x = x;
  r.seed = seed;
  r.failure = true;
  r.verdict = "precise";
  r.detection_ms = 25.0;
  r.recovery_ms = recovery_ms;
  return r;
}

// Rows in which every part of the recovery_vs_interval claim holds: active flat and shortest,
// passive growing, upstream a little slower than passive, amnesia short and lossy.
std::vector<ExperimentRow> interval_rows(double passive_at_1000_ms) {
  std::vector<ExperimentRow> rows;
  for (double x : {50.0, 1000.0}) {
    rows.push_back(row("active", "interval_ms", x, 26.0));
    rows.push_back(row("passive", "interval_ms", x, x == 50.0 ? 30.0 : passive_at_1000_ms));
    rows.push_back(row("upstream", "interval_ms", x, x == 50.0 ? 35.0 : passive_at_1000_ms + 10.0));
    ExperimentRow a = row("amnesia", "interval_ms", x, 27.0);
    a.lost = 40;
    a.verdict = "gap";
    rows.push_back(a);
  }
  return rows;
}

}  // namespace

TEST_CASE("the semantics experiment writes its Markdown table with one row per approach", "[experiments]") {
  const std::string out = experiment_temp_dir("semantics");
  RunCache cache;
  ExperimentReport report = run_experiment("semantics_table", quick_options(out), cache);
  REQUIRE(report.problems.empty());
  const std::string md = read_text(out + "/semantics_table.md");
  for (const std::string a : {"amnesia", "upstream", "passive", "active", "active_nodet"}) CHECK(md.find("| " + a + " |") != std::string::npos);
  for (const std::string n : {"chain (repeatable)", "default (convergent-capable)", "join (deterministic)", "union (arbitrary)"})
    CHECK(md.find(n) != std::string::npos);
}

TEST_CASE("an experiment run again with the same cache reuses every run instead of running it again", "[experiments]") {
  RunCache cache;
  ExperimentReport first = run_experiment("recovery_breakdown", quick_options(experiment_temp_dir("reuse1")), cache);
  REQUIRE(first.problems.empty());
  CHECK(first.reused_runs == 0);
  ExperimentReport again = run_experiment("recovery_breakdown", quick_options(experiment_temp_dir("reuse2")), cache);
  CHECK(again.reused_runs == again.runs);
  CHECK(experiment_csv(again.rows).size() > 0);
  // Reused runs give the same rows, apart from where their result folders were written.
  REQUIRE(first.rows.size() == again.rows.size());
  for (std::size_t i = 0; i < first.rows.size(); ++i) CHECK(first.rows[i].recovery_ms == again.rows[i].recovery_ms);
}

TEST_CASE("each seed's runs fail at one instant from fail_at_s to fail_at_s + fail_spread_s, whatever the approach",
          "[experiments]") {
  ExperimentOptions o = quick_options(experiment_temp_dir("instants"));
  o.seeds = 3;
  RunCache cache;
  ExperimentReport report = run_experiment("recovery_breakdown", o, cache);
  REQUIRE(report.problems.empty());
  std::map<std::uint64_t, std::set<double>> instants;
  for (const ExperimentRow& r : report.rows) instants[r.seed].insert(r.fail_at_s);
  REQUIRE(instants.size() == 3);
  std::set<double> distinct;
  for (const auto& [seed, at] : instants) {
    CHECK(at.size() == 1);
    CHECK(*at.begin() >= 0.5);
    CHECK(*at.begin() < 1.0);
    distinct.insert(*at.begin());
  }
  CHECK(distinct.size() == 3);
}

TEST_CASE("every experiment folder's experiment.toml lists every knob of its networks explicitly", "[experiments]") {
  for (const ExperimentInfo& info : experiment_infos()) {
    const std::string path = std::string(HAPAIR_SOURCE_DIR) + "/experiments/" + info.name + "/experiment.toml";
    ExperimentConfigLoad load = load_experiment_config(path);
    INFO(path << ": " << (load.problems.empty() ? "" : load.problems.front()));
    REQUIRE(load.config);
    std::vector<std::string> files = {path};
    for (const ExperimentNetwork& n : load.config->experiment.networks)
      files.push_back(std::filesystem::path(path).parent_path().string() + "/" + n.file);
    for (const std::string& file : files) {
      ExperimentConfigLoad net = load_experiment_config(file);
      REQUIRE(net.config);
      // Every (table, key) that write_topology() writes must be in the file, uncommented; a
      // [[source]], [[fragment]], [[fragment.operator]] or [[sink]] table is told apart by its
      // name, its first key.
      auto keys = [](const std::string& text) {
        std::set<std::string> out;
        std::string table;
        for (std::string line : lines_of(text)) {
          if (line.empty() || line[0] == '#') continue;
          if (line[0] == '[') {
            table = line.substr(0, line.find(']') + (line.rfind("[[", 0) == 0 ? 2 : 1));
            continue;
          }
          const auto eq = line.find('=');
          if (eq == std::string::npos || table == "[experiment]") continue;
          const std::string key = line.substr(0, line.find_last_not_of(" ", eq - 1) + 1);
          out.insert(table + " " + key);
          if (key == "name") {
            std::string value = line.substr(eq + 1, line.find('#') == std::string::npos ? std::string::npos : line.find('#') - eq - 1);
            table += " " + value.substr(0, value.find_last_not_of(' ') + 1);
          }
        }
        return out;
      };
      const std::set<std::string> written = keys(write_topology(net.config->topology));
      const std::set<std::string> listed = keys(read_text(file));
      for (const std::string& k : written) {
        INFO(file << " lacks " << k);
        CHECK(listed.count(k) == 1);
      }
    }
  }
}

TEST_CASE("an experiment config reads its experiment section and reports problems at their file and line",
          "[experiments]") {
  const std::string topology = write_topology(default_topology());
  SECTION("the table's keys are read; the topology beside it is the network") {
    ExperimentConfigLoad load = parse_experiment_config(
        "[experiment]\napproaches = [\"passive\", \"active\"]\nsweeps = [\"interval_ms\"]\ninterval_ms_points = [50, 200]\n"
        "seeds = 2\nvictim = \"aggregate\"\nfail_at_s = 1.5\nfail_spread_s = 0.5\n"
        "networks = [{ file = \"join.toml\", victim = \"join\" }]\n\n" + topology, "x.toml");
    INFO((load.problems.empty() ? "" : load.problems.front()));
    REQUIRE(load.config);
    const ExperimentSection& s = load.config->experiment;
    CHECK(s.approaches == std::vector<std::string>{"passive", "active"});
    CHECK(s.points.at("interval_ms") == std::vector<double>{50, 200});
    CHECK(s.quick_points.at("interval_ms") == std::vector<double>{50, 200});  // first and last by default
    CHECK(s.seeds == 2);
    CHECK(s.victim == "aggregate");
    CHECK(s.fail_at_s == 1.5);
    CHECK(s.fail_spread_s == 0.5);
    CHECK(s.networks == std::vector<ExperimentNetwork>{{"join.toml", "join"}});
    CHECK(write_topology(load.config->topology) == write_topology(*parse_topology(topology, "x.toml").topology));
    // Written back, it reads the same.
    ExperimentConfigLoad again = parse_experiment_config(write_experiment_section(s) + topology, "y.toml");
    INFO((again.problems.empty() ? "" : again.problems.front()));
    REQUIRE(again.config);
    CHECK(again.config->experiment == s);
  }
  SECTION("every problem of the table is reported with its line") {
    ExperimentConfigLoad load = parse_experiment_config(
        "[experiment]\napproaches = [\"passive\", \"sometimes\"]\nsweeps = [\"moon_phase\"]\ncolour = \"red\"\n"
        "seeds = 0\nvictim = 3\nfail_at_s = -1\nnetworks = [\"chain.toml@filter\"]\nwindow_ms_points = [1]\n" + topology,
        "x.toml");
    CHECK_FALSE(load.config);
    std::string all;
    for (const auto& p : load.problems) all += p + "\n";
    INFO(all);
    CHECK(all.find("x.toml:2: [experiment]: unknown approach 'sometimes'") != std::string::npos);
    CHECK(all.find("x.toml:3: [experiment]: unknown sweep 'moon_phase'") != std::string::npos);
    CHECK(all.find("x.toml:4: [experiment]: unknown key 'colour'") != std::string::npos);
    CHECK(all.find("x.toml:5: [experiment]: seeds must be a whole number from 1 to 100, got 0") != std::string::npos);
    CHECK(all.find("x.toml:6: [experiment]: victim must be a node name in quotes") != std::string::npos);
    CHECK(all.find("x.toml:7: [experiment]: fail_at_s must be a positive number of seconds, got -1") != std::string::npos);
    CHECK(all.find("x.toml:8: [experiment]: networks must be a list of {file = \"FILE\", victim = \"NODE\"}") !=
          std::string::npos);
    CHECK(all.find("x.toml:9: [experiment]: unknown key 'window_ms_points'") != std::string::npos);
    // In the order of their lines.
    CHECK(load.problems.at(0).rfind("x.toml:2:", 0) == 0);
    CHECK(load.problems.at(1).rfind("x.toml:3:", 0) == 0);
  }
  SECTION("values of the wrong type name what was expected") {
    ExperimentConfigLoad load = parse_experiment_config(
        "[experiment]\napproaches = \"passive\"\nsweeps = [\"interval_ms\"]\ninterval_ms_points = [50, \"x\"]\n" + topology,
        "x.toml");
    std::string all;
    for (const auto& p : load.problems) all += p + "\n";
    INFO(all);
    CHECK(all.find("x.toml:2: [experiment]: approaches must be a list of names in quotes, like [\"passive\", \"active\"]") !=
          std::string::npos);
    CHECK(all.find("x.toml:4: [experiment]: \"x\" in interval_ms_points is not a number") != std::string::npos);
  }
  SECTION("a topology problem beside the table keeps its line number") {
    ExperimentConfigLoad load =
        parse_experiment_config("[experiment]\nseeds = 2\n\n[network]\nduration_s = 4\ncolour = \"red\"\n", "x.toml");
    CHECK_FALSE(load.config);
    bool found = false;
    for (const auto& p : load.problems) {
      UNSCOPED_INFO(p);
      found = found || p.find("x.toml:6: unknown key 'colour'") != std::string::npos;
    }
    CHECK(found);
  }
  SECTION("a TOML syntax error is reported with its line") {
    ExperimentConfigLoad load = parse_experiment_config("[experiment]\nseeds = 2\nseeds = 3\n", "x.toml");
    REQUIRE(load.problems.size() == 1);
    CHECK(load.problems[0].rfind("x.toml:3: not valid TOML: ", 0) == 0);
  }
  SECTION("a failure after the end of the run is rejected") {
    ExperimentConfigLoad load = parse_experiment_config("[experiment]\nfail_at_s = 5\nfail_spread_s = 2\n" + topology, "x.toml");
    CHECK_FALSE(load.config);
  }
}

TEST_CASE("sweeps set their knobs and refuse values the network cannot take", "[experiments]") {
  Topology t = default_topology();
  CHECK(apply_sweep(t, "interval_ms", 250) == "");
  CHECK(t.settings.checkpoint_interval_ms == 250);
  CHECK(t.settings.ack_interval_ms == 250);
  CHECK(apply_sweep(t, "window_ms", 800) == "");
  CHECK(t.fragments[2].operators[0].window_ms == 800);
  CHECK(apply_sweep(t, "window_ms", 810).find("not a multiple of sum_per_key's slide_ms (20)") != std::string::npos);
  CHECK(apply_sweep(t, "interval_ms", 2.5).find("whole number") != std::string::npos);
  CHECK(apply_sweep(t, "rate_tps", 4000) == "");
  CHECK(t.fragments[0].source.rate_tps == 4000);
  CHECK(apply_approach(t, "active_nodet") == "");
  CHECK(t.settings.ha == HaMode::active);
  CHECK_FALSE(t.settings.determinants);
  CHECK(apply_approach(t, "upstream_conservative") == "");
  CHECK(t.settings.trimming == TrimmingRule::conservative);
  // The failure's moment moves, nothing of the network; 0 is the failure at fail_at_s itself.
  CHECK(apply_sweep(t, "fail_offset_ms", 0) == "");
  // load sets the source rate so that one operator tuple's cost keeps a server busy rho of the time.
  t.settings.operator_cost_us_per_tuple = 100;
  CHECK(apply_sweep(t, "load", 0.5) == "");
  CHECK(t.fragments[0].source.rate_tps == 5000);
  CHECK(apply_sweep(t, "load", 1.0).find("must be below 1") != std::string::npos);
  t.settings.operator_cost_us_per_tuple = 0;
  CHECK(apply_sweep(t, "load", 0.5).find("operator_cost_us_per_tuple is 0") != std::string::npos);
  // chain_depth copies the first processing fragment (the Filter) into stage1 .. stageN.
  Topology chain = default_topology();
  CHECK(apply_sweep(chain, "chain_depth", 4) == "");
  REQUIRE(chain.fragments.size() == 6);
  CHECK(chain.fragments[4].name == "stage4");
  CHECK(chain.fragments[4].operators[0].inputs == std::vector<std::string>{"s3"});
  CHECK(apply_sweep(chain, "chain_depth", 33).find("must be from 1 to 32") != std::string::npos);
}

TEST_CASE("the recovery-vs-interval claim holds on rows of the paper's shape and names what differs otherwise",
          "[experiments][claims]") {
  CHECK(check_recovery_vs_interval(interval_rows(60.0)).line() == "claim holds");
  // Passive standby that does not grow with the interval: that part differs, with its numbers.
  const ClaimCheck flat = check_recovery_vs_interval(interval_rows(31.0));
  REQUIRE(flat.differs.size() == 1);
  CHECK(flat.line().find("claim differs: passive standby's recovery grows with the interval: 30.0 ms at "
                         "interval_ms=50 -> 31.0 ms at 1000") == 0);
  // Amnesia without losses differs too.
  std::vector<ExperimentRow> rows = interval_rows(60.0);
  for (ExperimentRow& r : rows)
    if (r.approach == "amnesia") r.lost = 0;
  CHECK(check_recovery_vs_interval(rows).line().find("amnesia is lossy: lost > 0 in 0 of 2 runs") != std::string::npos);
  // Without any data nothing passes.
  CHECK_FALSE(check_recovery_vs_interval({}).holds());
}

TEST_CASE("the trade-off claim differs when passive standby's recovery does not grow along its curve",
          "[experiments][claims]") {
  std::vector<ExperimentRow> rows = interval_rows(60.0);
  auto overhead = [](const std::string& approach, double x, double pct) {
    ExperimentRow r = row(approach, "interval_ms", x, 0);
    r.failure = false;
    r.recovery_ms.reset();
    r.bandwidth_overhead_pct = pct;
    return r;
  };
  for (double x : {50.0, 1000.0}) {
    rows.push_back(overhead("active", x, 100.0));
    rows.push_back(overhead("passive", x, x == 50.0 ? 80.0 : 20.0));
    rows.push_back(overhead("upstream", x, 8.0));
  }
  CHECK(check_tradeoff(rows).line() == "claim holds");
  for (ExperimentRow& r : rows)
    if (r.approach == "passive" && r.failure && *r.x == 1000.0) r.recovery_ms = 30.5;
  const ClaimCheck c = check_tradeoff(rows);
  REQUIRE(c.differs.size() == 1);
  CHECK(c.differs.front() == "along passive standby's curve the recovery time grows as the interval grows (30.0 ms -> "
                             "30.5 ms, 1.02x, needs >= 1.20x)");
}

TEST_CASE("the claim checks compare medians over the seeds", "[experiments][claims]") {
  std::vector<ExperimentRow> rows = interval_rows(60.0);
  // One slow outlier of active standby at 1000 ms among three seeds does not move its median.
  rows.push_back(row("active", "interval_ms", 1000.0, 26.5, 2));
  rows.push_back(row("active", "interval_ms", 1000.0, 500.0, 3));
  CHECK(check_recovery_vs_interval(rows).holds());
  const auto s = spread_by_x(rows, RowFilter{"active", "interval_ms", true, ""}, "recovery_ms");
  CHECK(s.at(1000.0).median == 26.5);
  CHECK(s.at(1000.0).max == 500.0);
  CHECK(s.at(1000.0).count == 3);
}

TEST_CASE("a run whose pair was swapped by a false detection before the failure is left out of timing claims and named",
          "[experiments][claims]") {
  std::vector<ExperimentRow> rows = interval_rows(60.0);
  ExperimentRow disturbed = row("passive", "interval_ms", 50.0, 1000.0, 2);
  disturbed.takeovers_before_failure = 1;
  rows.push_back(disturbed);
  // Counted, passive's median at 50 ms would be 515 ms and its recovery would not grow.
  CHECK_FALSE(check_recovery_vs_interval(rows).holds());
  std::vector<std::string> notes;
  const std::vector<ExperimentRow> kept = undisturbed_rows(rows, notes);
  CHECK(kept.size() == rows.size() - 1);
  CHECK(check_recovery_vs_interval(kept).holds());
  REQUIRE(notes.size() == 1);
  CHECK(notes.front().find("1 of 9 runs left out") == 0);
  CHECK(notes.front().find("passive interval_ms=50 seed 2") != std::string::npos);
}

TEST_CASE("the semantics claim differs when a precise approach loses a tuple and when amnesia loses none",
          "[experiments][claims]") {
  auto cell = [](const std::string& approach, const std::string& network, const std::string& klass, std::uint64_t lost,
                 std::uint64_t dups) {
    ExperimentRow r;
    r.approach = approach;
    r.network = network;
    r.network_class = klass;
    r.failure = true;
    r.lost = lost;
    r.duplicates = dups;
    r.verdict = lost > 0 ? "gap" : (dups > 0 ? "rollback" : "precise");
    return r;
  };
  std::vector<ExperimentRow> rows;
  for (const auto& [n, k] : std::vector<std::pair<std::string, std::string>>{{"chain", "repeatable"}, {"union", "arbitrary"}}) {
    rows.push_back(cell("passive", n, k, 0, 0));
    rows.push_back(cell("active", n, k, 0, 0));
    rows.push_back(cell("amnesia", n, k, 12, 0));
    rows.push_back(cell("upstream", n, k, 0, n == "union" ? 30 : 0));  // rollback on Union is allowed
  }
  CHECK(check_semantics_table(rows).line() == "claim holds");
  rows[0].lost = 1;
  rows[0].verdict = "gap";
  rows[2].lost = 0;
  rows[2].verdict = "precise";
  const ClaimCheck c = check_semantics_table(rows);
  REQUIRE(c.differs.size() == 2);
  CHECK(c.line().find("passive on chain (repeatable) is precise in 0 of 1 runs (lost 1, duplicates 0 over 1 runs)") !=
        std::string::npos);
  CHECK(c.line().find("amnesia on chain (repeatable) shows a gap in 0 of 1 runs") != std::string::npos);
}

TEST_CASE("the trimming claim differs when the exact rule retains as much as the conservative one",
          "[experiments][claims]") {
  auto trimming_row = [](const std::string& approach, std::optional<double> x, std::int64_t queue, double recovery) {
    ExperimentRow r;
    r.approach = approach;
    r.sweep = x ? "conservative_retention_ms" : "";
    r.x = x;
    r.failure = true;
    r.verdict = "precise";
    r.recovery_ms = recovery;
    r.upstream_queue_tuples_max = queue;
    return r;
  };
  std::vector<ExperimentRow> rows = {trimming_row("upstream_exact", std::nullopt, 800, 27.0),
                                     trimming_row("upstream_conservative", 1000.0, 1800, 28.0),
                                     trimming_row("upstream_conservative", 2000.0, 3600, 29.0)};
  CHECK(check_trimming_knowledge(rows).line() == "claim holds");
  rows[1].upstream_queue_tuples_max = 800;
  CHECK(check_trimming_knowledge(rows).line() ==
        "claim differs: the exact rule retains a smaller queue (exact 800 tuples <= 0.9x conservative at every "
        "conservative_retention_ms: conservative_retention_ms=1000: conservative 800 tuples)");
}

TEST_CASE("the breakdown claim differs when a run's phases are out of order", "[experiments][claims]") {
  std::vector<ExperimentRow> rows;
  for (const std::string a : {"upstream", "passive", "active"}) {
    ExperimentRow r = row(a, "", 0, a == "active" ? 26.0 : 30.0);
    r.x.reset();
    r.takeover_ms = 25.5;
    r.catchup_ms = 40.0;
    rows.push_back(r);
  }
  CHECK(check_recovery_breakdown(rows, 10.0).line() == "claim holds");
  rows[0].takeover_ms = 31.0;  // a takeover after the first new output
  CHECK(check_recovery_breakdown(rows, 10.0).line().find("upstream seed 1: detection 25.0 ms, takeover 31.0 ms") !=
        std::string::npos);
}

TEST_CASE("the capacity claim holds on the expected ordering and differs when active standby keeps up with no HA",
          "[experiments][claims]") {
  auto rate_row = [](const std::string& approach, double rate, bool sustained) {
    ExperimentRow r;
    r.approach = approach;
    r.sweep = "rate_tps";
    r.x = rate;
    r.seed = 1;
    r.sustained = sustained;
    return r;
  };
  auto rows_with_active_up_to = [&](double active_max) {
    std::vector<ExperimentRow> rows;
    for (const std::string a : {"none", "upstream", "passive", "active"})
      for (double rate : {1000.0, 2000.0, 3000.0, 4000.0})
        rows.push_back(rate_row(a, rate, a != "active" || rate <= active_max));
    return rows;
  };
  CHECK(check_capacity(rows_with_active_up_to(2000.0), true).line() == "claim holds");
  // With a machine per node (the simulator) active standby should keep nearly none's rate.
  CHECK(check_capacity(rows_with_active_up_to(4000.0), false).line() == "claim holds");
  CHECK(check_capacity(rows_with_active_up_to(2000.0), false).line().find(
            "active sustains nearly the rate of no HA (active / none = 0.50x, needs >= 0.80x") != std::string::npos);
  // A rate above one that failed does not count, even when it was sustained.
  std::vector<ExperimentRow> gap = rows_with_active_up_to(2000.0);
  gap[1].sustained = false;  // none at 2000
  CHECK(capacity_by_seed(gap, "none").at(1) == 1000.0);
  const ClaimCheck same = check_capacity(rows_with_active_up_to(4000.0), true);
  REQUIRE(same.differs.size() == 1);
  CHECK(same.differs.front().find("sustains about half the rate of no HA (active / none = 1.00x, needs 0.35x .. 0.75x") !=
        std::string::npos);
  // Nothing sustained at the lowest rate differs too.
  CHECK(check_capacity(rows_with_active_up_to(0.0), true).line().find("not active seed 1") != std::string::npos);
}

TEST_CASE("capacity: a rate is sustained when its steady p99 stays within 2x of the lowest rate's and does not grow",
          "[experiments][claims]") {
  auto run = [](double rate, double p99, double growth) {
    ExperimentRow r;
    r.approach = "none";
    r.sweep = "rate_tps";
    r.x = rate;
    r.seed = 1;
    r.completed = true;
    r.verdict = "precise";
    r.latency_p99_steady_ms = p99;
    r.latency_growth_ms = growth;
    return r;
  };
  std::vector<ExperimentRow> rows = {run(1000, 2.0, 0.1), run(2000, 3.9, 0.5), run(3000, 4.5, 0.2), run(4000, 3.0, 50.0),
                                     run(5000, 2.0, 0.1)};
  rows[4].disturbed = true;  // a false takeover: heartbeats came late
  annotate_capacity(rows);
  CHECK(rows[0].low_rate_p99_ms == 2.0);
  CHECK(*rows[0].sustained);
  CHECK(*rows[1].sustained);
  CHECK_FALSE(*rows[2].sustained);  // p99 above 2x
  CHECK_FALSE(*rows[3].sustained);  // latency grows: a growing queue
  CHECK_FALSE(*rows[4].sustained);
  CHECK(capacity_by_seed(rows, "none").at(1) == 2000.0);

  // Every approach of a seed is judged by no HA's low-rate p99: upstream's own, higher, would
  // have let its 3000 tuples/s pass (4.5 <= 2 x 2.4) at a latency none fails with.
  std::vector<ExperimentRow> both = {run(1000, 2.0, 0.1), run(2000, 3.9, 0.5), run(1000, 2.4, 0.1), run(2000, 3.9, 0.5),
                                     run(3000, 4.5, 0.2)};
  for (std::size_t i = 2; i < both.size(); ++i) both[i].approach = "upstream";
  annotate_capacity(both);
  CHECK(both[2].low_rate_p99_ms == 2.0);
  CHECK(*both[3].sustained);
  CHECK_FALSE(*both[4].sustained);
  CHECK(capacity_by_seed(both, "upstream").at(1) == 2000.0);
  // Without none rows, an approach is judged by its own.
  std::vector<ExperimentRow> alone(both.begin() + 2, both.end());
  annotate_capacity(alone);
  CHECK(alone[0].low_rate_p99_ms == 2.4);
  CHECK(*alone[2].sustained);
}

TEST_CASE("the phase claim holds on a sawtooth and differs when passive standby ignores the checkpoint",
          "[experiments][claims]") {
  std::vector<ExperimentRow> rows;
  for (double offset : {20.0, 100.0, 180.0, 220.0}) {
    const double since = std::fmod(offset, 200.0);
    ExperimentRow p = row("passive", "fail_offset_ms", offset, 10.0 + since / 2);
    p.since_checkpoint_ms = since;
    rows.push_back(p);
    rows.push_back(row("active", "fail_offset_ms", offset, 12.0));
  }
  CHECK(check_recovery_vs_phase(rows, 200.0).line() == "claim holds");
  for (ExperimentRow& r : rows)
    if (r.approach == "passive") r.recovery_ms = 30.0;
  const ClaimCheck c = check_recovery_vs_phase(rows, 200.0);
  REQUIRE(c.differs.size() == 2);
  CHECK(c.differs[0].find("1.00x, needs >= 1.20x") != std::string::npos);
  CHECK(c.differs[1].find("not at fail_offset_ms 180 -> 220: 30.0 ms -> 30.0 ms") != std::string::npos);
}

TEST_CASE("the depth claim holds when only upstream backup grows with the chain and differs when a pair grows too",
          "[experiments][claims]") {
  std::vector<ExperimentRow> rows;
  for (double depth : {2.0, 4.0, 8.0}) {
    ExperimentRow u = row("upstream", "chain_depth", depth, 0);
    u.replacement_output_ms = 10.0 * depth;
    u.upstream_queue_tuples_max = static_cast<std::int64_t>(250 * depth);
    rows.push_back(u);
    for (const std::string a : {"passive", "active"}) {
      ExperimentRow r = row(a, "chain_depth", depth, 0);
      r.replacement_output_ms = 15.0;
      rows.push_back(r);
    }
  }
  CHECK(check_recovery_vs_depth(rows).line() == "claim holds");
  for (ExperimentRow& r : rows)
    if (r.approach == "passive") r.replacement_output_ms = 8.0 * *r.x;
  const ClaimCheck c = check_recovery_vs_depth(rows);
  REQUIRE(c.differs.size() == 1);
  CHECK(c.differs.front().find("passive standby's recovery does not grow with the depth: medians span 48.0 ms") == 0);
}

TEST_CASE("the load claim holds when catch-up grows like 1/(1 - rho) and differs when it grows less",
          "[experiments][claims]") {
  auto load_rows = [](double upstream_at_high) {
    std::vector<ExperimentRow> rows;
    for (double rho : {0.3, 0.9}) {
      for (const std::string a : {"passive", "upstream", "active"}) {
        ExperimentRow r = row(a, "load", rho, 20.0);
        r.catchup_reached_normal = true;
        r.catchup_ms = a == "active" ? 12.0 : (rho == 0.3 ? 20.0 : (a == "upstream" ? upstream_at_high : 100.0));
        rows.push_back(r);
      }
    }
    return rows;
  };
  CHECK(check_recovery_vs_load(load_rows(120.0)).line() == "claim holds");
  const ClaimCheck c = check_recovery_vs_load(load_rows(40.0));
  REQUIRE(c.differs.size() == 1);
  CHECK(c.differs.front().find("upstream backup's catch-up grows like 1/(1 - rho): 20.0 ms at rho 0.3 -> 40.0 ms at 0.9 "
                               "(2.0x; 1/(1 - rho) grows 7.0x, needs >= 3.5x") == 0);
}

TEST_CASE("the hybrid claim holds when hybrid recovers faster than passive and sends fewer messages than active",
          "[experiments][claims]") {
  // recovery_ms per approach; messages beyond ha none's per approach in the failure-free runs.
  auto hybrid_rows = [](double hybrid_recovery_ms, bool active_at_failure) {
    std::vector<ExperimentRow> rows;
    const std::vector<std::pair<std::string, std::pair<double, double>>> cells = {
        {"upstream", {120.0, 100.0}}, {"passive", {90.0, 400.0}}, {"active", {30.0, 5000.0}}, {"hybrid", {hybrid_recovery_ms, 1000.0}}};
    for (const auto& cell : cells)
      for (std::uint64_t seed : {1, 2, 3}) {
        ExperimentRow f = row(cell.first, "", 0.0, cell.second.first, seed);
        ExperimentRow q = row(cell.first, "", 0.0, 0.0, seed);
        q.failure = false;
        q.recovery_ms.reset();
        q.baseline_messages_total = 10000.0;
        q.messages_total = 10000 + static_cast<std::uint64_t>(cell.second.second);
        q.baseline_bytes_total = 1e6;
        q.bytes_total = 1'000'000 + static_cast<std::uint64_t>(cell.second.second) * 100;
        if (cell.first == "hybrid") {
          f.active_at_failure = active_at_failure;
          q.switches_to_active = 2;
        }
        rows.push_back(f);
        rows.push_back(q);
      }
    return rows;
  };
  const ClaimCheck holds = check_hybrid(hybrid_rows(30.0, true));
  CHECK(holds.line() == "claim holds");
  // Both ratios beside ICDCS 2010's: (30 / 90 - 1) = -67 %, (1000 / 5000 - 1) = -80 %.
  CHECK(holds.text().find("faster than passive standby's 90.0 ms: -67% (ICDCS 2010: about -67%)") != std::string::npos);
  CHECK(holds.text().find("fewer than active standby's 5000: -80% (ICDCS 2010: about -80%)") != std::string::npos);

  const ClaimCheck slow = check_hybrid(hybrid_rows(95.0, true));
  REQUIRE(slow.differs.size() == 1);
  CHECK(slow.differs.front().find("hybrid recovers in 95.0 ms, faster than passive standby's 90.0 ms") == 0);
  // A standby still passive at the crash: the workload did not do what the experiment is about.
  const ClaimCheck passive_at_crash = check_hybrid(hybrid_rows(30.0, false));
  REQUIRE(passive_at_crash.differs.size() == 1);
  CHECK(passive_at_crash.differs.front().find("hybrid's standby active at the failure in 0 of 3 runs") == 0);
}

TEST_CASE("an experiment's runs are planned without running them, and the time estimate counts a shared run once",
          "[experiments]") {
  ExperimentOptions o;
  o.driver = "real";
  const ExperimentPlan hybrid = plan_experiment("hybrid", o);
  REQUIRE(hybrid.problems.empty());
  CHECK(hybrid.driver == "real");
  REQUIRE(hybrid.runs.size() == 60);  // 5 seeds x 6 approaches x (failure-free + SIGKILL)
  double sources_s = 0;
  for (const PlannedRun& p : hybrid.runs) sources_s += p.topology.settings.duration_s;
  const TimeEstimate once = estimate_time({{hybrid.driver, hybrid.runs}});
  CHECK(once.runs == 60);
  CHECK(once.reused == 0);
  CHECK(once.seconds > sources_s);  // every run lasts its sources' duration, and more
  const TimeEstimate twice = estimate_time({{hybrid.driver, hybrid.runs}, {hybrid.driver, hybrid.runs}});
  CHECK(twice.runs == 60);
  CHECK(twice.reused == 60);
  CHECK(twice.seconds == once.seconds);
  // The simulator's estimate is far shorter than real processes' for the same runs.
  CHECK(estimate_time({{"sim", hybrid.runs}}).seconds < once.seconds / 10);
  const ExperimentPlan unknown = plan_experiment("no_such_figure", o);
  CHECK(unknown.runs.empty());
  REQUIRE(unknown.problems.size() == 1);
  CHECK_THAT(unknown.problems.front(), Catch::Contains("no experiment 'no_such_figure'; there are: "));
}

TEST_CASE("hapair experiment prints the claim outcome on its own line and lists the experiments", "[experiments][cli]") {
  const std::string out = experiment_temp_dir("cli");
  ExperimentCommand c = run_command(std::string(HAPAIR_BINARY) + " experiment recovery_breakdown --quick --out " + out);
  CHECK(c.status == 0);
  bool claim = false;
  for (const std::string& line : lines_of(c.out)) claim = claim || is_claim_line(line);
  CHECK(claim);
  CHECK(std::filesystem::exists(out + "/recovery_breakdown.csv"));
  // Before the first run it says how many runs and about how long.
  ExperimentCommand said = run_command("sh -c '" + std::string(HAPAIR_BINARY) + " experiment recovery_breakdown --quick --out " + out +
                             "/again 2>&1 >/dev/null'");
  CHECK(said.status == 0);
  const std::vector<std::string> err = lines_of(said.out);
  REQUIRE_FALSE(err.empty());
  CHECK_THAT(err.front(), Catch::StartsWith("hapair experiment recovery_breakdown: ") && Catch::Contains(" runs on the simulator, about "));

  ExperimentCommand list = run_command(std::string(HAPAIR_BINARY) + " experiment --list");
  CHECK(list.status == 0);
  for (const ExperimentInfo& i : experiment_infos()) CHECK(list.out.find(i.name) != std::string::npos);

  CHECK(run_command(std::string(HAPAIR_BINARY) + " experiment no_such_figure").status == 2);
  CHECK(run_command(std::string(HAPAIR_BINARY) + " experiment recovery_breakdown --driver carrier-pigeon").status == 2);
}
