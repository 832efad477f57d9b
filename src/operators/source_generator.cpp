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

// When tuple i of a uniform or ysb source is due: i / rate, or with rate spikes the moment the
// cumulative rate reaches i (RateSpikes). Non-decreasing in i.
struct Schedule {
  double rate = 0.0;
  RateSpikes spikes;

  TimeUs at(TupleId i) const {
    if (!(rate > 0.0)) return kNever;
    // floor of a non-negative value: the conversion truncates, which is the same.
    if (!spikes.on()) return static_cast<TimeUs>(static_cast<double>(i) * 1e6 / rate);
    return static_cast<TimeUs>(spiked_seconds(static_cast<double>(i)) * 1e6);
  }
  // About how many tuples are due by `t_us` (the inverse of at(), before rounding).
  double count_estimate(double t_us) const {
    if (!spikes.on()) return t_us * rate / 1e6;
    return spiked_count(t_us / 1e6);
  }

 private:
  // Tuples per spike period, and in its spike.
  double per_period() const { return rate * (spikes.every_s - spikes.length_s) + spiked_rate() * spikes.length_s; }
  double spiked_rate() const { return rate * spikes.factor; }
  double spiked_seconds(double n) const {
    const double before = rate * spikes.first_s;
    if (n <= before) return n / rate;
    const double j = n - before;
    const double k = std::floor(j / per_period());
    const double rest = j - k * per_period();
    const double in_spike = spiked_rate() * spikes.length_s;
    const double tau = rest <= in_spike ? rest / spiked_rate() : spikes.length_s + (rest - in_spike) / rate;
    return spikes.first_s + k * spikes.every_s + tau;
  }
  double spiked_count(double t) const {
    if (t <= spikes.first_s) return std::max(0.0, t * rate);
    const double since = t - spikes.first_s;
    const double k = std::floor(since / spikes.every_s);
    const double tau = since - k * spikes.every_s;
    const double in_period = tau <= spikes.length_s ? tau * spiked_rate() : spikes.length_s * spiked_rate() + (tau - spikes.length_s) * rate;
    return rate * spikes.first_s + k * per_period() + in_period;
  }
};

Schedule schedule_of(const SourceSpec& spec) { return Schedule{spec.rate_tps, spec.spikes}; }
Schedule schedule_of(double rate) { return Schedule{rate, {}}; }

// The largest position p (from 1) of a schedule with at(p) <= now (0: none).
TupleId last_due(const Schedule& s, TimeUs now) {
  if (!(s.rate > 0.0) || now < 0) return 0;
  // at(p) grows with p: start from the closed-form estimate and correct it (rounding may go
  // either way), as count_before() does.
  const double estimate = std::floor(s.count_estimate(static_cast<double>(now)));
  TupleId n = estimate < 1.0 ? 0 : static_cast<TupleId>(std::min(estimate, 9007199254740992.0));
  while (n > 0 && s.at(n) > now) --n;
  while (s.at(n + 1) <= now) ++n;
  return n;
}

// The number of positions p (from 1) of a schedule with at(p) < duration.
TupleId count_before(const Schedule& s, double duration_s) {
  if (!(s.rate > 0.0) || !(duration_s > 0.0)) return 0;
  const double duration_us = duration_s * 1e6;
  // at(p) grows with p, so the count is the largest p with at(p) < duration. Start from the
  // closed-form estimate and correct it, because floor() and the division may round either way.
  const double estimate = std::floor(s.count_estimate(duration_us));
  TupleId n = estimate < 1.0 ? 0 : static_cast<TupleId>(std::min(estimate, 9007199254740992.0));
  while (n > 0 && !(static_cast<double>(s.at(n)) < duration_us)) --n;
  while (static_cast<double>(s.at(n + 1)) < duration_us) ++n;
  return n;
}

Tuple make_uniform_tuple(const SourceSpec& spec, std::uint64_t seed, std::uint64_t stream_hash, TupleId i) {
  const std::uint64_t position = mix64(stream_hash, i);
  // A generator per tuple (counter based), so tuple i never depends on how many came before.
  Rng r = Rng::derive(seed, position);
  Tuple t;
  t.id = i;
  t.ts_us = schedule_of(spec).at(i);
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
      return Tuple{i, schedule_of(spec).at(i), ysb_field_value(e, p.ysb_key),
                   static_cast<double>(ysb_field_value(e, p.ysb_value)), mix64(stream_hash, i)};
    }
  }
  return make_uniform_tuple(spec, seed, stream_hash, i);
}

TimeUs tuple_time_us(const SourceSpec& spec, TupleId i) {
  if (spec.generator == SourceGeneratorKind::nexmark)
    return nexmark_event_time_us(spec.nexmark.events_per_s, nexmark_event_number(spec.nexmark.event, i));
  return schedule_of(spec).at(i);
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
    return nexmark_kind_count(spec_.nexmark.event, last_due(schedule_of(spec_.nexmark.events_per_s), now));
  }
  return last_due(schedule_of(spec_), now);
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
  const Schedule schedule = schedule_of(spec_);
  for (std::size_t k = 0; k < count; ++k) {
    const TupleId i = first + k;
    const std::uint64_t position = mix64(stream_hash_, i);
    const Rng::Pair draws = Rng::first_two(mix64(seed_, position));
    const double v = lo + width * Rng::unit_from_bits(draws.second);
    to[k] = Tuple{i, schedule.at(i), static_cast<std::int64_t>(Rng::below(draws.first, keys)), integer ? floor_exact(v) : v,
                  position};
  }
}

Tuple source_tuple(const SourceSpec& spec, std::uint64_t seed, TupleId i) {
  return make_tuple(spec, seed, hash_name(spec.stream), projection_of(spec), i);
}

TupleId source_tuple_count(const SourceSpec& spec, double duration_s) {
  if (spec.generator == SourceGeneratorKind::nexmark)
    return nexmark_kind_count(spec.nexmark.event, count_before(schedule_of(spec.nexmark.events_per_s), duration_s));
  return count_before(schedule_of(spec), duration_s);
}

}  // namespace hapair
