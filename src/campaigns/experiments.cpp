#include "campaigns/experiments.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "config/experiment_config.h"
#include "report/plots.h"
#include "config/topology_file.h"
#include "protocols/rng.h"
#include "protocols/version.h"

namespace hapair {
namespace {

// One network an experiment runs on, ready to plan: the effective topology and its victim.
struct Network {
  Topology topology;
  std::string victim;
  std::string file;  // the file name it is written to beside the results ("" for the main one)
};

// An experiment after its config was read and --quick / --seeds applied.
struct Setup {
  std::string name;
  ExperimentSection section;  // effective: the points, seeds and fail_at_s that run
  Topology topology;          // effective base network
  std::vector<Network> networks;  // experiments over several networks; empty otherwise
  std::string driver;
  std::vector<std::uint64_t> seeds;
  std::map<std::uint64_t, double> fail_at_s;  // seed -> the failure instant of its runs
};

// fail_at_s plus the seed's offset in [0, spread), whole milliseconds so labels read well.
double failure_instant_s(double fail_at_s, double spread_s, std::uint64_t seed) {
  Rng rng = Rng::derive(seed, hash_name("experiment failure instant"));
  return fail_at_s + std::floor(rng.next_unit() * spread_s * 1000.0) / 1000.0;
}

using Problems = std::vector<std::string>;

// Builds the planned runs of an experiment, one add() at a time, with the failure-free ha=none
// baselines that overhead figures need added once per knob setting and seed.
class Planner {
 public:
  Planner(const Setup& setup, Problems& problems) : setup_(setup), problems_(problems) {}

  std::size_t add(const Topology& base, const std::string& sweep, std::optional<double> x, const std::string& approach,
                  std::uint64_t seed, bool failure, const std::string& victim, std::optional<std::size_t> baseline) {
    PlannedRun p;
    p.sweep = sweep;
    p.x = x;
    p.approach = approach;
    p.seed = seed;
    p.failure = failure;
    p.victim = victim;
    p.fail_at_s = setup_.fail_at_s.at(seed);
    if (sweep == "fail_offset_ms" && x) p.fail_at_s = offset_failure_s(base, seed, *x);
    p.topology = base;
    p.topology.settings.seed = seed;
    if (!sweep.empty()) note(apply_sweep(p.topology, sweep, x.value_or(0)));
    note(apply_approach(p.topology, approach));
    p.baseline = baseline;
    runs.push_back(std::move(p));
    return runs.size() - 1;
  }

  // The failure-free ha=none run with the same knobs and seed; its own baseline is itself, so its
  // row shows zero overhead.
  std::size_t baseline_for(const Topology& base, const std::string& sweep, std::optional<double> x, std::uint64_t seed,
                           const std::string& victim) {
    const std::string key = base.name + "|" + sweep + "|" + (x ? std::to_string(*x) : "") + "|" + std::to_string(seed);
    auto it = baselines_.find(key);
    if (it != baselines_.end()) return it->second;
    const std::size_t i = add(base, sweep, x, "none", seed, false, victim, std::nullopt);
    runs[i].baseline = i;
    baselines_[key] = i;
    return i;
  }

  std::vector<PlannedRun> runs;

 private:
  // The failure of a fail_offset_ms run: the seed's offset from fail_at_s rounded down to whole
  // checkpoint intervals (so every seed fails at the same phase of a different interval, as far
  // as the checkpoints keep their schedule), plus the swept offset.
  double offset_failure_s(const Topology& base, std::uint64_t seed, double offset_ms) const {
    const double start_s = setup_.section.fail_at_s.value_or(0);
    const double interval_s = static_cast<double>(base.settings.checkpoint_interval_ms) / 1000.0;
    const double spread_s = setup_.fail_at_s.at(seed) - start_s;
    const double whole_s = interval_s > 0 ? std::floor(spread_s / interval_s + 1e-9) * interval_s : 0.0;
    return std::round((start_s + whole_s + offset_ms / 1000.0) * 1e6) / 1e6;
  }

