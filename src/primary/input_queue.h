// The input queue of a node: the items (tuples and ends of stream) its input channels accepted,
// in arrival order, waiting for the workload.
//
// Paper: every server keeps input queues (Hwang et al., section 2); what a server accepted but
// has not processed is exactly what a level-0 ack does not yet cover (section 4.3).
//
// Kept as runs: consecutive items of one stream from one sender with one replay flag share a
// run (one per accepted batch, as a rule), so queueing a tuple is a vector append and the
// workload takes a run's tuples without a per-tuple queue node. A boundary (TupleBatch::
// boundary_ms) rides on the run it follows and applies once its last tuple was taken; one that
// follows no run of its stream is a run of its own. Invariants: size() is the number of items in
// all runs; no run is empty; an end of stream and a lone boundary are runs of their own (one item
// each); a run's boundary only grows.
//
// A stream can be held after a tuple id (barrier alignment of global checkpoints,
// docs/CHECKPOINT.md): its items beyond that id are set aside, in their order, and every item of
// it queued later goes aside too, until release() appends them to the queue again. Items set
// aside are not in size(), so the workload processes the other streams meanwhile; a held stream's
// order is kept (everything of it beyond the id is aside, and only its items up to the id still
// enter the queue).
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <map>
#include <vector>

#include "protocols/check.h"
#include "protocols/ids.h"
#include "protocols/tuple.h"

namespace hapair {

struct InputItem {
  StreamId stream = kNoStream;
  Tuple tuple;
  bool eos = false;  // end-of-stream marker instead of a tuple
  NodeId from = kNoNode;  // the producer's node that sent it (a sink reports it with the delivery)
  bool replayed = false;  // it came in a replayed batch
};

class InputQueue {
 public:
  struct Run {
    StreamId stream = kNoStream;
    NodeId from = kNoNode;
    bool replayed = false;
    bool eos = false;   // an end of stream (no tuples)
    bool boundary_only = false;  // a boundary (no tuples)
    Tuples tuples;
    std::size_t next = 0;  // tuples before it were taken
    // Every later tuple of the stream has ts >= this, once the run's last item was taken (0: none).
    TimeUs boundary_us = 0;
    std::size_t items() const { return eos || boundary_only ? 1 : tuples.size() - next; }
    const Tuple* first() const { return tuples.data() + next; }
  };

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  void push_tuple(StreamId stream, NodeId from, bool replayed, const Tuple& t) { push_tuples(stream, from, replayed, &t, 1); }
  // Appends count tuples (the caller checked their order).
  void push_tuples(StreamId stream, NodeId from, bool replayed, const Tuple* first, std::size_t count) {
    if (count == 0) return;
    if (!holds_.empty()) {
      if (auto h = holds_.find(stream); h != holds_.end()) {
        // Up to the hold's id into the queue, the rest aside (ids grow along a stream).
        std::size_t below = 0;
        while (below < count && first[below].id <= h->second.after_id) ++below;
        if (below < count) append(h->second.aside, Run{stream, from, replayed, false, false, {first + below, first + count}, 0, 0});
        count = below;
        if (count == 0) return;
      }
    }
    if (runs_.empty() || !same_run(runs_.back(), stream, from, replayed))
      runs_.push_back(Run{stream, from, replayed, false, false, take_spare(), 0, 0});
    runs_.back().tuples.insert(runs_.back().tuples.end(), first, first + count);
    size_ += count;
  }
  void push_end_of_stream(StreamId stream, NodeId from, bool replayed) {
    if (auto h = holds_.find(stream); h != holds_.end()) {
      h->second.aside.push_back(Run{stream, from, replayed, true, false, {}, 0, 0});
      return;
    }
    runs_.push_back(Run{stream, from, replayed, true, false, {}, 0, 0});
    ++size_;
  }
  // Every tuple of `stream` after what was queued has ts >= boundary_us.
  void push_boundary(StreamId stream, NodeId from, bool replayed, TimeUs boundary_us) {
    // A boundary after items set aside goes aside with them; before any, it stays in the queue.
    if (auto h = holds_.find(stream); h != holds_.end() && !h->second.aside.empty()) {
      std::deque<Run>& aside = h->second.aside;
      if (same_run(aside.back(), stream, from, replayed)) {
        aside.back().boundary_us = std::max(aside.back().boundary_us, boundary_us);
      } else {
        aside.push_back(Run{stream, from, replayed, false, true, {}, 0, boundary_us});
      }
      return;
    }
    if (!runs_.empty() && same_run(runs_.back(), stream, from, replayed)) {
      runs_.back().boundary_us = std::max(runs_.back().boundary_us, boundary_us);
      return;
    }
    runs_.push_back(Run{stream, from, replayed, false, true, {}, 0, boundary_us});
    ++size_;
  }

  // The oldest run (the queue must not be empty).
  const Run& front() const {
    HAPAIR_CHECK_MSG(!runs_.empty(), "the input queue is empty");
    return runs_.front();
  }
  // Removes the first n items of the oldest run (n >= 1, at most its items()).
  void pop_front(std::size_t n) {
    Run& r = runs_.front();
    HAPAIR_CHECK_MSG(n >= 1 && n <= r.items(), "pop " << n << " of a run of " << r.items());
    size_ -= n;
    if (n == r.items()) {
      give_back(std::move(r.tuples));
      runs_.pop_front();
    } else {
      r.next += n;
    }
  }

