#include "operators/filter.h"

#include "protocols/check.h"

namespace hapair {

Filter::Filter(const OperatorSpec& spec)
    : StatelessOperator(BlobTag::filter_state),
      field_(spec.filter_field),
      op_(spec.filter_op),
      constant_(spec.filter_constant) {
  HAPAIR_CHECK_MSG(spec.inputs.size() == 1, "filter " << spec.name << " has " << spec.inputs.size() << " inputs");
}

bool Filter::keeps(const Tuple& t) const {
  const double x = field_ == Field::key ? static_cast<double>(t.key) : t.value;
  switch (op_) {
    case CompareOp::lt: return x < constant_;
    case CompareOp::le: return x <= constant_;
    case CompareOp::gt: return x > constant_;
    case CompareOp::ge: return x >= constant_;
    case CompareOp::eq: return x == constant_;
    case CompareOp::ne: return x != constant_;
  }
  return false;
}

bool Filter::transform(const Tuple& in, Tuple& out) const {
  if (!keeps(in)) return false;
  out = in;
  return true;
}

}  // namespace hapair