  void note(const std::string& problem) {
    if (!problem.empty() && seen_.insert(problem).second) problems_.push_back(problem);
  }
  const Setup& setup_;
  Problems& problems_;
  std::map<std::string, std::size_t> baselines_;
  std::set<std::string> seen_;
};

// Whether a sweep changes anything for an approach; an approach it does not affect runs once per
// seed, without a sweep value (the conservative retention means nothing to the exact rule).
bool sweep_applies(const std::string& sweep, const std::string& approach) {
  return sweep != "conservative_retention_ms" || approach == "upstream_conservative";
}

// approaches x sweeps x points x seeds on the base network, with or without the SIGKILL; with
// `baselines`, every run is measured against its failure-free ha=none twin.
void sweep_runs(Planner& planner, const Setup& s, bool failure, bool baselines) {
  for (const std::string& sweep : s.section.sweeps) {
    const std::vector<double>& points = s.section.points.at(sweep);
    for (std::size_t i = 0; i < points.size(); ++i) {
      for (const std::string& approach : s.section.approaches) {
        const bool applies = sweep_applies(sweep, approach);
        if (!applies && i > 0) continue;
        const std::string used_sweep = applies ? sweep : "";
        const std::optional<double> x = applies ? std::optional<double>(points[i]) : std::nullopt;
        for (std::uint64_t seed : s.seeds) {
          std::optional<std::size_t> base;
          if (baselines) base = planner.baseline_for(s.topology, used_sweep, x, seed, s.section.victim);
          if (baselines && !failure && approach == "none") continue;  // the baseline is that run
          planner.add(s.topology, used_sweep, x, approach, seed, failure, s.section.victim, base);
        }
      }
    }
  }
}

// On each network, every approach x seed: failure-free against its ha=none twin (the overhead)
// and with the SIGKILL (the recovery).
void workload_runs(Planner& planner, const Setup& s) {
  std::vector<Network> networks = s.networks;
  if (networks.empty()) networks.push_back(Network{s.topology, s.section.victim, ""});
  for (const Network& n : networks)
    for (const std::string& approach : s.section.approaches)
      for (std::uint64_t seed : s.seeds) {
        const std::size_t base = planner.baseline_for(n.topology, "", std::nullopt, seed, n.victim);
        if (approach != "none") planner.add(n.topology, "", std::nullopt, approach, seed, false, n.victim, base);
        planner.add(n.topology, "", std::nullopt, approach, seed, true, n.victim, std::nullopt);
      }
}

// Every approach x seed once, with the SIGKILL, on each network (the base one when none listed).
void approach_runs(Planner& planner, const Setup& s) {
  std::vector<Network> networks = s.networks;
  if (networks.empty()) networks.push_back(Network{s.topology, s.section.victim, ""});
  for (const Network& n : networks) {
    const bool arbitrary = !arbitrary_operators(make_plan(n.topology)).empty();
    for (const std::string& approach : s.section.approaches) {
      // Determinants only matter where an operator is arbitrary; elsewhere active_nodet is the
      // same run as active.
      if (approach == "active_nodet" && !arbitrary) continue;
      for (std::uint64_t seed : s.seeds) planner.add(n.topology, "", std::nullopt, approach, seed, true, n.victim, std::nullopt);
    }
  }
}

struct Definition {
  ExperimentInfo info;
  std::vector<std::string> needs;  // [experiment] keys that must be given
  std::function<void(Planner&, const Setup&)> plan;
  std::function<ClaimCheck(const std::vector<ExperimentRow>&, const Setup&)> check;
  std::vector<std::string> summary_columns;
  // Whether the claim may use runs with a takeover before the failure. Timing and overhead claims
  // may not (the run measured something else); the semantics table may (a verdict is a verdict,
  // and a precise approach must stay precise through a false detection too).
  bool uses_disturbed_runs = false;
  // Fills figures that need every run of the experiment (capacity: the low-rate p99 each run is
  // judged against) before the CSV is written; null: nothing to fill.
  std::function<void(std::vector<ExperimentRow>&)> annotate = nullptr;
};

std::vector<Definition> definitions() {
  const std::vector<std::string> sweep_needs = {"approaches", "sweeps", "victim", "fail_at_s"};
  return {
      {{"recovery_vs_interval", "recovery time vs communication interval, every approach, SIGKILL mid-run",
        "active standby shortest and flat; passive grows with the interval; upstream backup longest but only "
        "moderately longer than passive; amnesia short but lossy"},
       sweep_needs,
       [](Planner& p, const Setup& s) { sweep_runs(p, s, true, false); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_recovery_vs_interval(rows); },
       {"recovery_ms", "detection_ms", "output_resumed_ms", "lost"}},
      {{"overhead_vs_interval", "runtime overhead (bandwidth, CPU, processing) vs interval, failure-free",
        "upstream backup lowest; active standby highest (about double processing); passive falls as the "
        "interval grows"},
       {"approaches", "sweeps", "victim"},
       [](Planner& p, const Setup& s) { sweep_runs(p, s, false, true); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_overhead_vs_interval(rows); },
       {"bandwidth_overhead_pct", "cpu_overhead_pct", "processing_overhead_pct"}},
      {{"tradeoff", "recovery time against bandwidth overhead, one curve per approach across intervals",
        "active standby at the short-recovery, high-overhead end; upstream backup at the low-overhead end; "
        "passive standby trades one for the other along its curve"},
       sweep_needs,
       [](Planner& p, const Setup& s) {
         sweep_runs(p, s, true, false);
         sweep_runs(p, s, false, true);
       },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_tradeoff(rows); },
       {"recovery_ms", "bandwidth_overhead_pct"}},
      {{"recovery_vs_state", "recovery time vs operator state (window_ms) and vs input rate",
        "upstream backup's recovery grows with the state to rebuild and with the load; active standby's does not"},
       sweep_needs,
       [](Planner& p, const Setup& s) { sweep_runs(p, s, true, false); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_recovery_vs_state(rows); },
       {"recovery_ms", "detection_ms", "replay_ms"}},
      {{"semantics_table",
        "measured recovery type: approach x operator class (Filter/Map, Aggregate, Join, Union, Aggregate/Join after a "
        "Union; the Unions in arrival and in timestamp order)",
        "passive, active with determinants and upstream backup on deterministic networks are precise; amnesia "
        "shows gaps; upstream backup loses nothing on Union"},
       {"approaches", "networks", "fail_at_s"},
       [](Planner& p, const Setup& s) { approach_runs(p, s); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_semantics_table(rows); },
       {"lost", "duplicates", "differing", "recovery_ms"},
       true},
      {{"workloads",
        "recovery time and runtime overhead per approach on the built-in workloads (NEXMark q0, q1, q2, q5, q7, q8; "
        "the Yahoo Streaming Benchmark)",
        "on every workload upstream backup, passive and active standby recover precisely; the bandwidth overhead "
        "orders upstream < passive < active; active standby recovers no slower than the others"},
       {"approaches", "networks", "fail_at_s"},
       [](Planner& p, const Setup& s) { workload_runs(p, s); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_workloads(rows); },
       {"recovery_ms", "bandwidth_overhead_pct", "cpu_overhead_pct", "lost"}},
      {{"hybrid", "hybrid standby against the four approaches of the paper on a workload with rate spikes and a SIGKILL after one",
        "hybrid standby (Zhang, Gu et al., ICDCS 2010) recovers faster than passive standby (there: about 2/3 less "
        "recovery time) and sends fewer messages than active standby (there: about 80% fewer)"},
       {"approaches", "victim", "fail_at_s"},
       [](Planner& p, const Setup& s) { workload_runs(p, s); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_hybrid(rows); },
       {"recovery_ms", "message_overhead_pct", "bandwidth_overhead_pct", "switches_to_active", "lost"}},
      {{"trimming_knowledge", "upstream backup: exact cause functions vs the conservative trimming rule",
        "knowing operator properties lowers the cost: a smaller retained queue, no worse recovery"},
       sweep_needs,
       [](Planner& p, const Setup& s) { sweep_runs(p, s, true, false); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_trimming_knowledge(rows); },
       {"upstream_queue_tuples_max", "recovery_ms", "lost"}},
      {{"recovery_breakdown", "recovery time split into detection, takeover, replay/rebuild, catch-up per approach",
        "one detector for all; active standby needs the least after detection; upstream backup's rebuild is no "
        "shorter than passive standby's restore"},
       {"approaches", "victim", "fail_at_s"},
       [](Planner& p, const Setup& s) { approach_runs(p, s); },
       [](const std::vector<ExperimentRow>& rows, const Setup& s) {
         return check_recovery_breakdown(rows, static_cast<double>(s.topology.settings.heartbeat_interval_ms));
       },
       {"detection_ms", "takeover_ms", "recovery_ms", "catchup_ms", "replay_ms"}},
      {{"capacity", "the highest source rate each approach sustains, failure-free, at 100 us of CPU per operator tuple",
        "upstream backup and passive standby sustain nearly the rate of no HA; active standby, whose standby repeats "
        "all the processing, about half on real processes sharing the cores, nearly all with a machine per node "
        "(the simulator)"},
       {"approaches", "sweeps", "victim"},
       [](Planner& p, const Setup& s) { sweep_runs(p, s, false, false); },
       [](const std::vector<ExperimentRow>& rows, const Setup& s) { return check_capacity(rows, s.driver == "real"); },
       {"latency_p99_steady_ms", "latency_growth_ms", "sustained", "cpu_s"},
       // A run disturbed by a false takeover is kept: it did not sustain its rate.
       true,
       [](std::vector<ExperimentRow>& rows) { annotate_capacity(rows); }},
      {{"recovery_vs_phase", "recovery time vs the failure's moment within the checkpoint interval",
        "passive standby's recovery grows with the time since its last checkpoint and drops after each (a sawtooth); "
        "active standby's does not depend on the moment"},
       sweep_needs,
       [](Planner& p, const Setup& s) { sweep_runs(p, s, true, false); },
       [](const std::vector<ExperimentRow>& rows, const Setup& s) {
         return check_recovery_vs_phase(rows, static_cast<double>(s.topology.settings.checkpoint_interval_ms));
       },
       {"recovery_ms", "since_checkpoint_ms", "replay_ms"}},
      {{"recovery_vs_depth", "recovery time and retained queues vs the depth of a chain of servers (2 to 8)",
        "upstream backup's retained queue and recovery grow with the chain's depth; the process pairs' do not"},
       sweep_needs,
       [](Planner& p, const Setup& s) { sweep_runs(p, s, true, false); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_recovery_vs_depth(rows); },
       {"replacement_output_ms", "recovery_ms", "upstream_queue_tuples_max", "queue_tuples_max_sum"}},
      {{"recovery_vs_load", "recovery and catch-up time vs the load rho of the failed server, up to 0.9",
        "passive standby's and upstream backup's catch-up grow like 1/(1 - rho); active standby's stays flat"},
       sweep_needs,
       [](Planner& p, const Setup& s) { sweep_runs(p, s, true, false); },
       [](const std::vector<ExperimentRow>& rows, const Setup&) { return check_recovery_vs_load(rows); },
       {"recovery_ms", "catchup_ms", "latency_p99_ms"}},
  };
}

// The victim must be the primary of a processing fragment of the network.
void check_victim(const Topology& t, const std::string& victim, const std::string& where, Problems& problems) {
  const Plan plan = make_plan(t);
  const NodeId id = plan.node_id(victim);
  if (id == kNoNode) {
    problems.push_back(where + ": victim '" + victim + "' is not a node of network " + t.name);
  } else if (plan.nodes[id].standby || plan.fragments[plan.nodes[id].fragment].kind != FragmentKind::operators) {
    problems.push_back(where + ": victim '" + victim + "' must be the primary of a processing fragment");
  }
}

bool section_has(const ExperimentSection& s, const std::string& key) {
  if (key == "approaches") return !s.approaches.empty();
  if (key == "sweeps") return !s.sweeps.empty();
  if (key == "victim") return !s.victim.empty();
  if (key == "fail_at_s") return s.fail_at_s.has_value();
  if (key == "networks") return !s.networks.empty();
  return true;
}

std::optional<Setup> make_setup(const Definition& def, const ExperimentOptions& options, Problems& problems) {
  const std::string path =
      options.config_path.empty() ? source_dir() + "/experiments/" + def.info.name + "/experiment.toml" : options.config_path;
  ExperimentConfigLoad load = load_experiment_config(path);
  if (!load.config) {
    problems = load.problems;
    return std::nullopt;
  }
  Setup s;
  s.name = def.info.name;
  s.section = load.config->experiment;
  s.topology = load.config->topology;
  for (const std::string& key : def.needs)
    if (!section_has(s.section, key)) problems.push_back(path + ": [experiment] needs the key '" + key + "'");
  s.driver = !options.driver.empty() ? options.driver : (options.quick && !options.hosts.hosts ? "sim" : "real");
  if (s.driver != "real" && s.driver != "sim") problems.push_back("driver '" + s.driver + "' is not one of: real, sim");
  else if (options.hosts.hosts && s.driver != "real")
    problems.push_back("--hosts needs --driver real (the simulator runs on this machine)");
  std::int64_t seeds = options.quick ? 1 : s.section.seeds;
  if (options.seeds) seeds = *options.seeds;
  if (seeds < 1 || seeds > 100) problems.push_back("--seeds must be from 1 to 100");
  for (std::int64_t i = 0; i < seeds; ++i) s.seeds.push_back(s.topology.settings.seed + static_cast<std::uint64_t>(i));
  s.section.seeds = seeds;
  if (options.quick) {
    s.topology.settings.duration_s = s.section.quick_duration_s;
    s.section.fail_at_s = s.section.quick_fail_at_s;
    s.section.fail_spread_s = s.section.quick_fail_spread_s;
    s.section.points = s.section.quick_points;
  }
  double last_failure_s = s.section.fail_at_s.value_or(0) + s.section.fail_spread_s;
  if (auto it = s.section.points.find("fail_offset_ms"); it != s.section.points.end() && !it->second.empty()) {
    const double offset_s = *std::max_element(it->second.begin(), it->second.end()) / 1000.0;
    last_failure_s += offset_s;
    if (last_failure_s >= s.topology.settings.duration_s)
      problems.push_back(path + ": fail_at_s + fail_spread_s + the largest fail_offset_ms = " + number_text(last_failure_s) +
                         " s is not before duration_s " + number_text(s.topology.settings.duration_s));
  }
  for (std::uint64_t seed : s.seeds)
    s.fail_at_s[seed] = failure_instant_s(s.section.fail_at_s.value_or(0), s.section.fail_spread_s, seed);
  if (!s.section.victim.empty()) check_victim(s.topology, s.section.victim, path, problems);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  std::vector<ExperimentNetwork> written;
  for (const ExperimentNetwork& n : s.section.networks) {
    const std::string file = (dir.empty() ? "" : dir + "/") + n.file;
    ExperimentConfigLoad net = load_experiment_config(file);
    if (!net.config) {
      problems.insert(problems.end(), net.problems.begin(), net.problems.end());
      continue;
    }
    Topology t = net.config->topology;
    if (options.quick) t.settings.duration_s = s.section.quick_duration_s;
    if (last_failure_s >= t.settings.duration_s)
      problems.push_back(file + ": fail_at_s + fail_spread_s = " + number_text(last_failure_s) +
                         " is not before duration_s " + number_text(t.settings.duration_s));
    check_victim(t, n.victim, file, problems);
    const std::string out_file = "network_" + t.name + ".toml";
    s.networks.push_back(Network{t, n.victim, out_file});
    written.push_back(ExperimentNetwork{out_file, n.victim});
  }
  // The effective config names the network files written beside it, so it runs again as is.
  s.section.networks = written;
  if (!problems.empty()) return std::nullopt;
  return s;
}

// Medians per group of rows (network, sweep point, approach, with or without failure), in the
// order the groups first appear.
std::string summary_text(const std::vector<ExperimentRow>& rows, const std::vector<std::string>& columns) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ExperimentRow*>> groups;
  for (const ExperimentRow& r : rows) {
    std::string key = r.network;
    if (!r.sweep.empty() && r.x) key += " " + r.sweep + "=" + number_text(*r.x);
    key += " " + r.approach + (r.failure ? "" : " (failure-free)");
    if (groups.count(key) == 0) order.push_back(key);
    groups[key].push_back(&r);
  }
  std::string out;
  for (const std::string& key : order) {
    const auto& g = groups[key];
    std::map<std::string, int> verdicts;
    for (const ExperimentRow* r : g) ++verdicts[r->verdict];
    out += "  " + key + ":";
    for (const std::string& c : columns) {
      std::vector<double> v;
      for (const ExperimentRow* r : g)
        if (auto f = row_figure(*r, c)) v.push_back(*f);
      if (v.empty()) {
        out += " " + c + " -";
        continue;
      }
      out += fmt::format(" {} {:.1f} [{:.1f}..{:.1f}]", c, median_of(v), *std::min_element(v.begin(), v.end()),
                         *std::max_element(v.begin(), v.end()));
    }
    out += " verdicts";
    for (const auto& [verdict, n] : verdicts) out += " " + verdict + "x" + std::to_string(n);
    out += "\n";
  }
  return out;
}

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  return out ? "" : "cannot write " + path;
}

}  // namespace