  // Item i (0: the oldest), for inspection; walks the runs.
  InputItem at(std::size_t i) const {
    HAPAIR_CHECK_MSG(i < size_, "item " << i << " of " << size_);
    for (const Run& r : runs_) {
      if (i < r.items()) return r.eos || r.boundary_only ? InputItem{r.stream, Tuple{}, r.eos, r.from, r.replayed}
                                                         : InputItem{r.stream, r.tuples[r.next + i], false, r.from, r.replayed};
      i -= r.items();
    }
    HAPAIR_CHECK_MSG(false, "runs hold fewer items than size()");
    return {};
  }
  InputItem back() const { return at(size_ - 1); }
  std::vector<InputItem> items() const {
    std::vector<InputItem> all;
    for (std::size_t i = 0; i < size_; ++i) all.push_back(at(i));
    return all;
  }

  void clear() {
    runs_.clear();
    size_ = 0;
    holds_.clear();
  }

  // ---- holding a stream (barrier alignment) -------------------------------------------------------
  // Holds `stream` after tuple `after_id`: its queued items beyond it (tuples with a greater id
  // and everything of the stream after the first of them; its end of stream, which comes after
  // every tuple) are set aside, and so is every later item of it beyond the id. A stream is held
  // at most once at a time (checked).
  void hold(StreamId stream, TupleId after_id) {
    HAPAIR_CHECK_MSG(holds_.count(stream) == 0, "stream " << stream << " is held already");
    Hold& h = holds_[stream];
    h.after_id = after_id;
    std::deque<Run> kept;
    for (Run& r : runs_) {
      if (r.stream != stream) {
        kept.push_back(std::move(r));
        continue;
      }
      if (!h.aside.empty() || r.eos) {
        size_ -= r.items();
        h.aside.push_back(std::move(r));
        continue;
      }
      if (r.boundary_only) {
        kept.push_back(std::move(r));
        continue;
      }
      // A run of tuples: those up to the id stay, the rest (and the run's boundary) go aside.
      std::size_t below = r.next;
      while (below < r.tuples.size() && r.tuples[below].id <= after_id) ++below;
      if (below < r.tuples.size()) {
        Run tail{r.stream, r.from, r.replayed, false, false, {r.tuples.begin() + static_cast<std::ptrdiff_t>(below), r.tuples.end()}, 0, r.boundary_us};
        size_ -= tail.items();
        r.tuples.resize(below);
        r.boundary_us = 0;
        h.aside.push_back(std::move(tail));
      }
      if (r.items() > 0) kept.push_back(std::move(r));
    }
    runs_ = std::move(kept);
  }
  // Ends the hold of `stream`: what was set aside joins the end of the queue, in its order.
  void release(StreamId stream) {
    auto h = holds_.find(stream);
    if (h == holds_.end()) return;
    for (Run& r : h->second.aside) {
      size_ += r.items();
      runs_.push_back(std::move(r));
    }
    holds_.erase(h);
  }
  bool held(StreamId stream) const { return holds_.count(stream) != 0; }
  // Items set aside, over every held stream.
  std::size_t aside() const {
    std::size_t n = 0;
    for (const auto& [s, h] : holds_)
      for (const Run& r : h.aside) n += r.items();
    return n;
  }

 private:
  static bool same_run(const Run& r, StreamId stream, NodeId from, bool replayed) {
    return !r.eos && !r.boundary_only && r.stream == stream && r.from == from && r.replayed == replayed;
  }

  // Appends a run of tuples to `runs`, joining the last run when it is of the same stream,
  // sender and replay flag.
  static void append(std::deque<Run>& runs, Run r) {
    if (!runs.empty() && same_run(runs.back(), r.stream, r.from, r.replayed)) {
      runs.back().tuples.insert(runs.back().tuples.end(), r.tuples.begin() + static_cast<std::ptrdiff_t>(r.next), r.tuples.end());
      return;
    }
    runs.push_back(std::move(r));
  }

  // A taken run's buffer is kept for the next run (a run per accepted batch: an allocation of a
  // batch's size per message otherwise), up to kSpareRunsMax of them, none above
  // kSpareRunTuplesMax (a replay's large run is given back to the allocator).
  static constexpr std::size_t kSpareRunsMax = 4;
  static constexpr std::size_t kSpareRunTuplesMax = 4096;
  Tuples take_spare() {
    if (spare_.empty()) return {};
    Tuples t = std::move(spare_.back());
    spare_.pop_back();
    return t;
  }
  void give_back(Tuples&& t) {
    if (spare_.size() >= kSpareRunsMax || t.capacity() == 0 || t.capacity() > kSpareRunTuplesMax) return;
    t.clear();
    spare_.push_back(std::move(t));
  }

  struct Hold {
    TupleId after_id = 0;
    std::deque<Run> aside;  // in arrival order
  };

  std::deque<Run> runs_;
  std::size_t size_ = 0;
  std::map<StreamId, Hold> holds_;
  std::vector<Tuples> spare_;  // emptied buffers of taken runs
};

}  // namespace hapair
