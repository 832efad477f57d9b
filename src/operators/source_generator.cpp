#include "operators/source_generator.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "protocols/rng.h"

namespace hapair {

namespace {

// std::floor, without the call into libm where the result is plainly the truncation (values of
// at least 1 and below 2^53); identical results, including the sign of zero.
double floor_exact(double v) {
  if (v >= 1.0 && v < 9007199254740992.0) return static_cast<double>(static_cast<std::int64_t>(v));
  return std::floor(v);
}

TimeUs time_of(double rate_tps, TupleId i) {
  if (!(rate_tps > 0.0)) return kNever;
  // floor of a non-negative value: the conversion truncates, which is the same.
  return static_cast<TimeUs>(static_cast<double>(i) * 1e6 / rate_tps);
}

Tuple make_tuple(const SourceSpec& spec, std::uint64_t seed, std::uint64_t stream_hash, TupleId i) {
  const std::uint64_t position = mix64(stream_hash, i);
  // A generator per tuple (counter based), so tuple i never depends on how many came before.
  Rng r = Rng::derive(seed, position);
  Tuple t;
  t.id = i;
  t.ts_us = time_of(spec.rate_tps, i);
  t.key = spec.key_count > 0 ? static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(spec.key_count))) : 0;
  double v = 0.0;
  switch (spec.values.kind) {
    case DistributionKind::uniform: v = r.uniform(spec.values.a, spec.values.b); break;
    case DistributionKind::normal: v = r.normal(spec.values.a, spec.values.b); break;
    case DistributionKind::exponential: v = r.exponential(spec.values.a); break;
  }
  t.value = spec.integer_values ? floor_exact(v) : v;
  t.lineage = position;
  return t;
}

}  // namespace

TimeUs source_tuple_time_us(const SourceSpec& spec, TupleId i) { return time_of(spec.rate_tps, i); }

SourceGenerator::SourceGenerator(SourceSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)), seed_(seed), stream_hash_(hash_name(spec_.stream)) {}

TimeUs SourceGenerator::time_us(TupleId i) const { return time_of(spec_.rate_tps, i); }

TupleId SourceGenerator::last_due_by(TimeUs now) const {
  if (!(spec_.rate_tps > 0.0) || now < 0) return 0;
  // ts(i) grows with i: start from the closed-form estimate and correct it (rounding may go
  // either way), as source_tuple_count() does.
  const double estimate = std::floor(static_cast<double>(now) * spec_.rate_tps / 1e6);
  TupleId n = estimate < 1.0 ? 0 : static_cast<TupleId>(std::min(estimate, 9007199254740992.0));
  while (n > 0 && time_us(n) > now) --n;
  while (time_us(n + 1) <= now) ++n;
  return n;
}

Tuple SourceGenerator::tuple(TupleId i) const { return make_tuple(spec_, seed_, stream_hash_, i); }

void SourceGenerator::append_tuples(TupleId first, std::size_t count, Tuples& out) const {
  const std::size_t at = out.size();
  out.resize(at + count);
  Tuple* to = out.data() + at;
  if (spec_.values.kind != DistributionKind::uniform || spec_.key_count <= 0) {
    for (std::size_t k = 0; k < count; ++k) to[k] = tuple(first + k);
    return;
  }
  // The common case, uniform values, with the spec read once: the same arithmetic as
  // make_tuple() (Rng::first_two gives what its first two draws give).
  const auto keys = static_cast<std::uint64_t>(spec_.key_count);
  const double lo = spec_.values.a;
  const double width = spec_.values.b - spec_.values.a;
  const bool integer = spec_.integer_values;
  const double rate = spec_.rate_tps;
  for (std::size_t k = 0; k < count; ++k) {
    const TupleId i = first + k;
    const std::uint64_t position = mix64(stream_hash_, i);
    const Rng::Pair draws = Rng::first_two(mix64(seed_, position));
    const double v = lo + width * Rng::unit_from_bits(draws.second);
    to[k] = Tuple{i, time_of(rate, i), static_cast<std::int64_t>(Rng::below(draws.first, keys)), integer ? floor_exact(v) : v,
                  position};
  }
}

Tuple source_tuple(const SourceSpec& spec, std::uint64_t seed, TupleId i) {
  return make_tuple(spec, seed, hash_name(spec.stream), i);
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