std::vector<ExperimentInfo> experiment_infos() {
  std::vector<ExperimentInfo> out;
  for (const Definition& d : definitions()) out.push_back(d.info);
  return out;
}

bool is_experiment(const std::string& name) {
  for (const ExperimentInfo& i : experiment_infos())
    if (i.name == name) return true;
  return false;
}

std::string semantics_markdown(const std::vector<ExperimentRow>& rows) {
  std::vector<std::string> networks, approaches;
  std::map<std::string, std::string> classes;
  struct Cell {
    std::map<std::string, int> verdicts;
    std::uint64_t lost = 0, duplicates = 0, differing = 0;
    int runs = 0;
    std::map<std::string, int> not_judged;  // stream -> runs
  };
  std::map<std::pair<std::string, std::string>, Cell> cells;
  for (const ExperimentRow& r : rows) {
    if (std::find(networks.begin(), networks.end(), r.network) == networks.end()) networks.push_back(r.network);
    if (std::find(approaches.begin(), approaches.end(), r.approach) == approaches.end()) approaches.push_back(r.approach);
    classes[r.network] = r.network_class;
    Cell& c = cells[{r.approach, r.network}];
    ++c.verdicts[r.verdict];
    c.lost += r.lost;
    c.duplicates += r.duplicates;
    c.differing += r.differing;
    for (const std::string& n : r.not_judged) ++c.not_judged[n];
    ++c.runs;
  }
  std::string out = "| approach |";
  std::string rule = "| --- |";
  for (const std::string& n : networks) {
    out += " " + n + " (" + classes[n] + ") |";
    rule += " --- |";
  }
  out += "\n" + rule + "\n";
  for (const std::string& a : approaches) {
    out += "| " + a + " |";
    for (const std::string& n : networks) {
      auto it = cells.find({a, n});
      if (it == cells.end()) {
        out += a == "active_nodet" ? " (same as active: no arbitrary operator) |" : " (not run) |";
        continue;
      }
      const Cell& c = it->second;
      std::string verdict;
      for (const auto& [v, k] : c.verdicts)
        verdict += (verdict.empty() ? "" : ", ") + v + (k == c.runs ? "" : " " + std::to_string(k) + "/" + std::to_string(c.runs));
      std::string unjudged;
      for (const auto& [stream, k] : c.not_judged)
        unjudged += "; " + stream + " not judged" + (k == c.runs ? "" : " in " + std::to_string(k) + "/" + std::to_string(c.runs));
      out += " **" + verdict + "** lost " + std::to_string(c.lost) + ", dup " + std::to_string(c.duplicates) +
             ", diff " + std::to_string(c.differing) + unjudged + " |";
    }
    out += "\n";
  }
  return out + "\nEach cell: the verdict of every run (with the share when the seeds disagree) and the lost / "
               "duplicate / differing counts summed over the seeds; a stream \"not judged\" (the Union interleaving "
               "its content depends on is unknown, e.g. re-merged by upstream backup's replay) is left out of them.\n";
}

