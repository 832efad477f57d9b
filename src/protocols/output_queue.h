// An output queue: the tuples a server sent (or will send) on one stream, retained as a log for
// recovery until queue-trimming acknowledgements say nobody can need them again.
//
// Paper: output queues double as logs for recovery ("remote logging"); upstream backup and
// passive standby re-send from them after a failure, and acknowledgements trim them
// (Hwang et al., sections 4.1 and 4.3).
//
// Invariants: ids in the queue strictly increase; every retained id is > trimmed_up_to(); end of
// stream comes after the last tuple. The bound: callers check full() before they process the
// next input and apply the queue-full policy (back-pressure or a clear error) when it is; the
// outputs of the one input being processed may take the queue past the bound by their count.
#pragma once

#include <cstddef>
#include <deque>

#include "protocols/check.h"
#include "protocols/tuple.h"

namespace hapair {

class OutputQueue {
 public:
  explicit OutputQueue(std::size_t tuples_max) : tuples_max_(tuples_max) { HAPAIR_CHECK(tuples_max_ >= 1); }

  std::size_t size() const { return log_.size(); }
  std::size_t tuples_max() const { return tuples_max_; }
  bool full() const { return log_.size() >= tuples_max_; }
  bool empty() const { return log_.empty(); }

  // The id of the newest tuple ever appended (0 when none), trimmed or not.
  TupleId last_id() const { return last_id_; }
  TupleId trimmed_up_to() const { return trimmed_up_to_; }
  bool ended() const { return ended_; }

  void append(const Tuple& t) {
    HAPAIR_CHECK_MSG(!ended_, "append after end of stream, id=" << t.id);
    HAPAIR_CHECK_MSG(t.id > last_id_, "ids must grow: id=" << t.id << " last=" << last_id_);
    log_.push_back(t);
    last_id_ = t.id;
  }
  void end_stream() { ended_ = true; }

  // Index (into the retained log) of the first tuple with id > after.
  std::size_t index_after(TupleId after) const {
    std::size_t lo = 0, hi = log_.size();
    while (lo < hi) {
      std::size_t mid = (lo + hi) / 2;
      if (log_[mid].id <= after)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  // Number of retained tuples with after < id <= up_to.
  std::size_t count_between(TupleId after, TupleId up_to) const {
    if (up_to <= after) return 0;
    return index_after(up_to) - index_after(after);
  }
  const Tuple& at(std::size_t index) const {
    HAPAIR_CHECK_MSG(index < log_.size(), "index=" << index << " size=" << log_.size());
    return log_[index];
  }

  // Drops every tuple with id <= up_to; returns how many were dropped. Never moves backwards.
  std::size_t trim_up_to(TupleId up_to) {
    if (up_to <= trimmed_up_to_) return 0;
    std::size_t n = 0;
    while (!log_.empty() && log_.front().id <= up_to) {
      log_.pop_front();
      ++n;
    }
    trimmed_up_to_ = up_to;
    return n;
  }

  // Restores a queue from a checkpoint: the retained tuples, the trim position and the last id.
  void reset(TupleId trimmed_up_to, TupleId last_id, bool ended) {
    log_.clear();
    trimmed_up_to_ = trimmed_up_to;
    last_id_ = last_id;
    ended_ = ended;
  }
  // Appends while restoring; bypasses the "id > last" check against the restored last id only
  // in that the tuples must still be in order.
  void restore_append(const Tuple& t) {
    HAPAIR_CHECK_MSG(log_.empty() || t.id > log_.back().id, "restored ids must grow");
    HAPAIR_CHECK(t.id <= last_id_);
    log_.push_back(t);
  }

 private:
  std::size_t tuples_max_;
  std::deque<Tuple> log_;
  TupleId last_id_ = 0;
  TupleId trimmed_up_to_ = 0;
  bool ended_ = false;
};

}  // namespace hapair
