// A fragment: the operators of one node wired into a small DAG (paper: the part of the query
// network one server runs). It routes tuples between its operators, exports the streams other
// fragments read, and composes its operators' snapshots, cause functions (restart points) and
// determinants into fragment-level ones.
//
// Invariants: processing is depth-first and deterministic (an output is handed to internal
// consumers in operator order before the next input); each exported stream's ids are strictly
// increasing; after restart_from(), every operator port ignores inputs at or below its own
// replay position, so a replay from the fragment-level (minimum) position is harmless.
#pragma once

#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "operators/operator.h"
#include "protocols/check.h"
#include "protocols/plan.h"

namespace hapair {

struct FragmentOutput {
  StreamId stream = kNoStream;  // an exported (plan) stream
  Tuple tuple;
  friend bool operator==(const FragmentOutput&, const FragmentOutput&) = default;
};

// The outputs of a fragment's calls, in order: the tuples in one buffer and the exported stream
// of each stretch of them (consecutive outputs to one stream share a stretch). A run of a
// stateless operator's outputs is written once, straight into the buffer, and reaches its output
// queue as one stretch (OutputSide::append), where a list of (stream, tuple) pairs copied every
// tuple twice more. Read as a sequence of FragmentOutput values (iteration, operator[]).
class FragmentOutputs {
 public:
  struct Stretch {
    StreamId stream = kNoStream;
    std::size_t count = 0;
    friend bool operator==(const Stretch&, const Stretch&) = default;
  };

  void push_back(const FragmentOutput& o) { push(o.stream, o.tuple); }
  void push(StreamId stream, const Tuple& t) {
    tuples_.push_back(t);
    note(stream, 1);
  }
  // The buffer to write a stretch into directly: append tuples to it, then end_stretch() with the
  // size it had before.
  Tuples& buffer() { return tuples_; }
  // The tuples appended to buffer() since it held `from` are outputs on `stream`.
  void end_stretch(StreamId stream, std::size_t from) {
    HAPAIR_CHECK_MSG(from <= tuples_.size(), "stretch from " << from << " of " << tuples_.size());
    note(stream, tuples_.size() - from);
  }

  std::size_t size() const { return tuples_.size(); }
  bool empty() const { return tuples_.empty(); }
  void clear() {
    tuples_.clear();
    stretches_.clear();
  }
  void reserve(std::size_t n) { tuples_.reserve(n); }
  // Calls fn(StreamId, const Tuple* first, std::size_t count) for each stretch, in order.
  template <typename Fn>
  void for_each_stretch(Fn&& fn) const {
    std::size_t at = 0;
    for (const Stretch& s : stretches_) {
      fn(s.stream, tuples_.data() + at, s.count);
      at += s.count;
    }
  }

  // Output i (walks the stretches: for inspection).
  FragmentOutput operator[](std::size_t i) const {
    HAPAIR_CHECK_MSG(i < tuples_.size(), "output " << i << " of " << tuples_.size());
    std::size_t at = 0;
    for (const Stretch& s : stretches_) {
      if (i < at + s.count) return FragmentOutput{s.stream, tuples_[i]};
      at += s.count;
    }
    HAPAIR_CHECK_MSG(false, "stretches hold fewer outputs than the buffer");
    return {};
  }

  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = FragmentOutput;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = FragmentOutput;
    const_iterator(const FragmentOutputs* outs, std::size_t index, std::size_t stretch, std::size_t left)
        : outs_(outs), index_(index), stretch_(stretch), left_(left) {}
    FragmentOutput operator*() const { return FragmentOutput{outs_->stretches_[stretch_].stream, outs_->tuples_[index_]}; }
    const_iterator& operator++() {
      ++index_;
      if (--left_ == 0 && ++stretch_ < outs_->stretches_.size()) left_ = outs_->stretches_[stretch_].count;
      return *this;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.index_ == b.index_; }

   private:
    const FragmentOutputs* outs_;
    std::size_t index_;
    std::size_t stretch_;
    std::size_t left_;  // outputs of the current stretch from index_ on
  };
  const_iterator begin() const {
    return const_iterator(this, 0, 0, stretches_.empty() ? 0 : stretches_.front().count);
  }
  const_iterator end() const { return const_iterator(this, tuples_.size(), stretches_.size(), 0); }

  friend bool operator==(const FragmentOutputs& a, const FragmentOutputs& b) {
    // Stretches are canonical (never empty, neighbours on different streams): equal sequences
    // of outputs have equal stretches.
    return a.tuples_ == b.tuples_ && a.stretches_ == b.stretches_;
  }

 private:
  void note(StreamId stream, std::size_t count) {
    if (count == 0) return;
    if (!stretches_.empty() && stretches_.back().stream == stream)
      stretches_.back().count += count;
    else
      stretches_.push_back(Stretch{stream, count});
  }

  Tuples tuples_;
  std::vector<Stretch> stretches_;  // no empty stretch; their counts add up to tuples_.size()
};