namespace {

const Definition* find_definition(const std::vector<Definition>& defs, const std::string& name,
                                  std::vector<std::string>& problems) {
  for (const Definition& d : defs)
    if (d.info.name == name) return &d;
  std::string names;
  for (const Definition& d : defs) names += (names.empty() ? "" : ", ") + d.info.name;
  problems.push_back("no experiment '" + name + "'; there are: " + names);
  return nullptr;
}

}  // namespace

ExperimentPlan plan_experiment(const std::string& name, const ExperimentOptions& options) {
  ExperimentPlan out;
  const std::vector<Definition> defs = definitions();
  const Definition* def = find_definition(defs, name, out.problems);
  if (def == nullptr) return out;
  std::optional<Setup> setup = make_setup(*def, options, out.problems);
  if (!setup) return out;
  out.driver = setup->driver;
  Planner planner(*setup, out.problems);
  def->plan(planner, *setup);
  if (out.problems.empty()) out.runs = std::move(planner.runs);
  return out;
}

TimeEstimate estimate_time(const std::vector<std::pair<std::string, std::vector<PlannedRun>>>& plans_by_driver) {
  // Fitted to the committed results on this repository's 2-core machine: hybrid (60 runs of 8 s
  // sources, 525 s: 0.75 s a run beyond its sources), capacity (240 runs of 3 s, 15 min: 0.75 s)
  // and workloads (210 runs of 4 s, 20 min: 1.7 s, more processes) on real processes; the
  // simulator's small networks run about 20 simulated seconds a second.
  constexpr double kRealSecondsPerRun = 1.0;
  constexpr double kSimSimulatedPerWall = 20.0;
  TimeEstimate e;
  std::set<std::string> seen;
  for (const auto& [driver, runs] : plans_by_driver)
    for (const PlannedRun& p : runs) {
      if (!seen.insert(run_key(driver, p)).second) {
        ++e.reused;
        continue;
      }
      ++e.runs;
      const double lasts = p.topology.settings.duration_s;
      e.seconds += driver == "sim" ? lasts / kSimSimulatedPerWall : lasts + kRealSecondsPerRun;
    }
  return e;
}

