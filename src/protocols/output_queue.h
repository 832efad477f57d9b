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
//
// Two kinds of storage, the same queue to every caller:
// - stored (operators): one ring of tuples whose capacity is a power of two, doubled when full
//   and halved when trimmed to an eighth, so appending, indexing and trimming touch no
//   allocator on the data path (a deque allocated and freed a block every 12 tuples) and a
//   range of tuples is at most two contiguous copies;
// - recomputed (sources, protocols/tuple_recipe.h): the retained tuples are consecutive ids
//   whose content is a pure function of the id, so the queue keeps only the range and asks the
//   recipe for a tuple when one is read. Appending is extend_to(); append() is refused.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "protocols/check.h"
#include "protocols/tuple.h"
#include "protocols/tuple_recipe.h"

namespace hapair {

class OutputQueue {
 public:
  explicit OutputQueue(std::size_t tuples_max, std::shared_ptr<const TupleRecipe> recipe = nullptr)
      : tuples_max_(tuples_max), recipe_(std::move(recipe)) {
    HAPAIR_CHECK(tuples_max_ >= 1);
  }

  std::size_t size() const { return size_; }
  std::size_t tuples_max() const { return tuples_max_; }
  bool full() const { return size_ >= tuples_max_; }
  bool empty() const { return size_ == 0; }
  // Room before full() (0 when full or beyond).
  std::size_t room() const { return size_ >= tuples_max_ ? 0 : tuples_max_ - size_; }
  bool recomputed() const { return recipe_ != nullptr; }

  // The id of the newest tuple ever appended (0 when none), trimmed or not.
  TupleId last_id() const { return last_id_; }
  TupleId trimmed_up_to() const { return trimmed_up_to_; }
  bool ended() const { return ended_; }

  void append(const Tuple& t) {
    HAPAIR_CHECK_MSG(!recipe_, "append to a recomputed queue (use extend_to), id=" << t.id);
    HAPAIR_CHECK_MSG(!ended_, "append after end of stream, id=" << t.id);
    HAPAIR_CHECK_MSG(t.id > last_id_, "ids must grow: id=" << t.id << " last=" << last_id_);
    push(t);
    last_id_ = t.id;
  }
  // A recomputed queue: appends the ids last_id() + 1 .. last.
  void extend_to(TupleId last) {
    HAPAIR_CHECK_MSG(recipe_, "extend_to on a stored queue");
    HAPAIR_CHECK_MSG(!ended_, "append after end of stream, id=" << last);
    HAPAIR_CHECK_MSG(last >= last_id_, "ids must grow: up to " << last << " last=" << last_id_);
    if (size_ == 0) first_id_ = last_id_ + 1;
    size_ += static_cast<std::size_t>(last - last_id_);
    last_id_ = last;
  }
  void end_stream() { ended_ = true; }

  // Index (into the retained log) of the first tuple with id > after.
  std::size_t index_after(TupleId after) const {
    if (recipe_) {
      if (size_ == 0 || after < first_id_) return 0;
      return static_cast<std::size_t>(std::min<TupleId>(after - first_id_ + 1, size_));
    }
    std::size_t lo = 0, hi = size_;
    while (lo < hi) {
      std::size_t mid = (lo + hi) / 2;
      if (slot(mid).id <= after)
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
  Tuple at(std::size_t index) const {
    HAPAIR_CHECK_MSG(index < size_, "index=" << index << " size=" << size_);
    return recipe_ ? recipe_->tuple(first_id_ + index) : slot(index);
  }
  TupleId id_at(std::size_t index) const {
    HAPAIR_CHECK_MSG(index < size_, "index=" << index << " size=" << size_);
    return recipe_ ? first_id_ + index : slot(index).id;
  }
  // Appends the retained tuples [begin, end) to `out`: at most two contiguous copies, or the
  // recipe's tuples.
  void copy_to(std::size_t begin, std::size_t end, Tuples& out) const {
    HAPAIR_CHECK_MSG(begin <= end && end <= size_, "range [" << begin << ", " << end << ") of " << size_);
    if (recipe_) {
      recipe_->append_tuples(first_id_ + begin, end - begin, out);
      return;
    }
    const std::size_t mask = ring_.size() - 1;
    while (begin < end) {
      const std::size_t first = (head_ + begin) & mask;
      const std::size_t run = std::min(end - begin, ring_.size() - first);
      out.insert(out.end(), ring_.begin() + static_cast<std::ptrdiff_t>(first),
                 ring_.begin() + static_cast<std::ptrdiff_t>(first + run));
      begin += run;
    }
  }

  // Drops every tuple with id <= up_to; returns how many were dropped. Never moves backwards.
  std::size_t trim_up_to(TupleId up_to) {
    if (up_to <= trimmed_up_to_) return 0;
    const std::size_t n = index_after(up_to);
    if (recipe_) {
      first_id_ += n;
    } else {
      head_ = size_ == n ? 0 : (head_ + n) & (ring_.size() - 1);
    }
    size_ -= n;
    trimmed_up_to_ = up_to;
    if (!recipe_ && ring_.size() > kShrinkAboveSlots && size_ * 8 <= ring_.size()) resize_ring(ring_.size() / 2);
    return n;
  }

  // Restores a queue from a checkpoint: the retained tuples, the trim position and the last id.
  // Only stored queues are restored (a source, the one fragment with a recomputed queue, has
  // no standby and is never rebased).
  void reset(TupleId trimmed_up_to, TupleId last_id, bool ended) {
    HAPAIR_CHECK_MSG(!recipe_, "a recomputed queue is never restored");
    head_ = 0;
    size_ = 0;
    trimmed_up_to_ = trimmed_up_to;
    last_id_ = last_id;
    ended_ = ended;
  }
  // Appends while restoring; bypasses the "id > last" check against the restored last id only
  // in that the tuples must still be in order.
  void restore_append(const Tuple& t) {
    HAPAIR_CHECK_MSG(!recipe_, "a recomputed queue is never restored");
    HAPAIR_CHECK_MSG(size_ == 0 || t.id > slot(size_ - 1).id, "restored ids must grow");
    HAPAIR_CHECK(t.id <= last_id_);
    push(t);
  }

 private:
  const Tuple& slot(std::size_t index) const { return ring_[(head_ + index) & (ring_.size() - 1)]; }
  void push(const Tuple& t) {
    if (size_ == ring_.size()) grow();
    ring_[(head_ + size_) & (ring_.size() - 1)] = t;
    ++size_;
  }
  // A ring doubles when full (from 64 tuples) and halves when trimmed to an eighth, so a queue
  // that once held many tuples gives the memory back, and never resizes back and forth.
  static constexpr std::size_t kShrinkAboveSlots = 4096;
  void grow() { resize_ring(ring_.empty() ? 64 : ring_.size() * 2); }
  void resize_ring(std::size_t slots) {
    HAPAIR_CHECK(slots >= size_);
    std::vector<Tuple> next(slots);
    for (std::size_t i = 0; i < size_; ++i) next[i] = slot(i);
    ring_.swap(next);
    head_ = 0;
  }

  std::size_t tuples_max_;
  std::shared_ptr<const TupleRecipe> recipe_;  // set: a recomputed queue
  std::vector<Tuple> ring_;  // stored: capacity a power of two (or 0); the log is size_ slots from head_
  std::size_t head_ = 0;
  TupleId first_id_ = 1;     // recomputed: the id of the oldest retained tuple
  std::size_t size_ = 0;
  TupleId last_id_ = 0;
  TupleId trimmed_up_to_ = 0;
  bool ended_ = false;
};

}  // namespace hapair
