// The deterministic source generator. Tuple i of a source (i >= 1) is a pure function of
// (seed, source spec, i), so a source can be restarted anywhere, and the reference run recomputes
// exactly the same input. Three generators (SourceSpec::generator, docs/TOPOLOGY.md):
// - uniform: ts = i * 1e6 / rate_tps microseconds (with rate spikes, RateSpikes, the moment the
//   cumulative rate reaches i), key uniform in [0, key_count), value from the
//   configured distribution, all from (seed, stream name, i); lineage = hash(stream name, i).
// - nexmark (operators/nexmark.h): tuple i is the i-th event of the source's kind in NEXMark's
//   global event sequence, ts that event's time, (key, value) two of its fields; lineage =
//   hash(stream name, event number).
// - ysb (operators/ysb.h): tuple i is YSB ad event i at ts = i * 1e6 / rate_tps, (key, value) two
//   of its fields; lineage = hash(stream name, i).
// The events of nexmark and ysb depend on (seed, knobs, number), not on the stream name, so
// sources projecting other fields of the same kind see the same events.
#pragma once

#include <cstdint>

#include "operators/nexmark.h"
#include "operators/ysb.h"
#include "protocols/topology.h"
#include "protocols/tuple.h"
#include "protocols/tuple_recipe.h"

namespace hapair {

// One source's generator: what source_tuple() computes, with what depends on the spec alone
// (the stream name's hash) computed once. A source's output queue recomputes its retained
// tuples with it (protocols/tuple_recipe.h).
class SourceGenerator final : public TupleRecipe {
 public:
  SourceGenerator(SourceSpec spec, std::uint64_t seed);
  Tuple tuple(TupleId i) const override;
  void append_tuples(TupleId first, std::size_t count, Tuples& out) const override;
  // Scheduled emission time of tuple i (source_tuple_time_us).
  TimeUs time_us(TupleId i) const;
  // The largest id whose scheduled time is at or before `now` (0: none).
  TupleId last_due_by(TimeUs now) const;
  const SourceSpec& spec() const { return spec_; }

 private:
  SourceSpec spec_;
  std::uint64_t seed_;
  std::uint64_t stream_hash_;
  // The projected fields of a nexmark or ysb source, resolved once (validate() refuses others).
  NexmarkField nexmark_key_ = NexmarkField::bid_auction;
  NexmarkField nexmark_value_ = NexmarkField::bid_price;
  YsbField ysb_key_ = YsbField::ad;
  YsbField ysb_value_ = YsbField::event_type;
};

Tuple source_tuple(const SourceSpec& spec, std::uint64_t seed, TupleId i);
// Number of tuples a source emits in a run of `duration_s`: the ids with ts < duration.
TupleId source_tuple_count(const SourceSpec& spec, double duration_s);
// Scheduled emission time of tuple i.
TimeUs source_tuple_time_us(const SourceSpec& spec, TupleId i);

}  // namespace hapair
