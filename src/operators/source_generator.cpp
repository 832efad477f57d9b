#include "operators/source_generator.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "protocols/check.h"
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

// The largest position p (from 1) of a sequence at `rate` with time_of(rate, p) <= now (0: none).
TupleId last_due(double rate, TimeUs now) {
  if (!(rate > 0.0) || now < 0) return 0;
  // ts(p) grows with p: start from the closed-form estimate and correct it (rounding may go
  // either way), as count_before() does.
  const double estimate = std::floor(static_cast<double>(now) * rate / 1e6);
  TupleId n = estimate < 1.0 ? 0 : static_cast<TupleId>(std::min(estimate, 9007199254740992.0));
  while (n > 0 && time_of(rate, n) > now) --n;
  while (time_of(rate, n + 1) <= now) ++n;
  return n;
}

// The number of positions p (from 1) of a sequence at `rate` with time_of(rate, p) < duration.
TupleId count_before(double rate, double duration_s) {
  if (!(rate > 0.0) || !(duration_s > 0.0)) return 0;
  const double duration_us = duration_s * 1e6;
  // ts(p) grows with p, so the count is the largest p with ts(p) < duration. Start from the
  // closed-form estimate and correct it, because floor() and the division may round either way.
  TupleId n = static_cast<TupleId>(std::floor(duration_us * rate / 1e6));
  while (n > 0 && !(static_cast<double>(time_of(rate, n)) < duration_us)) --n;
  while (static_cast<double>(time_of(rate, n + 1)) < duration_us) ++n;
  return n;
}

Tuple make_uniform_tuple(const SourceSpec& spec, std::uint64_t seed, std::uint64_t stream_hash, TupleId i) {
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

// The fields a nexmark or ysb source projects. A spec that reaches a generator has passed
// validate(), which names the allowed fields of an unknown one; here one is a bug.
struct Projection {
  NexmarkField nexmark_key = NexmarkField::bid_auction;
  NexmarkField nexmark_value = NexmarkField::bid_price;
  YsbField ysb_key = YsbField::ad;
  YsbField ysb_value = YsbField::event_type;
};

Projection projection_of(const SourceSpec& spec) {
  Projection p;
  switch (spec.generator) {
    case SourceGeneratorKind::uniform: break;
    case SourceGeneratorKind::nexmark: {
      const auto key = nexmark_field(spec.nexmark.event, spec.nexmark.key_field);
      const auto value = nexmark_field(spec.nexmark.event, spec.nexmark.value_field);
      HAPAIR_CHECK_MSG(key && value, "stream " << spec.stream << ": fields " << spec.nexmark.key_field << ","
                                                << spec.nexmark.value_field << " of a " << to_string(spec.nexmark.event));
      p.nexmark_key = *key;
      p.nexmark_value = *value;
      break;
    }
    case SourceGeneratorKind::ysb: {
      const auto key = ysb_field(spec.ysb.key_field);
      const auto value = ysb_field(spec.ysb.value_field);
      HAPAIR_CHECK_MSG(key && value, "stream " << spec.stream << ": fields " << spec.ysb.key_field << ","
                                                << spec.ysb.value_field);
      p.ysb_key = *key;
      p.ysb_value = *value;
      break;
    }
  }
  return p;
}

Tuple make_tuple(const SourceSpec& spec, std::uint64_t seed, std::uint64_t stream_hash, const Projection& p, TupleId i) {
  switch (spec.generator) {
    case SourceGeneratorKind::uniform: break;
    case SourceGeneratorKind::nexmark: {
      const std::uint64_t n = nexmark_event_number(spec.nexmark.event, i);
      const NexmarkEventRecord e = nexmark_event(spec.nexmark, seed, n);
      HAPAIR_CHECK_MSG(e.kind == spec.nexmark.event, "i=" << i << " n=" << n);
      return Tuple{i, e.ts_us, nexmark_field_value(e, p.nexmark_key),
                   static_cast<double>(nexmark_field_value(e, p.nexmark_value)), mix64(stream_hash, n)};
    }
    case SourceGeneratorKind::ysb: {
      const YsbEvent e = ysb_event(spec.ysb, seed, i);
      return Tuple{i, time_of(spec.rate_tps, i), ysb_field_value(e, p.ysb_key),
                   static_cast<double>(ysb_field_value(e, p.ysb_value)), mix64(stream_hash, i)};
    }
  }
  return make_uniform_tuple(spec, seed, stream_hash, i);
}

TimeUs tuple_time_us(const SourceSpec& spec, TupleId i) {
  if (spec.generator == SourceGeneratorKind::nexmark)
    return nexmark_event_time_us(spec.nexmark.events_per_s, nexmark_event_number(spec.nexmark.event, i));
  return time_of(spec.rate_tps, i);
}

}  // namespace

TimeUs source_tuple_time_us(const SourceSpec& spec, TupleId i) { return tuple_time_us(spec, i); }

SourceGenerator::SourceGenerator(SourceSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)), seed_(seed), stream_hash_(hash_name(spec_.stream)) {
  const Projection p = projection_of(spec_);
  nexmark_key_ = p.nexmark_key;
  nexmark_value_ = p.nexmark_value;
  ysb_key_ = p.ysb_key;
  ysb_value_ = p.ysb_value;
}

TimeUs SourceGenerator::time_us(TupleId i) const { return tuple_time_us(spec_, i); }

TupleId SourceGenerator::last_due_by(TimeUs now) const {
  if (spec_.generator == SourceGeneratorKind::nexmark) {
    // Tuple i is due when its event is: when its number is below the events due by `now`.
    return nexmark_kind_count(spec_.nexmark.event, last_due(spec_.nexmark.events_per_s, now));
  }
  return last_due(spec_.rate_tps, now);
}

Tuple SourceGenerator::tuple(TupleId i) const {
  return make_tuple(spec_, seed_, stream_hash_, Projection{nexmark_key_, nexmark_value_, ysb_key_, ysb_value_}, i);
}

void SourceGenerator::append_tuples(TupleId first, std::size_t count, Tuples& out) const {
  const std::size_t at = out.size();
  out.resize(at + count);
  Tuple* to = out.data() + at;
  if (spec_.generator != SourceGeneratorKind::uniform || spec_.values.kind != DistributionKind::uniform ||
      spec_.key_count <= 0) {
    for (std::size_t k = 0; k < count; ++k) to[k] = tuple(first + k);
    return;
  }
  // The common case, uniform values, with the spec read once: the same arithmetic as
  // make_uniform_tuple() (Rng::first_two gives what its first two draws give).
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
  return make_tuple(spec, seed, hash_name(spec.stream), projection_of(spec), i);
}

TupleId source_tuple_count(const SourceSpec& spec, double duration_s) {
  if (spec.generator == SourceGeneratorKind::nexmark)
    return nexmark_kind_count(spec.nexmark.event, count_before(spec.nexmark.events_per_s, duration_s));
  return count_before(spec.rate_tps, duration_s);
}

}  // namespace hapair
