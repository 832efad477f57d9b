// The registration table of operator types: one line per type, its kind and how to build it from
// its spec. What the rest of the system asks of a type is its traits record
// (protocols/operator_traits.h), kept under the same kind. docs/OPERATORS.md, "Adding an operator".
#include <array>
#include <memory>

#include "operators/aggregate.h"
#include "operators/filter.h"
#include "operators/join.h"
#include "operators/lookup.h"
#include "operators/map.h"
#include "operators/operator.h"
#include "operators/project.h"
#include "operators/serializing_union.h"
#include "operators/top.h"
#include "operators/union.h"
#include "protocols/check.h"

namespace hapair {

namespace {

using Factory = std::unique_ptr<Operator> (*)(const OperatorSpec&);

template <typename Op>
std::unique_ptr<Operator> make(const OperatorSpec& spec) {
  return std::make_unique<Op>(spec);
}

// A Union merges in arrival order (the paper's) or in timestamp order (the serializing one).
std::unique_ptr<Operator> make_union(const OperatorSpec& spec) {
  if (spec.union_order == UnionOrder::timestamp) return std::make_unique<SerializingUnion>(spec);
  return std::make_unique<UnionOperator>(spec);
}

struct Registration {
  OperatorKind kind;
  Factory factory;
};

constexpr std::array<Registration, 8> kRegistered{{
    {OperatorKind::filter, &make<Filter>},        // the paper's five
    {OperatorKind::map, &make<Map>},
    {OperatorKind::union_op, &make_union},
    {OperatorKind::aggregate, &make<Aggregate>},
    {OperatorKind::join, &make<Join>},
    {OperatorKind::project, &make<Project>},      // the workloads' (NEXMark, the Yahoo benchmark)
    {OperatorKind::lookup, &make<Lookup>},
    {OperatorKind::top, &make<Top>},
}};

}  // namespace

std::unique_ptr<Operator> make_operator(const OperatorSpec& spec) {
  for (const Registration& r : kRegistered)
    if (r.kind == spec.kind) return r.factory(spec);
  HAPAIR_CHECK_MSG(false, "operator " << spec.name << " has kind " << static_cast<int>(spec.kind)
                                      << ", which no line of src/operators/registry.cpp registers");
  return nullptr;
}

}  // namespace hapair
