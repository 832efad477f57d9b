// The two ends of ha = checkpoint (global checkpoints, docs/CHECKPOINT.md) at an operator
// fragment, and its registration record.
//
//   - The primary end (CheckpointPrimarySide): turns the coordinator's trigger (a fragment that
//     reads a source) and its producers' CheckpointBarriers into holds on its inputs
//     (FragmentCheckpointer, BarrierAligner); once every input reached its barrier, it captures
//     its snapshot (the fragment's state, its input positions and its output queues: the
//     kernel's full checkpoint, primary/checkpoint_state.h), sends it to the coordinator in
//     Checkpoint chunks and its barriers to its coordinated consumers (repeated until the
//     checkpoint completes, as a lost one would otherwise stall them), then releases its inputs.
//     When the coordinator declares a checkpoint complete it sends its producers level-1 acks up
//     to that checkpoint's input positions: they keep everything after it, so a rollback to it
//     can be replayed. It heartbeats the coordinator when the driver does not watch.
//   - The spare's end (CheckpointSpareRole): a standby that holds nothing. It watches its primary
//     like every standby (the pair's heartbeats) but does not take over on its own: the
//     coordinator decides. On the coordinator's Rollback naming its fragment it installs the
//     snapshot the coordinator sent just before (or empty state: no checkpoint completed yet),
//     takes over at a new epoch, asks its producers to replay after the snapshot's input
//     positions and tells the coordinator Restored.
//
// Why the snapshot carries the output queues: under failover = region the consumers do not roll
// back; what a consumer had not yet received when the snapshot was taken (in flight, or held by
// flow control) cannot be regenerated from the snapshot's state, which has already produced it.
// Flink's unaligned checkpoints keep in-flight data for the same reason. The queues hold output
// since the consumers' last completed checkpoint (their level-1 acks come only then).
//
// Invariants: a snapshot of c reflects input up to c's barrier on every input and nothing beyond
// (the inputs are held at their barriers); a barrier whose input already went past it (it was
// overtaken) abandons the checkpoint here, so no inconsistent snapshot is sent; level-1 acks name
// only positions of complete checkpoints and never go back; the spare takes over at most once,
// only on a Rollback of the current coordinator order naming its fragment, and with the
// snapshot of exactly the checkpoint the rollback names (else it waits: counted).
#pragma once

#include "primary/approach.h"

namespace hapair {

std::unique_ptr<PrimarySide> make_checkpoint_primary_side(Server& server, const PrimaryOptions& options);

// The registration record of ha = checkpoint: both ends and the coordinator's core
// (checkpoint/coordinator_node.h) with its options from the plan's settings.
Approach global_checkpoints_approach();

}  // namespace hapair
