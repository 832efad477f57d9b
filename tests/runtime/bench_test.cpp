// `hapair bench` (harness/bench.h): raw ZeroMQ and hapair's one hop measured in turn, one ratio
// per repetition, the median reported with its spread; `hapair bench --chain`
// (harness/chain_bench.h): every approach on a chain, its ratio to none of the same repetition.
// Checks the shape of the reports on tiny runs, never a speed.
#include <catch2/catch.hpp>

#include "harness/bench.h"
#include "harness/chain_bench.h"

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

TEST_CASE("the chain bench in the simulator reports every approach with its ratio, bytes and CPU per tuple", "[bench]") {
  ChainBenchOptions o;
  o.driver = "sim";
  o.tuples = 2'000;
  o.repetitions = 2;
  const ChainBenchReport r = run_chain_bench(o);
  const std::string table = chain_bench_table(r);
  INFO(table);
  REQUIRE(r.rows.size() == 4);
  CHECK(r.runs.size() >= 8);
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
  for (const std::string a : {"none", "upstream", "passive", "active"}) CHECK(table.find(a) != std::string::npos);
  CHECK(chain_bench_csv(r).find("approach") == 0);
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
