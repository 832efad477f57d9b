#include "primary/input_side.h"

#include <algorithm>
#include <utility>

namespace hapair {

InputSide::InputSide(const NodeIdentity& node, Outbox& outbox, PairSide& pair) : node_(node), outbox_(outbox), pair_(pair) {
  for (StreamId s : node_.fragment_plan().inputs) channels_.emplace(s, InputChannel(s, node_.plan().streams[s].producer));
}

InputLimits InputSide::limits() const {
  return InputLimits{static_cast<std::size_t>(node_.settings().inflight_tuples_max),
                     static_cast<std::size_t>(node_.settings().input_queue_tuples_max), node_.retransmit_us()};
}

bool InputSide::all_ended() const {
  return std::all_of(channels_.begin(), channels_.end(), [](const auto& c) { return c.second.eos_processed(); });
}

bool InputSide::awaiting_producer() const {
  return std::any_of(channels_.begin(), channels_.end(), [](const auto& c) { return c.second.awaiting_producer(); });
}

TimeUs InputSide::next_ack_due_us() const {
  TimeUs due = kNever;
  const TimeUs interval = us_from_ms(static_cast<double>(node_.settings().ack_interval_ms));
  for (const auto& [s, in] : channels_) due = std::min(due, in.next_level0_due_us(interval));
  return due;
}

std::size_t InputSide::accept_batch(TimeUs now, NodeId from, const TupleBatch& batch, Effects& eff) {
  auto it = channels_.find(batch.stream);
  if (it == channels_.end()) {
    outbox_.count("unexpected_stream_dropped");
    return 0;
  }
  InputChannel& in = it->second;
  if (from != pair_.routes().route(in.producer()).primary) {
    outbox_.count("not_from_primary_dropped");
    // A node of the producer that is not its primary (as I know it) sends as one: it lost an
    // epoch tie or missed its fencing, so tell it who is.
    if (from < node_.plan().nodes.size() && node_.plan().nodes[from].fragment == in.producer()) pair_.tell_route(now, from, eff);
    return 0;
  }
  const Accepted a = in.accept(now, batch, limits(), queue_, from);
  duplicates_dropped_ += a.duplicates;
  if (a.gap_detected) {
    outbox_.count("batch_gaps_detected");
    if (a.stash_overflow) outbox_.count("stash_overflow_dropped");
    if (a.gap_request) {
      outbox_.send(eff, now, from, *a.gap_request);
      outbox_.count("gap_replay_requests");
    }
    return 0;
  }
  if (a.overflow_dropped > 0) outbox_.count("input_overflow_dropped", a.overflow_dropped);
  if (a.replay_batches) outbox_.count("replayed_tuples_received", a.replayed_tuples);
  if (!batch.tuples.empty() && outbox_.records(TraceKind::batch_received)) {
    outbox_.trace(eff, now, TraceKind::batch_received)
        .with(TraceKey::peer, from)
        .with(TraceKey::stream, batch.stream)
        .with(TraceKey::first_id, batch.tuples.front().id)
        .with(TraceKey::last_id, batch.tuples.back().id)
        .with(TraceKey::count, a.queued)
        .with(TraceKey::duplicates, a.duplicates);
  }
  if (a.duplicates > 0) {
    outbox_.trace(eff, now, TraceKind::duplicates_dropped)
        .with(TraceKey::peer, from)
        .with(TraceKey::stream, batch.stream)
        .with(TraceKey::first_id, a.duplicate_first)
        .with(TraceKey::last_id, a.duplicate_last)
        .with(TraceKey::count, a.duplicates);
  }
  for (const auto& change : a.replay_changes) {
    if (!change) {
      outbox_.trace(eff, now, TraceKind::replay_start)
          .with(TraceKey::stream, batch.stream)
          .with(TraceKey::peer, from)
          .with(TraceKey::first_id, batch.tuples.empty() ? TupleId{0} : batch.tuples.front().id);
    } else {
      outbox_.trace(eff, now, TraceKind::replay_end)
          .with(TraceKey::stream, batch.stream)
          .with(TraceKey::peer, from)
          .with(TraceKey::count, *change);
    }
  }
  return a.queued;
}

void InputSide::send_level0_acks(TimeUs now, Effects& eff, bool force) {
  const TimeUs interval = us_from_ms(static_cast<double>(node_.settings().ack_interval_ms));
  // Every quarter of the producer's window at the latest: it can go on sending while the ack
  // is on its way (with a half, a loaded machine that is slow to wake the producer stalled it).
  const auto ack_every = static_cast<std::size_t>(std::max<std::int64_t>(1, node_.settings().inflight_tuples_max / 4));
  for (auto& [s, in] : channels_)
    if (auto ack = in.level0_due(now, interval, ack_every, force))
      for (NodeId n : pair_.routes().input_nodes_of(in.producer())) outbox_.send(eff, now, n, *ack);
}

void InputSide::take_front(std::size_t n) {
  const InputQueue::Run& run = queue_.front();
  InputChannel& in = channels_.at(run.stream);
  if (run.eos) {
    in.processed_end_of_stream();
  } else if (run.boundary_only) {
    // A boundary takes no room in the channel's queue.
  } else {
    HAPAIR_CHECK_MSG(n <= run.items(), "take " << n << " of a run of " << run.items());
    in.processed_tuples(run.first(), n);
  }
  queue_.pop_front(n);
}

void InputSide::request_replay(TimeUs now, Effects& eff, const std::map<StreamId, TupleId>& after,
                               std::uint64_t generation) {
  for (auto& [s, in] : channels_) {
    auto it = after.find(s);
    const TupleId from = it != after.end() ? it->second : in.last_accepted();
    outbox_.send(eff, now, pair_.routes().route(in.producer()).primary, in.ask_replay(now, from, generation));
  }
}

void InputSide::ask_new_producer(TimeUs now, const Takeover& t, Effects& eff) {
  for (auto& [s, in] : channels_)
    if (in.producer() == t.fragment) outbox_.send(eff, now, t.new_primary, in.ask_new_producer(now));
}

TimeUs InputSide::repeat_replay_requests(TimeUs now, Effects& eff) {
  const TimeUs rt = node_.retransmit_us();
  TimeUs next = kNever;
  for (auto& [s, in] : channels_) {
    if (auto req = in.replay_request_due(now, rt)) {
      outbox_.send(eff, now, pair_.routes().route(in.producer()).primary, *req);
      outbox_.count("replay_requests_repeated");
    }
    next = std::min(next, in.next_replay_request_us(rt));
  }
  return next;
}

void InputSide::restore(const std::vector<CheckpointInput>& positions) {
  for (const auto& ci : positions) {
    auto it = channels_.find(ci.stream);
    if (it != channels_.end()) it->second.restore(ci.processed, ci.eos_processed);
  }
}

void InputSide::reset_for_standby() {
  queue_.clear();
  for (auto& [s, in] : channels_) in = InputChannel(s, in.producer());
}

void InputSide::keep_horizon(TimeUs retention_us) {
  for (auto& [s, in] : channels_) in.keep_horizon(retention_us);
}

}  // namespace hapair
