// `hapair bench` (harness/bench.h): raw ZeroMQ and hapair's one hop measured in turn, one ratio
// per repetition, the median reported with its spread. Checks the shape of the report on a tiny
// run, never a speed.
#include <catch2/catch.hpp>

#include "harness/bench.h"

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

}  // namespace
}  // namespace hapair
