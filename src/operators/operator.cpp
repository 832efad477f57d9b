#include "operators/operator.h"

#include <algorithm>

namespace hapair {

TimeUs Operator::output_boundary(const std::vector<TimeUs>& input_boundaries) const {
  return input_boundaries.empty() ? 0 : *std::min_element(input_boundaries.begin(), input_boundaries.end());
}

}  // namespace hapair
