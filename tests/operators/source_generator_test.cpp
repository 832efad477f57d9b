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

TEST_CASE("a source generator gives what the formula gives, floor and sign of zero included", "[source]") {
  // The formula written out (std::floor, the division), against the generator's faster path.
  auto formula = [](const SourceSpec& spec, std::uint64_t seed, TupleId i) {
    const std::uint64_t position = mix64(hash_name(spec.stream), i);
    Rng r = Rng::derive(seed, position);
    Tuple t;
    t.id = i;
    t.ts_us = static_cast<TimeUs>(std::floor(static_cast<double>(i) * 1e6 / spec.rate_tps));
    t.key = static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(spec.key_count)));
    double v = 0.0;
    switch (spec.values.kind) {
      case DistributionKind::uniform: v = r.uniform(spec.values.a, spec.values.b); break;
      case DistributionKind::normal: v = r.normal(spec.values.a, spec.values.b); break;
      case DistributionKind::exponential: v = r.exponential(spec.values.a); break;
    }
    t.value = spec.integer_values ? std::floor(v) : v;
    t.lineage = position;
    return t;
  };
  int compared = 0;
  for (const ValueDistribution values : {ValueDistribution{DistributionKind::uniform, -1.5, 1.5},
                                         ValueDistribution{DistributionKind::uniform, 0.0, 1e17},
                                         ValueDistribution{DistributionKind::normal, 0.0, 3.0},
                                         ValueDistribution{DistributionKind::exponential, 2.0, 0.0}}) {
    for (const bool integer : {true, false}) {
      SourceSpec s = spec_of("gen", 1234.5, 7);
      s.values = values;
      s.integer_values = integer;
      const SourceGenerator g(s, 77);
      Tuples batch;
      g.append_tuples(1, 3000, batch);
      REQUIRE(batch.size() == 3000);
      for (TupleId i = 1; i <= 3000; ++i) {
        const Tuple want = formula(s, 77, i);
        const Tuple got = g.tuple(i);
        REQUIRE(got == want);
        REQUIRE(std::signbit(got.value) == std::signbit(want.value));  // floor(-0.3) is -1, floor(-0.0) is -0
        REQUIRE(batch[i - 1] == want);
        REQUIRE(source_tuple(s, 77, i) == want);
        ++compared;
      }
    }
  }
  CHECK(compared == 4 * 2 * 3000);
}

TEST_CASE("last_due_by is the largest id whose scheduled time has come", "[source]") {
  for (const double rate : {1.0, 3.0, 7.0, 1234.5, 2000.0, 1e6, 1e9}) {
    const SourceGenerator g(spec_of("in", rate, 8), 1);
    for (TimeUs now : {TimeUs{0}, TimeUs{1}, TimeUs{333333}, TimeUs{999999}, TimeUs{1000000}, TimeUs{2500000}, TimeUs{123456789}}) {
      const TupleId n = g.last_due_by(now);
      INFO("rate " << rate << " now " << now << " last due " << n);
      if (n > 0) CHECK(g.time_us(n) <= now);
      CHECK(g.time_us(n + 1) > now);
    }
  }
  const SourceGenerator stopped(spec_of("in", 0.0, 8), 1);
  CHECK(stopped.last_due_by(1'000'000) == 0);
}

TEST_CASE("rate spikes: spike_factor times the rate for spike_length_s every spike_every_s, counts consistent", "[source]") {
  SourceSpec s = spec_of("in", 1000.0, 8);
  s.spikes = RateSpikes{2.0, 0.5, 8.0, 1.0};  // every 2 s from 1 s, 0.5 s at 8000 tuples/s
  // Counted one by one: 1000 before the first spike, 4000 in it, 1500 in the rest of its
  // period, then again.
  auto due_in = [&](double from_s, double to_s) {
    TupleId n = 0;
    for (TupleId i = 1; i < 100000; ++i) {
      const double t = static_cast<double>(source_tuple_time_us(s, i)) / 1e6;
      if (t >= from_s && t < to_s) ++n;
      if (t >= to_s) break;
    }
    return n;
  };
  CHECK(due_in(0.0, 1.0) == 999);   // ts(1000) == 1 s exactly belongs to the spike
  CHECK(due_in(1.0, 1.5) >= 3999);
  CHECK(due_in(1.0, 1.5) <= 4001);
  CHECK(due_in(1.5, 3.0) >= 1499);
  CHECK(due_in(1.5, 3.0) <= 1501);
  CHECK(due_in(3.0, 3.5) >= 3999);
  CHECK(due_in(3.0, 3.5) <= 4001);
  // Times never go back; the count and last_due agree with counting one by one.
  TimeUs previous = 0;
  for (TupleId i = 1; i < 20000; ++i) {
    const TimeUs t = source_tuple_time_us(s, i);
    REQUIRE(t >= previous);
    previous = t;
  }
  const SourceGenerator g(s, 1);
  for (double duration_s : {0.3, 1.0, 1.25, 1.5, 2.9, 3.0000005, 4.75}) {
    TupleId naive = 0;
    while (static_cast<double>(source_tuple_time_us(s, naive + 1)) < duration_s * 1e6) ++naive;
    INFO("duration " << duration_s);
    CHECK(source_tuple_count(s, duration_s) == naive);
    const auto now = static_cast<TimeUs>(duration_s * 1e6);
    const TupleId n = g.last_due_by(now);
    if (n > 0) CHECK(g.time_us(n) <= now);
    CHECK(g.time_us(n + 1) > now);
  }
  // Without spikes the schedule is i / rate exactly, spikes or not in the type.
  const SourceSpec plain = spec_of("in", 1000.0, 8);
  CHECK(source_tuple_time_us(plain, 1500) == 1500000);
  CHECK(source_tuple_time_us(s, 1500) == 1000000 + 500 * 125);  // 500 tuples into the spike at 8000/s
}
