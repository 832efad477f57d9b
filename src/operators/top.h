// Top (top-1 per window): reads a windowed result stream, in which every window's results share
// one timestamp (an Aggregate emits a window's groups together, ts = the window's end), and
// emits per window the one with the largest value (ties: the smallest key, then the smallest
// id), numbered 1, 2, 3, ...: NEXMark q5's hot item (the auction with most bids in a window)
// after a count per auction, q7's highest bid after a max per auction.
//
// A window's group is complete when a later timestamp arrives (or a boundary passes it, or the
// stream ends): the input's timestamps never go back (the traits require an ordered input). A
// tuple older than the open window (only a renumbered replay upstream sends one) is dropped.
//
// Class: deterministic. Cause function (section 4.3): every output remembers the last input of
// its window; to regenerate the outputs after `acked`, replay the input after the last input of
// output `acked`'s window (the next window starts right after it), and continue numbering.
//
// Invariants: outputs leave in timestamp order, one per distinct input timestamp; the candidate
// is the best input of the open window seen so far.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "operators/operator.h"
#include "protocols/topology.h"

namespace hapair {

class Top final : public Operator {
 public:
  explicit Top(const OperatorSpec& spec);

  OperatorKind kind() const override { return OperatorKind::top; }
  OperatorClass operator_class() const override { return OperatorClass::deterministic; }
  std::size_t input_count() const override { return 1; }

  void process(std::size_t port, const Tuple& t, Tuples& out) override;
  void end_of_stream(std::size_t port, Tuples& out) override;
  bool has_finished() const override { return ended_; }
  void advance_boundary(std::size_t port, TimeUs boundary_us, Tuples& out) override;
  TimeUs output_boundary(const std::vector<TimeUs>& input_boundaries) const override;

  Bytes snapshot() const override;
  bool restore(const Bytes& snapshot) override;

  RestartPoint restart_point(TupleId acked_output) const override;
  bool restart_from(const RestartPoint& point) override;
  void forget_up_to(TupleId acked_output) override;

 private:
  Top() = default;
  // Emits the open window's best and closes it.
  void close(Tuples& out);
  static bool better(const Tuple& a, const Tuple& b);

  struct Emitted {
    TupleId output = 0;
    TupleId last_input = 0;  // the last input of its window
  };

  TupleId counter_ = 0;
  TupleId last_input_id_ = 0;
  bool ended_ = false;
  std::optional<Tuple> best_;  // the open window's best so far (its ts is the window's)
  TupleId open_last_input_ = 0;
  std::deque<Emitted> emitted_;  // cause bookkeeping until forgotten
  TupleId forgotten_last_input_ = 0;  // the last input of the last forgotten output's window
  TupleId forgotten_up_to_ = 0;
};

}  // namespace hapair
