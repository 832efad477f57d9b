#include "campaigns/fidelity.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "report/csv.h"

namespace hapair {
namespace {

struct Figure {
  const char* name;
  bool time;  // a time in ms (else an overhead in percent)
  CompareSpread CompareRow::*spread;
};

const Figure kFigures[] = {
    {"detection_ms", true, &CompareRow::detection_ms},
    {"recovery_ms", true, &CompareRow::recovery_ms},
    {"catchup_ms", true, &CompareRow::catchup_ms},
    {"bandwidth_overhead_pct", false, &CompareRow::bandwidth_overhead_pct},
    {"cpu_overhead_pct", false, &CompareRow::cpu_overhead_pct},
};

const CompareRow* row_of(const CompareReport& report, const std::string& approach) {
  for (const CompareRow& r : report.rows)
    if (r.approach == approach) return &r;
  return nullptr;
}

}  // namespace

std::vector<FidelityRow> fidelity_rows(const CompareReport& sim, const CompareReport& real) {
  std::vector<FidelityRow> out;
  for (const CompareRow& s : sim.rows) {
    const CompareRow* r = row_of(real, s.approach);
    if (r == nullptr || s.approach == "none") continue;  // none is the baseline: no recovery, no overhead
    for (const Figure& f : kFigures) {
      FidelityRow row;
      row.approach = s.approach;
      row.figure = f.name;
      row.sim = s.*f.spread;
      row.real = r->*f.spread;
      row.allowed = f.time ? std::max(kFidelityTimeFloorMs, kFidelityTimeRatio * std::fabs(row.real.median)) : kFidelityOverheadPoints;
      if (row.sim.count == 0 || row.real.count == 0) {
        row.verdict = "not measured";
      } else {
        row.difference = row.sim.median - row.real.median;
        row.verdict = std::fabs(row.difference) <= row.allowed ? "within" : "outside";
      }
      out.push_back(row);
    }
  }
  return out;
}

std::string fidelity_csv(const std::vector<FidelityRow>& rows) {
  std::string out =
      "approach,figure,sim_median,sim_min,sim_max,sim_count,real_median,real_min,real_max,real_count,difference,allowed,verdict\n";
  for (const FidelityRow& r : rows) {
    CsvRow row;
    row.field(r.approach).field(r.figure);
    for (const CompareSpread* s : {&r.sim, &r.real}) {
      if (s->count == 0) row.empty().empty().empty();
      else row.fixed(s->median, 3).fixed(s->min, 3).fixed(s->max, 3);
      row.number(s->count);
    }
    if (r.verdict == "not measured") row.empty();
    else row.fixed(r.difference, 3);
    row.fixed(r.allowed, 3).field(r.verdict);
    out += row.line();
  }
  return out;
}

std::string fidelity_table(const std::vector<FidelityRow>& rows) {
  std::string out = fmt::format("{:<10} {:<24} {:>22} {:>22} {:>9} {:>8}  {}\n", "approach", "figure", "simulator",
                                "real processes", "sim-real", "allowed", "verdict");
  std::size_t within = 0, outside = 0, unmeasured = 0;
  for (const FidelityRow& r : rows) {
    const char* format = r.figure.find("_pct") != std::string::npos ? "{:+.1f}" : "{:.2f}";
    out += fmt::format("{:<10} {:<24} {:>22} {:>22} {:>9} {:>8.2f}  {}\n", r.approach, r.figure, spread_text(r.sim, format),
                       spread_text(r.real, format),
                       r.verdict == "not measured" ? std::string("-") : fmt::format("{:+.2f}", r.difference), r.allowed,
                       r.verdict);
    within += r.verdict == "within";
    outside += r.verdict == "outside";
    unmeasured += r.verdict == "not measured";
  }
  out += fmt::format("fidelity: {} within the goal, {} outside, {} not measured (goal: times within 20 % or 0.5 ms, "
                     "overheads within 3 points)\n",
                     within, outside, unmeasured);
  return out;
}

std::string write_fidelity(const std::string& out_dir, const std::vector<FidelityRow>& rows) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"fidelity.csv", fidelity_csv(rows)},
                                   {"fidelity.txt", fidelity_table(rows)}}) {
    std::ofstream out(out_dir + "/" + name, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return "cannot write " + out_dir + "/" + name;
  }
  return "";
}

}  // namespace hapair
