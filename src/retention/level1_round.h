// One round of level-1 acknowledgements of an upstream-backup server.
//
// Paper: a level-1 ack tells an upstream server that input up to id y is no longer needed: the
// downstream's state no longer depends on it and every output it contributed to has been
// level-0-acknowledged further downstream (section 4.3). y is computed by composing the cause
// functions of the fragment's operators backwards from every output stream (at the position
// all of its consumers acknowledged) to every input stream (Fragment::restart_point), and the
// composed restart point travels with the ack so a recovery node can restart exactly there.
// hapair composes from where each output queue begins (its trim position) rather than from the
// level-0-acknowledged position: a recovery node then regenerates everything the failed server
// still held, which a downstream recovery node may need when both fail (docs/FAULTS.md).
//
// Invariants: y never exceeds what was processed, so nothing unprocessed is ever trimmed; a
// round names exactly the fragment's input streams (both checked in make_level1_round, and y
// again where the round is sent, upstream_backup/level1_sender.cpp).
#pragma once

#include <map>

#include "operators/fragment.h"

namespace hapair {

struct Level1Round {
  Bytes restart_point;
  std::map<StreamId, TupleId> up_to;  // per fragment input stream
};

// `acked_outputs`: per output stream, the internal (operator) id after which everything must be
// regenerated (the trim position under upstream backup); `processed`: the last processed id per
// input.
Level1Round make_level1_round(const Fragment& fragment, const std::map<StreamId, TupleId>& acked_outputs,
                              const std::map<StreamId, TupleId>& processed);

// The conservative trimming rule (settings.trimming = conservative, experiment 6): a server that
// knows nothing about its operators' cause functions can only keep a fixed horizon of input
// (conservative_retention_ms of event time) and, on recovery, restart from empty state at the
// oldest tuple it kept. Its level-1 acks carry this marker instead of a restart point; a
// recovery node that receives it replays everything retained and rebases its output ids.
inline const Bytes kConservativeRestartPoint = {'C', 'O', 'N', 'S'};
Level1Round make_conservative_level1_round(const std::map<StreamId, TupleId>& horizon_ids);

}  // namespace hapair
