// One input stream of a node: what it accepted from the producer (duplicate elimination by tuple
// id), batches kept beyond a lost one until the gap is filled, the level-0 acknowledgement
// schedule, and the replay it asked the producer for after a takeover.
//
// Paper: downstream servers drop duplicates by tuple id after a takeover (section 4) and send
// level-0 acks, "received up to id x" (section 4.3).
//
// Invariants: an accepted id is above every id accepted before (since the last replay request);
// the stash holds at most one flow-control window of tuples; the queued count never underflows.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "primary/input_queue.h"
#include "protocols/duplicate_filter.h"
#include "protocols/messages.h"
#include "retention/conservative_horizon.h"

namespace hapair {

// ReplayRequest::after_id meaning "send only tuples that are new from now on" (amnesia).
inline constexpr TupleId kReplayOnlyNew = ~TupleId{0};

struct InputLimits {
  std::size_t window_tuples = 0;      // inflight_tuples_max: the most a producer has in flight
  std::size_t queue_tuples_max = 0;   // input_queue_tuples_max, per stream
  TimeUs retransmit_us = 0;           // how long a gap request waits before it is repeated
};

// What accepting one batch did, for the node to count and trace.
struct Accepted {
  std::size_t queued = 0;
  std::uint64_t duplicates = 0;
  TupleId duplicate_first = 0;  // the lowest and highest duplicate id (when duplicates > 0)
  TupleId duplicate_last = 0;
  std::int64_t overflow_dropped = 0;   // beyond input_queue_tuples_max (the producer broke its credit)
  bool gap_detected = false;
  bool stash_overflow = false;
  std::optional<ReplayRequest> gap_request;  // ask the producer for just the missing tuples
  bool replay_batches = false;
  std::int64_t replayed_tuples = 0;
  // Replay phases that began (0) or ended (the tuples it brought), in order.
  std::vector<std::optional<std::uint64_t>> replay_changes;
};

class InputChannel {
 public:
  InputChannel(StreamId stream, FragmentId producer) : stream_(stream), producer_(producer) {}

  StreamId stream() const { return stream_; }
  FragmentId producer() const { return producer_; }
  TupleId last_accepted() const { return accepted_.last_accepted(); }
  TupleId processed() const { return processed_; }
  bool eos_processed() const { return eos_processed_; }
  std::size_t queued() const { return queued_; }
  // Upstream backup: the newest restart-point generation the producer's primary says it holds
  // from us (TupleBatch.held_generation); reset when the producer's primary changes.
  std::uint64_t held_generation() const { return held_generation_; }
  // Conservative trimming (keep_horizon): the last processed id that fell out of the retention
  // horizon (0 when none, or when no horizon is kept).
  TupleId beyond_horizon() const { return horizon_ ? horizon_->beyond() : 0; }
  bool awaiting_producer() const { return awaiting_producer_; }

  // A batch from the producer's current primary: duplicates dropped, the rest appended to
  // `queue`; a batch beyond a lost one is kept until the gap is filled.
  // `from`: the node that sent the batch (recorded with each queued tuple).
  Accepted accept(TimeUs now, const TupleBatch& batch, const InputLimits& limits, InputQueue& queue,
                  NodeId from = kNoNode);

  // The workload took a tuple (or the end of stream) of this stream.
  void processed_tuple(const Tuple& t) { processed_tuples(&t, 1); }
  // ... or `count` consecutive queued tuples at once.
  void processed_tuples(const Tuple* first, std::size_t count);
  void processed_end_of_stream() { eos_processed_ = true; }
  // From now on, follow the conservative trimming rule's horizon of `retention_us` over the
  // processed tuples (upstream backup without cause functions asks for it); a horizon kept
  // already stays as it is.
  void keep_horizon(TimeUs retention_us);

  // The level-0 ack that is due now (after interval_us, after ack_every processed tuples, or
  // force: whatever the schedule), marked as sent.
  std::optional<Level0Ack> level0_due(TimeUs now, TimeUs interval_us, std::size_t ack_every, bool force);
  // When the next level-0 ack falls due by the interval (kNever: nothing unacknowledged).
  TimeUs next_level0_due_us(TimeUs interval_us) const;

  // Asks the producer to re-send after `from` (kReplayOnlyNew: only new tuples) for restart
  // point `generation`; repeated by replay_request_due until the producer answers.
  ReplayRequest ask_replay(TimeUs now, TupleId from, std::uint64_t generation);
  // The producer's fragment was taken over: ask its new primary to continue after what I
  // accepted; it holds none of my restart points until it says so.
  ReplayRequest ask_new_producer(TimeUs now);
  // The replay request to repeat now (no answer for retransmit_us), if any.
  std::optional<ReplayRequest> replay_request_due(TimeUs now, TimeUs retransmit_us);
  // When replay_request_due next needs to look (kNever: not waiting).
  TimeUs next_replay_request_us(TimeUs retransmit_us) const;

  // Installs a checkpoint's position: processed (and accepted) up to `processed`.
  void restore(TupleId processed, bool eos_processed);

 private:
  std::size_t accept_in_order(const TupleBatch& batch, NodeId from, const InputLimits& limits, InputQueue& queue,
                              Accepted& out);
  void clear_stash();
  void forget_replay();

  StreamId stream_;
  FragmentId producer_;
  DuplicateFilter accepted_;  // last accepted (queued) id
  TupleId processed_ = 0;     // last id handed to the workload
  bool eos_received_ = false;
  bool eos_processed_ = false;
  TupleId level0_sent_ = 0;
  TimeUs level0_sent_us_ = 0;
  std::size_t processed_since_ack_ = 0;
  std::size_t queued_ = 0;  // tuples of this stream waiting in the input queue
  bool replaying_ = false;  // receiving tuples flagged as replay
  std::uint64_t replayed_tuples_ = 0;
  std::optional<ConservativeHorizon> horizon_;
  // Accept the next batch whatever its prev_id (after asking for only new tuples).
  bool accept_any_prev_ = false;
  std::uint64_t held_generation_ = 0;
  TimeUs gap_requested_us_ = -1'000'000'000;
  TupleId gap_requested_after_ = ~TupleId{0};
  // Batches that arrived beyond a lost one, by their prev_id (bounded by the flow-control
  // window: the sender cannot have more in flight).
  std::map<TupleId, TupleBatch> stash_;
  std::size_t stash_tuples_ = 0;
  bool ack_owed_ = false;  // duplicates arrived, so the sender may have lost our ack
  bool eos_acked_ = false;
  // After a takeover: we asked the producer to replay and have not heard from it since.
  bool awaiting_producer_ = false;
  TimeUs replay_requested_us_ = 0;
  TupleId replay_after_ = 0;
  std::uint64_t replay_generation_ = 0;
};

}  // namespace hapair
