// The input side of a node: one InputChannel per input stream of its fragment and the input
// queue they feed, in arrival order, to the workload. It accepts batches from each producer's
// current primary (duplicates dropped by tuple id), sends level-0 acks for what the workload
// processed, and asks producers to replay (after a takeover, mine or theirs) until they answer.
//
// Paper: every server keeps input queues; downstream servers drop duplicates by tuple id after
// a takeover (section 4) and send level-0 acks, "received up to id x" (section 4.3).
//
// Invariants: the input queue holds only tuples accepted from a producer's current primary (and
// each stream's end of stream once), in the order they were accepted; each stream's share of it
// is at most input_queue_tuples_max (a producer that breaks its credit is counted, never
// queued); an item leaves the queue only to be processed, and is marked processed on its
// stream as it leaves.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "primary/checkpoint.h"
#include "primary/input_channel.h"
#include "primary/node_identity.h"
#include "primary/outbox.h"
#include "primary/pair_side.h"

namespace hapair {

class InputSide {
 public:
  using Channels = std::map<StreamId, InputChannel>;

  // One channel per input stream of my fragment. Every argument outlives the side.
  InputSide(const NodeIdentity& node, Outbox& outbox, PairSide& pair);

  // ---- what it holds (read-only) -----------------------------------------------------------------
  Channels::const_iterator begin() const { return channels_.begin(); }
  Channels::const_iterator end() const { return channels_.end(); }
  Channels::const_iterator find(StreamId s) const { return channels_.find(s); }
  const InputChannel& at(StreamId s) const { return channels_.at(s); }
  std::size_t size() const { return channels_.size(); }
  // Items (tuples and ends of stream) waiting for the workload.
  std::size_t queued() const { return queue_.size(); }
  // Every input stream's end of stream was processed.
  bool all_ended() const;
  // Some producer has not answered the replay request I sent it after a takeover.
  bool awaiting_producer() const;
  // When the next level-0 ack falls due by ack_interval_ms (kNever: nothing unacknowledged).
  TimeUs next_ack_due_us() const;
  std::uint64_t duplicates_dropped() const { return duplicates_dropped_; }

  // ---- the data plane ----------------------------------------------------------------------------
  // Accepts a batch from the producer's current primary: drops duplicates and stale senders
  // (counted, and a node acting as the producer's primary when it is not is told the route),
  // asks for what a lost batch left out, queues the rest. Returns the number of tuples queued.
  std::size_t accept_batch(TimeUs now, NodeId from, const TupleBatch& batch, Effects& eff);
  // Level-0 acks for processed input (to the producer's primary and active backup), when due
  // (or always when force).
  void send_level0_acks(TimeUs now, Effects& eff, bool force);
  // The oldest run of queued items (queued() > 0): tuples of one stream from one sender, or an
  // end of stream (primary/input_queue.h).
  const InputQueue::Run& front_run() const { return queue_.front(); }
  // The workload takes the first n items of the oldest run; they are marked processed on their
  // stream. (A run's tuples stay readable until the call that takes its last one.)
  void take_front(std::size_t n);

  // ---- barrier alignment (global checkpoints, docs/CHECKPOINT.md) -------------------------------
  // Processes input `stream` only up to tuple `after_id` until release_input(stream): its later
  // items wait aside (still accepted, still counted against the stream's share of the queue).
  void hold_input(StreamId stream, TupleId after_id) { queue_.hold(stream, after_id); }
  void release_input(StreamId stream) { queue_.release(stream); }

  // ---- replay ------------------------------------------------------------------------------------
  // Asks every input stream's producer to re-send after `after` (per stream), e.g. after a
  // takeover. A missing stream in the map means "after what I accepted".
  void request_replay(TimeUs now, Effects& eff, const std::map<StreamId, TupleId>& after, std::uint64_t generation);
  // A producer fragment was taken over (Takeover t): ask its new primary to continue after what
  // I accepted.
  void ask_new_producer(TimeUs now, const Takeover& t, Effects& eff);
  // Repeats every replay request that got no answer for retransmit_timeout_ms; returns when to
  // look again.
  TimeUs repeat_replay_requests(TimeUs now, Effects& eff);

  // ---- state -------------------------------------------------------------------------------------
  // Installs a checkpoint's input positions.
  void restore(const std::vector<CheckpointInput>& positions);
  // A fresh standby's view: nothing accepted, nothing queued.
  void reset_for_standby();
  // Upstream backup's conservative rule: every stream follows a horizon of `retention_us` of
  // event time over what is processed (InputChannel::keep_horizon).
  void keep_horizon(TimeUs retention_us);

 private:
  InputLimits limits() const;

  const NodeIdentity& node_;
  Outbox& outbox_;
  PairSide& pair_;
  Channels channels_;
  InputQueue queue_;
  std::uint64_t duplicates_dropped_ = 0;
};

}  // namespace hapair
