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
// - stored (operators): chunks of 4096 tuples, taken from a few kept spare chunks or the
//   allocator and given back as the queue is trimmed, so appending, indexing and trimming touch
//   the allocator once per 4096 tuples, a queue that grows to a million tuples copies none of
//   them (a doubling ring copied them all, twice over, and zeroed its new memory first), and a
//   range of tuples is a copy per chunk it spans;
// - recomputed (sources, protocols/tuple_recipe.h): the retained tuples are consecutive ids
//   whose content is a pure function of the id, so the queue keeps only the range and asks the
//   recipe for a tuple when one is read. Appending is extend_to(); append() is refused.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <deque>
#include <memory>
#include <new>
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
  // Appends first[0 .. n), each with `id_offset` added to its id: what append() does for each,
  // with the queue's checks once and each chunk's part written in one loop.
  void append_run(const Tuple* first, std::size_t n, TupleId id_offset) {
    if (n == 0) return;
    HAPAIR_CHECK_MSG(!recipe_, "append to a recomputed queue (use extend_to), id=" << first->id + id_offset);
    HAPAIR_CHECK_MSG(!ended_, "append after end of stream, id=" << first->id + id_offset);
    if (size_ == 0) first_id_ = first->id + id_offset;
    TupleId last = last_id_;
    while (n > 0) {
      const std::size_t at = head_ + size_;
      const std::size_t in_chunk = at % kChunkTuples;
      if (in_chunk == 0) {
        HAPAIR_CHECK_MSG(at / kChunkTuples == chunks_.size(), "slot " << at << " with " << chunks_.size() << " chunks");
        chunks_.push_back(acquire());
      }
      const std::size_t run = std::min(n, kChunkTuples - in_chunk);
      Tuple* slot = chunks_.back().get() + in_chunk;
      for (std::size_t i = 0; i < run; ++i) {
        Tuple t = first[i];
        t.id += id_offset;
        HAPAIR_CHECK_MSG(t.id > last, "ids must grow: id=" << t.id << " last=" << last);
        last = t.id;
        slot[i] = t;
      }
      size_ += run;
      first += run;
      n -= run;
    }
    last_id_ = last;
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
    // first_id_ rather than slot(0): the oldest slot of a long queue is cold in the cache.
    if (size_ == 0 || after < first_id_) return 0;
    const TupleId first = first_id_, last = slot(size_ - 1).id;
    if (after >= last) return size_;
    // A pump asks for the same few ids again and again (a consumer's level-0 ack while it
    // sends): their answers are remembered. An answer strictly inside the queue stays right as
    // tuples are appended (their ids are larger) and moves down by what a trim drops.
    for (const Found& f : found_)
      if (f.valid && f.after == after) return static_cast<std::size_t>(f.position - dropped_);
    const std::size_t at = search(after, first, last);
    found_[next_found_] = Found{true, after, dropped_ + at};
    next_found_ = (next_found_ + 1) % found_.size();
    return at;
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
  // Appends the retained tuples [begin, end) to `out`: a copy per chunk spanned, or the
  // recipe's tuples.
  void copy_to(std::size_t begin, std::size_t end, Tuples& out) const {
    HAPAIR_CHECK_MSG(begin <= end && end <= size_, "range [" << begin << ", " << end << ") of " << size_);
    if (recipe_) {
      recipe_->append_tuples(first_id_ + begin, end - begin, out);
      return;
    }
    for_each_run(begin, end, [&out](const Tuple* first, std::size_t n) { out.insert(out.end(), first, first + n); });
  }

  // Calls fn(const Tuple* first, std::size_t n) for the retained tuples [begin, end) in order,
  // one contiguous run at a time (a chunk's part, or up to 4096 of the recipe's tuples made for
  // the call): a checkpoint writes them without copying them out first.
  template <typename Fn>
  void for_each_run(std::size_t begin, std::size_t end, Fn&& fn) const {
    HAPAIR_CHECK_MSG(begin <= end && end <= size_, "range [" << begin << ", " << end << ") of " << size_);
    if (recipe_) {
      Tuples made;
      while (begin < end) {
        const std::size_t run = std::min(end - begin, kChunkTuples);
        made.clear();
        recipe_->append_tuples(first_id_ + begin, run, made);
        fn(static_cast<const Tuple*>(made.data()), run);
        begin += run;
      }
      return;
    }
    while (begin < end) {
      const std::size_t at = head_ + begin;
      const Tuple* chunk = chunks_[at / kChunkTuples].get();
      const std::size_t offset = at % kChunkTuples;
      const std::size_t run = std::min(end - begin, kChunkTuples - offset);
      fn(static_cast<const Tuple*>(chunk + offset), run);
      begin += run;
    }
  }

  // Drops every tuple with id <= up_to; returns how many were dropped. Never moves backwards.
  std::size_t trim_up_to(TupleId up_to) {
    if (up_to <= trimmed_up_to_) return 0;
    const std::size_t n = index_after(up_to);
    size_ -= n;
    dropped_ += n;
    trimmed_up_to_ = up_to;
    if (recipe_) {
      first_id_ += n;
    } else {
      head_ += n;
      while (head_ >= kChunkTuples || (size_ == 0 && !chunks_.empty())) {
        release(std::move(chunks_.front()));
        chunks_.pop_front();
        head_ = head_ >= kChunkTuples ? head_ - kChunkTuples : 0;
      }
      if (size_ > 0) first_id_ = slot(0).id;
    }
    return n;
  }

  // Empties the queue at a trim position and last id (a restarted node's fresh start, or a
  // checkpoint's positions before its tuples follow by restore_append).
  void reset(TupleId trimmed_up_to, TupleId last_id, bool ended) {
    first_id_ = last_id + 1;
    while (!chunks_.empty()) {
      release(std::move(chunks_.front()));
      chunks_.pop_front();
    }
    head_ = 0;
    size_ = 0;
    found_ = {};
    trimmed_up_to_ = trimmed_up_to;
    last_id_ = last_id;
    ended_ = ended;
  }
  // Appends while restoring; bypasses the "id > last" check against the restored last id only
  // in that the tuples must still be in order. Only stored queues hold restored tuples (a
  // source, the one fragment with a recomputed queue, has no standby and is never rebased).
  void restore_append(const Tuple& t) {
    HAPAIR_CHECK_MSG(!recipe_, "a recomputed queue is never restored from tuples");
    HAPAIR_CHECK_MSG(size_ == 0 || t.id > slot(size_ - 1).id, "restored ids must grow");
    HAPAIR_CHECK(t.id <= last_id_);
    push(t);
  }

 private:
  static constexpr std::size_t kChunkTuples = 4096;  // 160 KiB
  static constexpr TupleId kNearEndIds = 4096;         // index_after searches back from the end
  static constexpr std::size_t kSpareChunksMax = 4;   // kept for reuse instead of freed
  // Raw storage: a Tuple is an implicit-lifetime aggregate, so a slot is created by the copy
  // that fills it, and a fresh chunk is not zeroed first.
  struct FreeChunk {
    void operator()(Tuple* p) const { ::operator delete(p); }
  };
  using Chunk = std::unique_ptr<Tuple[], FreeChunk>;

  // The first slot with id > after, for slot(0).id == first <= after < last == slot(size_ - 1).id.
  // Invariant of the search: slot(lo).id <= after < slot(hi).id; the answer is hi once they are
  // adjacent. A plain binary search missed the cache at every step in a queue of a million
  // tuples (upstream backup's, held for a level-1 round). Ids spread evenly (gap-free, or a
  // Filter's sample), so the search gallops from the interpolated slot, then bisects what is
  // left; near the newest tuple (a pump's cursor) it gallops back from the end instead, through
  // slots still in the cache (a Filter's gaps put the interpolated slot of a long queue
  // hundreds of slots off).
  std::size_t search(TupleId after, TupleId first, TupleId last) const {
    std::size_t lo = 0, hi = size_ - 1;
    // Gap-free ids at the end (a source's, a Filter that kept every tuple): `after` itself sits
    // last - after slots before the newest, and one probe finds it.
    if (const TupleId back = last - after; back <= hi && slot(hi - back).id == after) return hi - back + 1;
    const double fraction = static_cast<double>(after - first) / static_cast<double>(last - first);
    const std::size_t guess = last - after <= kNearEndIds
                                  ? hi
                                  : std::min(hi, static_cast<std::size_t>(fraction * static_cast<double>(hi)));
    if (slot(guess).id <= after) {
      lo = guess;
      for (std::size_t step = 1; lo + step < hi; step *= 2) {
        if (slot(lo + step).id > after) {
          hi = lo + step;
          break;
        }
        lo += step;
      }
    } else {
      hi = guess;
      for (std::size_t step = 1; hi - lo > step; step *= 2) {
        if (slot(hi - step).id <= after) {
          lo = hi - step;
          break;
        }
        hi -= step;
      }
    }
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (slot(mid).id <= after)
        lo = mid;
      else
        hi = mid;
    }
    return hi;
  }
  const Tuple& slot(std::size_t index) const {
    const std::size_t at = head_ + index;
    return chunks_[at / kChunkTuples][at % kChunkTuples];
  }
  // The next slot is in the last chunk unless it starts a chunk: the chunks hold exactly the
  // retained slots [head_, head_ + size_), and an empty queue has none and head_ 0 (trim_up_to,
  // reset). Writing through back() spares the deque's size and index arithmetic per tuple.
  void push(const Tuple& t) {
    if (size_ == 0) first_id_ = t.id;
    const std::size_t at = head_ + size_;
    const std::size_t in_chunk = at % kChunkTuples;
    if (in_chunk == 0) {
      HAPAIR_CHECK_MSG(at / kChunkTuples == chunks_.size(), "slot " << at << " with " << chunks_.size() << " chunks");
      chunks_.push_back(acquire());
    }
    chunks_.back()[in_chunk] = t;
    ++size_;
  }
  Chunk acquire() {
    if (spare_.empty()) return Chunk(static_cast<Tuple*>(::operator new(kChunkTuples * sizeof(Tuple))));
    Chunk c = std::move(spare_.back());
    spare_.pop_back();
    return c;
  }
  void release(Chunk c) {
    if (spare_.size() < kSpareChunksMax) spare_.push_back(std::move(c));
  }

  std::size_t tuples_max_;
  std::shared_ptr<const TupleRecipe> recipe_;  // set: a recomputed queue
  // Stored: the log is size_ slots from slot head_ of the first chunk (head_ < kChunkTuples);
  // no chunk without a retained tuple.
  std::deque<Chunk> chunks_;
  std::vector<Chunk> spare_;
  std::size_t head_ = 0;
  TupleId first_id_ = 1;     // the id of the oldest retained tuple (when size_ > 0)
  std::size_t size_ = 0;
  TupleId last_id_ = 0;
  TupleId trimmed_up_to_ = 0;
  bool ended_ = false;
  // index_after's remembered answers: position counts from the first tuple ever stored, so
  // position - dropped_ is the index now.
  struct Found {
    bool valid = false;
    TupleId after = 0;
    std::uint64_t position = 0;
  };
  std::uint64_t dropped_ = 0;  // tuples trimmed away so far
  mutable std::array<Found, 2> found_{};
  mutable std::size_t next_found_ = 0;
};

}  // namespace hapair
