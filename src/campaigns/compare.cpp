#include "campaigns/compare.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "hosts/host_faults.h"
#include "report/csv.h"
#include "report/plots.h"
#include "report/results.h"
#include "protocols/check.h"
#include "config/topology_file.h"
#include "protocols/version.h"

namespace hapair {
namespace {


// One number in an fmt format chosen at run time ("{:.3f}").
std::string number_text(double v, const char* format) { return fmt::format(fmt::runtime(format), v); }

// "precise" when all agree, else "gap 2, precise 1" (most frequent first, then by name).
std::string tally_text(const std::map<std::string, std::size_t>& tally) {
  if (tally.empty()) return "-";
  if (tally.size() == 1) return tally.begin()->first;
  std::vector<std::pair<std::string, std::size_t>> items(tally.begin(), tally.end());
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, n] : items) out += (out.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return out;
}

std::string folder_of(const CompareRun& r) {
  return r.approach + (r.failure ? "_crash" : "_nofail") + "_rep" + std::to_string(r.repetition) +
         (r.attempt ? "_rerun" + std::to_string(r.attempt) : "");
}

void csv_number(CsvRow& row, const std::optional<double>& v) {
  if (v) row.fixed(*v, 3);
  else row.empty();
}

// Three fields: median, min, max (empty when not measured).
void csv_spread(CsvRow& row, const CompareSpread& s) {
  if (s.count == 0) row.empty().empty().empty();
  else row.fixed(s.median, 3).fixed(s.min, 3).fixed(s.max, 3);
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

std::string CompareRun::label() const {
  return approach + (failure ? " crash run" : " failure-free run") + ", repetition " + std::to_string(repetition) +
         (attempt ? ", rerun " + std::to_string(attempt) : "");
}

std::string spread_text(const CompareSpread& s, const char* format) {
  if (s.count == 0) return "-";
  const std::string median = number_text(s.median, format);
  const std::string min = number_text(s.min, format);
  const std::string max = number_text(s.max, format);
  if (s.count == 1 || min == max) return median;
  return median + " (" + min + ".." + max + ")";
}

CompareReport run_compare(const Topology& topology, const CompareOptions& options) {
  HAPAIR_CHECK_MSG(options.repeat >= 1, "repeat=" << options.repeat);
  CompareReport report;
  report.network = topology.name;
  report.seed = topology.settings.seed;
  report.vary_seed = options.vary_seed;
  report.victim = options.victim;
  if (options.lose_victim_host) report.failure = "loss of the host of";
  report.fail_at_s = options.fail_at_s;
  report.crash_duration_s = topology.settings.duration_s;
  report.failure_free_duration_s = options.failure_free_duration_s.value_or(topology.settings.duration_s);
  report.repeat = options.repeat;
  report.reruns_max = options.reruns_max;
  report.driver = options.driver;
  report.operator_cost_us = topology.settings.operator_cost_us_per_tuple;
  report.cores = options.cores != 0 ? options.cores : machine_cores();

  auto plan_for = [&](HaMode ha, double duration_s, std::uint64_t seed) {
    Topology t = topology;
    t.settings.ha = ha;
    t.settings.duration_s = duration_s;
    t.settings.seed = seed;
    for (auto& f : t.fragments)
      if (f.kind == FragmentKind::operators) f.ha.reset();
    return std::make_shared<const Plan>(make_plan(t));
  };
  // The failure-free ha=none run is the baseline even when `none` is not among the approaches.
  const HaMode baseline = ApproachCatalog::builtin().baseline();
  std::vector<HaMode> free_modes = {baseline};
  for (HaMode ha : options.approaches)
    if (ha != baseline) free_modes.push_back(ha);
  // Per repetition its seed (CompareOptions::vary_seed), each with its plans and references.
  auto seed_of = [&](std::size_t rep) { return topology.settings.seed + (options.vary_seed ? rep - 1 : 0); };
  struct Seeded {
    std::map<std::string, std::shared_ptr<const Plan>> crash_plans, free_plans;
    Reference crash_reference, free_reference;
  };
  std::map<std::uint64_t, Seeded> seeded;
  for (std::size_t rep = 1; rep <= options.repeat; ++rep) {
    const std::uint64_t seed = seed_of(rep);
    if (seeded.count(seed) != 0) continue;
    Seeded& s = seeded[seed];
    for (HaMode ha : options.approaches) s.crash_plans[to_string(ha)] = plan_for(ha, report.crash_duration_s, seed);
    for (HaMode ha : free_modes) s.free_plans[to_string(ha)] = plan_for(ha, report.failure_free_duration_s, seed);
    s.crash_reference = compute_reference(*plan_for(baseline, report.crash_duration_s, seed));
    s.free_reference = compute_reference(*plan_for(baseline, report.failure_free_duration_s, seed));
  }
  const auto& crash_plans = seeded.at(seed_of(1)).crash_plans;
  const Reference& crash_reference = seeded.at(seed_of(1)).crash_reference;

  FaultSpec crash;
  crash.kind = FaultKind::crash;
  crash.node = options.victim;
  crash.at_s = options.fail_at_s;

  const bool with_none = std::find(options.approaches.begin(), options.approaches.end(), baseline) !=
                         options.approaches.end();
  const std::size_t planned =
      options.repeat * (free_modes.size() + options.approaches.size()) - (with_none ? options.repeat - 1 : 0);
  std::size_t position = 0;
  auto run_one = [&](const std::string& approach, bool failure, std::size_t repetition) {
    for (std::size_t attempt = 0;; ++attempt) {
      CompareRun r;
      r.approach = approach;
      r.failure = failure;
      r.repetition = repetition;
      r.attempt = attempt;
      if (options.on_run)
        options.on_run(position, planned,
                       "repetition " + std::to_string(repetition) + "/" + std::to_string(options.repeat) + ": " +
                           approach +
                           (failure ? std::string(options.lose_victim_host ? " (loss of the host of " : " (SIGKILL ") + options.victim + " at " + fmt::format("{:.1f}", options.fail_at_s) + " s)"
                                    : " (failure-free)") +
                           (attempt ? ", rerun " + std::to_string(attempt) + " (the last was disturbed)" : ""));
      RunRequest request;
      request.driver = options.driver;
      request.hapair_binary = options.hapair_binary;
      request.progress = options.progress;
      request.cores = report.cores;
      request.hosts = options.hosts;
      request.secure = options.secure;
      if (options.hosts.hosts && !options.out_dir.empty()) request.log_dir = options.out_dir + "/" + folder_of(r);
      if (failure && options.lose_victim_host)
        request.hosts.losses = {HostLossSpec{std::string(kHostOfPrefix) + options.victim, options.fail_at_s}};
      else if (failure)
        request.faults = {crash};
      const Seeded& s = seeded.at(seed_of(repetition));
      const auto& plan = failure ? s.crash_plans.at(approach) : s.free_plans.at(approach);
      const Reference& reference = failure ? s.crash_reference : s.free_reference;
      r.outcome = run_once(plan, request, reference);
      if (options.tamper) {
        options.tamper(r, r.outcome);
        r.outcome.metrics.disturbance = find_disturbances(r.outcome.result);
      }
      r.guarantee = check_guarantee(*plan, r.outcome, reference);
      r.disturbed = r.outcome.metrics.disturbance.disturbed();
      r.disturbance = describe_disturbances(r.outcome.metrics.disturbance);
      const bool last = !r.disturbed || attempt >= options.reruns_max;
      r.used = !r.disturbed;
      if (r.disturbed) {
        std::string what = r.label() + ": " + r.disturbance;
        if (!last) what += "; run again";
        else if (attempt > 0) what += "; disturbed on every attempt, left out of the medians";
        else what += "; left out of the medians";
        report.disturbed_notes.push_back(what);
      } else if (attempt > 0) {
        report.disturbed_notes.push_back(r.label() + ": undisturbed, used");
      }
      if (!options.out_dir.empty()) {
        r.run_dir = folder_of(r);
        const std::string error =
            write_results(options.out_dir + "/" + r.run_dir, r.outcome.result, r.outcome.semantics, r.outcome.metrics,
                          r.outcome.effective_config, plan->settings().seed, version_string(),
                          r.outcome.reference);
        if (!error.empty()) r.outcome.write_error = error;
      }
      report.runs.push_back(std::move(r));
      if (last) break;
    }
    ++position;
  };
  for (std::size_t rep = 1; rep <= options.repeat; ++rep) {
    for (HaMode ha : free_modes) run_one(to_string(ha), false, rep);
    for (HaMode ha : options.approaches)
      if (ha != baseline || rep == 1) run_one(to_string(ha), true, rep);
  }

  // The used runs of one approach and kind, by repetition.
  auto used = [&](const std::string& approach, bool failure) {
    std::map<std::size_t, const CompareRun*> by_rep;
    for (const CompareRun& r : report.runs)
      if (r.approach == approach && r.failure == failure && r.used) by_rep[r.repetition] = &r;
    return by_rep;
  };
  const auto baselines = used("none", false);
  for (HaMode ha : options.approaches) {
    CompareRow row;
    row.approach = to_string(ha);
    row.load = planned_load(*crash_plans.at(row.approach), crash_reference.run, report.cores);
    for (const CompareRun& r : report.runs) {
      if (r.approach != row.approach) continue;
      row.disturbed += r.disturbed;
      row.reruns += r.attempt > 0;
    }
    row.excluded += options.repeat - used(row.approach, false).size();
    row.excluded += (ha == baseline ? 1 : options.repeat) - used(row.approach, true).size();
    std::vector<double> lost, dups, detection, takeover, recovery, catchup, replay, rollback, restored;
    std::map<std::string, std::size_t> detectors;
    for (const auto& [rep, r] : used(row.approach, true)) {
      ++row.crash_runs;
      const RunOutcome& o = r->outcome;
      ++row.verdicts[o.semantics.verdict];
      lost.push_back(static_cast<double>(o.semantics.lost));
      dups.push_back(static_cast<double>(o.semantics.duplicates));
      if (const auto& rec = o.metrics.recovery) {
        if (rec->detection_ms) {
          detection.push_back(*rec->detection_ms);
          ++detectors[rec->detector];
        }
        if (rec->takeover_ms) takeover.push_back(*rec->takeover_ms);
        if (rec->recovery_ms) recovery.push_back(*rec->recovery_ms);
        else ++row.not_recovered;
        if (rec->catchup_ms && rec->recovered) catchup.push_back(*rec->catchup_ms);
        if (rec->replay_ms) replay.push_back(*rec->replay_ms);
        if (rec->rollback_ms) rollback.push_back(*rec->rollback_ms);
        if (rec->state_restored_ms) restored.push_back(*rec->state_restored_ms);
      }
    }
    row.verdict = tally_text(row.verdicts);
    // The note: any crash or failure-free run of the approach that broke its guarantee (used or
    // not: a precise approach must stay precise through a false detection), else what the used
    // crash runs gave.
    std::size_t broken = 0, failed = 0, all = 0;
    for (const CompareRun& r : report.runs) {
      if (r.approach != row.approach) continue;
      ++all;
      broken += r.guarantee.status == RunStatus::broken;
      failed += r.guarantee.status == RunStatus::harness_failed;
    }
    std::map<std::string, std::size_t> notes;
    for (const auto& [rep, r] : used(row.approach, true)) ++notes[compare_note(r->guarantee)];
    if (broken + failed > 0)
      row.note = std::string(broken ? "guarantee broken" : "harness failed") + " in " +
                 std::to_string(broken ? broken : failed) + " of " + std::to_string(all) + " runs";
    else
      row.note = notes.empty() ? "-" : tally_text(notes);
    row.detector = detectors.empty() ? "-" : tally_text(detectors);
    row.lost = spread_of(lost);
    row.duplicates = spread_of(dups);
    row.detection_ms = spread_of(detection);
    row.takeover_ms = spread_of(takeover);
    row.recovery_ms = spread_of(recovery);
    row.catchup_ms = spread_of(catchup);
    row.replay_ms = spread_of(replay);
    row.rollback_ms = spread_of(rollback);
    row.state_restored_ms = spread_of(restored);

    std::vector<double> bandwidth, cpu, p99, measured;
    for (const auto& [rep, r] : used(row.approach, false)) {
      ++row.failure_free_runs;
      measured.push_back(r->outcome.measured_load_pct);
      if (ha == baseline) continue;  // the baseline itself: no overhead
      auto base = baselines.find(rep);
      if (base == baselines.end()) continue;  // its repetition's baseline was left out
      const RunMetrics& m = r->outcome.metrics;
      const RunMetrics& b = base->second->outcome.metrics;
      if (auto v = percent_over(static_cast<double>(m.overhead.bytes_total), static_cast<double>(b.overhead.bytes_total)))
        bandwidth.push_back(*v);
      if (auto v = percent_over(m.overhead.cpu_s, b.overhead.cpu_s)) cpu.push_back(*v);
      if (m.latency.count > 0 && b.latency.count > 0) p99.push_back(m.latency.p99_ms - b.latency.p99_ms);
    }
    row.bandwidth_overhead_pct = spread_of(bandwidth);
    row.cpu_overhead_pct = spread_of(cpu);
    row.added_latency_p99_ms = spread_of(p99);
    row.measured_load_pct = spread_of(measured);
    report.rows.push_back(std::move(row));
  }

  if (!options.out_dir.empty()) {
    std::filesystem::create_directories(options.out_dir);
    const std::string csv = options.out_dir + "/compare.csv";
    std::ofstream(csv) << compare_csv(report);
    std::ofstream(options.out_dir + "/compare_runs.csv") << compare_runs_csv(report);
    std::ofstream(options.out_dir + "/compare.txt") << compare_table(report);
    std::ofstream(options.out_dir + "/config.toml") << write_topology(crash_plans.begin()->second->topology);
    report.plot_error = run_plot_script("compare.py", {csv, options.out_dir + "/compare.png"});
  }
  return report;
}

std::string compare_table(const CompareReport& report) {
  const std::string seeds = report.vary_seed && report.repeat > 1
                                ? fmt::format("seeds {}..{} (one per repetition)", report.seed, report.seed + report.repeat - 1)
                                : fmt::format("seed {}", report.seed);
  std::string out = fmt::format("network {}, {}, driver {}, operator cost {:g} us/tuple; {} repetitions in interleaved order\n",
                                report.network, seeds, report.driver, report.operator_cost_us, report.repeat);
  out += "planned CPU load of " + std::to_string(report.cores) + (report.cores == 1 ? " core:" : " cores:");
  bool over = false;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    out += fmt::format("{}{} {:.0f} %", i ? ", " : " ", report.rows[i].approach, report.rows[i].load.utilisation_pct);
    over = over || report.rows[i].load.over_limit();
  }
  out += over ? fmt::format("  (above {:.0f} %: expect late heartbeats and false takeovers)\n", kPlannedLoadWarnPct)
              : " (operators only)\n";
  out += "measured CPU load (failure-free runs, every process):";
  for (std::size_t i = 0; i < report.rows.size(); ++i)
    out += (i ? ", " : " ") + report.rows[i].approach + " " + spread_text(report.rows[i].measured_load_pct, "{:.0f}") +
           " %";
  out += "\n";

  out += fmt::format("\nrecovery: {} {} at {:.1f} s in {:.1f} s runs; median (min..max) over the used runs\n",
                     report.failure, report.victim, report.fail_at_s, report.crash_duration_s);
  constexpr const char* kRecoveryRow = "{:<10} {:>4} {:<16} {:<15} {:<10} {:<20} {:<20} {:<20} {}\n";
  out += fmt::format(kRecoveryRow, "approach", "runs", "verdict", "lost", "detector", "detect ms", "recover ms",
                     "catchup ms", "note");
  for (const auto& r : report.rows)
    out += fmt::format(kRecoveryRow, r.approach, r.crash_runs, r.verdict, spread_text(r.lost, "{:.0f}"), r.detector,
                       spread_text(r.detection_ms), spread_text(r.recovery_ms), spread_text(r.catchup_ms), r.note);
  for (const auto& r : report.rows)
    if (r.approach == "none" && report.repeat > 1)
      out += "(none's crash run is in the first repetition only: its output stops at the crash)\n";
  // The recovery broken into its phases, each from the failure (medians): a process pair's
  // standby detects and takes over; global checkpoints detect at the coordinator, roll back,
  // restore the state and replay; then the first new output.
  out += "\nrecovery phases, median ms after the failure (replay: its duration): detect -> takeover or "
         "rollback -> state restored -> replay -> first new output\n";
  constexpr const char* kPhaseRow = "{:<10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n";
  out += fmt::format(kPhaseRow, "approach", "detect", "takeover", "rollback", "restored", "replay", "recover");
  auto median = [](const CompareSpread& sp) { return sp.count ? fmt::format("{:.1f}", sp.median) : std::string("-"); };
  for (const auto& r : report.rows)
    out += fmt::format(kPhaseRow, r.approach, median(r.detection_ms), median(r.takeover_ms), median(r.rollback_ms),
                       median(r.state_restored_ms), median(r.replay_ms), median(r.recovery_ms));
  // Every run that stopped or did not give its approach's result, on its own line.
  for (const CompareRun& r : report.runs)
    if (r.guarantee.stopped || r.guarantee.status != RunStatus::result)
      out += r.label() + ": " + guarantee_line(r.guarantee) + "\n";
  out += fmt::format("\nruntime overhead during normal operation: failure-free {:.1f} s runs against ha=none of the same "
                     "repetition\n",
                     report.failure_free_duration_s);
  constexpr const char* kOverheadRow = "{:<10} {:>4} {:<22} {:<22} {:<22}\n";
  out += fmt::format(kOverheadRow, "approach", "runs", "bandwidth %", "cpu %", "+p99 ms");
  for (const auto& r : report.rows) {
    const bool baseline = r.approach == "none";
    out += fmt::format(kOverheadRow, r.approach, r.failure_free_runs,
                       baseline ? "(the baseline)" : spread_text(r.bandwidth_overhead_pct, "{:+.1f}"),
                       baseline ? "" : spread_text(r.cpu_overhead_pct, "{:+.0f}"),
                       baseline ? "" : spread_text(r.added_latency_p99_ms, "{:+.2f}"));
  }
  if (report.disturbed_notes.empty()) {
    out += "\nno run was disturbed (no takeover before the failure, no detection of a node that was not killed)\n";
  } else {
    out += "\ndisturbed runs (each is run again up to " + std::to_string(report.reruns_max) +
           " times; one disturbed on every attempt is left out of the medians):\n";
    for (const auto& n : report.disturbed_notes) out += "  " + n + "\n";
  }
  for (const CompareRun& r : report.runs)
    for (const NotJudged& n : r.outcome.semantics.not_judged)
      out += "not judged: stream " + n.stream + " in the " + r.label() + " (" + n.reason + ")\n";
  out += "'-' means not measured (no detection without a standby, no recovery when output never resumed); "
         "hapair compare --help explains every column\n";
  return out;
}

std::string compare_csv(const CompareReport& report) {
  std::string out = "approach,crash_runs,failure_free_runs,disturbed,reruns,excluded,verdict,note,not_recovered";
  for (const char* f : {"lost", "duplicates", "detection_ms", "takeover_ms", "recovery_ms", "catchup_ms", "replay_ms",
                        "bandwidth_overhead_pct", "cpu_overhead_pct", "added_latency_p99_ms", "rollback_ms",
                        "state_restored_ms"})
    out += std::string(",") + f + "_median," + f + "_min," + f + "_max";
  out += ",detector,planned_cpu_pct,measured_cpu_pct_median,measured_cpu_pct_min,measured_cpu_pct_max,repeat,seed,network,victim,fail_at_s,crash_duration_s,failure_free_duration_s,"
         "driver\n";
  for (const auto& r : report.rows) {
    CsvRow row;
    row.field(r.approach).number(r.crash_runs).number(r.failure_free_runs).number(r.disturbed).number(r.reruns);
    row.number(r.excluded).field(r.verdict).field(r.note).number(r.not_recovered);
    for (const CompareSpread* s : {&r.lost, &r.duplicates, &r.detection_ms, &r.takeover_ms, &r.recovery_ms,
                                   &r.catchup_ms, &r.replay_ms, &r.bandwidth_overhead_pct, &r.cpu_overhead_pct,
                                   &r.added_latency_p99_ms, &r.rollback_ms, &r.state_restored_ms})
      csv_spread(row, *s);
    row.field(r.detector).fixed(r.load.utilisation_pct, 1);
    csv_spread(row, r.measured_load_pct);
    row.number(report.repeat).number(report.seed).field(report.network).field(report.victim);
    row.fixed(report.fail_at_s, 3).fixed(report.crash_duration_s, 3).fixed(report.failure_free_duration_s, 3);
    row.field(report.driver);
    out += row.line();
  }
  return out;
}

std::string compare_runs_csv(const CompareReport& report) {
  std::string out =
      "order,approach,run,repetition,attempt,used,disturbed,verdict,lost,duplicates,differing,detector,detection_ms,"
      "takeover_ms,recovery_ms,catchup_ms,replay_ms,bytes_total,cpu_s,latency_p99_ms,planned_cpu_pct,"
      "measured_cpu_pct,completed,outcome,note,disturbance,run_dir,rollback_ms,state_restored_ms\n";
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    const CompareRun& r = report.runs[i];
    const RunOutcome& o = r.outcome;
    const auto& rec = o.metrics.recovery;
    CsvRow row;
    row.number(i + 1).field(r.approach).field(r.failure ? "crash" : "failure_free").number(r.repetition);
    row.number(r.attempt).flag(r.used).flag(r.disturbed).field(o.semantics.verdict).number(o.semantics.lost);
    row.number(o.semantics.duplicates).number(o.semantics.differing).field(rec ? rec->detector : std::string());
    csv_number(row, rec ? rec->detection_ms : std::nullopt);
    csv_number(row, rec ? rec->takeover_ms : std::nullopt);
    csv_number(row, rec ? rec->recovery_ms : std::nullopt);
    csv_number(row, rec && rec->recovered ? rec->catchup_ms : std::nullopt);
    csv_number(row, rec ? rec->replay_ms : std::nullopt);
    row.number(o.metrics.overhead.bytes_total).fixed(o.metrics.overhead.cpu_s, 6).fixed(o.metrics.latency.p99_ms, 3);
    row.fixed(o.load.utilisation_pct, 1).fixed(o.measured_load_pct, 1).flag(o.result.completed);
    row.field(to_string(r.guarantee.status)).field(compare_note(r.guarantee)).field(r.disturbance).field(r.run_dir);
    csv_number(row, rec ? rec->rollback_ms : std::nullopt);
    csv_number(row, rec ? rec->state_restored_ms : std::nullopt);
    out += row.line();
  }
  return out;
}

