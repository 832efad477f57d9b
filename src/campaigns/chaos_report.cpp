// The report of a fault campaign (`hapair chaos`): the table per approach (chaos.txt), one CSV
// row per run (chaos.csv), and the commands that reproduce a violating run.
//
// Paper: Hwang et al. (ICDE 2005) compare the approaches by recovery type; the table counts the
// verdicts (precise, rollback, gap) per approach, within and beyond the guarantee.
//
// Invariant: the table and the CSV are functions of the report alone (ordered containers, exact
// number text), so identical simulated campaigns give identical files, and every reproduce
// command names each option that shapes the case space.
#include "campaigns/chaos.h"

#include <sstream>

#include <fmt/format.h>

#include "report/csv.h"
#include "sim/faults.h"

namespace hapair {

std::string chaos_reproduce_command(const ChaosOptions& o, std::size_t index) {
  std::vector<std::string> approaches, faults;
  for (HaMode m : o.approaches) approaches.push_back(to_string(m));
  for (ChaosFault k : o.faults) faults.push_back(to_string(k));
  std::string cmd = "hapair chaos --runs 1 --seed " + std::to_string(o.seed) + " --case " + std::to_string(index) +
                    " --driver " + o.driver + " --approaches " + fmt::format("{}", fmt::join(approaches, ","));
  if (o.random_approach) cmd += " --pick random";
  if (!faults.empty()) cmd += " --faults " + fmt::format("{}", fmt::join(faults, ","));
  if (o.networks != std::vector<std::string>(std::begin(kChaosNetworks), std::end(kChaosNetworks)))
    cmd += " --networks " + fmt::format("{}", fmt::join(o.networks, ","));
  if (!o.networks_dir.empty()) cmd += " --networks-dir " + o.networks_dir;
  if (o.duration_s) cmd += " --duration-s " + shortest_text(*o.duration_s);
  if (!o.switches) cmd += " --no-switches";
  return cmd + o.hosts_arguments;
}

std::string chaos_run_command(const ChaosCase& c, const std::string& driver, const std::string& topology_path,
                              const std::string& hosts_arguments) {
  std::string cmd = "hapair run --topology " + topology_path + " --driver " + driver + fault_options(c.faults);
  for (const HostLossSpec& l : c.host_losses) cmd += " --lose-host " + l.host + "@" + shortest_text(l.at_s);
  return cmd + hosts_arguments;
}

namespace {

struct Tally {
  std::size_t runs = 0;
  std::map<std::string, std::size_t> faults;  // kind -> injected
  std::size_t precise = 0, rollback = 0, gap = 0, incomplete = 0, violations = 0;
  std::uint64_t lost = 0, duplicates = 0;
  std::vector<double> restore_ms;

