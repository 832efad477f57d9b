#include "primary/input_channel.h"

#include <algorithm>

#include "protocols/check.h"

namespace hapair {

Accepted InputChannel::accept(TimeUs now, const TupleBatch& batch, const InputLimits& limits,
                              InputQueue& queue, NodeId from) {
  HAPAIR_CHECK_MSG(batch.stream == stream_, "batch of stream " << batch.stream << " on input " << stream_);
  Accepted out;
  held_generation_ = std::max(held_generation_, batch.held_generation);
  awaiting_producer_ = false;
  if (!accept_any_prev_ && batch.prev_id > accepted_.last_accepted()) {
    // Something the producer sent before this batch never arrived (a lost message or a broken
    // connection). Keep this batch and ask for just the missing tuples.
    out.gap_detected = true;
    if (!stash_.count(batch.prev_id) && stash_tuples_ + batch.tuples.size() <= limits.window_tuples) {
      stash_.emplace(batch.prev_id, batch);
      stash_tuples_ += batch.tuples.size();
    } else if (!stash_.count(batch.prev_id)) {
      out.stash_overflow = true;  // re-sent later by the producer's retransmission
    }
    HAPAIR_CHECK_MSG(stash_tuples_ <= limits.window_tuples, "stash " << stash_tuples_ << " window " << limits.window_tuples);
    const TupleId after = accepted_.last_accepted();
    if (gap_requested_after_ != after || now - gap_requested_us_ >= limits.retransmit_us) {
      gap_requested_us_ = now;
      gap_requested_after_ = after;
      out.gap_request = ReplayRequest{stream_, after, 0, stash_.begin()->first};
    }
    return out;
  }
  if (accept_any_prev_ && batch.prev_id > accepted_.last_accepted()) {
    // Only new tuples were asked for: what the producer sent before this batch is old, also when
    // it arrives later (a retransmission). Start after it, so a boundary this batch carries holds
    // for every tuple this channel still accepts.
    accepted_.reset_to(batch.prev_id);
    processed_ = std::max(processed_, batch.prev_id);
    level0_sent_ = std::max(level0_sent_, batch.prev_id);
  }
  accept_any_prev_ = false;
  out.queued = accept_in_order(batch, from, limits, queue, out);
  // The gap may be filled now: what was kept beyond it follows, in order.
  while (!stash_.empty() && stash_.begin()->first <= accepted_.last_accepted()) {
    TupleBatch next = std::move(stash_.begin()->second);
    HAPAIR_CHECK(stash_tuples_ >= next.tuples.size());
    stash_tuples_ -= next.tuples.size();
    stash_.erase(stash_.begin());
    out.queued += accept_in_order(next, from, limits, queue, out);
  }
  return out;
}

std::size_t InputChannel::accept_in_order(const TupleBatch& batch, NodeId from, const InputLimits& limits,
                                          InputQueue& queue, Accepted& out) {
  std::size_t queued = 0;
  const auto overflow_before = out.overflow_dropped;
  // The common case: every tuple is new, in increasing order, and within the queue's bound.
  // Queued as one range; what the loop below would do, tuple by tuple.
  const std::size_t n = batch.tuples.size();
  const bool all_new = n > 0 && batch.tuples.front().id > accepted_.last_accepted() &&
                       queued_ + n <= limits.queue_tuples_max &&
                       std::adjacent_find(batch.tuples.begin(), batch.tuples.end(), [](const Tuple& a, const Tuple& b) {
                         return b.id <= a.id;
                       }) == batch.tuples.end();
  if (all_new) {
    accepted_.accept(batch.tuples.back().id);
    queue.push_tuples(stream_, from, batch.replay, batch.tuples.data(), n);
    queued_ += n;
    queued = n;
  } else {
    for (const Tuple& t : batch.tuples) {
      if (t.id <= accepted_.last_accepted()) {
        if (out.duplicates == 0 || t.id < out.duplicate_first) out.duplicate_first = t.id;
        out.duplicate_last = std::max(out.duplicate_last, t.id);
        ++out.duplicates;
        ack_owed_ = true;  // the sender re-sent: our acknowledgement may have been lost
        continue;
      }
      if (queued_ >= limits.queue_tuples_max) {
        // The producer sent beyond its credit; the tuple is not accepted, so a later replay or
        // re-send can still deliver it. Counted, never silent.
        ++out.overflow_dropped;
        continue;
      }
      accepted_.accept(t.id);
      queue.push_tuple(stream_, from, batch.replay, t);
      ++queued_;
      ++queued;
    }
  }
  if (batch.replay) {
    if (!replaying_) {
      replaying_ = true;
      out.replay_changes.emplace_back(std::nullopt);
    }
    replayed_tuples_ += batch.tuples.size();
    out.replay_batches = true;
    out.replayed_tuples += static_cast<std::int64_t>(batch.tuples.size());
  } else if (replaying_) {
    replaying_ = false;
    out.replay_changes.emplace_back(replayed_tuples_);
  }
  // A boundary holds for what follows this batch only if every tuple of the batch was taken: a
  // tuple refused for want of room comes again later, below the boundary.
  if (batch.boundary_ms > 0 && out.overflow_dropped == overflow_before && !eos_received_)
    queue.push_boundary(stream_, from, batch.replay, static_cast<TimeUs>(batch.boundary_ms) * 1000);
  if (batch.end_of_stream && eos_received_) eos_acked_ = false;  // a repeat: acknowledge it again
  if (batch.end_of_stream && !eos_received_) {
    eos_received_ = true;
    queue.push_end_of_stream(stream_, from, batch.replay);
    if (replaying_) {
      replaying_ = false;
      out.replay_changes.emplace_back(replayed_tuples_);
    }
  }
  return queued;
}

void InputChannel::processed_tuples(const Tuple* first, std::size_t count) {
  if (count == 0) return;
  HAPAIR_CHECK_MSG(queued_ >= count, "stream " << stream_ << " processed " << count << " tuples from " << first->id
                                                << " with " << queued_ << " queued");
  queued_ -= count;
  processed_ = first[count - 1].id;
  processed_since_ack_ += count;
  if (horizon_)
    for (std::size_t i = 0; i < count; ++i) horizon_->processed(first[i].id, first[i].ts_us);
}

void InputChannel::keep_horizon(TimeUs retention_us) {
  if (!horizon_) horizon_.emplace(retention_us);
}

std::optional<Level0Ack> InputChannel::level0_due(TimeUs now, TimeUs interval_us, std::size_t ack_every, bool force) {
  const bool owed = ack_owed_ || (eos_processed_ && !eos_acked_);
  if (processed_ <= level0_sent_ && !owed) return std::nullopt;
  const bool due = force || owed || now >= level0_sent_us_ + interval_us || processed_since_ack_ >= ack_every;
  if (!due) return std::nullopt;
  level0_sent_ = processed_;
  level0_sent_us_ = now;
  processed_since_ack_ = 0;
  ack_owed_ = false;
  if (eos_processed_) eos_acked_ = true;
  return Level0Ack{stream_, processed_, eos_processed_};
}

TimeUs InputChannel::next_level0_due_us(TimeUs interval_us) const {
  return processed_ > level0_sent_ ? level0_sent_us_ + interval_us : kNever;
}

void InputChannel::clear_stash() {
  stash_.clear();
  stash_tuples_ = 0;
  gap_requested_after_ = ~TupleId{0};
}

void InputChannel::forget_replay() {
  replaying_ = false;
  replayed_tuples_ = 0;
  clear_stash();
}

ReplayRequest InputChannel::ask_replay(TimeUs now, TupleId from, std::uint64_t generation) {
  if (from != kReplayOnlyNew) {
    accepted_.reset_to(from);
    processed_ = std::max(processed_, from);
    level0_sent_ = std::max(level0_sent_, from);
  } else {
    accept_any_prev_ = true;
  }
  forget_replay();
  awaiting_producer_ = true;
  replay_requested_us_ = now;
  replay_after_ = from;
  replay_generation_ = generation;
  return ReplayRequest{stream_, from, generation};
}

ReplayRequest InputChannel::ask_new_producer(TimeUs now) {
  forget_replay();
  held_generation_ = 0;
  awaiting_producer_ = true;
  replay_requested_us_ = now;
  replay_after_ = accepted_.last_accepted();
  replay_generation_ = 0;
  return ReplayRequest{stream_, accepted_.last_accepted(), 0};
}

std::optional<ReplayRequest> InputChannel::replay_request_due(TimeUs now, TimeUs retransmit_us) {
  if (!awaiting_producer_ || now - replay_requested_us_ < retransmit_us) return std::nullopt;
  replay_requested_us_ = now;
  return ReplayRequest{stream_, replay_after_, replay_generation_};
}

TimeUs InputChannel::next_replay_request_us(TimeUs retransmit_us) const {
  return awaiting_producer_ ? replay_requested_us_ + retransmit_us : kNever;
}

void InputChannel::restore(TupleId processed, bool eos_processed) {
  accepted_.reset_to(processed);
  processed_ = processed;
  level0_sent_ = processed;
  eos_processed_ = eos_processed;
  eos_received_ = eos_processed;
}

}  // namespace hapair
