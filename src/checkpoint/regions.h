// Which fragments roll back when one fails (docs/CHECKPOINT.md, "Recovery"): Flink's failover
// strategies. `full` restarts the whole job: every operator fragment rolls back. `region` rolls
// back the failed fragment's pipelined region: the fragments joined to it by streams whose
// producer does not keep its output since the last completed checkpoint (Flink cuts regions at
// blocking result partitions, whose data survives a consumer's restart; a retained output queue
// is hapair's). Sources and sinks never roll back themselves: a source is rewound by its
// consumers' replay requests (its tuples are a function of their ids), and a sink, the client
// application, keeps the ids it delivered and drops what a rollback regenerates.
//
// Invariant: the set holds the failed fragment, only operator fragments, ascending.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocols/plan.h"

namespace hapair {

// FailoverMode, its names and parse_failover_mode are in protocols/topology.h (a setting).

// `stream_retained[s]`: plan stream s's producer keeps its output since the last completed
// checkpoint (a stream between two operator fragments that does not cuts no region).
std::vector<FragmentId> failover_fragments(const Plan& plan, FragmentId failed, FailoverMode mode,
                                           const std::vector<bool>& stream_retained);
// The same for every operator fragment of the plan (the coordinator's rollback sets).
std::map<FragmentId, std::vector<FragmentId>> rollback_sets(const Plan& plan, FailoverMode mode,
                                                            const std::vector<bool>& stream_retained);

}  // namespace hapair
