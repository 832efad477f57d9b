// One round of level-1 acknowledgements of an upstream-backup server.
//
// Paper: a level-1 ack tells an upstream server that input up to id y is no longer needed: the
// downstream's state no longer depends on it and every output it contributed to has been
// level-0-acknowledged further downstream (section 4.3). y is computed by composing the cause
// functions of the fragment's operators backwards from every output stream (at the position
// all of its consumers acknowledged) to every input stream (Fragment::restart_point), and the
// composed restart point travels with the ack so a recovery node can restart exactly there.
//
// Invariant: y never exceeds what was processed, so nothing unprocessed is ever trimmed.
#pragma once

#include <map>

#include "operators/fragment.h"

namespace hapair {

struct Level1Round {
  Bytes restart_point;
  std::map<StreamId, TupleId> up_to;  // per fragment input stream
};

// `acked_outputs` are internal (operator) ids; `processed` is the last processed id per input.
Level1Round make_level1_round(const Fragment& fragment, const std::map<StreamId, TupleId>& acked_outputs,
                              const std::map<StreamId, TupleId>& processed);

}  // namespace hapair
