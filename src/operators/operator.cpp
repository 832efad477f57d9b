#include "operators/operator.h"

#include <algorithm>

#include "operators/aggregate.h"
#include "operators/filter.h"
#include "operators/join.h"
#include "operators/map.h"
#include "operators/serializing_union.h"
#include "operators/union.h"
#include "protocols/check.h"

namespace hapair {

TimeUs Operator::output_boundary(const std::vector<TimeUs>& input_boundaries) const {
  return input_boundaries.empty() ? 0 : *std::min_element(input_boundaries.begin(), input_boundaries.end());
}

std::unique_ptr<Operator> make_operator(const OperatorSpec& spec) {
  switch (spec.kind) {
    case OperatorKind::filter: return std::make_unique<Filter>(spec);
    case OperatorKind::map: return std::make_unique<Map>(spec);
    case OperatorKind::union_op:
      if (spec.union_order == UnionOrder::timestamp) return std::make_unique<SerializingUnion>(spec);
      return std::make_unique<UnionOperator>(spec);
    case OperatorKind::aggregate: return std::make_unique<Aggregate>(spec);
    case OperatorKind::join: return std::make_unique<Join>(spec);
  }
  HAPAIR_CHECK_MSG(false, "operator " << spec.name << " has unknown kind " << static_cast<int>(spec.kind));
  return nullptr;
}

}  // namespace hapair
