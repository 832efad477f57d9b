#include "operators/source_generator.h"

#include <cmath>

#include "protocols/rng.h"

namespace hapair {

TimeUs source_tuple_time_us(const SourceSpec& spec, TupleId i) {
  if (!(spec.rate_tps > 0.0)) return kNever;
  return static_cast<TimeUs>(std::floor(static_cast<double>(i) * 1e6 / spec.rate_tps));
}

Tuple source_tuple(const SourceSpec& spec, std::uint64_t seed, TupleId i) {
  const std::uint64_t position = mix64(hash_name(spec.stream), i);
  // A generator per tuple (counter based), so tuple i never depends on how many came before.
  Rng r = Rng::derive(seed, position);
  Tuple t;
  t.id = i;
  t.ts_us = source_tuple_time_us(spec, i);
  t.key = spec.key_count > 0 ? static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(spec.key_count))) : 0;
  double v = 0.0;
  switch (spec.values.kind) {
    case DistributionKind::uniform: v = r.uniform(spec.values.a, spec.values.b); break;
    case DistributionKind::normal: v = r.normal(spec.values.a, spec.values.b); break;
    case DistributionKind::exponential: v = r.exponential(spec.values.a); break;
  }
  t.value = spec.integer_values ? std::floor(v) : v;
  t.lineage = position;
  return t;
}

TupleId source_tuple_count(const SourceSpec& spec, double duration_s) {
  if (!(spec.rate_tps > 0.0) || !(duration_s > 0.0)) return 0;
  const double duration_us = duration_s * 1e6;
  // ts(i) grows with i, so the count is the largest i with ts(i) < duration. Start from the
  // closed-form estimate and correct it, because floor() and the division may round either way.
  TupleId n = static_cast<TupleId>(std::floor(duration_us * spec.rate_tps / 1e6));
  while (n > 0 && !(static_cast<double>(source_tuple_time_us(spec, n)) < duration_us)) --n;
  while (static_cast<double>(source_tuple_time_us(spec, n + 1)) < duration_us) ++n;
  return n;
}

}  // namespace hapair
