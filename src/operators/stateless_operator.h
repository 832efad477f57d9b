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

 private:
  bool take(const Tuple& t, Tuples& out);

  BlobTag tag_;
  TupleId last_input_id_ = 0;
  TupleId last_output_id_ = 0;
  bool ended_ = false;
};

}  // namespace hapair
