#include "operators/map.h"

#include "protocols/check.h"

namespace hapair {

Map::Map(const OperatorSpec& spec)
    : StatelessOperator(BlobTag::map_state),
      scale_(spec.map_scale),
      offset_(spec.map_offset),
      key_modulo_(spec.map_key_modulo) {
  HAPAIR_CHECK_MSG(spec.inputs.size() == 1, "map " << spec.name << " has " << spec.inputs.size() << " inputs");
}

Tuple Map::apply(const Tuple& t) const {
  Tuple out = t;
  out.value = t.value * scale_ + offset_;
  if (key_modulo_ > 0) {
    // C++ % keeps the dividend's sign; shift negative remainders into [0, modulo).
    std::int64_t k = t.key % key_modulo_;
    if (k < 0) k += key_modulo_;
    out.key = k;
  }
  return out;
}

bool Map::transform(const Tuple& in, Tuple& out) const {
  out = apply(in);
  return true;
}

// The stateless loop with this operator's own transform inlined (no virtual call per tuple).
std::size_t Map::process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                             std::size_t out_max) {
  return process_run_with(port, tuples, count, out, out_max,
                          [this](const Tuple& in, Tuple& result) { return Map::transform(in, result); });
}

}  // namespace hapair
