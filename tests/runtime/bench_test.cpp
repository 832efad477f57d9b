// `hapair bench` (campaigns/bench.h): raw ZeroMQ and hapair's one hop measured in turn, one ratio
// per repetition, the median reported with its spread; `hapair bench --chain`
// (campaigns/chain_bench.h): every approach on a chain, its ratio to none of the same repetition.
// Checks the shape of the reports on tiny runs, never a speed.
#include <catch2/catch.hpp>

#include "campaigns/bench.h"
#include "campaigns/chain_bench.h"

namespace hapair {
namespace {

TEST_CASE("the one-hop bench interleaves raw and hapair and reports one ratio per repetition", "[bench]") {
  BenchOptions o;
  o.tuples = 5'000;
  o.batch_tuples = 100;
  o.repetitions = 3;
  o.timeout_s = 60;
  const BenchReport r = run_one_hop_bench(o);
  INFO(format_bench_report(r));
  CHECK(r.errors.empty());
  REQUIRE(r.ratios.size() == 3);
  CHECK(r.raw_tuples_per_s.size() == 3);
  CHECK(r.hapair_tuples_per_s.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.ratios[i] == Approx(r.hapair_tuples_per_s[i] / r.raw_tuples_per_s[i]));
  CHECK(r.ratio > 0);
  CHECK(r.hapair_bytes_per_tuple == 40);  // 40 bytes a tuple plus the batch's share of framing
  CHECK(format_bench_report(r).find("3 interleaved repetitions (3 completed), median (min..max)") != std::string::npos);
  CHECK_THAT(format_bench_report(r), Catch::Contains("95 % CI of the median ratio:            none (fewer than 6 repetitions): "));
}

TEST_CASE("the one-hop bench judges its target on the median ratio's 95 % interval", "[bench]") {
  BenchReport r;
  r.repetitions = 9;
  r.ratios = {0.95, 0.82, 1.10, 0.90, 0.99, 1.02, 0.70, 0.93, 0.97};  // sorted: 0.70 0.82 ... 1.02 1.10
  CHECK_THAT(format_bench_report(r), Catch::Contains("95 % CI of the median ratio:            0.820..1.020 (order statistics): met\n"));
  r.ratios = {0.85, 0.75, 0.90, 0.78, 0.81, 0.83, 0.70, 0.95, 0.80};  // 2nd least 0.75: spans 0.8
  CHECK_THAT(format_bench_report(r), Catch::Contains("0.750..0.900 (order statistics): not settled\n"));
  r.ratios = {0.5, 0.6, 0.55, 0.65, 0.62, 0.58, 0.4, 0.7, 0.81};  // 2nd greatest 0.70 < 0.8
  CHECK_THAT(format_bench_report(r), Catch::Contains("0.500..0.700 (order statistics): missed by 0.20 (25 % below)\n"));  // median 0.60
  // An interval that ends just below the target says so in its digits, beside "missed".
  r.ratios = {0.70, 0.72, 0.74, 0.75, 0.76, 0.77, 0.78, 0.7977, 0.85};  // 2nd greatest 0.7977 < 0.8
  CHECK_THAT(format_bench_report(r), Catch::Contains("0.720..0.798 (order statistics): missed by"));
}

// A none run and one of `approach` in repetition `rep`, for summarize_chain_runs.
ChainBenchRun chain_run(const std::string& approach, std::size_t rep, double tps) {
  ChainBenchRun r;
  r.approach = approach;
  r.repetition = rep;
  r.completed = true;
  r.verdict = "precise";
  r.used = true;
  r.tuples_in = 1000;
  r.throughput_tps = tps;
  r.bytes_per_tuple = {{"data", 40.0}};
  return r;
}

TEST_CASE("the chain bench divides each approach's throughput by none's of the same repetition", "[bench]") {
  std::vector<ChainBenchRun> runs = {chain_run("none", 1, 1000), chain_run("active", 1, 600), chain_run("none", 2, 2000),
                                     chain_run("active", 2, 1000), chain_run("active", 3, 900)};  // rep 3: no none
  const std::vector<ChainBenchRow> rows = summarize_chain_runs(runs, {"none", "active"});
  REQUIRE(rows.size() == 2);
  CHECK(runs[1].ratio_to_none == Approx(0.6));
  CHECK(runs[3].ratio_to_none == Approx(0.5));
  CHECK_FALSE(runs[4].ratio_to_none.has_value());
  CHECK(rows[1].ratio_to_none.median == Approx(0.55));
  CHECK(rows[1].target == kChainTargetActive);
  CHECK_FALSE(rows[0].target.has_value());
}

TEST_CASE("the median's distribution-free interval takes the order statistics whose binomial coverage reaches 95 %", "[bench]") {
  CHECK_FALSE(median_interval({}).has_value());
  CHECK_FALSE(median_interval({0.5, 0.4, 0.6, 0.7, 0.3}).has_value());  // 5 values: at most 1 - 2/32 = 93.75 %
  const auto six = median_interval({6, 1, 5, 2, 4, 3});
  REQUIRE(six.has_value());
  CHECK(six->low == 1);
  CHECK(six->high == 6);
  CHECK(six->coverage == Approx(1.0 - 2.0 / 64));
  // 9 values: the 2nd least and the 2nd greatest, 1 - 2 (1 + 9) / 512 = 96.1 %; the 3rd would
  // cover 1 - 2 (1 + 9 + 36) / 512 = 82 % only.
  const auto nine = median_interval({9, 8, 7, 6, 5, 4, 3, 2, 1});
  REQUIRE(nine.has_value());
  CHECK(nine->low == 2);
  CHECK(nine->high == 8);
  CHECK(nine->coverage == Approx(1.0 - 20.0 / 512));
  // 25 values: the 8th, P(B <= 7) = 0.0216 for B ~ Binomial(25, 1/2).
  std::vector<double> many;
  for (int i = 25; i >= 1; --i) many.push_back(i);
  const auto twenty_five = median_interval(many);
  REQUIRE(twenty_five.has_value());
  CHECK(twenty_five->low == 8);
  CHECK(twenty_five->high == 18);
  CHECK(twenty_five->coverage == Approx(0.9567).epsilon(0.001));
  // A stricter confidence widens it.
  const auto strict = median_interval({9, 8, 7, 6, 5, 4, 3, 2, 1}, 0.99);
  REQUIRE(strict.has_value());
  CHECK(strict->low == 1);
  CHECK(strict->high == 9);
}

TEST_CASE("a chain target is met when the median ratio's 95 % interval lies above it, missed below, not settled across it", "[bench]") {
  const auto runs_of = [](std::vector<double> active_tps) {
    std::vector<ChainBenchRun> runs;
    for (std::size_t rep = 1; rep <= active_tps.size(); ++rep) {
      runs.push_back(chain_run("none", rep, 1000));
      runs.push_back(chain_run("active", rep, active_tps[rep - 1]));
    }
    return runs;
  };
  const auto verdict_of = [&](std::vector<double> active_tps) {
    std::vector<ChainBenchRun> runs = runs_of(std::move(active_tps));
    return summarize_chain_runs(runs, {"none", "active"}).at(1);
  };
  const ChainBenchRow met = verdict_of({510, 520, 530, 540, 550, 560, 570, 580, 590});
  REQUIRE(met.ratio_interval.has_value());
  CHECK(met.ratio_interval->low == Approx(0.52));
  CHECK(met.ratio_interval->high == Approx(0.58));
  CHECK(met.verdict == "met");
  // The median (0.51) is above the target, but not the interval's low end: not settled.
  const ChainBenchRow across = verdict_of({470, 480, 490, 500, 510, 520, 530, 540, 550});
  CHECK(across.ratio_to_none.median == Approx(0.51));
  CHECK(across.verdict == "not settled");
  const ChainBenchRow missed = verdict_of({400, 410, 420, 430, 440, 450, 460, 470, 500});
  CHECK(missed.verdict == "missed by 0.06 (12 % below)");
  // The table prints the interval to three decimals: one ending at 0.498 must not read 0.50
  // beside "missed".
  ChainBenchReport report;
  std::vector<ChainBenchRun> runs = runs_of({400, 410, 420, 430, 440, 450, 460, 498, 500});
  report.rows = summarize_chain_runs(runs, {"none", "active"});
  CHECK_THAT(chain_bench_table(report), Catch::Contains("0.410..0.498"));
  CHECK_THAT(chain_bench_table(report), Catch::Contains("missed by"));
  // A bound that three decimals would round onto the target gets the digits that keep it on
  // its own side; the others keep three.
  CHECK(interval_text(MedianInterval{0.4665, 0.49984}, 0.5) == "0.4665..0.4998");
  CHECK(interval_text(MedianInterval{0.89996, 0.95}, 0.9) == "0.89996..0.95000");
  CHECK(interval_text(MedianInterval{0.9, 0.95}, 0.9) == "0.900..0.950");
  CHECK(interval_text(MedianInterval{0.4665, 0.49984}) == "0.467..0.500");
  const ChainBenchRow few = verdict_of({510, 520, 530});
  CHECK_FALSE(few.ratio_interval.has_value());
  CHECK(few.verdict == "met by the median (< 6 runs)");
  CHECK(verdict_of({400, 410, 420}).verdict == "missed by 0.09 (18 % below) (< 6 runs)");
  std::vector<ChainBenchRun> baseline_only = {chain_run("none", 1, 1000)};
  CHECK(summarize_chain_runs(baseline_only, {"none"}).at(0).verdict.empty());  // no target, no verdict
}

TEST_CASE("the chain bench in the simulator reports every approach with its ratio, bytes and CPU per tuple", "[bench]") {
  ChainBenchOptions o;
  o.driver = "sim";
  o.tuples = 2'000;
  o.repetitions = 2;
  const ChainBenchReport r = run_chain_bench(o);
  const std::string table = chain_bench_table(r);
  INFO(table);
  REQUIRE(r.rows.size() == 6);  // none, upstream, passive, active, hybrid, checkpoint
  CHECK(r.runs.size() >= 10);
  for (const ChainBenchRun& run : r.runs) {
    INFO(run.label());
    CHECK(run.completed);
    CHECK(run.verdict == "precise");
  }
  for (const ChainBenchRow& row : r.rows) {
    INFO(row.approach);
    CHECK(row.runs == 2);
    CHECK(row.bytes_per_tuple.median > 0);
    if (row.approach != "none") CHECK(row.ratio_to_none.median > 0);
  }
  for (const std::string a : {"none", "upstream", "passive", "active", "hybrid", "checkpoint"})
    CHECK(table.find(a) != std::string::npos);
  CHECK(chain_bench_csv(r).find("approach") == 0);
  CHECK_THAT(chain_bench_csv(r), Catch::Contains(",ratio_to_none_ci95_low,ratio_to_none_ci95_high,verdict\n"));
  CHECK_THAT(table, Catch::Contains("95 % CI"));
  CHECK_THAT(table, Catch::Contains("(< 6 runs)"));  // two repetitions: the median alone decides, and says so
}

// One simulated round of a small chain bench, none and `approach`.
ChainBenchOptions one_simulated_round(HaMode approach) {
  ChainBenchOptions o;
  o.driver = "sim";
  o.tuples = 2'000;
  o.repetitions = 1;
  o.approaches = {HaMode::none, approach};
  return o;
}

TEST_CASE("the chain bench keeps the networks' ack interval unless asked, apart from the checkpoint interval, and says so", "[bench]") {
  ChainBenchOptions o = one_simulated_round(HaMode::upstream);
  o.checkpoint_interval_ms = 100;
  CHECK(chain_bench_topology(o, HaMode::upstream).settings.ack_interval_ms == Settings{}.ack_interval_ms);
  CHECK(chain_bench_topology(o, HaMode::upstream).settings.checkpoint_interval_ms == 100);
  o.ack_interval_ms = 35;
  CHECK(chain_bench_topology(o, HaMode::upstream).settings.ack_interval_ms == 35);
  CHECK(chain_bench_topology(o, HaMode::passive).settings.checkpoint_interval_ms == 100);
  const ChainBenchReport r = run_chain_bench(o);
  REQUIRE(r.rows.size() == 2);
  for (const ChainBenchRun& run : r.runs) CHECK(run.verdict == "precise");
  CHECK_THAT(chain_bench_table(r), Catch::Contains("every 100 ms, acks every 35 ms"));
  CHECK_THAT(chain_bench_csv(r), Catch::Contains(",100,35,full,sim,"));
}

TEST_CASE("the chain bench runs passive standby with delta checkpoints when asked, and says so", "[bench]") {
  ChainBenchOptions o = one_simulated_round(HaMode::passive);
  o.checkpoint_mode = CheckpointMode::delta;
  CHECK(chain_bench_topology(o, HaMode::passive).settings.checkpoint_mode == CheckpointMode::delta);
  const ChainBenchReport r = run_chain_bench(o);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[1].runs == 1);
  for (const ChainBenchRun& run : r.runs) CHECK(run.verdict == "precise");
  CHECK_THAT(chain_bench_table(r), Catch::Contains("passive checkpoints (delta)"));
  CHECK_THAT(chain_bench_csv(r), Catch::Contains(",delta,sim,"));
}

}  // namespace
}  // namespace hapair
