// The standby's end of checkpointing: assembles the chunks of each checkpoint its primary sends,
// applies it (full, or a delta on the last one) into its copy, acknowledges it once installed,
// and at a takeover installs that copy into the node. Passive standby is this and a takeover;
// hybrid standby (src/hybrid) keeps one in either of its modes.
//
// Paper: passive standby (section 4.1): the backup holds the last checkpoint the primary sent;
// upstream servers trim only what an acknowledged checkpoint covers.
//
// Invariants: a checkpoint is acknowledged only after it is installed, whole (checked before the
// ack: the installed copy has its id and is full); a partial or corrupt one is never installed
// (counted: it comes from a peer); the copy is unpacked completely before it is installed into
// the node (checked in install_into).
#pragma once

#include <cstdint>
#include <string>

#include "primary/checkpoint_state.h"
#include "primary/server.h"

namespace hapair {

class CheckpointReceiver {
 public:
  // A chunk from my primary; when it completes a checkpoint that applies, installs it in my copy
  // and acknowledges it. Returns the id installed now (0: none).
  std::uint64_t on_chunk(Server& server, TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff);
  // The last installed checkpoint (id 0: none yet), packed or not.
  const InstalledCheckpoint& installed() const { return installed_; }
  // Its content with every tuple unpacked.
  const CheckpointContent& unpacked();
  // At a takeover: installs my copy into the node (or resets its state when I have none).
  // Returns the id installed (0: none); `how` says it in words for the takeover's trace.
  std::uint64_t install_into(Server& server, std::string& how);

 private:
  CheckpointAssembler assembler_;
  InstalledCheckpoint installed_;
};

}  // namespace hapair
