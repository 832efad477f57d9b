#include "primary/output_channel.h"

#include <algorithm>

#include "protocols/check.h"
#include "protocols/topology.h"

namespace hapair {

void ReleaseGate::hold_after(TupleId last) {
  HAPAIR_CHECK_MSG(!held() || last >= up_to_, "release gate moves back from " << up_to_ << " to " << last);
  up_to_ = last;
}

void ReleaseGate::release_up_to(TupleId id) {
  HAPAIR_CHECK_MSG(held(), "release up to " << id << " through an open gate");
  HAPAIR_CHECK_MSG(id >= up_to_, "release gate moves back from " << up_to_ << " to " << id);
  up_to_ = id;
}

ConsumerState* OutputChannel::find(NodeId n) {
  ConsumerState* found = nullptr;
  for (ConsumerState& c : consumers_)
    if (c.node == n) found = &c;
  return found;
}

bool OutputChannel::has_consumer(NodeId n) const {
  return std::any_of(consumers_.begin(), consumers_.end(), [&](const ConsumerState& c) { return c.node == n; });
}

void OutputChannel::add_consumer(const ConsumerState& c) {
  HAPAIR_CHECK_MSG(!has_consumer(c.node), "node " << c.node << " is a consumer of stream " << stream_ << " already");
  consumers_.push_back(c);
}

void OutputChannel::remove_consumer(NodeId n) {
  std::erase_if(consumers_, [&](const ConsumerState& c) { return c.node == n; });
}

void OutputChannel::keep_only_live(FragmentId f, const std::vector<NodeId>& live) {
  std::erase_if(consumers_, [&](const ConsumerState& c) {
    return c.fragment == f && std::find(live.begin(), live.end(), c.node) == live.end();
  });
}

void OutputChannel::follow_consumer_approach(FragmentId f, bool retention, bool recovers_from_restart_points) {
  for (ConsumerState& c : consumers_)
    if (c.fragment == f) c.retention = retention;
  restart_points_.follow_consumer_approach(f, recovers_from_restart_points);
}

bool OutputChannel::all_ready() const {
  return std::all_of(consumers_.begin(), consumers_.end(), [](const ConsumerState& c) { return c.ready; });
}

bool OutputChannel::ready(NodeId n) const {
  for (const ConsumerState& c : consumers_)
    if (c.node == n) return c.ready;
  return false;
}

void OutputChannel::set_sending(NodeId n, bool sends) {
  ConsumerState* c = find(n);
  HAPAIR_CHECK_MSG(c, "node " << n << " is no consumer of stream " << stream_);
  c->sends = sends;
}

void OutputChannel::set_sending_all(bool sends) {
  for (ConsumerState& c : consumers_) c.sends = sends;
}

TupleId OutputChannel::resume(NodeId n, TupleId after_id, bool only_new, TimeUs now) {
  ConsumerState* c = find(n);
  HAPAIR_CHECK_MSG(c, "node " << n << " is no consumer of stream " << stream_);
  c->ready = true;
  c->eos_sent = false;
  c->eos_acked = false;
  c->progress_us = now;
  if (only_new) {
    c->sent_up_to = queue_.last_id();
    c->level0 = std::max(c->level0, c->sent_up_to);
    c->replay_until = 0;
    return 0;
  }
  const TupleId gap = after_id < queue_.trimmed_up_to() ? queue_.trimmed_up_to() - after_id : 0;
  c->sent_up_to = after_id;
  c->level0 = std::max(c->level0, after_id);
  c->replay_until = queue_.last_id();
  return gap;
}

std::optional<std::vector<TupleBatch>> OutputChannel::gap_fill(NodeId n, TupleId after, TupleId up_to,
                                                                std::size_t batch_tuples_max) const {
  const ConsumerState* c = nullptr;
  for (const ConsumerState& x : consumers_)
    if (x.node == n) c = &x;
  if (!c || !c->sends) return std::nullopt;
  up_to = std::min(up_to, c->sent_up_to);
  std::vector<TupleBatch> out;
  std::size_t i = queue_.index_after(after);
  TupleId prev = after;
  while (i < queue_.size() && queue_.at(i).id <= up_to) {
    TupleBatch b;
    b.stream = stream_;
    b.prev_id = prev;
    b.held_generation = restart_points_.held_generation(c->fragment);
    while (i < queue_.size() && queue_.at(i).id <= up_to && b.tuples.size() < batch_tuples_max)
      b.tuples.push_back(queue_.at(i++));
    prev = b.tuples.back().id;
    out.push_back(std::move(b));
  }
  return out;
}

std::uint32_t OutputChannel::boundary_ms_after(std::size_t next) const {
  if (boundary_us_ <= 0) return 0;
  // The stream's timestamps never go back, so the next tuple not yet sent bounds every later
  // one; with none queued, the stream's own boundary does.
  TimeUs b = boundary_us_;
  if (next < queue_.size()) b = std::min(b, queue_.at(next).ts_us);
  return static_cast<std::uint32_t>(std::clamp<TimeUs>(b / 1000, 0, 0xffffffffLL));
}

PumpReport OutputChannel::pump(TimeUs now, std::size_t batch_max, std::size_t inflight_max,
                               std::vector<OutgoingBatch>& out) {
  PumpReport report;
  const TupleId limit = std::min(queue_.last_id(), gate_.limit());
  // The queue does not change while it is pumped, so each position is looked up once: the
  // limit's, a consumer's acknowledged one, and its cursor's, which then moves to each batch's end.
  const std::size_t limit_at = queue_.index_after(limit);
  for (ConsumerState& c : consumers_) {
    if (!c.sends || !c.ready) continue;
    const TupleId sent_before = c.sent_up_to;
    const bool eos_before = c.eos_sent;
    const std::size_t acked_at = queue_.index_after(c.level0);
    std::size_t start = queue_.index_after(c.sent_up_to);
    for (;;) {
      const std::size_t used = c.sent_up_to > c.level0 ? start - acked_at : 0;  // inflight(c)
      if (used >= inflight_max) break;
      const std::size_t stop = std::min(queue_.size(), start + std::min(batch_max, inflight_max - used));
      const std::size_t end = std::max(start, std::min(stop, limit_at));
      const bool at_end = queue_.ended() && limit == queue_.last_id() && end == queue_.size();
      if (end == start && !(at_end && !c.eos_sent)) break;
      TupleBatch b;
      b.stream = stream_;
      b.prev_id = c.sent_up_to;
      b.held_generation = restart_points_.held_generation(c.fragment);
      if (used == 0) c.progress_us = now;  // the retransmission clock starts with the first unacknowledged send
      b.tuples.reserve(end - start);
      queue_.copy_to(start, end, b.tuples);
      if (!b.tuples.empty()) {
        HAPAIR_CHECK_MSG(b.tuples.front().id > c.sent_up_to,
                         "stream " << stream_ << " re-sends " << b.tuples.front().id << " at cursor " << c.sent_up_to);
        c.sent_up_to = b.tuples.back().id;
        start = end;  // index_after(c.sent_up_to): the ids grow along the queue
        b.replay = b.tuples.front().id <= c.replay_until;
        report.tuples_sent += b.tuples.size();
        if (b.replay) {
          report.replayed = true;
          report.tuples_replayed += static_cast<std::int64_t>(b.tuples.size());
        }
      }
      if (at_end) {
        b.end_of_stream = true;
        c.eos_sent = true;
      } else if (boundary_us_ > 0) {
        b.boundary_ms = boundary_ms_after(end);
        if (b.boundary_ms > c.boundary_sent_ms) {
          c.boundary_sent_ms = b.boundary_ms;
          c.boundary_sent_us = now;
        }
      }
      out.push_back(OutgoingBatch{c.node, std::move(b)});
      if (at_end) break;
    }
    // A quiet stream: nothing went out, but its boundary moved since the consumer last heard it.
    if (boundary_us_ > 0 && !c.eos_sent && c.sent_up_to == sent_before && now - c.boundary_sent_us >= boundary_interval_us_) {
      const std::uint32_t ms = boundary_ms_after(queue_.index_after(c.sent_up_to));
      if (ms > c.boundary_sent_ms) {
        TupleBatch b;
        b.stream = stream_;
        b.prev_id = c.sent_up_to;
        b.held_generation = restart_points_.held_generation(c.fragment);
        b.replay = c.sent_up_to < c.replay_until;
        b.boundary_ms = ms;
        c.boundary_sent_ms = ms;
        c.boundary_sent_us = now;
        c.confirm_owed = false;  // this batch carries held_generation too
        ++report.boundaries;
        out.push_back(OutgoingBatch{c.node, std::move(b)});
      }
    }
    HAPAIR_CHECK_MSG(inflight(c) <= inflight_max, "stream " << stream_ << " has " << inflight(c) << " in flight");
    if (c.confirm_owed && c.sent_up_to == sent_before && c.eos_sent == eos_before) {
      // Nothing went out to carry held_generation: an empty batch does (its prev_id is what
      // was sent, so it opens no gap).
      TupleBatch b;
      b.stream = stream_;
      b.prev_id = c.sent_up_to;
      b.held_generation = restart_points_.held_generation(c.fragment);
      b.replay = c.sent_up_to < c.replay_until;
      ++report.confirmations;
      out.push_back(OutgoingBatch{c.node, std::move(b)});
    }
    c.confirm_owed = false;
  }
  return report;
}

bool OutputChannel::on_level0_ack(TimeUs now, NodeId from, const Level0Ack& ack) {
  bool known = false;
  for (ConsumerState& c : consumers_)
    if (c.node == from) {
      if (ack.up_to > c.level0 || (ack.end_of_stream && !c.eos_acked)) {
        c.progress_us = now;
        c.retransmits = 0;
      }
      c.level0 = std::max(c.level0, ack.up_to);
      if (ack.end_of_stream && queue_.ended() && ack.up_to >= queue_.last_id()) c.eos_acked = true;
      known = true;
    }
  return known;
}

TimeUs OutputChannel::retransmit(TimeUs now, TimeUs rt, std::int64_t& retransmissions) {
  TimeUs next = kNever;
  for (ConsumerState& c : consumers_) {
    if (!c.sends || !c.ready) continue;
    const bool unacked = c.sent_up_to > c.level0 || (c.eos_sent && !c.eos_acked);
    if (!unacked) continue;
    // Exponential back-off, so a consumer that is gone for good costs little.
    const TimeUs timeout = rt << std::min(c.retransmits, kRetransmitBackoffDoublingsMax);
    if (now - c.progress_us >= timeout) {
      c.sent_up_to = c.level0;
      c.eos_sent = false;
      c.progress_us = now;
      ++c.retransmits;
      ++retransmissions;
      next = std::min(next, now + (rt << std::min(c.retransmits, kRetransmitBackoffDoublingsMax)));
    } else {
      next = std::min(next, c.progress_us + timeout);
    }
  }
  return next;
}

std::size_t OutputChannel::trim(TupleId margin) {
  if (consumers_.empty()) return 0;
  TupleId trim_to = ~TupleId{0};
  for (const ConsumerState& c : consumers_) {
    TupleId pos = c.level0;
    if (c.retention) pos = std::min(pos, restart_points_.trim_position(c.fragment));
    trim_to = std::min(trim_to, pos);
  }
  trim_to = trim_to > margin ? trim_to - margin : 0;
  return queue_.trim_up_to(trim_to);
}

void OutputChannel::rebase() {
  TupleId highest = 0;
  for (const ConsumerState& c : consumers_) highest = std::max(highest, c.sent_up_to);
  TupleId shift = 0;
  if (!queue_.empty()) {
    const TupleId first = queue_.at(0).id;
    shift = highest + 1 > first ? highest + 1 - first : 0;
  } else {
    shift = highest > queue_.last_id() ? highest - queue_.last_id() : 0;
  }
  if (shift > 0) {
    std::vector<Tuple> kept;
    kept.reserve(queue_.size());
    for (std::size_t i = 0; i < queue_.size(); ++i) {
      Tuple t = queue_.at(i);
      t.id += shift;
      kept.push_back(t);
    }
    const bool ended = queue_.ended();
    queue_.reset(highest, queue_.last_id() + shift, ended);
    for (const Tuple& t : kept) queue_.restore_append(t);
    offset_ += shift;
  }
  HAPAIR_CHECK_MSG(queue_.empty() || queue_.at(0).id > highest,
                   "stream " << stream_ << " rebased to " << queue_.at(0).id << " at or below " << highest);
  for (ConsumerState& c : consumers_) c.replay_until = queue_.last_id();
}

TupleId OutputChannel::acked_internal() const {
  TupleId acked = ~TupleId{0};
  for (const ConsumerState& c : consumers_) acked = std::min(acked, c.level0);
  if (consumers_.empty()) acked = 0;
  return acked > offset_ ? acked - offset_ : 0;
}

TupleId OutputChannel::trimmed_internal() const {
  const TupleId trimmed = queue_.trimmed_up_to();
  return trimmed > offset_ ? trimmed - offset_ : 0;
}

bool OutputChannel::acked_to_end() const {
  if (!queue_.ended()) return false;
  for (const ConsumerState& c : consumers_)
    if (!c.eos_acked || c.level0 < queue_.last_id()) return false;
  return true;
}

std::size_t OutputChannel::release_all() {
  if (!gate_.held()) return 0;
  const std::size_t held =
      gate_.limit() < queue_.last_id() ? queue_.count_between(gate_.limit(), queue_.last_id()) : 0;
  gate_.open();
  return held;
}

void OutputChannel::add_level1(FragmentId d, NodeId from, const Level1Ack& ack) {
  if (restart_points_.add(d, ack))
    for (ConsumerState& c : consumers_)
      if (c.node == from) c.confirm_owed = true;
}

void OutputChannel::install(const DownstreamRestartPoints& forwarded) {
  HAPAIR_CHECK(forwarded.stream == stream_);
  queue_.trim_up_to(forwarded.trimmed_up_to);
  if (forwarded.consumer == kNoFragment) return;
  restart_points_.install(forwarded.consumer, forwarded.points);
}

bool OutputChannel::confirm_forwarded(FragmentId d, std::uint64_t generation) {
  return restart_points_.confirm_forwarded(d, generation);
}

void OutputChannel::owe_confirmation(FragmentId d) {
  for (ConsumerState& c : consumers_)
    if (c.fragment == d) c.confirm_owed = true;
}

void OutputChannel::restore(TupleId offset, TupleId trimmed_up_to, TupleId last_id, bool ended, const Tuples& tuples) {
  offset_ = offset;
  queue_.reset(trimmed_up_to, last_id, ended);
  for (const Tuple& t : tuples) queue_.restore_append(t);
  gate_.open();
}

void OutputChannel::clear_log() {
  queue_.reset(0, 0, false);
  offset_ = 0;
  gate_.open();
}

void OutputChannel::reset_for_standby() {
  clear_log();
  for (ConsumerState& c : consumers_) {
    c.sends = false;
    c.ready = true;
  }
}

}  // namespace hapair
