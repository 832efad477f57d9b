// The common core of the stateless, repeatable operators Filter and Map (paper section 3: a
// repeatable operator regenerates exactly the same output tuples when it re-processes its input
// from an empty state, so duplicates are removable by tuple id).
//
// Invariant: an output keeps its input's tuple id, so the cause function is the identity: the
// output with id x needs exactly the input with id x. The only state is the last input id
// processed and the last output id emitted, which the restart point needs.
#pragma once

#include <cstdint>

#include "operators/operator.h"
#include "operators/state_io.h"
#include "protocols/check.h"

namespace hapair {

class StatelessOperator : public Operator {
 public:
  OperatorClass operator_class() const override { return OperatorClass::repeatable; }
  std::size_t input_count() const override { return 1; }

  void process(std::size_t port, const Tuple& t, Tuples& out) override;
  std::size_t process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                          std::size_t out_max) override;
  void end_of_stream(std::size_t port, Tuples& out) override;
  bool has_finished() const override { return ended_; }

  Bytes snapshot() const override;
  bool restore(const Bytes& snapshot) override;

  // replay_after = the last input processed when every output is acked (nothing to regenerate),
  // otherwise the acked output itself (ids are kept, so input acked+1 on regenerates the rest).
  RestartPoint restart_point(TupleId acked_output) const override;
  bool restart_from(const RestartPoint& point) override;
  void forget_up_to(TupleId /*acked_output*/) override {}

  TupleId last_input_id() const { return last_input_id_; }
  TupleId last_output_id() const { return last_output_id_; }

 protected:
  explicit StatelessOperator(BlobTag tag) : tag_(tag) {}
  // Computes the output of one input; false drops the tuple. Must keep in.id.
  virtual bool transform(const Tuple& in, Tuple& out) const = 0;

  // process_run with `fn(in, out)` as the transform: a final operator passes its own transform,
  // which the compiler inlines into the loop, where the virtual one costs a call per tuple. The
  // same checks and results as process() on each tuple.
  template <typename Transform>
  std::size_t process_run_with(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                               std::size_t out_max, Transform&& fn) {
    return run_loop(port, tuples, count, out, out_max, [&](const Tuple& t) { return take(t, out, fn); });
  }
  // process_run_with for an operator whose output is its input unchanged when `keeps(in)` holds
  // (Filter): the same checks, and each stretch of kept tuples copied once, in one insert,
  // straight into `out`.
  template <typename Predicate>
  std::size_t process_run_keeping(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                                  std::size_t out_max, Predicate&& keeps) {
    HAPAIR_CHECK_MSG(port == 0, "port=" << port);
    HAPAIR_CHECK_MSG(!ended_ || count == 0, "tuple id=" << tuples[0].id << " after end of stream");
    std::size_t room = out_max > out.size() ? out_max - out.size() : 1;
    TupleId last_input = last_input_id_;  // kept in a register, stored once
    std::size_t i = 0;
    while (i < count) {
      // A stretch of kept tuples from `begin`, ended by a dropped tuple, the end of the run or the
      // output that uses the last of the room.
      const std::size_t begin = i;
      bool dropped = false;
      while (i < count && room > 0) {
        const Tuple& t = tuples[i];
        HAPAIR_CHECK_MSG(t.id > last_input, "id=" << t.id << " last_input_id=" << last_input);
        last_input = t.id;
        if (!keeps(t)) {
          dropped = true;
          break;
        }
        ++i;
        --room;
      }
      if (i > begin) {
        out.insert(out.end(), tuples + begin, tuples + i);
        last_output_id_ = tuples[i - 1].id;
      }
      if (room == 0) break;
      if (dropped) ++i;  // checked and dropped
    }
    last_input_id_ = last_input;
    return i;
  }

 private:
  // The run's loop: `take_one(t)` takes one input and says whether it made an output; at most one
  // output per input, so the run stops as soon as `out` reaches out_max (a run that starts with
  // `out` there already stops at its first output), counted down rather than measured per tuple.
  template <typename TakeOne>
  std::size_t run_loop(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out, std::size_t out_max,
                       TakeOne&& take_one) {
    HAPAIR_CHECK_MSG(port == 0, "port=" << port);
    HAPAIR_CHECK_MSG(!ended_ || count == 0, "tuple id=" << tuples[0].id << " after end of stream");
    out.reserve(out.size() + count);
    std::size_t room = out_max > out.size() ? out_max - out.size() : 1;
    for (std::size_t i = 0; i < count; ++i)
      if (take_one(tuples[i]) && --room == 0) return i + 1;
    return count;
  }
  // One input: its checks, then its output (if the transform keeps it). True when it made one.
  template <typename Transform>
  bool take(const Tuple& t, Tuples& out, Transform& fn) {
    HAPAIR_CHECK_MSG(t.id > last_input_id_, "id=" << t.id << " last_input_id=" << last_input_id_);
    last_input_id_ = t.id;
    Tuple result;
    if (!fn(t, result)) return false;
    HAPAIR_CHECK_MSG(result.id == t.id, "transform changed id " << t.id << " to " << result.id);
    last_output_id_ = result.id;
    out.push_back(result);
    return true;
  }

  BlobTag tag_;
  TupleId last_input_id_ = 0;
  TupleId last_output_id_ = 0;
  bool ended_ = false;
};

}  // namespace hapair
