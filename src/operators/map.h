// Map (paper section 2): value' = value * scale + offset, and key' = key mod key_modulo (a
// non-negative result) when key_modulo > 0.
//
// Class: repeatable (stateless). Invariant: the output keeps its input's id, timestamp and
// lineage, so the cause function is the identity and a regenerated output equals the original.
#pragma once

#include <cstdint>

#include "operators/stateless_operator.h"
#include "protocols/topology.h"

namespace hapair {

class Map final : public StatelessOperator {
 public:
  explicit Map(const OperatorSpec& spec);
  OperatorKind kind() const override { return OperatorKind::map; }

  Tuple apply(const Tuple& t) const;

 std::size_t process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                          std::size_t out_max) override;

 protected:
  bool transform(const Tuple& in, Tuple& out) const override;

 private:
  double scale_;
  double offset_;
  std::int64_t key_modulo_;
};

}  // namespace hapair
