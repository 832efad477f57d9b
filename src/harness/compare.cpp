#include "harness/compare.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "harness/plots.h"
#include "harness/topology_file.h"

namespace hapair {
namespace {

std::optional<double> pct(double run, double base) {
  if (base <= 0) return std::nullopt;
  return 100.0 * (run - base) / base;
}

// p99 latency (ms) of the deliveries before `before_us`.
std::optional<double> p99_before(const RunResult& r, TimeUs before_us) {
  std::vector<Delivery> early;
  for (const auto& d : r.deliveries)
    if (d.at_us < before_us) early.push_back(d);
  if (early.empty()) return std::nullopt;
  return latency_summary(early).p99_ms;
}

std::string fmt(const std::optional<double>& v, const char* format = "%.1f") {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

std::string csv_num(const std::optional<double>& v) {
  if (!v) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", *v);
  return buf;
}

// A CSV field: quoted when it holds a comma or a quote.
std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string compare_note(const GuaranteeCheck& check) {
  switch (check.status) {
    case RunStatus::result:
      if (check.stopped) return "stopped at the crash";
      return check.reason.empty() ? "as promised" : check.reason;
    case RunStatus::broken: return "guarantee broken";
    case RunStatus::harness_failed: return "harness failed";
  }
  return "";
}

CompareReport run_compare(const Topology& topology, const CompareOptions& options) {
  CompareReport report;
  report.network = topology.name;
  report.seed = topology.settings.seed;
  report.victim = options.victim;
  report.fail_at_s = options.fail_at_s;
  report.driver = options.driver;
  report.operator_cost_us = topology.settings.operator_cost_us_per_tuple;
  const std::size_t total = options.approaches.size() + 1;

  auto plan_for = [&](HaMode ha) {
    Topology t = topology;
    t.settings.ha = ha;
    for (auto& f : t.fragments)
      if (f.kind == FragmentKind::operators) f.ha.reset();
    return std::make_shared<const Plan>(make_plan(t));
  };
  auto base_plan = plan_for(HaMode::none);
  const Reference reference = compute_reference(*base_plan);

  auto request_for = [&](const std::string& label, std::vector<FaultSpec> faults) {
    RunRequest r;
    r.driver = options.driver;
    r.faults = std::move(faults);
    r.hapair_binary = options.hapair_binary;
    r.progress = options.progress;
    if (!options.out_dir.empty()) r.out_dir = options.out_dir + "/" + label;
    return r;
  };

  if (options.on_run) options.on_run(0, total, "baseline (ha=none, no failure)");
  report.baseline = run_once(base_plan, request_for("baseline", {}), reference);
  report.baseline_guarantee = check_guarantee(*base_plan, report.baseline, reference);

  FaultSpec crash;
  crash.kind = FaultKind::crash;
  crash.node = options.victim;
  crash.at_s = options.fail_at_s;
  const TimeUs fail_us = us_from_ms(options.fail_at_s * 1000.0);
  const auto base_p99 = p99_before(report.baseline.result, fail_us);
  const auto& base_over = report.baseline.metrics.overhead;

  for (std::size_t i = 0; i < options.approaches.size(); ++i) {
    const HaMode ha = options.approaches[i];
    CompareRow row;
    row.approach = to_string(ha);
    if (options.on_run) options.on_run(i + 1, total, row.approach + " (SIGKILL " + options.victim + " at " +
                                                         fmt(options.fail_at_s, "%.1f") + " s)");
    const auto plan = plan_for(ha);
    row.outcome = run_once(plan, request_for(row.approach, {crash}), reference);
    row.guarantee = check_guarantee(*plan, row.outcome, reference);
    const auto& over = row.outcome.metrics.overhead;
    row.bandwidth_overhead_pct = pct(static_cast<double>(over.bytes_total), static_cast<double>(base_over.bytes_total));
    row.cpu_overhead_pct = pct(over.cpu_s, base_over.cpu_s);
    const auto p99 = p99_before(row.outcome.result, fail_us);
    if (p99 && base_p99) row.added_latency_p99_ms = *p99 - *base_p99;
    report.rows.push_back(std::move(row));
  }

  if (!options.out_dir.empty()) {
    std::filesystem::create_directories(options.out_dir);
    const std::string csv = options.out_dir + "/compare.csv";
    std::ofstream(csv) << compare_csv(report);
    std::ofstream(options.out_dir + "/compare.txt") << compare_table(report);
    std::ofstream(options.out_dir + "/config.ini") << write_topology(base_plan->topology);
    report.plot_error = run_plot_script("compare.py", {csv, options.out_dir + "/compare.png"});
  }
  return report;
}

std::string compare_table(const CompareReport& report) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "network %s, seed %llu, driver %s, operator cost %g us/tuple, SIGKILL of %s at %.1f s\n",
                report.network.c_str(), static_cast<unsigned long long>(report.seed), report.driver.c_str(),
                report.operator_cost_us, report.victim.c_str(), report.fail_at_s);
  out += line;
  std::snprintf(line, sizeof line, "%-9s %-9s %6s %5s %10s %10s %10s %10s %8s %10s  %s\n", "approach", "verdict", "lost",
                "dups", "detect ms", "recover ms", "catchup ms", "bandwidth%", "cpu%", "+p99 ms", "note");
  out += line;
  for (const auto& r : report.rows) {
    const auto& rec = r.outcome.metrics.recovery;
    std::snprintf(line, sizeof line, "%-9s %-9s %6llu %5llu %10s %10s %10s %10s %8s %10s  %s\n", r.approach.c_str(),
                  r.outcome.semantics.verdict.c_str(), static_cast<unsigned long long>(r.outcome.semantics.lost),
                  static_cast<unsigned long long>(r.outcome.semantics.duplicates),
                  fmt(rec ? rec->detection_ms : std::nullopt).c_str(), fmt(rec ? rec->recovery_ms : std::nullopt).c_str(),
                  fmt(rec ? rec->catchup_ms : std::nullopt).c_str(), fmt(r.bandwidth_overhead_pct, "%+.1f").c_str(),
                  fmt(r.cpu_overhead_pct, "%+.0f").c_str(), fmt(r.added_latency_p99_ms, "%+.2f").c_str(),
                  compare_note(r.guarantee).c_str());
    out += line;
  }
  for (const auto& r : report.rows)
    if (r.guarantee.stopped || r.guarantee.status != RunStatus::result)
      out += r.approach + ": " + guarantee_line(r.guarantee) + "\n";
  if (report.baseline_guarantee.status != RunStatus::result)
    out += "baseline: " + guarantee_line(report.baseline_guarantee) + "\n";
  for (const auto& r : report.rows)
    for (const NotJudged& n : r.outcome.semantics.not_judged)
      out += "not judged: stream " + n.stream + " in " + r.approach + " (" + n.reason + ")\n";
  out += "overheads are relative to a failure-free run with ha=none and include each approach's recovery traffic;\n"
         "'-' means not measured (no detection without a standby, no recovery when output never resumed)\n";
  return out;
}

std::string compare_csv(const CompareReport& report) {
  std::string out =
      "approach,verdict,lost,duplicates,differing,detection_ms,takeover_ms,recovery_ms,catchup_ms,replay_ms,"
      "bandwidth_overhead_pct,cpu_overhead_pct,added_latency_p99_ms,bytes_total,cpu_s,seed,network,victim,fail_at_s,driver,"
      "outcome,note\n";
  for (const auto& r : report.rows) {
    const auto& rec = r.outcome.metrics.recovery;
    const auto& s = r.outcome.semantics;
    char nums[256];
    std::snprintf(nums, sizeof nums, "%llu,%llu,%llu", static_cast<unsigned long long>(s.lost),
                  static_cast<unsigned long long>(s.duplicates), static_cast<unsigned long long>(s.differing));
    out += r.approach + "," + s.verdict + "," + nums + "," + csv_num(rec ? rec->detection_ms : std::nullopt) + "," +
           csv_num(rec ? rec->takeover_ms : std::nullopt) + "," + csv_num(rec ? rec->recovery_ms : std::nullopt) + "," +
           csv_num(rec ? rec->catchup_ms : std::nullopt) + "," + csv_num(rec ? rec->replay_ms : std::nullopt) + "," +
           csv_num(r.bandwidth_overhead_pct) + "," + csv_num(r.cpu_overhead_pct) + "," +
           csv_num(r.added_latency_p99_ms) + "," + std::to_string(r.outcome.metrics.overhead.bytes_total) + "," +
           csv_num(r.outcome.metrics.overhead.cpu_s) + "," + std::to_string(report.seed) + "," + report.network +
           "," + report.victim + "," + csv_num(report.fail_at_s) + "," + report.driver + "," +
           to_string(r.guarantee.status) + "," + csv_text(compare_note(r.guarantee)) + "\n";
  }
  return out;
}

}  // namespace hapair
