// The serializing Union (Borealis's SUnion; `order = "timestamp"` on a Union): merges N >= 2 input
// streams into one in timestamp order, emitting every input tuple once, numbered 1, 2, 3, ...
// (timestamp, key, value and lineage unchanged).
//
// Paper: Hwang et al. (ICDE 2005) call a Union arbitrary because its output follows the arrival
// interleaving (section 3). Balazinska et al. (Borealis, SIGMOD 2005) make it deterministic by
// serializing its inputs: every tuple is emitted in the order of its merge key (ts, port, id),
// and a tuple goes out only once no other port can still deliver one with a smaller key. What a
// port can still deliver is bounded by its boundary: the largest timestamp below which it will
// send nothing more (the last tuple it delivered, since a port's timestamps never go backwards,
// or a boundary the producer announced in a batch: protocols/messages.h TupleBatch::boundary_ms,
// which sources emit and every operator forwards), or its end of stream. So a quiet input delays
// the merge by at most one boundary interval.
//
// Class: deterministic. Given each port's input sequence, the output (ids, contents, order) is
// the same for every arrival interleaving and every timing of the boundaries: active standby
// needs no determinants for it, upstream backup recovers it precisely.
//
// Cause function (section 4.3): for every output not yet forgotten the operator keeps (output id,
// port, input id). The input still needed on port p after output `acked` is everything after the
// largest input of p emitted at or before `acked` (p's inputs go out in id order); buffered input
// is always needed.
//
// Invariants: outputs leave in strictly increasing merge key; each port's inputs arrive in
// increasing id and timestamp (the operator's caller guarantees it; a tuple below its port's
// boundary is a caller's bug); output ids are consecutive.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "operators/operator.h"
#include "protocols/topology.h"

namespace hapair {

class SerializingUnion final : public Operator {
 public:
  explicit SerializingUnion(const OperatorSpec& spec);

  OperatorKind kind() const override { return OperatorKind::union_op; }
  OperatorClass operator_class() const override { return OperatorClass::deterministic; }
  std::size_t input_count() const override { return port_count_; }

  void process(std::size_t port, const Tuple& t, Tuples& out) override;
  void end_of_stream(std::size_t port, Tuples& out) override;
  bool has_finished() const override;
  void advance_boundary(std::size_t port, TimeUs boundary_us, Tuples& out) override;
  TimeUs output_boundary(const std::vector<TimeUs>& input_boundaries) const override;

  Bytes snapshot() const override;
  bool restore(const Bytes& snapshot) override;

  RestartPoint restart_point(TupleId acked_output) const override;
  bool restart_from(const RestartPoint& point) override;
  void forget_up_to(TupleId acked_output) override;

  std::size_t buffered_tuples() const override;

 private:
  explicit SerializingUnion(std::size_t port_count);

  struct Cause {
    TupleId output = 0;
    std::uint16_t port = 0;
    TupleId input = 0;
  };
  struct Port {
    std::deque<Tuple> buffered;
    TupleId last_seen = 0;
    // Every later input of this port has ts >= boundary_us (the last input's ts or an
    // announced boundary, whichever is larger).
    TimeUs boundary_us = 0;
    bool ended = false;
  };

  // Emits every buffered tuple no other port can precede.
  void drain(Tuples& out);
  // Whether port q can still deliver a tuple whose merge key is below (ts, p, any id).
  bool may_precede(std::size_t q, TimeUs ts, std::size_t p) const;

  std::size_t port_count_;
  std::vector<Port> ports_;
  TupleId counter_ = 0;
  // The merge key of the last output (checked to grow; unknown after restart_from).
  bool has_last_ = false;
  TimeUs last_ts_ = 0;
  std::size_t last_port_ = 0;
  std::deque<Cause> causes_;
  std::vector<TupleId> forgotten_emitted_;  // per port: largest input emitted among forgotten outputs
  TupleId forgotten_up_to_ = 0;
};

}  // namespace hapair
