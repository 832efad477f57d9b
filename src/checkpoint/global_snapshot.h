// A fragment's snapshot of a global checkpoint, as the checkpoint store keeps it
// (docs/CHECKPOINT.md, "Snapshot"): the fragment's operator state and its barrier positions on
// every input (how far it processed) and every output (how far it produced). No output tuples:
// the cut is consistent, so a consumer restored to the same checkpoint asks exactly for what its
// producer, restored, regenerates. Encoded as a passive standby's full checkpoint payload
// (primary/checkpoint.h) with empty output queues, so installing it is the kernel's install.
//
// Invariant: decode(encode(s)) == s; a payload that is not a whole full checkpoint, or one that
// carries output tuples, is refused (nullopt), never half-read.
#pragma once

#include <optional>

#include "checkpoint/fragment_checkpointer.h"
#include "primary/checkpoint.h"

namespace hapair {

struct GlobalSnapshot {
  CheckpointId id = 0;
  Bytes fragment_state;                     // Fragment::snapshot()
  std::map<StreamId, TupleId> inputs;       // processed up to
  std::map<StreamId, TupleId> outputs;      // produced up to
  friend bool operator==(const GlobalSnapshot&, const GlobalSnapshot&) = default;
};

// The snapshot a DueSnapshot describes, with the fragment's state at that moment.
GlobalSnapshot global_snapshot(const DueSnapshot& due, Bytes fragment_state);
Bytes encode_global_snapshot(const GlobalSnapshot& s);
std::optional<GlobalSnapshot> decode_global_snapshot(const Bytes& payload);

}  // namespace hapair
