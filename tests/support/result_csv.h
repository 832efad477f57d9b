// Reading a run's output.csv and events.csv back (results.h writes them), for the tests only:
// the harness itself never reads its result files. Malformed rows are skipped and described in
// `problems` (with their line numbers); `plan` (may be null) maps names back to ids, and numbers
// are accepted too (node "launcher" is kNoNode).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocols/plan.h"
#include "protocols/run_result.h"

namespace hapair {

struct ReadDeliveries {
  std::vector<Delivery> deliveries;
  std::vector<std::string> problems;
};
struct ReadEvents {
  std::vector<TraceEvent> events;
  std::vector<std::string> problems;
};
ReadDeliveries parse_output_csv(const std::string& text, const Plan* plan);
ReadEvents parse_events_csv(const std::string& text, const Plan* plan);
ReadDeliveries read_output_csv(const std::string& path, const Plan* plan);
ReadEvents read_events_csv(const std::string& path, const Plan* plan);

// One CSV record and the line it starts on (1-based).
struct CsvRecord {
  std::size_t line = 0;
  std::vector<std::string> fields;
};

// Splits CSV text into records; quoted fields may hold separators, doubled quotes and line
// breaks. A trailing line break does not make an empty record; "\r\n" is accepted.
std::vector<CsvRecord> parse_csv(std::string_view text);

}  // namespace hapair
