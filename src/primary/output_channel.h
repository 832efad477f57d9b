// One output stream of a node: its output queue (the retained log), a cursor per consumer node
// (what was sent, what it acknowledged at level 0, whether it told us where to resume), the
// flow-control window, retransmission with back-off, rebasing of ids after a takeover that
// cannot regenerate them, the release gate that holds output back, and what the consumer
// fragments sent with their level-1 acks (retention/consumer_restart_points.h, which it
// consults for trimming and for the held generation every batch carries).
//
// Paper: output queues double as logs for recovery, trimmed by queue-trimming acknowledgements
// (sections 2, 4.3); after a takeover they are re-sent and downstream drops duplicates by id.
//
// Invariants: a consumer is never sent an id at or below its cursor, nor more than the window
// beyond its level-0 ack; the queue is trimmed only as far as every consumer's acknowledgement
// allows; a held release gate only moves forward; wire ids strictly grow across rebases.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "protocols/messages.h"
#include "protocols/output_queue.h"
#include "retention/consumer_restart_points.h"

namespace hapair {

// Output is sent only up to the gate's position while it is held: a passive primary of an
// arbitrary fragment until a covering checkpoint is acknowledged, an active primary until the
// standby has the determinants. Open: everything goes out.
class ReleaseGate {
 public:
  bool held() const { return up_to_ != kOpen; }
  // The last wire id that may be sent (the highest id when open).
  TupleId limit() const { return up_to_; }
  // Begins holding what comes after `last` (what exists is released already). A gate that is
  // held already does not move back.
  void hold_after(TupleId last);
  // Releases up to `id`; the gate only moves forward.
  void release_up_to(TupleId id);
  void open() { up_to_ = kOpen; }

 private:
  static constexpr TupleId kOpen = ~TupleId{0};
  TupleId up_to_ = kOpen;
};

struct ConsumerState {
  NodeId node = kNoNode;
  FragmentId fragment = kNoFragment;
  bool retention = false;  // trims on level-1 (its mode may ask for replay) instead of level-0
  bool sends = true;       // false for a consumer we only track (a standby's view)
  bool ready = true;       // false until it told us where to resume (ReplayRequest)
  TupleId sent_up_to = 0;
  TupleId level0 = 0;
  TupleId replay_until = 0;  // ids <= this are sent flagged as replay
  bool eos_sent = false;
  bool eos_acked = false;
  std::uint32_t retransmits = 0;  // consecutive re-sends without progress (back-off)
  // When the consumer last made progress (an ack that moved, or a send with nothing in flight):
  // no progress for the retransmission timeout with something unacknowledged means re-send.
  TimeUs progress_us = 0;
  // The held generation this consumer is told rose (a new restart-point generation arrived, or
  // my upstream confirmed holding one): tell it with the next batch, an empty one if no tuples
  // go out.
  bool confirm_owed = false;
  // The last boundary told to this consumer, and when (a quiet stream repeats a moved boundary
  // at most every boundary interval).
  std::uint32_t boundary_sent_ms = 0;
  TimeUs boundary_sent_us = 0;
};

// A batch for one consumer node.
struct OutgoingBatch {
  NodeId to = kNoNode;
  TupleBatch batch;
};

// What pump() did, for the node's counters.
struct PumpReport {
  std::uint64_t tuples_sent = 0;
  std::int64_t tuples_replayed = 0;
  bool replayed = false;
  std::int64_t confirmations = 0;
  std::int64_t boundaries = 0;  // batches sent only for their boundary
};

class OutputChannel {
 public:
  // `restart_points`: what the stream keeps for its consumers, with the plan's policy
  // (ConsumerRestartPoints::for_stream); a default one for a channel built on its own.
  // `recipe`: a source's stream, whose queue recomputes its tuples (protocols/tuple_recipe.h).
  OutputChannel(StreamId stream, std::size_t tuples_max, ConsumerRestartPoints restart_points = {},
                std::shared_ptr<const TupleRecipe> recipe = nullptr)
      : stream_(stream), queue_(tuples_max, std::move(recipe)), restart_points_(std::move(restart_points)) {}

  StreamId stream() const { return stream_; }
  const OutputQueue& queue() const { return queue_; }
  const std::vector<ConsumerState>& consumers() const { return consumers_; }
  // wire id = internal (operator) id + offset; non-zero after a takeover that rebased its ids.
  TupleId offset() const { return offset_; }
  const ReleaseGate& gate() const { return gate_; }

  // Appends an operator output (internal id), applying the offset.
  void append(Tuple t) {
    t.id += offset_;
    queue_.append(t);
  }
  // Appends n operator outputs (internal ids) in one go, applying the offset.
  void append_run(const Tuple* first, std::size_t n) { queue_.append_run(first, n, offset_); }
  // A source's stream: appends its ids up to `last` (never rebased: the offset stays 0).
  void extend_to(TupleId last) {
    HAPAIR_CHECK_MSG(offset_ == 0, "stream " << stream_ << " is recomputed and rebased");
    queue_.extend_to(last);
  }
  void end_stream() { queue_.end_stream(); }
  // Boundaries (a plan with a Union in timestamp order): every tuple appended from now on has
  // ts >= boundary_us (it only moves forward). Every batch then carries the boundary of what
  // follows it for its consumer; a consumer with nothing to send gets a batch with only a moved
  // boundary, at most every `interval_us` (set_boundary_interval).
  void set_boundary(TimeUs boundary_us) { boundary_us_ = std::max(boundary_us_, boundary_us); }
  void set_boundary_interval(TimeUs interval_us) { boundary_interval_us_ = interval_us; }