ExperimentReport run_experiment(const std::string& name, const ExperimentOptions& options, RunCache& cache) {
  const auto started = std::chrono::steady_clock::now();
  ExperimentReport report;
  report.name = name;
  report.out_dir = options.out_dir;
  const std::vector<Definition> defs = definitions();
  const Definition* def = find_definition(defs, name, report.problems);
  if (def == nullptr) return report;
  std::optional<Setup> setup = make_setup(*def, options, report.problems);
  if (!setup) return report;
  report.driver = setup->driver;
  Planner planner(*setup, report.problems);
  def->plan(planner, *setup);
  if (!report.problems.empty()) return report;

  ExecuteOptions exec;
  exec.experiment = name;
  exec.driver = setup->driver;
  exec.hapair_binary = options.hapair_binary;
  exec.out_dir = options.write_run_folders ? options.out_dir : "";
  exec.on_run = options.on_run;
  exec.progress = options.progress;
  exec.hosts = options.hosts;
  Executed executed = execute_runs(planner.runs, exec, cache);
  report.runs = executed.rows.size();
  report.reused_runs = executed.reused;
  report.write_errors = executed.write_errors;
  for (std::size_t i = 0; i < executed.rows.size(); ++i) {
    const ExperimentRow& r = executed.rows[i];
    const std::string label = run_label(planner.runs[i]);
    // A run fails the experiment when it broke its approach's guarantee or the harness failed; a
    // run that stops where its approach promises nothing (ha none after a crash) is a result.
    if (r.outcome != to_string(RunStatus::result)) {
      report.run_errors.push_back(label + ": " + r.outcome_line);
      for (const std::string& e : r.errors) report.run_errors.push_back(label + ": " + e);
    }
  }
  report.rows = std::move(executed.rows);
  if (def->annotate) def->annotate(report.rows);
  // The medians printed are over the same rows the claim is checked on.
  std::vector<std::string> notes;
  const std::vector<ExperimentRow> claim_rows = def->uses_disturbed_runs ? report.rows : undisturbed_rows(report.rows, notes);
  if (def->uses_disturbed_runs) {
    // Verdicts (and capacity's "not sustained") stay meaningful in a disturbed run, so they are
    // kept; still say which were.
    std::size_t n = 0;
    std::string which;
    for (std::size_t i = 0; i < report.rows.size(); ++i)
      if (report.rows[i].disturbed) {
        ++n;
        if (n <= 3) which += (which.empty() ? "" : "; ") + run_label(planner.runs[i]) + ": " + report.rows[i].disturbance;
      }
    if (n > 0)
      notes.push_back(std::to_string(n) + " of " + std::to_string(report.rows.size()) +
                      " runs were disturbed and are kept (a verdict is a verdict; a disturbed rate is not sustained): " +
                      which + (n > 3 ? "; ..." : ""));
  }
  report.summary = summary_text(claim_rows, def->summary_columns);
  report.claim = def->check(claim_rows, *setup);
  if (options.hosts.hosts)
    notes.push_back("across the hosts of " + options.hosts.hosts->source_file +
                    ": the claim's tolerances were calibrated on one machine (its README's numbers), not on these "
                    "hosts' links and clocks; each run's placement, clock offsets and signals are in its runs/*/hosts.json");
  report.claim.notes.insert(report.claim.notes.begin(), notes.begin(), notes.end());

  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  const std::string base = options.out_dir + "/" + name;
  report.csv_path = base + ".csv";
  report.png_path = base + ".png";
  report.pdf_path = base + ".pdf";
  const std::string where =
      options.hosts.hosts ? " across the hosts of " + options.hosts.hosts->source_file + " (each run's runs/*/hosts.json)" : "";
  std::string seeds = "seeds";
  for (std::uint64_t s : setup->seeds) seeds += " " + std::to_string(s);
  seeds += "\n# Every point ran once per seed. A run's seed is its [network] seed: it makes the sources' tuples\n"
           "# (and, under --driver sim, the simulated network). Runs with a failure SIGKILL the victim at:\n";
  for (std::uint64_t s : setup->seeds) seeds += "#   seed " + std::to_string(s) + ": " + number_text(setup->fail_at_s.at(s)) + " s\n";
  std::vector<std::pair<std::string, std::string>> files = {
      {report.csv_path, experiment_csv(report.rows)},
      {options.out_dir + "/seed.txt", seeds},
      {options.out_dir + "/version.txt", std::string(version_string()) + "\n"},
      {options.out_dir + "/config.toml", "# hapair experiment " + name + ": the effective configuration (driver " +
                                            setup->driver + where + "). Run it again with\n#   hapair experiment " +
                                            name + " --config config.toml --driver " + setup->driver +
                                            (options.hosts.hosts ? " --hosts " + options.hosts.hosts->source_file : "") +
                                            "\n" +
                                            write_experiment_section(setup->section) + "\n" + write_topology(setup->topology)},
  };
  for (const Network& n : setup->networks) files.push_back({options.out_dir + "/" + n.file, write_topology(n.topology)});
  if (name == "semantics_table") files.push_back({options.out_dir + "/semantics_table.md", semantics_markdown(report.rows)});
  for (const auto& [path, text] : files) {
    std::string error = write_file(path, text);
    if (!error.empty()) report.write_errors.push_back(error);
  }
  report.plot_error = run_plot_script(name + ".py", {report.csv_path, report.png_path});
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string timing = fmt::format("wall time {:.0f} s for {} runs ({} reused from earlier experiments), driver {}{}\n",
                                         report.wall_s, report.runs, report.reused_runs, setup->driver, where);
  std::string error = write_file(base + ".txt", "hapair experiment " + name + ": " + def->info.title + "\n" + report.summary +
                                                    report.claim.text() + timing);
  if (!error.empty()) report.write_errors.push_back(error);
  return report;
}

}  // namespace hapair
