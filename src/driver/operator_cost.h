// The operator cost model (Settings::operator_cost_us_per_tuple): every tuple an operator
// fragment processed (Effects::operator_tuples; a source emitting and a sink delivering are free)
// costs the node that many microseconds of CPU time, so an operator costs what the paper's model
// says it costs and reprocessing after a failure takes time.
//
// Both drivers charge it after each handle(), before the effects are applied (driver/effects.h):
// the runtime by working on the node thread's CPU that long (runtime/core_runner.h), the
// simulator by keeping the node busy that long, on top of its machine model's own per-message and
// per-tuple costs (sim/simulator.h).
#pragma once

#include <cstdint>

#include "protocols/core.h"

namespace hapair {

inline double operator_cost_us(double operator_cost_us_per_tuple, const Effects& effects) {
  return operator_cost_us_per_tuple * static_cast<double>(effects.operator_tuples);
}

}  // namespace hapair
