#include "operators/project.h"

#include <cmath>
#include <limits>

#include "protocols/check.h"

namespace hapair {

namespace {

// A double as a key: truncated towards zero and clamped into int64's range (NaN is 0), so any
// value a source or an operator makes gives a defined key.
std::int64_t key_of(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

}  // namespace

Project::Project(const OperatorSpec& spec)
    : StatelessOperator(BlobTag::project_state),
      key_from_(static_cast<From>(static_cast<int>(operator_param(spec, "key")))),
      key_divisor_(static_cast<std::int64_t>(operator_param(spec, "key_divisor"))),
      key_modulo_(static_cast<std::int64_t>(operator_param(spec, "key_modulo"))),
      key_constant_(static_cast<std::int64_t>(operator_param(spec, "key_constant"))),
      value_from_(static_cast<From>(static_cast<int>(operator_param(spec, "value")))),
      scale_(operator_param(spec, "scale")),
      offset_(operator_param(spec, "offset")) {
  HAPAIR_CHECK_MSG(spec.inputs.size() == 1, "project " << spec.name << " has " << spec.inputs.size() << " inputs");
  HAPAIR_CHECK_MSG(key_divisor_ >= 1 && key_modulo_ >= 0, "project " << spec.name << ": key_divisor=" << key_divisor_
                                                                      << " key_modulo=" << key_modulo_);
}

bool Project::transform(const Tuple& in, Tuple& out) const {
  out = in;
  std::int64_t k = key_from_ == From::key ? in.key : key_from_ == From::value ? key_of(in.value) : key_constant_;
  k /= key_divisor_;
  if (key_modulo_ > 0) {
    // C++ % keeps the dividend's sign; shift negative remainders into [0, modulo).
    k %= key_modulo_;
    if (k < 0) k += key_modulo_;
  }
  out.key = k;
  // The value's choices are value, key, one (the traits' order).
  const double v = value_from_ == From::key ? in.value : value_from_ == From::value ? static_cast<double>(in.key) : 1.0;
  out.value = v * scale_ + offset_;
  return true;
}

}  // namespace hapair
