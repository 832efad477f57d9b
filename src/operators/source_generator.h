// The deterministic source generator. Tuple i of a source (i >= 1) is a pure function of
// (seed, source spec, i): ts = i * 1e6 / rate_tps microseconds, key uniform in [0, key_count),
// value from the configured distribution, lineage = hash(stream name, i). So a source can be
// restarted anywhere, and the reference run recomputes exactly the same input.
#pragma once

#include <cstdint>

#include "protocols/topology.h"
#include "protocols/tuple.h"

namespace hapair {

Tuple source_tuple(const SourceSpec& spec, std::uint64_t seed, TupleId i);
// Number of tuples a source emits in a run of `duration_s`: the ids with ts < duration.
TupleId source_tuple_count(const SourceSpec& spec, double duration_s);
// Scheduled emission time of tuple i.
TimeUs source_tuple_time_us(const SourceSpec& spec, TupleId i);

}  // namespace hapair
