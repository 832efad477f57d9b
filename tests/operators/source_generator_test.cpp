#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "operators/source_generator.h"
#include "protocols/rng.h"

using namespace hapair;

namespace {

SourceSpec spec_of(const std::string& stream, double rate_tps, std::int64_t keys) {
  SourceSpec s;
  s.stream = stream;
  s.rate_tps = rate_tps;
  s.key_count = keys;
  return s;
}

}  // namespace

TEST_CASE("source tuple i has ts floor(i * 1e6 / rate), id i and lineage hash(stream, i)", "[source]") {
  const SourceSpec s = spec_of("in", 3.0, 8);
  for (TupleId i = 1; i <= 10; ++i) {
    const Tuple t = source_tuple(s, 1, i);
    CHECK(t.id == i);
    CHECK(t.ts_us == static_cast<TimeUs>(std::floor(static_cast<double>(i) * 1e6 / 3.0)));
    CHECK(t.ts_us == source_tuple_time_us(s, i));
    CHECK(t.lineage == mix64(hash_name("in"), i));
  }
  CHECK(source_tuple(s, 1, 1).ts_us == 333333);
  CHECK(source_tuple(s, 1, 3).ts_us == 1000000);
}

TEST_CASE("source tuples are a pure function of seed, stream and position", "[source]") {
  const SourceSpec s = spec_of("in", 2000.0, 8);
  // Counter based: tuple 500 is the same whether or not tuples 1..499 were generated.
  const Tuple direct = source_tuple(s, 42, 500);
  for (TupleId i = 1; i < 500; ++i) source_tuple(s, 42, i);
  CHECK(source_tuple(s, 42, 500) == direct);
  // The key and value come from Rng::derive(seed, mix64(hash(stream), i)).
  Rng r = Rng::derive(42, mix64(hash_name("in"), 500));
  CHECK(direct.key == static_cast<std::int64_t>(r.below(8)));
  CHECK(direct.value == std::floor(r.uniform(0.0, 100.0)));

  int same_as_other_seed = 0;
  int same_as_other_stream = 0;
  for (TupleId i = 1; i <= 200; ++i) {
    same_as_other_seed += source_tuple(s, 42, i) == source_tuple(s, 43, i) ? 1 : 0;
    same_as_other_stream += source_tuple(s, 42, i) == source_tuple(spec_of("other", 2000.0, 8), 42, i) ? 1 : 0;
  }
  CHECK(same_as_other_seed == 0);
  CHECK(same_as_other_stream == 0);
}

TEST_CASE("source keys cover 0 to key_count - 1 and integer values are floored uniform values", "[source]") {
  const SourceSpec s = spec_of("in", 1000.0, 5);
  std::set<std::int64_t> keys;
  for (TupleId i = 1; i <= 2000; ++i) {
    const Tuple t = source_tuple(s, 3, i);
    keys.insert(t.key);
    CHECK(t.value == std::floor(t.value));
    CHECK(t.value >= 0.0);
    CHECK(t.value < 100.0);
  }
  CHECK(keys == std::set<std::int64_t>{0, 1, 2, 3, 4});
}

TEST_CASE("source values follow the configured distribution", "[source]") {
  SourceSpec s = spec_of("in", 1000.0, 4);
  s.integer_values = false;
  const int n = 20000;
  auto mean_of = [&](const SourceSpec& spec) {
    double sum = 0.0;
    for (TupleId i = 1; i <= static_cast<TupleId>(n); ++i) sum += source_tuple(spec, 9, i).value;
    return sum / n;
  };
  s.values = {DistributionKind::uniform, 10.0, 20.0};
  CHECK(mean_of(s) == Approx(15.0).margin(0.2));
  bool fractional = false;
  for (TupleId i = 1; i <= 10; ++i) fractional = fractional || source_tuple(s, 9, i).value != std::floor(source_tuple(s, 9, i).value);
  CHECK(fractional);
  s.values = {DistributionKind::normal, 50.0, 5.0};
  CHECK(mean_of(s) == Approx(50.0).margin(0.2));
  s.values = {DistributionKind::exponential, 4.0, 0.0};
  CHECK(mean_of(s) == Approx(4.0).margin(0.2));
  for (TupleId i = 1; i <= 1000; ++i) CHECK(source_tuple(s, 9, i).value >= 0.0);
}

TEST_CASE("source tuple count is the number of ids whose ts is before the duration", "[source]") {
  CHECK(source_tuple_count(spec_of("in", 2000.0, 8), 6.0) == 11999);  // ts(12000) == 6 s exactly
  CHECK(source_tuple_count(spec_of("in", 3.0, 8), 1.0) == 2);        // 333333, 666666; ts(3) == 1 s
  CHECK(source_tuple_count(spec_of("in", 3.0, 8), 1.000001) == 3);
  CHECK(source_tuple_count(spec_of("in", 7.0, 8), 0.1) == 0);
  CHECK(source_tuple_count(spec_of("in", 7.0, 8), 0.0) == 0);
  const SourceSpec odd = spec_of("in", 1234.5, 8);
  const TupleId n = source_tuple_count(odd, 2.5);
  CHECK(static_cast<double>(source_tuple_time_us(odd, n)) < 2.5e6);
  CHECK(static_cast<double>(source_tuple_time_us(odd, n + 1)) >= 2.5e6);
}

TEST_CASE("source tuple count agrees with counting ids one by one", "[source]") {
  // The last rate makes ts(2) = floor(2000000.7) fall below a duration of 2000000.5 us although
  // 2 / rate is beyond it: the closed-form estimate must be corrected upwards there.
  for (double rate : {1.0, 3.0, 7.0, 1234.5, 2000.0, 2e6 / 2000000.7}) {
    for (double duration_s : {0.5, 1.0, 1.0000005, 2.0000005, 2.5, 3.3333333}) {
      const SourceSpec s = spec_of("in", rate, 4);
      TupleId naive = 0;
      while (static_cast<double>(source_tuple_time_us(s, naive + 1)) < duration_s * 1e6) ++naive;
      INFO("rate=" << rate << " duration=" << duration_s);
      CHECK(source_tuple_count(s, duration_s) == naive);
    }
  }
  CHECK(source_tuple_count(spec_of("in", 2e6 / 2000000.7, 4), 2.0000005) == 2);
}
