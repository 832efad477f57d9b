// Project (a projection Map over both fields): key' and value' are each taken from the input's
// key or value (or a constant), the key divided and taken modulo, the value scaled and offset:
//   key'   = (FROM / key_divisor) mod key_modulo   (mod when key_modulo > 0; FROM: key, value or key_constant)
//   value' = FROM * scale + offset                 (FROM: value, key, or 1)
// What a query's SELECT list does with hapair's two fields: NEXMark q1 converts a bid's price
// (value * 0.908), q2 selects on auction % 123 (key_modulo, then a Filter), YSB keeps (ad, time).
//
// Class: repeatable (stateless, operators/stateless_operator.h). Invariant: an output keeps its
// input's id, timestamp and lineage, so the cause function is the identity. It is the worked
// example of docs/OPERATORS.md.
#pragma once

#include <cstdint>

#include "operators/stateless_operator.h"
#include "protocols/topology.h"

namespace hapair {

class Project final : public StatelessOperator {
 public:
  enum class From : std::uint8_t { key, value, constant };  // a choice's index in the traits
  explicit Project(const OperatorSpec& spec);
  OperatorKind kind() const override { return OperatorKind::project; }

 protected:
  bool transform(const Tuple& in, Tuple& out) const override;

 private:
  From key_from_;
  std::int64_t key_divisor_;
  std::int64_t key_modulo_;
  std::int64_t key_constant_;
  From value_from_;  // the index of value's choice: 0 value, 1 key, 2 one (read as From's 0, 1, 2)
  double scale_;
  double offset_;
};

}  // namespace hapair
