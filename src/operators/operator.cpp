#include "operators/operator.h"

#include <algorithm>

namespace hapair {

std::size_t Operator::process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                                  std::size_t out_max) {
  for (std::size_t i = 0; i < count; ++i) {
    process(port, tuples[i], out);
    if (out.size() >= out_max) return i + 1;
  }
  return count;
}

TimeUs Operator::output_boundary(const std::vector<TimeUs>& input_boundaries) const {
  return input_boundaries.empty() ? 0 : *std::min_element(input_boundaries.begin(), input_boundaries.end());
}

}  // namespace hapair