std::string compare_columns_help() {
  return "What the table and compare.csv show (every figure as median (min..max) over the used runs):\n"
         "  runs         runs used in the medians (crash runs in the recovery table, failure-free runs in the\n"
         "               overhead table); a disturbed run is run again and left out if every attempt was disturbed\n"
         "  verdict      the checker's verdict of the crash runs against the failure-free reference: precise,\n"
         "               rollback (nothing lost, duplicates or differing), gap (something lost); 'gap 2, precise 1'\n"
         "               when the runs disagree\n"
         "  lost         reference output entries never delivered (none stops at the crash: its row shows that stop)\n"
         "  detector     which detector declared the victim failed: heartbeat (missed heartbeats) or connection\n"
         "               (the dead process's connection closed)\n"
         "  detect ms    SIGKILL to the victim's standby's detection of the victim\n"
         "  recover ms   SIGKILL to the first new output tuple at the sink (one the reference has, not delivered\n"
         "               before the failure) after the detection\n"
         "  catchup ms   SIGKILL to the first new output whose latency is back at the pre-failure p99\n"
         "  phases       (the second table) detect, takeover (the standby or spare acts for the fragment), rollback\n"
         "               (global checkpoints: the coordinator's rollback decision), restored (the last fragment of\n"
         "               the rollback installed its snapshot), replay (duration of the replay from producers),\n"
         "               recover: each a median in ms after the SIGKILL; '-' where the approach has no such phase\n"
         "  bandwidth %  data-plane bytes of a failure-free run of the approach over those of the failure-free\n"
         "               ha=none run of the same repetition, minus 100 (no recovery traffic in it)\n"
         "  cpu %        the same for the CPU seconds of every process\n"
         "  +p99 ms      the failure-free run's latency p99 minus ha=none's\n"
         "  planned CPU load  rate x operator cost x tuples each operator fragment processes (from the reference)\n"
         "               x processes doing that work (2 under active standby) over the machine's cores; above 70 %\n"
         "               heartbeats can be late; measured CPU load: CPU seconds of every process of the\n"
         "               failure-free runs over their span and the cores\n"
         "  note         what the crash runs' outcome means: a none run stops at the crash (no standby), and\n"
         "               that stop, with its verdict and lost tuples, is the row's result; 'as promised', what\n"
         "               the approach was expected to give ('gap expected (amnesia)'), or 'guarantee broken in\n"
         "               N of M runs' (any run, disturbed or not)\n"
         "compare.csv also has takeover_ms and replay_ms (median, min, max), duplicates and the counts of\n"
         "disturbed, rerun and excluded runs; compare_runs.csv has one row per run, reruns included.\n";
}

}  // namespace hapair