  // ---- consumers ------------------------------------------------------------------------------
  bool has_consumer(NodeId n) const;
  void add_consumer(const ConsumerState& c);
  void remove_consumer(NodeId n);
  // Drops the consumers of fragment f that are not among `live`.
  void keep_only_live(FragmentId f, const std::vector<NodeId>& live);
  // A live switch of consumer fragment f's approach: its nodes trim on level-1 acks (`retention`)
  // or on level-0 acks from now on, and it recovers from restart points or not.
  void follow_consumer_approach(FragmentId f, bool retention, bool recovers_from_restart_points);
  // A live switch of my own fragment's approach.
  void follow_own_approach(const Plan& plan, FragmentId self, bool recovers_from_restart_points) {
    restart_points_.follow_own_approach(plan, self, recovers_from_restart_points);
  }
  void replace_consumers(std::vector<ConsumerState> consumers) { consumers_ = std::move(consumers); }
  bool all_ready() const;
  // Consumer n tells where to resume (a ReplayRequest after a takeover, or a joining standby):
  // it is sent what comes after `after_id` (kReplayOnlyNew-style "only new" when only_new).
  // Returns how many tuples it asks for that were trimmed already (0: none).
  TupleId resume(NodeId n, TupleId after_id, bool only_new, TimeUs now);
  // Whether consumer n is there and ready (a gap fill is served only then).
  bool ready(NodeId n) const;
  // The batches that re-send to consumer n what lies in (after, up_to], bounded by what it was
  // sent; nullopt when n is not sent to (a standby's view).
  std::optional<std::vector<TupleBatch>> gap_fill(NodeId n, TupleId after, TupleId up_to,
                                                  std::size_t batch_tuples_max) const;
  // Consumer n (or every consumer) is sent to (a primary's view) or only tracked (a standby's).
  void set_sending(NodeId n, bool sends);
  void set_sending_all(bool sends);

  // ---- flow ----------------------------------------------------------------------------------
  // Sends what the window and the release gate allow to every ready consumer.
  PumpReport pump(TimeUs now, std::size_t batch_tuples_max, std::size_t inflight_tuples_max,
                  std::vector<OutgoingBatch>& out);
  // false when `from` is no consumer of this stream.
  bool on_level0_ack(TimeUs now, NodeId from, const Level0Ack& ack);
  // Rewinds every consumer that made no progress for its back-off; returns when to look next.
  TimeUs retransmit(TimeUs now, TimeUs retransmit_us, std::int64_t& retransmissions);
  // Trims the queue as far as every consumer's acknowledgement allows, less `margin` tuples.
  std::size_t trim(TupleId margin);
  // Rebases ids above the highest id any consumer was sent (a takeover that cannot regenerate
  // identical ids); everything retained is re-sent as replay.
  void rebase();
  // The internal id up to which every consumer level-0 acked (0 without consumers).
  TupleId acked_internal() const;
  // The internal id up to which the queue is trimmed.
  TupleId trimmed_internal() const;
  bool acked_to_end() const;

  // ---- release gate ---------------------------------------------------------------------------
  void hold_after_last() { gate_.hold_after(queue_.last_id()); }
  void hold_after_log_start() { gate_.hold_after(queue_.trimmed_up_to()); }
  void release_up_to(TupleId id) { gate_.release_up_to(id); }
  // Opens the gate; returns how many queued tuples it held.
  std::size_t release_all();

  // ---- level-1 acks and restart points -----------------------------------------------------------
  const ConsumerRestartPoints& restart_points() const { return restart_points_; }
  // A level-1 ack from consumer node `from` of fragment d; a new generation is owed a
  // confirmation (held_generation).
  void add_level1(FragmentId d, NodeId from, const Level1Ack& ack);
  // Installs what an upstream forwarded (a recovery node restarted from a restart point): the
  // queue holds nothing at or below its trim position, and the consumer's points are back.
  void install(const DownstreamRestartPoints& forwarded);
  // My upstream holds `generation` of consumer d's points too; true when that is news.
  bool confirm_forwarded(FragmentId d, std::uint64_t generation);
  // Owes consumer fragment d's nodes a confirmation.
  void owe_confirmation(FragmentId d);

  // ---- state transfer -------------------------------------------------------------------------
  // Installs a checkpoint's output queue (the gate opens).
  void restore(TupleId offset, TupleId trimmed_up_to, TupleId last_id, bool ended, const Tuples& tuples);
  // A fresh standby's view: empty queue, consumers tracked and not sent to.
  // Empties the log (nothing retained, ids from the start, nothing held); consumers unchanged.
  void clear_log();
  void reset_for_standby();

 private:
  ConsumerState* find(NodeId n);
  std::size_t inflight(const ConsumerState& c) const { return queue_.count_between(c.level0, c.sent_up_to); }

  StreamId stream_;
  OutputQueue queue_;
  std::vector<ConsumerState> consumers_;
  TupleId offset_ = 0;
  ReleaseGate gate_;
  ConsumerRestartPoints restart_points_;
  // The boundary, in ms, of what follows queue index `next` for a consumer (0: none).
  std::uint32_t boundary_ms_after(std::size_t next) const;
  TimeUs boundary_us_ = 0;
  TimeUs boundary_interval_us_ = 0;
};

}  // namespace hapair
