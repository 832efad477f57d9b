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

// The stateless loop with this operator's own predicate inlined (no virtual call per tuple) and,
// without a modulo, its comparison chosen once per run: what keeps() computes, branch-free of
// the operator's settings.
std::size_t Filter::process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                                std::size_t out_max) {
  if (modulo_ > 0) return process_run_keeping(port, tuples, count, out, out_max, [this](const Tuple& in) { return keeps(in); });
  const bool on_key = field_ == Field::key;
  const double constant = constant_;
  auto run = [&](auto compare) {
    return process_run_keeping(port, tuples, count, out, out_max, [&](const Tuple& in) {
      return compare(on_key ? static_cast<double>(in.key) : in.value, constant);
    });
  };
  switch (op_) {
    case CompareOp::lt: return run([](double x, double c) { return x < c; });
    case CompareOp::le: return run([](double x, double c) { return x <= c; });
    case CompareOp::gt: return run([](double x, double c) { return x > c; });
    case CompareOp::ge: return run([](double x, double c) { return x >= c; });
    case CompareOp::eq: return run([](double x, double c) { return x == c; });
    case CompareOp::ne: return run([](double x, double c) { return x != c; });
  }
  return run([](double, double) { return false; });
}

}  // namespace hapair
