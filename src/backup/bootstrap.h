// Bringing a standby up to date while its primary runs on: my full state now as one checkpoint,
// and every node of each producer asked to send the standby my input after the positions that
// state has processed (Redirect). A rejoining active standby is bootstrapped so
// (active_primary_side.cpp), and so is a hybrid standby switched to active (src/hybrid).
//
// Paper: active standby (section 4.2) needs a backup with the primary's state that receives the
// same input; beyond the paper, a standby that joins (or turns active) mid-run gets both.
//
// Invariants: the checkpoint is full and has the id asked for (checked); the redirected positions
// are exactly its input positions, so the standby's state and its input meet without a gap or
// an overlap. A bootstrap may be sent again as it was (same id, same chunks); its redirection is
// sent once, as a repeat would move a producer's cursor back behind what the standby acknowledged.
#pragma once

#include <cstdint>
#include <vector>

#include "primary/checkpoint_state.h"
#include "primary/server.h"

namespace hapair {

// One captured bootstrap: the chunks to send and the positions they cover.
struct Bootstrap {
  CheckpointContent summary;        // positions only (the state is in the chunks)
  std::vector<Checkpoint> chunks;   // never empty
};

// My full state now as bootstrap checkpoint `id` (counted as bootstrap_checkpoint_bytes).
Bootstrap capture_bootstrap(Server& server, std::uint64_t id);

// The chunks to `standby` (again, if it lost some).
void send_bootstrap_chunks(Server& server, TimeUs now, NodeId standby, const Bootstrap& b, Effects& eff);

// Every node of each producer told to send `standby` my input after the bootstrap's positions.
void redirect_inputs(Server& server, TimeUs now, NodeId standby, const Bootstrap& b, Effects& eff);

// Capture, send and redirect in one step; returns the summary (positions only).
CheckpointContent send_bootstrap(Server& server, TimeUs now, NodeId standby, std::uint64_t id, Effects& eff);

// Asks every node of each producer to stop sending `standby` my input (the redirection undone).
void undo_redirection(Server& server, TimeUs now, NodeId standby, Effects& eff);

}  // namespace hapair
