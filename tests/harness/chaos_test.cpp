// The fault campaign (campaigns/chaos.h, docs/FAULTS.md): cases are pure functions of (seed, index)
// with valid schedules of the requested kinds; the classifier applies each approach's guarantee
// to hand-made reports; "beyond the guarantee" is read from a run's events; a small simulated
// campaign of the precise approaches has no violation; the same seed gives the same chaos.csv;
// `--case` repeats one run exactly; a deliberately broken approach, and a run that aborts, are
// caught as violations with the command that reproduces them.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "campaigns/chaos.h"
#include "proc/net_isolation.h"
#include "run/run_once.h"
#include "config/topology_file.h"
#include "protocols/number_text.h"
#include "protocols/plan.h"
#include "sim/faults.h"
#include "support/trace_read.h"

using namespace hapair;

namespace {

ChaosOptions sim_options(std::uint64_t seed, std::size_t runs) {
  ChaosOptions o;
  o.seed = seed;
  o.runs = runs;
  o.driver = "sim";
  o.networks_dir = std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks";
  o.duration_s = 2.0;
  return o;
}

std::map<std::string, Topology> networks(const ChaosOptions& o) {
  std::vector<std::string> problems;
  auto n = load_chaos_networks(o, problems);
  INFO((problems.empty() ? std::string() : problems.front()));
  REQUIRE(problems.empty());
  return n;
}

SemanticsReport report(const std::string& verdict, std::uint64_t lost, std::uint64_t duplicates, std::uint64_t differing) {
  SemanticsReport r;
  r.verdict = verdict;
  r.lost = lost;
  r.duplicates = duplicates;
  r.differing = differing;
  return r;
}

const SemanticsReport kPrecise = report("precise", 0, 0, 0);
const SemanticsReport kRollback = report("rollback", 0, 3, 0);
const SemanticsReport kGap = report("gap", 1, 0, 0);
const std::vector<std::string> kNoErrors;
const std::optional<std::string> kWithin;

GuaranteeClass judge(HaMode mode, const SemanticsReport& s, bool arbitrary = false, bool determinants = true,
                 bool completed = true) {
  return judge_guarantee(ApproachCatalog::builtin().of(mode), determinants, arbitrary, s, completed, kNoErrors, kWithin).klass;
}

TraceEvent event(double at_s, const Plan& plan, const std::string& node, const std::string& name,
                 const std::string& details = "") {
  return trace_event(plan, static_cast<TimeUs>(at_s * 1e6), node, name, details);
}

Plan default_plan(HaMode ha) {
  Topology t = default_topology();
  t.settings.ha = ha;
  return make_plan(t);
}

// The CSV row of case `index` (the header is line 0).
std::string csv_row(const std::string& csv, std::size_t index) {
  std::istringstream is(csv);
  std::string line;
  std::getline(is, line);
  while (std::getline(is, line))
    if (line.rfind(std::to_string(index) + ",", 0) == 0) return line;
  return "";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// ---- cases -------------------------------------------------------------------------------

TEST_CASE("a chaos case is a pure function of the seed and its index, whatever the number of runs", "[chaos]") {
  ChaosOptions a = sim_options(42, 10);
  ChaosOptions b = sim_options(42, 1000);
  const auto nets = networks(a);
  for (std::size_t i : {0u, 3u, 9u}) {
    const ChaosCase x = chaos_case(a, nets, i);
    const ChaosCase y = chaos_case(b, nets, i);
    CHECK(x.description == y.description);
    CHECK(x.topology == y.topology);
    CHECK(x.seed == y.seed);
  }
  ChaosOptions other = sim_options(43, 10);
  CHECK(chaos_case(other, nets, 3).description != chaos_case(a, nets, 3).description);
}

TEST_CASE("chaos cases have valid schedules of every kind, inside the run, on every network and approach", "[chaos]") {
  ChaosOptions o = sim_options(7, 0);
  const auto nets = networks(o);
  std::map<FaultKind, int> kinds;
  std::set<std::string> seen_networks;
  std::set<HaMode> seen_approaches;
  int lossy = 0, duplicating = 0, partitions_with_standby = 0;
  for (std::size_t i = 0; i < 300; ++i) {
    const ChaosCase c = chaos_case(o, nets, i);
    INFO("case " << i << ": " << c.description);
    REQUIRE(validate(c.topology).empty());
    const Plan plan = make_plan(c.topology);
    CHECK(validate_run_faults(plan, c.faults).empty());
    CHECK(c.approach == o.approaches[i % o.approaches.size()]);
    CHECK(c.topology.settings.ha == c.approach);
    for (const auto& f : c.faults) {
      ++kinds[f.kind];
      CHECK(f.at_s > 0.0);
      // Whole milliseconds, so the printed reproduce commands are exact and short (tenths of one
      // for the election winner's crash after its primary's, k standbys: in the simulator the
      // winner takes over within a millisecond).
      CHECK(std::round(f.at_s * 10000.0) / 10000.0 == f.at_s);
      CHECK(std::round(f.duration_s * 1000.0) / 1000.0 == f.duration_s);
      if (f.kind != FaultKind::restart) CHECK(f.at_s < c.topology.settings.duration_s);
      if (f.kind == FaultKind::partition && f.peer.find('.') != std::string::npos) ++partitions_with_standby;
    }
    CHECK(c.topology.sim.loss_ratio <= 0.05);
    CHECK(c.topology.sim.duplication_ratio <= 0.05);
    lossy += c.topology.sim.loss_ratio > 0;
    duplicating += c.topology.sim.duplication_ratio > 0;
    seen_networks.insert(c.network);
    seen_approaches.insert(c.approach);
  }
  CHECK(kinds[FaultKind::crash] > 30);
  CHECK(kinds[FaultKind::pause] > 30);
  CHECK(kinds[FaultKind::partition] > 30);
  CHECK(kinds[FaultKind::restart] > 10);
  CHECK(partitions_with_standby > 5);  // primary-backup cuts, not only cuts to neighbours
  CHECK(lossy > 50);
  CHECK(duplicating > 50);
  CHECK(seen_networks.size() == std::size(kChaosNetworks));
  CHECK(seen_approaches.size() == ApproachCatalog::builtin().all().size());
}

TEST_CASE("chaos draws live switches among the switchable approaches, with crashes around them, from a stream of their own", "[chaos]") {
  ChaosOptions o = sim_options(11, 0);
  ChaosOptions without = o;
  without.switches = false;
  const auto nets = networks(o);
  int switched = 0, two = 0, around = 0, around_standby = 0, during = 0, to_upstream = 0;
  std::set<HaMode> from_seen, to_seen;
  for (std::size_t i = 0; i < 1000; ++i) {
    const ChaosCase c = chaos_case(o, nets, i);
    const ChaosCase plain = chaos_case(without, nets, i);
    INFO("case " << i << ": " << c.description);
    REQUIRE(validate(c.topology).empty());
    // Everything but the switches (and a schedule around one) is what --no-switches draws.
    CHECK(plain.topology.switches.empty());
    CHECK_FALSE(plain.faults_around_switch);
    Topology same = c.topology;
    same.switches.clear();
    CHECK(same == plain.topology);
    auto schedule = [](const std::vector<FaultSpec>& faults) {
      std::string out;
      for (const FaultSpec& f : faults) out += describe(f) + "; ";
      return out;
    };
    if (!c.faults_around_switch) CHECK(schedule(c.faults) == schedule(plain.faults));
    CHECK(c.description.rfind(plain.description.substr(0, plain.description.find(" faults:")), 0) == 0);
    // The same case again, and as `--case i` would draw it.
    CHECK(chaos_case(o, nets, i).description == c.description);
    if (c.topology.switches.empty()) {
      CHECK_FALSE(c.faults_around_switch);
      CHECK(c.description.find("switches:") == std::string::npos);
      continue;
    }
    ++switched;
    two += c.topology.switches.size() == 2;
    const Plan plan = make_plan(c.topology);
    CHECK(validate_run_faults(plan, c.faults).empty());
    std::map<std::string, HaMode> now;
    for (const SwitchSpec& w : c.topology.switches) {
      const FragmentId f = plan.fragment_id(w.fragment);
      REQUIRE(f != kNoFragment);
      if (!now.count(w.fragment)) now[w.fragment] = plan.fragments[f].ha;
      CHECK(w.to != now[w.fragment]);  // a switch to another approach
      CHECK(switchable_mode(plan.approaches, w.to));
      from_seen.insert(now[w.fragment]);
      to_seen.insert(w.to);
      to_upstream += std::string(to_string(w.to)) == "upstream";
      now[w.fragment] = w.to;
      CHECK(c.description.find(w.fragment + "=" + to_string(w.to) + "@" + shortest_text(w.at_s)) != std::string::npos);
    }
    if (c.faults_around_switch) {
      ++around;
      REQUIRE_FALSE(c.faults.empty());
      const FaultSpec& first = c.faults.front();
      CHECK(first.kind == FaultKind::crash);
      around_standby += first.node.find('.') != std::string::npos;
      for (const SwitchSpec& w : c.topology.switches)
        during += first.at_s >= w.at_s - 0.001 && first.at_s <= w.at_s + 0.005;
    }
  }
  // About 1 case in 7 switches (4 of the 7 approaches can, with k = 1 and a network where a
  // fragment may), half of those with a crash around a switch (seed 1: 143 and 71 of 1000).
  CHECK(switched > 100);
  CHECK(two > 30);
  CHECK(around > 40);
  CHECK(around_standby > 12);
  CHECK(during > 20);
  CHECK(to_upstream > 15);
  CHECK(to_seen.size() == 4);  // upstream, passive, active, hybrid
  CHECK(from_seen.size() == 4);
}

TEST_CASE("the real driver draws only crash, pause and restart by default, and no network loss", "[chaos]") {
  ChaosOptions o = sim_options(3, 0);
  o.driver = "real";
  const auto nets = networks(o);
  for (std::size_t i = 0; i < 100; ++i) {
    const ChaosCase c = chaos_case(o, nets, i);
    INFO(c.description);
    for (const auto& f : c.faults) CHECK(f.kind != FaultKind::partition);
    CHECK(c.topology.sim.loss_ratio == 0.0);
    CHECK(c.topology.sim.duplication_ratio == 0.0);
    CHECK(c.topology.settings.failure_timeout_ms >= 50);
  }
  // Partitions only where this machine can place nodes in network namespaces (as root with ip
  // and nft); loss never.
  o.runs = 1;
  o.faults = {ChaosFault::partition};
  CHECK(validate_chaos_options(o).empty() == net_isolation_unavailable().empty());
  o.faults = {ChaosFault::loss};
  CHECK_FALSE(validate_chaos_options(o).empty());
}

TEST_CASE("the fault kinds option restricts the schedule to the named kinds", "[chaos]") {
  ChaosOptions o = sim_options(5, 0);
  o.faults = {ChaosFault::pause};
  const auto nets = networks(o);
  int pauses = 0;
  for (std::size_t i = 0; i < 50; ++i) {
    const ChaosCase c = chaos_case(o, nets, i);
    for (const auto& f : c.faults) {
      CHECK(f.kind == FaultKind::pause);
      ++pauses;
    }
    CHECK(c.topology.sim.loss_ratio == 0.0);
  }
  CHECK(pauses > 50);
}

TEST_CASE("chaos options are validated all at once", "[chaos]") {
  ChaosOptions o;
  o.driver = "cloud";
  o.approaches.clear();
  o.networks = {"nowhere"};
  o.duration_s = 0.1;
  o.runs = 0;
  o.jobs = 4;
  o.isolate = false;
  const auto problems = validate_chaos_options(o);
  // Each of the five, and --jobs without isolation; --jobs with a driver that is not sim (the
  // unknown "cloud") is not refused for being real.
  CHECK(problems.size() == 6);
  ChaosOptions real;
  real.driver = "real";
  real.jobs = 2;
  REQUIRE(validate_chaos_options(real).size() == 1);
  CHECK(validate_chaos_options(real)[0].find("needs --driver sim") != std::string::npos);
}

// ---- classification ----------------------------------------------------------------------

TEST_CASE("the classifier flags a lost tuple under passive standby as a violation", "[chaos]") {
  CHECK(judge(HaMode::passive, kGap) == GuaranteeClass::violation);
  CHECK(judge(HaMode::passive, kRollback) == GuaranteeClass::violation);
  CHECK(judge(HaMode::passive, kRollback, true) == GuaranteeClass::violation);
  CHECK(judge(HaMode::passive, kPrecise) == GuaranteeClass::ok);
  CHECK(judge(HaMode::passive, kPrecise, false, true, false) == GuaranteeClass::violation);  // did not complete
  const auto j = judge_guarantee(ApproachCatalog::builtin().of(HaMode::passive), true, false, kPrecise, true, {"fatal: queue full"}, kWithin);
  CHECK(j.klass == GuaranteeClass::violation);
  CHECK(j.reason.find("queue full") != std::string::npos);
}

TEST_CASE("the classifier reports amnesia gaps and anything under ha none without counting them as violations", "[chaos]") {
  CHECK(judge(HaMode::amnesia, kGap) == GuaranteeClass::ok);
  CHECK(judge_guarantee(ApproachCatalog::builtin().of(HaMode::amnesia), true, false, kGap, true, kNoErrors, kWithin).reason == "gap expected (amnesia)");
  CHECK(judge(HaMode::amnesia, kRollback) == GuaranteeClass::ok);
  CHECK(judge(HaMode::none, kGap, false, true, false) == GuaranteeClass::ok);
  // The amnesia spare must still take over: a run that never finishes is a violation.
  CHECK(judge(HaMode::amnesia, kGap, false, true, false) == GuaranteeClass::violation);
}

TEST_CASE("the classifier holds upstream backup to no loss, and to precise on deterministic networks", "[chaos]") {
  CHECK(judge(HaMode::upstream, kGap, true) == GuaranteeClass::violation);
  CHECK(judge(HaMode::upstream, kRollback, true) == GuaranteeClass::ok);
  CHECK(judge(HaMode::upstream, kRollback, false) == GuaranteeClass::violation);
  CHECK(judge(HaMode::upstream, kPrecise, false) == GuaranteeClass::ok);
}

TEST_CASE("the classifier holds active standby to precise, or to no loss without determinants on an arbitrary network", "[chaos]") {
  CHECK(judge(HaMode::active, kRollback, true, true) == GuaranteeClass::violation);
  CHECK(judge(HaMode::active, kRollback, true, false) == GuaranteeClass::ok);
  CHECK(judge(HaMode::active, kGap, true, false) == GuaranteeClass::violation);
  CHECK(judge(HaMode::active, kRollback, false, false) == GuaranteeClass::violation);  // deterministic: precise anyway
}

TEST_CASE("a schedule beyond the guarantee is never a violation, whatever the verdict", "[chaos]") {
  const std::optional<std::string> beyond = std::string("both nodes of the pair lost");
  for (HaMode m : {HaMode::upstream, HaMode::passive, HaMode::active}) {
    const auto j = judge_guarantee(ApproachCatalog::builtin().of(m), true, false, kGap, false, {"time limit"}, beyond);
    CHECK(j.klass == GuaranteeClass::beyond);
    CHECK(j.reason == *beyond);
  }
}

TEST_CASE("beyond the guarantee: a second crash of the new primary before the pair was restored", "[chaos]") {
  const Plan plan = default_plan(HaMode::passive);
  RunResult r;
  r.events = {event(1.0, plan, "aggregate", "failure", "fault=crash"),
              event(1.03, plan, "aggregate.backup", "detection", "failed=aggregate"),
              event(1.031, plan, "aggregate.backup", "takeover"),
              event(1.2, plan, "aggregate", "restart", "fault=restart"),
              event(1.25, plan, "aggregate.backup", "failure", "fault=crash")};
  const auto b = beyond_guarantee(plan, r);
  REQUIRE(b.has_value());
  CHECK(b->find("aggregate.backup") != std::string::npos);
  CHECK(b->find("before its pair was restored") != std::string::npos);

  // The same, but the restarted node had become a full standby first: within the guarantee.
  r.events.insert(r.events.begin() + 4, event(1.24, plan, "aggregate.backup", "pair_restored", "standby=aggregate"));
  CHECK_FALSE(beyond_guarantee(plan, r).has_value());
}

TEST_CASE("beyond the guarantee: a crash of a primary that runs unprotected after its standby was lost", "[chaos]") {
  // A standby paused past the loss timeout: its primary dissolves the pair and runs alone. A
  // crash of the primary before the standby has rejoined loses the fragment's state.
  const Plan plan = default_plan(HaMode::passive);
  RunResult r;
  r.events = {event(1.0, plan, "aggregate.backup", "failure", "fault=pause duration_us=300000"),
              event(1.06, plan, "aggregate", "standby_lost", "standby=aggregate.backup epoch=1"),
              event(1.1, plan, "aggregate", "failure", "fault=crash")};
  const auto b = beyond_guarantee(plan, r);
  REQUIRE(b.has_value());
  CHECK(b->find("before its pair was restored") != std::string::npos);

  // The resumed standby took over on its old state, was fenced by its primary's renewed claim
  // and, while rejoining, crashed: the primary never stopped acting and holds the state, so
  // within the guarantee.
  r.events = {event(1.0, plan, "aggregate.backup", "failure", "fault=pause duration_us=300000"),
              event(1.06, plan, "aggregate", "standby_lost", "standby=aggregate.backup epoch=1"),
              event(1.3, plan, "aggregate.backup", "detection", "failed=aggregate"),
              event(1.3, plan, "aggregate.backup", "takeover"),
              event(1.301, plan, "aggregate.backup", "fenced", "fragment_primary=aggregate epoch=2"),
              event(1.3015, plan, "aggregate.backup", "failure", "fault=crash")};
  CHECK_FALSE(beyond_guarantee(plan, r).has_value());
  // A crash of that primary afterwards, with no standby left: beyond.
  r.events.push_back(event(1.4, plan, "aggregate", "failure", "fault=crash"));
  const auto c = beyond_guarantee(plan, r);
  REQUIRE(c.has_value());
  CHECK(c->find("crash of aggregate at 1.4") != std::string::npos);
}

TEST_CASE("beyond the guarantee: both nodes of a pair down, or a crash without standby", "[chaos]") {
  const Plan passive = default_plan(HaMode::passive);
  RunResult both;
  both.events = {event(1.0, passive, "filter", "failure", "fault=crash"),
                 event(1.01, passive, "filter.backup", "failure", "fault=crash")};
  CHECK(beyond_guarantee(passive, both).has_value());

  // Crashes of two different fragments, each with its standby: within.
  RunResult two;
  two.events = {event(1.0, passive, "filter", "failure", "fault=crash"),
                event(1.01, passive, "aggregate", "failure", "fault=crash")};
  CHECK_FALSE(beyond_guarantee(passive, two).has_value());

  // A pause traced by the real launcher is not a crash.
  RunResult pause;
  pause.events = {event(1.0, passive, "filter", "failure", "fault=pause duration_us=300000"),
                  event(1.05, passive, "filter.backup", "takeover")};
  CHECK_FALSE(beyond_guarantee(passive, pause).has_value());

  const Plan none = default_plan(HaMode::none);
  RunResult crash;
  crash.events = {event(1.0, none, "filter", "failure", "fault=crash")};
  const auto b = beyond_guarantee(none, crash);
  REQUIRE(b.has_value());
  CHECK(b->find("no standby") != std::string::npos);
}

TEST_CASE("beyond the guarantee: three adjacent upstream-backup fragments recovering at once", "[chaos]") {
  // docs/FAULTS.md: upstream backup recovers two adjacent fragments at once; the third in a row
  // finds no restart point. Two is within, and so is a third that goes down after the second's
  // recovery settled (takeover + 2 retransmit timeouts + 4 ack intervals).
  auto load = parse_topology(R"toml(
[network]
name = "three"
ha = "upstream"
retransmit_timeout_ms = 250
ack_interval_ms = 20
[[source]]
name = "source"
stream = "raw"
[[fragment]]
name = "a"
[[fragment.operator]]
name = "fa"
type = "filter"
where = "value < 80"
input = "raw"
output = "ra"
[[fragment]]
name = "b"
[[fragment.operator]]
name = "fb"
type = "filter"
where = "value < 80"
input = "ra"
output = "rb"
[[fragment]]
name = "c"
[[fragment.operator]]
name = "fc"
type = "filter"
where = "value < 80"
input = "rb"
output = "rc"
[[sink]]
name = "sink"
input = "rc"
)toml",
                             "three");
  INFO((load.problems.empty() ? std::string() : load.problems.front()));
  REQUIRE(load.topology.has_value());
  const Plan plan = make_plan(*load.topology);
  auto crash = [&](double at_s, const std::string& node) {
    return event(at_s, plan, node, "failure", "fault=crash");
  };
  RunResult r;
  r.events = {crash(1.0, "a"), crash(1.0, "b"), event(1.02, plan, "a.spare", "detection", "failed=a silent_us=20000"),
              event(1.021, plan, "a.spare", "takeover"), crash(1.1, "c")};
  const auto b = beyond_guarantee(plan, r);
  REQUIRE(b.has_value());
  CHECK(b->find("crash of c at 1.1 s") != std::string::npos);
  CHECK(b->find("three in a row") != std::string::npos);
  // It says what c's recovery did, never a rebase that did not happen.
  CHECK(b->find("did not take over") != std::string::npos);
  CHECK(b->find("rebased") == std::string::npos);
  RunResult exact = r;
  exact.events.push_back(event(1.2, plan, "c.spare", "takeover", "exact_ids=true"));
  const auto e = beyond_guarantee(plan, exact);
  REQUIRE(e.has_value());
  CHECK(e->find("found one and restarted exactly") != std::string::npos);
  CHECK(e->find("rebased") == std::string::npos);
  RunResult rebased = r;
  rebased.events.push_back(event(1.2, plan, "c.spare", "takeover", "exact_ids=false"));
  CHECK(beyond_guarantee(plan, rebased)->find("rebased its output ids") != std::string::npos);

  RunResult two;
  two.events = {crash(1.0, "a"), crash(1.0, "b"), event(1.02, plan, "a.spare", "takeover")};
  CHECK_FALSE(beyond_guarantee(plan, two).has_value());

  // c goes down after b's recovery settled: b's recovery node had c's restart points from c.
  RunResult settled;
  settled.events = {crash(1.0, "a"), crash(1.0, "b"), event(1.02, plan, "a.spare", "takeover"),
                    event(1.03, plan, "b.spare", "takeover"), crash(1.7, "c")};
  CHECK_FALSE(beyond_guarantee(plan, settled).has_value());

  // A false detection counts as going down from when the primary was last heard.
  RunResult detected;
  detected.events = {crash(1.0, "a"), event(1.05, plan, "b.spare", "detection", "failed=b silent_us=40000"),
                     event(1.06, plan, "c.spare", "detection", "failed=c silent_us=30000")};
  CHECK(beyond_guarantee(plan, detected).has_value());

  // Passive standby holds every fragment's state in its backup: not a chain of restart points.
  Topology passive = *load.topology;
  passive.settings.ha = HaMode::passive;
  const Plan passive_plan = make_plan(passive);
  RunResult p;
  for (const char* n : {"a", "b", "c"}) p.events.push_back(event(1.0, passive_plan, n, "failure", "fault=crash"));
  CHECK_FALSE(beyond_guarantee(passive_plan, p).has_value());
}

TEST_CASE("an aggregate after a union needs the union's recorded merge order to be judged, a filter after it does not", "[chaos]") {
  ChaosOptions o = sim_options(1, 1);
  const auto nets = networks(o);
  const Plan union_join = make_plan(nets.at("union_join"));
  const auto u = unjudged_streams(union_join);
  REQUIRE(u.size() == 1);
  CHECK(union_join.streams[u[0]].name == "counts");
  CHECK(unjudged_streams(make_plan(nets.at("union"))).empty());
  CHECK(unjudged_streams(make_plan(nets.at("join"))).empty());
  CHECK(unjudged_streams(make_plan(nets.at("default"))).empty());
}

// ---- campaigns ---------------------------------------------------------------------------

TEST_CASE("a small simulated campaign of upstream backup, passive and active standby has zero violations", "[chaos]") {
  ChaosOptions o = sim_options(1, 40);
  o.approaches = {HaMode::upstream, HaMode::passive, HaMode::active};
  const ChaosReport r = run_chaos(o);
  REQUIRE(r.problems.empty());
  REQUIRE(r.runs.size() == 40);
  std::map<FaultKind, int> kinds;
  std::size_t takeovers = 0;
  for (const auto& run : r.runs) {
    for (const auto& f : run.c.faults) ++kinds[f.kind];
    takeovers += run.takeovers;
    if (run.klass == GuaranteeClass::violation)
      UNSCOPED_INFO("run " << run.c.index << ": " << run.reason << "\n  " << run.c.description << "\n  "
                           << chaos_reproduce_command(o, run.c.index));
  }
  CHECK(r.violations() == 0);
  // The campaign really injected every kind of fault, and standbys really took over.
  CHECK(kinds[FaultKind::crash] > 0);
  CHECK(kinds[FaultKind::pause] > 0);
  CHECK(kinds[FaultKind::partition] > 0);
  CHECK(kinds[FaultKind::restart] > 0);
  CHECK(takeovers > 10);
}

TEST_CASE("the same chaos seed twice writes an identical chaos.csv", "[chaos]") {
  const auto dir = std::filesystem::temp_directory_path() / ("hapair-chaos-test-same-seed-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ChaosOptions o = sim_options(11, 12);
  o.out_dir = (dir / "a").string();
  const ChaosReport a = run_chaos(o);
  o.out_dir = (dir / "b").string();
  const ChaosReport b = run_chaos(o);
  const std::string csv_a = read_file((dir / "a" / "chaos.csv").string());
  CHECK(csv_a.size() > 200);
  CHECK(csv_a == read_file((dir / "b" / "chaos.csv").string()));
  CHECK(chaos_csv(a) == csv_a);
  CHECK(std::count(csv_a.begin(), csv_a.end(), '\n') == 13);
  std::filesystem::remove_all(dir);
}

TEST_CASE("runs at once (--jobs) give the same report, in case order, as one at a time", "[chaos]") {
  ChaosOptions o = sim_options(11, 12);
  o.isolate = true;
  const ChaosReport one = run_chaos(o);
  o.jobs = 3;
  std::vector<std::size_t> started;
  o.on_case = [&](std::size_t k, std::size_t, const ChaosCase&) { started.push_back(k); };
  const ChaosReport three = run_chaos(o);
  CHECK(started.size() == 12);
  REQUIRE(three.runs.size() == 12);
  for (std::size_t i = 0; i < 12; ++i) CHECK(three.runs[i].c.index == i);
  CHECK(chaos_csv(three) == chaos_csv(one));
  CHECK(chaos_table(three) == chaos_table(one));
}

TEST_CASE("a single case repeats exactly the run of the campaign, in the library and from the command line", "[chaos]") {
  const auto dir = std::filesystem::temp_directory_path() / ("hapair-chaos-test-case-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ChaosOptions o = sim_options(5, 8);
  const ChaosReport campaign = run_chaos(o);
  REQUIRE(campaign.runs.size() == 8);
  const std::string campaign_csv = chaos_csv(campaign);

  o.only_case = 6;
  const ChaosReport one = run_chaos(o);
  REQUIRE(one.runs.size() == 1);
  CHECK(csv_row(chaos_csv(one), 6) == csv_row(campaign_csv, 6));
  CHECK_FALSE(csv_row(campaign_csv, 6).empty());

  // The printed reproduce command, run as it is (with --out), gives the same row again.
  o.only_case.reset();
  const std::string command = std::string(HAPAIR_BINARY) + chaos_reproduce_command(o, 6).substr(std::string("hapair").size()) +
                              " --out " + dir.string() + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  CHECK(WIFEXITED(status));
  CHECK(csv_row(read_file((dir / "chaos.csv").string()), 6) == csv_row(campaign_csv, 6));
  // With --case, the run's own result files are written too.
  CHECK(std::filesystem::exists(dir / "case-6" / "summary.json"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a deliberately broken approach is caught, with the command that reproduces it", "[chaos]") {
  ChaosOptions o = sim_options(9, 6);
  o.approaches = {HaMode::passive, HaMode::amnesia};
  o.networks = {"default", "chain", "join"};  // every sink stream judged
  // "Broken passive standby": drops the last delivery of every passive run.
  o.tamper = [](const ChaosCase& c, RunOutcome& out) {
    if (c.approach == HaMode::passive && !out.result.deliveries.empty()) out.result.deliveries.pop_back();
  };
  const ChaosReport r = run_chaos(o);
  REQUIRE(r.runs.size() == 6);
  std::size_t passive = 0;
  for (const auto& run : r.runs) {
    INFO("run " << run.c.index << ": " << run.c.description << " -> " << to_string(run.klass) << " " << run.reason);
    if (run.c.approach != HaMode::passive || run.klass == GuaranteeClass::beyond) continue;
    ++passive;
    CHECK(run.klass == GuaranteeClass::violation);
    CHECK(run.lost >= 1);
  }
  CHECK(passive >= 2);
  CHECK(r.violations() == passive);
  const std::string table = chaos_table(r);
  CHECK(table.find("violations: " + std::to_string(passive)) != std::string::npos);
  CHECK(table.find("reproduce: hapair chaos --runs 1 --seed 9 --case 0 --driver sim --approaches passive,amnesia") !=
        std::string::npos);
}

TEST_CASE("union_join's counts are judged against the recorded merge order, and a wrong count is caught", "[chaos]") {
  ChaosOptions o = sim_options(3, 8);
  o.approaches = {HaMode::passive, HaMode::active};
  o.networks = {"union_join"};
  const ChaosReport clean = run_chaos(o);
  REQUIRE(clean.runs.size() == 8);
  std::size_t judged = 0;
  for (const auto& run : clean.runs) {
    INFO("run " << run.c.index << ": " << run.c.description << " -> " << to_string(run.klass) << " " << run.reason);
    if (run.klass == GuaranteeClass::beyond) continue;
    // Passive standby and active standby with determinants hold output until the standby has the
    // choices it depends on: the order is always known in the simulator.
    if (run.c.approach == HaMode::active && !run.c.topology.settings.determinants) continue;
    CHECK(run.unjudged.empty());
    judged += run.unjudged.empty() && run.completed;
  }
  CHECK(judged >= 3);
  // "Broken standby": one window of the counts stream comes out one too high.
  o.tamper = [](const ChaosCase&, RunOutcome& out) {
    const StreamId counts = out.result.plan->stream_id("counts");
    for (Delivery& d : out.result.deliveries)
      if (d.stream == counts) {
        d.tuple.value += 1;
        return;
      }
  };
  const ChaosReport broken = run_chaos(o);
  for (std::size_t i = 0; i < broken.runs.size(); ++i) {
    const ChaosRun& run = broken.runs[i];
    INFO("run " << run.c.index << ": " << run.c.description << " -> " << to_string(run.klass) << " " << run.reason);
    if (clean.runs[i].klass != GuaranteeClass::ok || !clean.runs[i].unjudged.empty()) continue;
    CHECK(run.klass == GuaranteeClass::violation);
    CHECK(run.lost >= 1);
  }
}

TEST_CASE("a run that aborts is one violation and the campaign goes on", "[chaos]") {
  ChaosOptions o = sim_options(2, 3);
  o.approaches = {HaMode::passive};
  o.tamper = [](const ChaosCase& c, RunOutcome&) {
    if (c.index == 1) std::abort();
  };
  const ChaosReport r = run_chaos(o);
  REQUIRE(r.runs.size() == 3);
  CHECK(r.runs[1].klass == GuaranteeClass::violation);
  CHECK(r.runs[1].reason.find("signal 6") != std::string::npos);
  CHECK(r.runs[1].verdict == "none");
  CHECK(r.runs[0].verdict != "none");
  CHECK(r.runs[2].verdict != "none");
}

TEST_CASE("hapair chaos exits 0 without violations and 2 on bad options", "[chaos]") {
  const auto dir = std::filesystem::temp_directory_path() / ("hapair-chaos-test-cli-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string bin = HAPAIR_BINARY;
  const std::string nets = " --networks-dir " + std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks";
  int status = std::system((bin + " chaos --runs 3 --seed 4 --approaches amnesia --duration-s 1.5" + nets + " --out " +
                            dir.string() + " >/dev/null 2>&1").c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const std::string csv = read_file((dir / "chaos.csv").string());
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 4);
  CHECK(read_file((dir / "chaos.txt").string()).find("amnesia") != std::string::npos);
  status = std::system((bin + " chaos --approaches sometimes --faults meteor >/dev/null 2>&1").c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an isolated run's answer survives the JSON exchange field for field", "[chaos]") {
  ChaosRun r;
  r.verdict = "rollback";
  r.lost = 18446744073709551615ULL;
  r.duplicates = 3;
  r.differing = 2;
  r.delivered = 1985;
  r.reference = 1984;
  r.unjudged = {"totals", "pairs"};
  r.unjudged_reason = "merge order of merge_both unknown";
  r.completed = true;
  r.first_error = "line one\nline two with \"quotes\", a \\ and a tab\t";
  r.takeovers = 2;
  r.restore_ms = 0.1 + 0.2;  // not a short decimal: it must come back bit for bit
  r.disturbed = true;
  r.disturbance = "takeover by aggregate.backup at 0.50 s before the first fault";
  r.detectors = "connection=1 heartbeat=2";
  r.klass = GuaranteeClass::beyond;
  r.reason = "every node of aggregate crashed";
  ChaosRun back;
  back.c.index = 42;  // the case is the parent's, never in the answer
  REQUIRE(read_chaos_run_json(chaos_run_json(r), back).empty());
  CHECK(back.c.index == 42);
  CHECK(back.verdict == r.verdict);
  CHECK(back.lost == r.lost);
  CHECK(back.duplicates == r.duplicates);
  CHECK(back.differing == r.differing);
  CHECK(back.delivered == r.delivered);
  CHECK(back.reference == r.reference);
  CHECK(back.unjudged == r.unjudged);
  CHECK(back.unjudged_reason == r.unjudged_reason);
  CHECK(back.completed == r.completed);
  CHECK(back.first_error == r.first_error);
  CHECK(back.takeovers == r.takeovers);
  REQUIRE(back.restore_ms.has_value());
  CHECK(*back.restore_ms == *r.restore_ms);
  CHECK(back.disturbed == r.disturbed);
  CHECK(back.disturbance == r.disturbance);
  CHECK(back.detectors == r.detectors);
  CHECK(back.klass == r.klass);
  CHECK(back.reason == r.reason);

  // No restore time and the other classes come back too.
  r.restore_ms.reset();
  for (GuaranteeClass k : {GuaranteeClass::ok, GuaranteeClass::violation}) {
    r.klass = k;
    REQUIRE(read_chaos_run_json(chaos_run_json(r), back).empty());
    CHECK(back.klass == k);
    CHECK_FALSE(back.restore_ms.has_value());
  }
}

TEST_CASE("a truncated or malformed answer from an isolated run is refused and says why", "[chaos]") {
  ChaosRun r;
  r.verdict = "precise";
  const std::string good = chaos_run_json(r);
  ChaosRun back;
  back.verdict = "untouched";
  CHECK(read_chaos_run_json(good.substr(0, good.size() / 2), back) == "not JSON");
  CHECK(read_chaos_run_json("[1, 2]", back) == "not a JSON object");
  CHECK(read_chaos_run_json("{}", back) == "field verdict missing");
  std::string wrong_type = good;
  wrong_type.replace(wrong_type.find("\"lost\":0"), 8, "\"lost\":\"0\"");
  CHECK(read_chaos_run_json(wrong_type, back) == "field lost of the wrong type");
  std::string negative = good;
  negative.replace(negative.find("\"takeovers\":0"), 13, "\"takeovers\":-1");
  CHECK(read_chaos_run_json(negative, back) == "field takeovers of the wrong type");
  std::string unknown_class = good;
  unknown_class.replace(unknown_class.find("\"class\":\"ok\""), 12, "\"class\":\"maybe\"");
  CHECK(read_chaos_run_json(unknown_class, back) == "unknown class maybe");
  CHECK(back.verdict == "untouched");
}
