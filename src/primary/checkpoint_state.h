// Capturing a Server's state into a checkpoint (on the passive primary) and installing one (on
// the passive standby at takeover).
//
// Paper: passive standby (section 4.1). Invariant: install() either installs the whole
// checkpoint or nothing (it checks the fragment state first and leaves the server untouched on
// failure).
#pragma once

#include <map>
#include <vector>

#include "primary/checkpoint.h"
#include "primary/server.h"

namespace hapair {

// What a later delta checkpoint is relative to.
struct CheckpointBase {
  std::uint64_t id = 0;
  std::vector<std::uint64_t> fragment_versions;
  std::map<StreamId, TupleId> output_last_ids;
};

// A checkpoint captured and written in one pass: its payload in chunks of at most chunk_bytes
// (the output queues' tuples copied straight from the queues into them) and its summary (the
// positions: no tuples, no fragment state).
struct CapturedCheckpoint {
  CheckpointContent summary;
  std::vector<Bytes> chunks;
  std::size_t payload_bytes = 0;
};
// delta_base == nullptr: a full checkpoint.
CapturedCheckpoint capture_checkpoint(const Server& server, std::uint64_t id, const CheckpointBase* delta_base,
                                      std::size_t chunk_bytes);
// The base a later delta refers to; `versions` are the fragment's state versions at capture.
CheckpointBase base_of(const CheckpointContent& captured, std::vector<std::uint64_t> versions);

// A standby's copy of the last installed checkpoint (always full). A full checkpoint may be kept
// as it arrived: `packed` holds its payload (checked when it came: it parses) and `full` holds
// everything but the outputs' tuples, which unpack() puts there when they are needed (at
// takeover, or before a delta applies). Most checkpoints are replaced by the next one without
// ever being needed, and a packed tuple takes about 13 bytes instead of 40.
struct InstalledCheckpoint {
  std::uint64_t id = 0;
  CheckpointContent full;
  Bytes packed;  // empty: `full` is complete
  // Unpacks `packed` into the outputs of `full` (nothing to do when it is empty).
  void unpack();
};

// Applies a received checkpoint (full, or a delta on `current`) into a new full copy; false when
// it does not apply (wrong base, corrupt fragment state) — then `current` is unchanged. Taken by
// value: a full checkpoint's tuples move into `current` instead of being copied once more.
// `packed`: the payload of a full `received` parsed with TupleParsing::check, kept packed in
// `current`; empty when `received` holds its tuples.
bool apply_checkpoint(const Plan& plan, FragmentId fragment, CheckpointContent received,
                      InstalledCheckpoint& current, Bytes packed = {});

// Installs a full checkpoint into the server: fragment state, input positions, output queues.
bool install_checkpoint(Server& server, const CheckpointContent& full);

}  // namespace hapair
