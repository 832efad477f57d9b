// How far the simulator is from real processes (`hapair compare --driver both`, issue 38): the
// same comparison on both drivers, then per approach and figure the simulator's median against
// the real median, the difference and whether it is within the goal.
//
// Goals (docs/PERFORMANCE.md, "Fidelity"): a time (detection, recovery, catch-up) within 20 % of
// the real median or within 0.5 ms, whichever is larger; an overhead (bandwidth, CPU) within 3
// percentage points. A figure one side did not measure is "not measured", never a pass.
//
// Invariant: fidelity_rows is a pure function of the two reports.
#pragma once

#include <string>
#include <vector>

#include "campaigns/compare.h"

namespace hapair {

inline constexpr double kFidelityTimeRatio = 0.20;      // of the real median
inline constexpr double kFidelityTimeFloorMs = 0.5;
inline constexpr double kFidelityOverheadPoints = 3.0;  // percentage points

struct FidelityRow {
  std::string approach;
  std::string figure;  // detection_ms, recovery_ms, catchup_ms, bandwidth_overhead_pct, cpu_overhead_pct
  CompareSpread sim, real;
  double difference = 0;  // sim median - real median
  double allowed = 0;     // the goal's tolerance of |difference|
  std::string verdict;    // "within", "outside", "not measured"
};

std::vector<FidelityRow> fidelity_rows(const CompareReport& sim, const CompareReport& real);

// One line per row: approach, figure, the medians and spreads, difference, allowed, verdict.
std::string fidelity_csv(const std::vector<FidelityRow>& rows);
// The table for the terminal, with a last line counting within / outside / not measured.
std::string fidelity_table(const std::vector<FidelityRow>& rows);
// Writes OUT_DIR/fidelity.csv and fidelity.txt (the folder made); "" or what failed.
std::string write_fidelity(const std::string& out_dir, const std::vector<FidelityRow>& rows);

}  // namespace hapair
