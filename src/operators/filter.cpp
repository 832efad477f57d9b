#include "operators/filter.h"

#include <algorithm>
#include <cmath>

#include "protocols/check.h"

namespace hapair {

Filter::Filter(const OperatorSpec& spec)
    : StatelessOperator(BlobTag::filter_state),
      field_(spec.filter_field),
      op_(spec.filter_op),
      constant_(spec.filter_constant),
      modulo_(spec.filter_modulo) {
  HAPAIR_CHECK_MSG(modulo_ >= 0, "filter " << spec.name << " modulo=" << modulo_);
  HAPAIR_CHECK_MSG(spec.inputs.size() == 1, "filter " << spec.name << " has " << spec.inputs.size() << " inputs");
}

bool Filter::keeps(const Tuple& t) const {
  double x = field_ == Field::key ? static_cast<double>(t.key) : t.value;
  if (modulo_ > 0) {
    // The field as a whole number, its remainder shifted into [0, modulo) (C++ % keeps the sign).
    const std::int64_t whole = field_ == Field::key ? t.key : static_cast<std::int64_t>(std::trunc(std::isfinite(t.value) ? std::clamp(t.value, -9.2e18, 9.2e18) : 0.0));
    std::int64_t r = whole % modulo_;
    if (r < 0) r += modulo_;
    x = static_cast<double>(r);
  }
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
