#include "campaigns/soak.h"

#include "hosts/host_faults.h"
#include "report/csv.h"
#include "judge/disturbance.h"
#include "protocols/trace_text.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

namespace hapair {
namespace {

std::string node_name(const RunResult& r, NodeId id) {
  if (r.plan && id < r.plan->nodes.size()) return r.plan->nodes[id].name;
  return "node " + std::to_string(id);
}

std::string describe(const RunResult& r, const TraceEvent& e) {
  return fmt::format("{} {} at {:.3f} s ({})", node_name(r, e.node), to_string(e.kind), static_cast<double>(e.at_us) / 1e6,
                     trace_details_text(r.plan.get(), e));
}

// Nearest-rank percentile of an ascending vector (metrics.h's definition).
double percentile(const std::vector<double>& sorted, double p) {
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p / 100.0 * static_cast<double>(sorted.size()))));
  return sorted[std::min(rank, sorted.size()) - 1];
}

std::string distribution(std::vector<double> v) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  return fmt::format("{:.2f} / {:.2f} / {:.2f}", percentile(v, 50), percentile(v, 99), v.back());
}

constexpr const char* kSoakCsvHeader =
    "network,approach,run,seed,verdict,completed,false_detections,false_suspicions,detection_ms,detector,recovery_ms,"
    "errors\n";

bool claims_precise(const std::string& approach) {
  return approach == "upstream" || approach == "passive" || approach == "active";
}

}  // namespace

DetectionFindings find_detections(const RunResult& result, const std::string& victim, TimeUs planned_us) {
  DetectionFindings f;
  // Detection is timed from the SIGKILL itself (the launcher's `failure` event), not from the
  // planned instant: the launcher's loop may reach the planned moment a little late.
  TimeUs failure_us = planned_us;
  for (const TraceEvent& e : result.events) {
    if (!victim.empty() && e.kind == TraceKind::failure && node_name(result, e.node) == victim) {
      failure_us = e.at_us;
      break;
    }
  }
  for (const TraceEvent& e : result.events) {
    // After every sink saw the end of its input the launcher stops the nodes: a partner that
    // exits then has not failed.
    if (result.completed && e.at_us > result.end_us) continue;
    const bool detection = e.kind == TraceKind::detection || e.kind == TraceKind::takeover;
    const bool suspicion = e.kind == TraceKind::standby_suspected;
    if (!detection && !suspicion) continue;
    // A takeover event names no failed node: it belongs to the detection just before it.
    const std::string failed = trace_node_name(result.plan.get(), e.node_of(suspicion ? TraceKey::standby : TraceKey::failed));
    const bool planned = !victim.empty() && e.at_us >= failure_us && (e.kind == TraceKind::takeover || failed == victim);
    if (planned) {
      if (e.kind == TraceKind::detection && !f.detection_ms) {
        f.detection_ms = static_cast<double>(e.at_us - failure_us) / 1000.0;
        f.detector = detector_of(e);
      }
      continue;
    }
    (detection ? f.false_detections : f.false_suspicions).push_back(describe(result, e));
  }
  return f;
}

SoakReport run_soak(const std::vector<Topology>& networks, const SoakOptions& options) {
  SoakReport report;
  report.driver = options.driver;
  report.victim = options.victim;
  report.fail_at_s = options.fail_at_s;
  report.host_loss = options.lose_victim_host;
  const auto started = std::chrono::steady_clock::now();
  const std::size_t total = networks.size() * options.approaches.size() * options.runs;
  std::size_t done = 0;
  std::vector<Reference> references;
  for (const Topology& t : networks) {
    Topology base = t;
    base.settings.ha = ApproachCatalog::builtin().baseline();
    for (auto& f : base.fragments) f.ha.reset();
    references.push_back(compute_reference(make_plan(base)));
  }
  // Written as the runs end, so a soak cut short keeps what it measured.
  std::ofstream csv;
  if (!options.out_dir.empty()) {
    std::filesystem::create_directories(options.out_dir);
    csv.open(options.out_dir + "/soak.csv");
    csv << kSoakCsvHeader;
  }
  const TimeUs failure_us = static_cast<TimeUs>(options.fail_at_s * 1e6);
  for (std::size_t i = 0; i < options.runs; ++i) {
    for (std::size_t n = 0; n < networks.size(); ++n) {
      for (const HaMode ha : options.approaches) {
        Topology t = networks[n];
        t.settings.ha = ha;
        for (auto& f : t.fragments)
          if (f.kind == FragmentKind::operators) f.ha.reset();
        // The same seed for every approach of round i, another one per round: the input
        // changes from round to round, the comparison within a round stays fair.
        t.settings.seed = networks[n].settings.seed + i;
        SoakRun run;
        run.network = t.name;
        run.approach = to_string(ha);
        run.index = i;
        run.seed = t.settings.seed;
        if (options.on_run) options.on_run(done++, total, run.network + " " + run.approach + " #" + std::to_string(i + 1));
        RunRequest request;
        request.driver = options.driver;
        request.hapair_binary = options.hapair_binary;
        request.hosts = options.hosts;
        if (!options.victim.empty() && options.lose_victim_host)
          request.hosts.losses.push_back(HostLossSpec{std::string(kHostOfPrefix) + options.victim, options.fail_at_s});
        else if (!options.victim.empty())
          request.faults.push_back(FaultSpec{FaultKind::crash, options.victim, "", options.fail_at_s, 0});
        auto plan = std::make_shared<const Plan>(make_plan(t));
        // A new seed is a new input: its reference is computed for it.
        const Reference reference = i == 0 ? references[n] : compute_reference(*plan);
        const RunOutcome outcome = run_once(plan, request, reference);
        run.verdict = outcome.semantics.verdict;
        run.completed = outcome.result.completed;
        run.errors = outcome.result.errors;
        run.findings = find_detections(outcome.result, options.victim, failure_us);
        if (outcome.metrics.recovery) run.recovery_ms = outcome.metrics.recovery->recovery_ms;
        if (csv) csv << soak_csv_row(run) << std::flush;
        report.runs.push_back(std::move(run));
      }
    }
  }
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!options.out_dir.empty()) std::ofstream(options.out_dir + "/soak.txt") << soak_table(report);
  return report;
}

