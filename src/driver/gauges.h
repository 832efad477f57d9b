// The gauges a driver samples into RunResult::samples, the time series of queue lengths behind
// the metrics' queue maxima and the experiments' retained-queue figures: every core metric whose
// name starts with one of these prefixes ("output_queue_tuples" and its per-stream
// "output_queue_tuples.<stream>", ...). Both drivers sample them every sample interval (the
// simulator from the cores' metrics, the launcher from the nodes' NodeStats).
#pragma once

#include <array>
#include <string_view>

namespace hapair {

inline constexpr std::array<std::string_view, 3> kSampledGaugePrefixes = {"output_queue_tuples", "input_queue_tuples",
                                                                          "retained"};

inline bool is_sampled_gauge(std::string_view metric_name) {
  for (const std::string_view prefix : kSampledGaugePrefixes)
    if (metric_name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

}  // namespace hapair
