// Bringing a standby up to date while its primary runs on: my full state now as one checkpoint,
// and every node of each producer asked to send the standby my input after the positions that
// state has processed (Redirect). A rejoining active standby is bootstrapped so
// (active_primary_side.cpp), and so is a hybrid standby switched to active (src/hybrid).
//
// Paper: active standby (section 4.2) needs a backup with the primary's state that receives the
// same input; beyond the paper, a standby that joins (or turns active) mid-run gets both.
//
// Invariant: the checkpoint is full and has the id asked for (checked); the redirected positions
// are exactly its input positions, so the standby's state and its input meet without a gap or
// an overlap.
#pragma once

#include <cstdint>

#include "primary/checkpoint_state.h"
#include "primary/server.h"

namespace hapair {

// Sends the bootstrap to `standby` as checkpoint `id`; returns its summary (positions only).
CheckpointContent send_bootstrap(Server& server, TimeUs now, NodeId standby, std::uint64_t id, Effects& eff);

// Asks every node of each producer to stop sending `standby` my input (the redirection undone).
void undo_redirection(Server& server, TimeUs now, NodeId standby, Effects& eff);

}  // namespace hapair