std::string soak_table(const SoakReport& report) {
  struct Row {
    std::size_t runs = 0, disturbed = 0, false_detections = 0, false_suspicions = 0, precise = 0, incomplete = 0;
    std::vector<double> detection, recovery;
    std::map<std::string, std::size_t> detectors;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  std::vector<std::pair<std::string, std::string>> order;
  for (const SoakRun& r : report.runs) {
    const auto key = std::make_pair(r.network, r.approach);
    if (!rows.count(key)) order.push_back(key);
    Row& row = rows[key];
    ++row.runs;
    const auto& f = r.findings;
    if (!f.false_detections.empty() || !f.false_suspicions.empty()) ++row.disturbed;
    row.false_detections += f.false_detections.size();
    row.false_suspicions += f.false_suspicions.size();
    if (r.verdict == "precise") ++row.precise;
    if (!r.completed) ++row.incomplete;
    if (f.detection_ms) row.detection.push_back(*f.detection_ms);
    if (r.recovery_ms) row.recovery.push_back(*r.recovery_ms);
    if (!f.detector.empty()) ++row.detectors[f.detector];
  }
  const bool kills = !report.victim.empty();
  const std::string what =
      kills ? fmt::format("{} {} at {:.2f} s", report.host_loss ? "loss of the host of" : "SIGKILL of", report.victim,
                          report.fail_at_s)
            : std::string("failure-free");
  std::string out = fmt::format("soak: {} runs, driver {}, {}, {:.0f} s wall time\n", report.runs.size(), report.driver,
                                what, report.wall_s);
  constexpr const char* kRow = "{:<12} {:<9} {:>5} {:>9} {:>9} {:>9} {:>8} {:>6}";
  out += fmt::format(kRow, "network", "approach", "runs", "disturbed", "false det", "false sus", "precise", "incomp") +
         (kills ? "   detect ms p50 / p99 / max   recover ms p50 / p99 / max   detector" : "") + "\n";
  for (const auto& key : order) {
    const Row& row = rows[key];
    std::string det;
    for (const auto& [name, count] : row.detectors) det += (det.empty() ? "" : ", ") + name + " " + std::to_string(count);
    out += fmt::format(kRow, key.first, key.second, row.runs, row.disturbed, row.false_detections, row.false_suspicions,
                       row.precise, row.incomplete);
    if (kills) out += fmt::format("   {:<25} {:<28} {}", distribution(row.detection), distribution(row.recovery), det);
    out += "\n";
  }
  out += "disturbed: runs with a false detection or suspicion; false det: detections/takeovers no planned fault explains;\n"
         "false sus: standby suspicions no planned fault explains; detect ms: the victim's standby's detection after the kill\n";
  for (const SoakRun& r : report.runs) {
    for (const auto& d : r.findings.false_detections)
      out += "  " + r.network + " " + r.approach + " #" + std::to_string(r.index + 1) + ": false detection: " + d + "\n";
    for (const auto& d : r.findings.false_suspicions)
      out += "  " + r.network + " " + r.approach + " #" + std::to_string(r.index + 1) + ": false suspicion: " + d + "\n";
    for (const auto& e : r.errors)
      out += "  " + r.network + " " + r.approach + " #" + std::to_string(r.index + 1) + ": error: " + e + "\n";
  }
  return out;
}

std::string soak_csv(const SoakReport& report) {
  std::string out = kSoakCsvHeader;
  for (const SoakRun& r : report.runs) out += soak_csv_row(r);
  return out;
}

std::string soak_csv_row(const SoakRun& r) {
  CsvRow row;
  row.field(r.network).field(r.approach).number(r.index + 1).number(r.seed).field(r.verdict).flag(r.completed);
  row.number(r.findings.false_detections.size()).number(r.findings.false_suspicions.size());
  if (r.findings.detection_ms) row.fixed(*r.findings.detection_ms, 6);
  else row.empty();
  row.field(r.findings.detector);
  if (r.recovery_ms) row.fixed(*r.recovery_ms, 6);
  else row.empty();
  row.number(r.errors.size());
  return row.line();
}

int soak_status(const SoakReport& report) {
  for (const SoakRun& r : report.runs) {
    if (!r.findings.false_detections.empty() || !r.findings.false_suspicions.empty()) return 1;
    if (!r.completed || !r.errors.empty()) return 1;
    if (claims_precise(r.approach) && r.verdict != "precise") return 1;
  }
  return 0;
}

}  // namespace hapair
