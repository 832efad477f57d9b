// Filter (paper section 2): keeps the tuples for which `field op constant` holds, unchanged;
// `field % modulo op constant` with a modulo (NEXMark q2 selects bids on auction % 123 == 0).
//
// Class: repeatable (stateless). Invariant: every output is its input tuple exactly (same id,
// timestamp, key, value and lineage), so the cause function is the identity.
#pragma once

#include "operators/stateless_operator.h"
#include "protocols/topology.h"

namespace hapair {

class Filter final : public StatelessOperator {
 public:
  explicit Filter(const OperatorSpec& spec);
  OperatorKind kind() const override { return OperatorKind::filter; }

  // Whether `t` passes the predicate.
  bool keeps(const Tuple& t) const;

 std::size_t process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                          std::size_t out_max) override;

 protected:
  bool transform(const Tuple& in, Tuple& out) const override;

 private:
  Field field_;
  CompareOp op_;
  double constant_;
  std::int64_t modulo_;  // > 0: compare the field modulo this
};

}  // namespace hapair