class Fragment {
 public:
  Fragment(const Plan& plan, FragmentId id);
  ~Fragment();
  Fragment(const Fragment&) = delete;
  Fragment& operator=(const Fragment&) = delete;

  FragmentId id() const { return id_; }
  OperatorClass klass() const;
  const std::vector<StreamId>& inputs() const { return inputs_; }    // plan streams read
  const std::vector<StreamId>& outputs() const { return outputs_; }  // plan streams exported

  void process(StreamId input, const Tuple& t, FragmentOutputs& out);
  // Processes tuples[0 .. count) of `input` in order, exactly as process() on each would, and
  // stops after the first of them that leaves `outputs_max` or more new outputs in `out` (the room
  // before an output queue may be full); returns how many it took (all when it never stopped).
  // A run into one stateless operator whose output is exported goes through the operator in one
  // loop (Operator::process_run); other shapes take their tuples one at a time.
  std::size_t process_run(StreamId input, const Tuple* tuples, std::size_t count, FragmentOutputs& out,
                          std::size_t outputs_max);
  void end_of_stream(StreamId input, FragmentOutputs& out);
  // Boundaries (Borealis's punctuation; only in a plan with a Union in timestamp order,
  // uses_boundaries()): every later tuple of `input` has ts >= boundary_us. A serializing Union
  // may emit on it. output_boundary(s): every later tuple of exported stream s has ts >= it (0:
  // nothing known, or the fragment uses none).
  void advance_boundary(StreamId input, TimeUs boundary_us, FragmentOutputs& out);
  TimeUs output_boundary(StreamId output) const;
  bool uses_boundaries() const;
  // The producing operator of an exported stream has finished (no more tuples will come).
  bool output_ended(StreamId output) const;
  bool has_finished() const;

  Bytes snapshot() const;
  bool restore(const Bytes& snapshot);
  // Delta checkpoints: one state version per operator (in operator order). snapshot_delta(v)
  // holds, per operator, what changed since v[i] (a full operator snapshot for operators
  // without deltas) plus the fragment's own small state; apply_delta() applies it to a fragment
  // restored at versions v. false: corrupt blob or another base; the fragment may then be
  // partly updated and must be restored from a full snapshot.
  std::vector<std::uint64_t> state_versions() const;
  bool supports_delta() const;
  Bytes snapshot_delta(const std::vector<std::uint64_t>& since_versions) const;
  bool apply_delta(const Bytes& delta);

  // Composes the operators' cause functions backwards from every exported stream (acked up to
  // acked_outputs[s]; absent means nothing acked, 0) to every fragment input. The blob holds, per
  // fragment input stream, the last input id no longer needed, and every operator's restart point.
  Bytes restart_point(const std::map<StreamId, TupleId>& acked_outputs) const;
  // The per-input replay positions inside a restart point blob; nullopt when corrupt.
  static std::optional<std::map<StreamId, TupleId>> replay_positions(const Bytes& restart_point);
  // On a freshly constructed fragment. false: corrupt blob.
  bool restart_from(const Bytes& restart_point);
  void forget_up_to(const std::map<StreamId, TupleId>& acked_outputs);

  // Determinants of the fragment's non-deterministic operators (Union).
  bool is_nondeterministic() const;
  std::vector<Determinants> take_determinants();
  void set_follow_determinants(bool follow);
  void add_determinants(const Determinants& d, FragmentOutputs& out);
  // The number of the last determinant record applied to operator `op_index` (0: none). Records
  // after a gap are not applied, so this is what a standby may acknowledge.
  std::uint64_t determinants_applied(std::uint16_t op_index) const;
  // A following fragment whose leader is gone (takeover): stop following, apply the records
  // still pending, and emit what waited for determinants in arrival order.
  void release_buffered(FragmentOutputs& out);
  std::size_t buffered_tuples() const;

  // The merge order of the fragment's non-deterministic operators since the last call, per
  // operator index (Operator::take_merge_order).
  std::vector<std::pair<std::uint16_t, MergeSegment>> take_merge_order();
  // Reference runs: operator `op_index` replays a recorded merge order
  // (Operator::replay_merge_order). false: no such non-deterministic operator.
  bool replay_merge_order(std::uint16_t op_index, const std::vector<MergeRun>& runs);
  // Replayed runs, over all operators, that named inputs their port never delivered.
  std::uint64_t unmatched_merge_runs() const;

  // Inputs refused as bad input from peers (counted, never asserted): tuples of streams the
  // fragment does not read or that already ended, end-of-stream marks of streams it does not
  // read (a repeated end of stream is harmless and ignored), and determinant records for a
  // missing or deterministic operator, with a gap in their numbering, or already applied.
  std::uint64_t dropped_inputs() const;

 private:
  struct Impl;
  FragmentId id_;
  std::vector<StreamId> inputs_;
  std::vector<StreamId> outputs_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hapair