  void add(const ChaosRun& r) {
    ++runs;
    for (const auto& f : r.c.faults) ++faults[to_string(f.kind)];
    faults["host-loss"] += r.c.host_losses.size();
    if (r.c.topology.sim.loss_ratio > 0) ++faults["loss"];
    if (r.c.topology.sim.duplication_ratio > 0) ++faults["duplication"];
    if (r.verdict == "precise") ++precise;
    else if (r.verdict == "rollback") ++rollback;
    else if (r.verdict == "gap") ++gap;
    if (!r.completed) ++incomplete;
    violations += r.klass == GuaranteeClass::violation;
    lost += r.lost;
    duplicates += r.duplicates;
    if (r.restore_ms) restore_ms.push_back(*r.restore_ms);
  }
  std::string restore() const {
    if (restore_ms.empty()) return "-";
    double sum = 0;
    for (double v : restore_ms) sum += v;
    return fmt::format("{:.1f}", sum / static_cast<double>(restore_ms.size()));
  }
};

// `with_hosts`: a column of host losses (a campaign across hosts).
std::string tally_line(const std::string& name, const Tally& t, bool with_violations, bool with_hosts) {
  auto f = [&](const char* k) {
    auto it = t.faults.find(k);
    return it == t.faults.end() ? std::size_t{0} : it->second;
  };
  std::string out = fmt::format("{:<9} {:>5} {:>6} {:>6} {:>6} {:>6} {:>5} {:>5} {:>8} {:>8} {:>5} {:>6} {:>8} {:>8} {:>10}",
                                name, t.runs, f("crash"), f("pause"), f("partition"), f("restart"), f("loss"),
                                f("duplication"), t.precise, t.rollback, t.gap, t.incomplete, t.lost, t.duplicates,
                                t.restore());
  if (with_hosts) out += fmt::format(" {:>6}", f("host-loss"));
  if (with_violations) out += "  " + std::to_string(t.violations);
  return out + "\n";
}

std::string tally_header(bool with_violations, bool with_hosts) {
  return fmt::format("{:<9} {:>5} {:>6} {:>6} {:>6} {:>6} {:>5} {:>5} {:>8} {:>8} {:>5} {:>6} {:>8} {:>8} {:>10}",
                     "approach", "runs", "crash", "pause", "part.", "restrt", "loss", "dup", "precise", "rollback", "gap",
                     "incomp", "lost", "dups", "restore ms") +
         (with_hosts ? "  hostl" : "") + (with_violations ? "  violations" : "") + "\n";
}

// Live switches drawn (issue 36): in how many runs, to which approaches, how many with a crash
// around a switch, and the violations among them. Empty when no run switched.
std::string switches_line(const ChaosReport& report) {
  std::size_t runs = 0, around = 0, violations = 0;
  std::map<std::string, std::size_t> to;
  for (const auto& r : report.runs) {
    if (r.c.topology.switches.empty()) continue;
    ++runs;
    around += r.c.faults_around_switch;
    violations += r.klass == GuaranteeClass::violation;
    for (const SwitchSpec& w : r.c.topology.switches) ++to[to_string(w.to)];
  }
  if (runs == 0) return "";
  std::string targets;
  for (const auto& [name, n] : to) targets += (targets.empty() ? "" : ", ") + std::to_string(n) + " to " + name;
  return "live switches in " + std::to_string(runs) + " run(s) (" + targets + "); " + std::to_string(around) +
         " with a crash around a switch; violations among them: " + std::to_string(violations) + "\n";
}

}  // namespace

std::string chaos_table(const ChaosReport& report) {
  const ChaosOptions& o = report.options;
  std::string out;
  if (!report.problems.empty()) {
    for (const auto& p : report.problems) out += "problem: " + p + "\n";
    return out;
  }
  out += "chaos campaign: seed " + std::to_string(o.seed) + ", driver " + o.driver + ", " +
         std::to_string(report.runs.size()) + " run(s)\n";
  std::map<HaMode, Tally> within, beyond;
  Tally all;
  for (const auto& r : report.runs) {
    (r.klass == GuaranteeClass::beyond ? beyond : within)[r.c.approach].add(r);
    if (r.klass != GuaranteeClass::beyond) all.add(r);
  }
  out += "\nwithin the guarantee (faults injected by kind; restore ms: mean time to restore the pair)\n";
  const bool hosts = o.hosts.hosts != nullptr;
  out += tally_header(true, hosts);
  for (HaMode m : o.approaches)
    if (within.count(m)) out += tally_line(to_string(m), within[m], true, hosts);
  out += tally_line("all", all, true, hosts);
  out += switches_line(report);
  std::map<std::string, std::pair<std::size_t, std::string>> unjudged;  // runs, the first reason
  for (const auto& r : report.runs)
    for (const auto& n : r.unjudged) {
      auto& [runs, reason] = unjudged[r.c.network + "/" + n];
      if (runs++ == 0) reason = r.unjudged_reason;
    }
  for (const auto& [stream, u] : unjudged)
    out += "not judged: stream " + stream + " in " + std::to_string(u.first) +
           " run(s) (the merge order it depends on is unknown; first: " + u.second + ")\n";
  if (!beyond.empty()) {
    out += "\nbeyond the guarantee (a fragment lost every node holding its state; reported, never violations)\n";
    out += tally_header(false, hosts);
    for (HaMode m : o.approaches)
      if (beyond.count(m)) out += tally_line(to_string(m), beyond[m], false, hosts);
  }
  // Disturbances: takeovers or detections no fault asked for (a false detection; a lost
  // heartbeat under message loss), and which detectors fired.
  std::size_t disturbed = 0;
  std::map<std::string, std::size_t> detector_runs;
  for (const auto& r : report.runs) {
    disturbed += r.disturbed;
    std::istringstream names(r.detectors);
    for (std::string item; names >> item;) ++detector_runs[item.substr(0, item.find('='))];
  }
  out += "\ndisturbed runs (a takeover or detection no fault asked for): " + std::to_string(disturbed) + " of " +
         std::to_string(report.runs.size());
  std::size_t shown = 0;
  for (const auto& r : report.runs)
    if (r.disturbed && shown++ < 3) out += "\n  run " + std::to_string(r.c.index) + ": " + r.disturbance;
  if (disturbed > shown) out += "\n  ... (chaos.csv, column disturbance)";
  out += "\ndetectors that fired:";
  if (detector_runs.empty()) out += " none";
  for (const auto& [name, n] : detector_runs) out += " " + name + " in " + std::to_string(n) + " run(s)";
  out += "\n";
  const std::size_t v = report.violations();
  out += "\nviolations: " + std::to_string(v) + "\n";
  for (const auto& r : report.runs) {
    if (r.klass != GuaranteeClass::violation) continue;
    out += "  run " + std::to_string(r.c.index) + ": " + r.reason + "\n    case: " + r.c.description +
           "\n    reproduce: " + chaos_reproduce_command(o, r.c.index) + "\n";
    if (!o.out_dir.empty())
      out += "    or: " + chaos_run_command(r.c, o.driver, o.out_dir + "/cases/case-" + std::to_string(r.c.index) + ".toml",
                                         o.hosts_arguments) + "\n";
    if (!o.out_dir.empty() && o.driver == "real" && !o.only_case)
      out += "    this run's files (trace.jsonl, timeline.html, output.csv): " + o.out_dir + "/cases/case-" +
             std::to_string(r.c.index) + "/\n";
  }
  return out;
}

std::string chaos_csv(const ChaosReport& report) {
  std::string out =
      "index,seed,network,approach,faults,loss_ratio,duplication_ratio,verdict,lost,duplicates,differing,delivered,"
      "reference,unjudged_streams,completed,takeovers,restore_ms,class,violation,reason,error,disturbed,detectors,"
      "disturbance,description\n";
  for (const auto& r : report.runs) {
    std::vector<std::string> faults;
    for (const auto& f : r.c.faults) faults.push_back(describe(f));
    for (const auto& l : r.c.host_losses) faults.push_back("loss of the " + l.host + " at " + shortest_text(l.at_s) + " s");
    CsvRow row;
    row.number(r.c.index).number(r.c.seed).field(r.c.network).field(to_string(r.c.approach)).field(fmt::format("{}", fmt::join(faults, "; ")));
    row.exact(r.c.topology.sim.loss_ratio).exact(r.c.topology.sim.duplication_ratio).field(r.verdict);
    row.number(r.lost).number(r.duplicates).number(r.differing).number(r.delivered).number(r.reference);
    row.field(fmt::format("{}", fmt::join(r.unjudged, " "))).flag(r.completed).number(r.takeovers);
    if (r.restore_ms) row.exact(*r.restore_ms);
    else row.empty();
    row.field(to_string(r.klass)).flag(r.klass == GuaranteeClass::violation).field(r.reason).field(r.first_error);
    row.flag(r.disturbed).field(r.detectors).field(r.disturbance).field(r.c.description);
    out += row.line();
  }
  return out;
}

}  // namespace hapair
