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
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
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
    if (runs_.empty() || !same_run(runs_.back(), stream, from, replayed)) runs_.push_back(Run{stream, from, replayed, false, false, {}, 0, 0});
    runs_.back().tuples.insert(runs_.back().tuples.end(), first, first + count);
    size_ += count;
  }
  void push_end_of_stream(StreamId stream, NodeId from, bool replayed) {
    runs_.push_back(Run{stream, from, replayed, true, false, {}, 0, 0});
    ++size_;
  }
  // Every tuple of `stream` after what was queued has ts >= boundary_us.
  void push_boundary(StreamId stream, NodeId from, bool replayed, TimeUs boundary_us) {
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
  }

 private:
  static bool same_run(const Run& r, StreamId stream, NodeId from, bool replayed) {
    return !r.eos && !r.boundary_only && r.stream == stream && r.from == from && r.replayed == replayed;
  }

  std::deque<Run> runs_;
  std::size_t size_ = 0;
};

}  // namespace hapair
