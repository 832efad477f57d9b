// Case generation of the fault campaign (`hapair chaos`): the names of the fault kinds, the
// options' validation, the example networks, and case i of a seed (a network with random legal
// settings, an approach and a fault schedule aimed at the nodes acting after earlier faults).
//
// Paper: Hwang et al. (ICDE 2005), section 3, assume one fail-stop crash; the schedule here adds
// the failures docs/FAULTS.md lists (pauses around the failure timeout, partitions, a second
// failure during recovery, restarts).
//
// Invariant: chaos_case(options, networks, i) is a pure function of the options that shape the
// case space and of i, drawn from its own Rng stream (Rng::derive(mix64(seed, i), "chaos.case")),
// so `--case i` repeats exactly run i of a campaign.
#include "campaigns/chaos.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "hosts/host_faults.h"
#include "hosts/placement.h"
#include "report/csv.h"
#include "config/input_checks.h"
#include "proc/net_isolation.h"
#include "report/plots.h"
#include "config/topology_file.h"
#include "protocols/check.h"
#include "protocols/rng.h"
#include "sim/faults.h"
#include "sim/scenario.h"

namespace hapair {
namespace {
bool contains(const std::vector<ChaosFault>& kinds, ChaosFault k) {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

std::vector<ChaosFault> effective_faults(const ChaosOptions& o) {
  return o.faults.empty() ? chaos_faults_for_driver(o.driver) : o.faults;
}

double effective_duration_s(const ChaosOptions& o) { return o.duration_s.value_or(o.driver == "real" ? 2.0 : 3.0); }

std::int64_t pick(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(hi - lo + 1)));
}

// A whole number of milliseconds in [lo_s, hi_s], as seconds: fault times print exactly.
double pick_ms(Rng& rng, double lo_s, double hi_s) {
  const auto lo = static_cast<std::int64_t>(std::ceil(lo_s * 1000.0));
  const auto hi = std::max(lo, static_cast<std::int64_t>(std::floor(hi_s * 1000.0)));
  return static_cast<double>(pick(rng, lo, hi)) / 1000.0;
}

// A sum of such times, back on the whole millisecond (1.225, not 1.2249999999999999).
double whole_ms(double s) { return std::round(s * 1000.0) / 1000.0; }

template <typename T>
const T& pick_one(Rng& rng, const std::vector<T>& items) {
  HAPAIR_CHECK(!items.empty());
  return items[rng.below(items.size())];
}

// ---- the case: settings ------------------------------------------------------------------

// Random legal variations of the network itself (swarm_case already picked the intervals, the
// simulated network and the source rates): keys, windows, filter constants, the aggregate
// function, the checkpoint mode and, for active standby, whether determinants are shipped.
void vary_network(Topology& t, Rng& rng, const std::string& driver) {
  static const std::int64_t kSlidesMs[] = {10, 20, 25, 50, 100};
  static const AggregateFunction kFunctions[] = {AggregateFunction::count, AggregateFunction::sum,
                                                 AggregateFunction::avg, AggregateFunction::min, AggregateFunction::max};
  for (auto& f : t.fragments) {
    if (f.kind == FragmentKind::source) f.source.key_count = pick(rng, 1, 32);
    for (auto& op : f.operators) switch (op.kind) {
        case OperatorKind::filter: op.filter_constant = static_cast<double>(pick(rng, 20, 90)); break;
        case OperatorKind::aggregate:
          op.slide_ms = kSlidesMs[rng.below(std::size(kSlidesMs))];
          op.window_ms = op.slide_ms * pick(rng, 1, 8);
          op.function = kFunctions[rng.below(std::size(kFunctions))];
          op.group_by_key = rng.chance(0.8);
          break;
        case OperatorKind::join: op.join_window_ms = pick(rng, 5, 50); break;
        default: break;  // the others vary nothing
      }
  }
  Settings& s = t.settings;
  s.checkpoint_mode = rng.chance(0.4) ? CheckpointMode::delta : CheckpointMode::full;
  const ApproachTraits& approach = ApproachCatalog::builtin().of(s.ha);
  s.determinants = !(approach.reads_setting("determinants") && rng.chance(0.15));
  if (approach.reads_setting("trimming") && rng.chance(0.3)) s.trimming = TrimmingRule::conservative;
  s.retransmit_timeout_ms = pick(rng, 50, 300);
  // A run that cannot finish (a crash without standby) waits this long after the sources stop.
  s.drain_timeout_s = 10.0;
  if (driver == "real") {
    // Real processes share two cores with everything else on the machine: timeouts of a few
    // heartbeats of 5 ms would make scheduling noise look like failures in most runs.
    s.heartbeat_interval_ms = pick(rng, 10, 20);
    s.failure_timeout_ms = s.heartbeat_interval_ms * pick(rng, 5, 10);
    s.checkpoint_interval_ms = pick(rng, 50, 200);
  }
  if (approach.reads_setting("hybrid_switch_at_ms")) {
    // Hybrid standby: a commanded switch to active at any moment of the run (or none), a stall
    // trigger short of the failure timeout (or none), a calm period from a few checkpoints to
    // longer than the run, so crashes fall before, during and after switches both ways.
    const auto duration_ms = static_cast<std::int64_t>(s.duration_s * 1000.0);
    s.hybrid_switch_at_ms = rng.chance(0.7) ? pick(rng, std::int64_t{0}, duration_ms) : -1;
    s.hybrid_stall_ms = rng.chance(0.8) ? pick(rng, s.heartbeat_interval_ms, std::max(s.heartbeat_interval_ms, s.failure_timeout_ms - 1)) : 0;
    s.hybrid_calm_ms = pick(rng, std::int64_t{20}, std::int64_t{3000});
    // A latency trigger (or none) from a few batches' delay to a backlog's.
    s.hybrid_latency_ms = rng.chance(0.5) ? pick(rng, std::int64_t{5}, std::int64_t{200}) : 0;
  }
  if (approach.reads_setting("failover")) {
    // Global checkpoints: either failover strategy, one to three complete checkpoints kept.
    s.failover = rng.chance(0.5) ? FailoverMode::full : FailoverMode::region;
    s.checkpoints_retained = pick(rng, std::int64_t{1}, std::int64_t{3});
  }
  if (approach.reads_setting("checkpoint_alignment") && rng.chance(0.5)) s.checkpoint_alignment = CheckpointAlignment::unaligned;
  if (approach.reads_setting("local_recovery")) s.local_recovery = rng.chance(0.5);
}

// ---- the case: the fault schedule --------------------------------------------------------

// What the generator expects each operator fragment's nodes to be doing, so that "crash the
// primary" hits the node acting as primary after earlier faults. It only aims the faults; the
// classification reads what really happened from the run's events (beyond_guarantee).
struct PairGuess {
  std::string acting;
  std::string other;  // empty: no standby (ha none)
  bool acting_alive = true;
  bool other_alive = true;
  FragmentId fragment = kNoFragment;
  void swap_roles() {
    std::swap(acting, other);
    std::swap(acting_alive, other_alive);
  }
};

// With hosts, where placement puts each node (place_nodes is a function of the plan and the
// host list, so the case stays a pure function of the options).
struct CaseHosts {
  const HostList* hosts = nullptr;
  std::optional<Placement> placement;
  std::vector<HostLossSpec> losses;  // drawn
  std::set<std::size_t> lost;        // hosts lost so far
  bool lost_node(const Plan& plan, const std::string& name) const {
    return placement && lost.count(placement->of(plan.node_id(name)).host) != 0;
  }
  bool same_host(const Plan& plan, const std::string& a, const std::string& b) const {
    return placement && placement->of(plan.node_id(a)).host == placement->of(plan.node_id(b)).host;
  }
};

// The crashes a host loss implies (one per node there), as the launcher adds them.
std::vector<FaultSpec> loss_crashes(const Plan& plan, const Placement& placement, std::size_t host, double at_s) {
  std::vector<FaultSpec> out;
  for (const NodeId n : placement.nodes_on(host)) out.push_back({FaultKind::crash, plan.nodes[n].name, "", at_s, 0.0});
  return out;
}

std::vector<FaultSpec> pick_schedule(const Plan& plan, Rng& rng, const std::vector<ChaosFault>& kinds, double duration_s,
                                     CaseHosts& hosts) {
  std::vector<PairGuess> pairs;
  for (const auto& f : plan.fragments) {
    if (f.kind != FragmentKind::operators) continue;
    PairGuess g;
    g.acting = plan.nodes[f.primary].name;
    if (f.has_standby()) g.other = plan.nodes[f.standbys.front()].name;
    g.fragment = f.id;
    pairs.push_back(g);
  }
  std::vector<ChaosFault> primitives;
  for (ChaosFault k : {ChaosFault::crash, ChaosFault::pause, ChaosFault::partition})
    if (contains(kinds, k)) primitives.push_back(k);
  if (hosts.placement && contains(kinds, ChaosFault::host_loss)) primitives.push_back(ChaosFault::host_loss);
  std::vector<FaultSpec> faults;
  if (primitives.empty() || pairs.empty()) return faults;

  // A candidate joins the schedule only when the schedule stays valid (no pause of a crashed
  // node, no crash of a crashed one, everything inside the run).
  // With hosts, the crashes of the hosts lost so far count too, and no node of a lost host is
  // touched again (the launcher refuses its restart: the host stays cut off).
  std::vector<FaultSpec> loss_faults;
  auto valid = [&](std::vector<FaultSpec> all) {
    all.insert(all.end(), loss_faults.begin(), loss_faults.end());
    std::stable_sort(all.begin(), all.end(), [](const FaultSpec& a, const FaultSpec& b) { return a.at_s < b.at_s; });
    return validate_run_faults(plan, all).empty();
  };
  auto try_add = [&](const FaultSpec& f) {
    if (hosts.lost_node(plan, f.node) || (!f.peer.empty() && hosts.lost_node(plan, f.peer))) return false;
    faults.push_back(f);
    if (valid(faults)) return true;
    faults.pop_back();
    return false;
  };
  const double timeout_s = static_cast<double>(plan.settings().failure_timeout_ms) / 1000.0;
  // The acting primary of a neighbouring fragment, or the node of a source or sink.
  auto acting_of = [&](FragmentId id) {
    for (const auto& g : pairs)
      if (g.fragment == id) return g.acting;
    return plan.nodes[plan.fragments[id].primary].name;
  };

  const int count = rng.chance(0.5) ? 1 : (rng.chance(0.7) ? 2 : 3);
  double t = pick_ms(rng, 0.15 * duration_s, 0.4 * duration_s);
  for (int i = 0; i < count && t <= 0.8 * duration_s; ++i) {
    const ChaosFault kind = pick_one(rng, primitives);
    PairGuess& g = pairs[rng.below(pairs.size())];
    switch (kind) {
      case ChaosFault::crash: {
        const bool hit_acting = g.acting_alive || g.other.empty() || !g.other_alive;
        const std::string victim = hit_acting ? g.acting : g.other;
        if (!try_add({FaultKind::crash, victim, "", t, 0.0})) break;
        if (hit_acting) {
          g.acting_alive = false;
          if (!g.other.empty() && g.other_alive) g.swap_roles();  // the standby takes over
        } else {
          g.other_alive = false;
        }
        if (contains(kinds, ChaosFault::restart) && rng.chance(0.65)) {
          // The restarted node rejoins as the standby of whoever acts now.
          if (try_add({FaultKind::restart, victim, "", whole_ms(t + pick_ms(rng, 0.15, 0.6)), 0.0})) {
            if (victim == g.acting) g.acting_alive = true;
            else g.other_alive = true;
          }
        }
        break;
      }
      case ChaosFault::pause: {
        const bool standby = !g.other.empty() && g.other_alive && rng.chance(0.2);
        const std::string victim = standby ? g.other : g.acting;
        // Shorter than the failure timeout (only late), around it (either outcome must be
        // safe), or much longer (the standby takes over; the paused node must be fenced).
        const int length = static_cast<int>(rng.below(3));
        const double lo = length == 0 ? 0.2 : (length == 1 ? 0.8 : 2.0);
        const double hi = length == 0 ? 0.8 : (length == 1 ? 1.5 : 15.0);
        const double d = std::max(0.001, std::min(pick_ms(rng, lo * timeout_s, hi * timeout_s), 0.25 * duration_s));
        if (try_add({FaultKind::pause, victim, "", t, d}) && !standby && length == 2 && !g.other.empty() && g.other_alive)
          g.swap_roles();
        break;
      }
      case ChaosFault::partition: {
        const auto& f = plan.fragments[g.fragment];
        std::vector<std::string> peers;
        const int shape = static_cast<int>(rng.below(3));
        if (shape == 0 && !g.other.empty() && g.other_alive) peers.push_back(g.other);
        if (shape == 1 || peers.empty())
          for (FragmentId d : f.downstream) peers.push_back(acting_of(d));
        if (shape == 2)
          for (FragmentId u : f.upstream) peers.push_back(acting_of(u));
        // Across hosts a partition cuts the link between two hosts: never two nodes of one.
        peers.erase(std::remove_if(peers.begin(), peers.end(),
                                   [&](const std::string& p) { return hosts.same_host(plan, g.acting, p); }),
                    peers.end());
        if (peers.empty()) break;
        const std::string peer = pick_one(rng, peers);
        const double d = std::max(0.001, std::min(pick_ms(rng, 0.5 * timeout_s, 10.0 * timeout_s), 0.25 * duration_s));
        if (try_add({FaultKind::partition, g.acting, peer, t, d}) && peer == g.other && d > timeout_s) g.swap_roles();
        break;
      }
      case ChaosFault::host_loss: {
        // The host of the acting primary (or of its standby): every node there crashes at once,
        // learnt of only by silence. Not when a node there has a restart (refused across a loss).
        const bool standby = !g.other.empty() && g.other_alive && rng.chance(0.25);
        const std::string victim = standby ? g.other : g.acting;
        const std::size_t host = hosts.placement->of(plan.node_id(victim)).host;
        if (hosts.lost.count(host) != 0) break;
        const std::vector<FaultSpec> crashes = loss_crashes(plan, *hosts.placement, host, t);
        // A host that holds a source or a sink: their loss is beyond every guarantee (no
        // standby), so such a host is not drawn.
        bool unpaired = false;
        for (const FaultSpec& c : crashes)
          unpaired |= plan.fragments[plan.nodes[plan.node_id(c.node)].fragment].kind != FragmentKind::operators;
        if (unpaired) break;
        bool restarted = false;
        for (const FaultSpec& f : faults)
          for (const FaultSpec& c : crashes) restarted |= f.kind == FaultKind::restart && f.node == c.node;
        std::vector<FaultSpec> with = loss_faults;
        with.insert(with.end(), crashes.begin(), crashes.end());
        std::swap(with, loss_faults);
        if (restarted || !valid(faults)) {
          std::swap(with, loss_faults);
          break;
        }
        hosts.lost.insert(host);
        hosts.losses.push_back(HostLossSpec{std::string(kHostOfPrefix) + victim, t});
        for (PairGuess& p : pairs) {
          const bool acting_here = hosts.placement->of(plan.node_id(p.acting)).host == host;
          const bool other_here = !p.other.empty() && hosts.placement->of(plan.node_id(p.other)).host == host;
          if (acting_here) p.acting_alive = false;
          if (other_here) p.other_alive = false;
          if (acting_here && !p.other.empty() && p.other_alive) p.swap_roles();
        }
        break;
      }
      case ChaosFault::restart:
      case ChaosFault::loss:
      case ChaosFault::duplication: break;
    }
    // The next fault comes during the recovery of this one (a few failure timeouts later) or
    // after it has settled.
    t = whole_ms(t + (rng.chance(0.4) ? pick_ms(rng, 0.2 * timeout_s, 3.0 * timeout_s) : pick_ms(rng, 0.15, 0.5)));
  }
  std::stable_sort(faults.begin(), faults.end(), [](const FaultSpec& a, const FaultSpec& b) { return a.at_s < b.at_s; });
  return faults;
}

// k standbys (issue 36): the faults only k standbys survive, drawn from the case's own stream
// for them. Shape 1: the primary and k - 1 of its standbys crash together, so the last one must
// take over. Shape 2: the primary crashes and the standby expected to win the election (the
// first; every standby installed the same checkpoints unless one lagged) crashes a fraction of a
// millisecond to a few milliseconds later, before or while the others follow it. Either way the
// victims may restart and rejoin. Returns no faults for shape 0 (the usual schedule stands).
std::vector<FaultSpec> pick_k_standby_schedule(const Plan& plan, Rng& rng, const std::vector<ChaosFault>& kinds,
                                               double duration_s) {
  std::vector<const PlanFragment*> with_k;
  for (const auto& f : plan.fragments)
    if (f.kind == FragmentKind::operators && f.standbys.size() > 1) with_k.push_back(&f);
  const auto shape = rng.below(3);
  if (with_k.empty() || shape == 0 || !contains(kinds, ChaosFault::crash)) return {};
  const PlanFragment& f = *with_k[rng.below(with_k.size())];
  const double t = pick_ms(rng, 0.2 * duration_s, 0.6 * duration_s);
  std::vector<FaultSpec> faults{{FaultKind::crash, plan.nodes[f.primary].name, "", t, 0.0}};
  if (shape == 1) {
    std::vector<NodeId> standbys = f.standbys;
    for (std::size_t i = 0; i + 1 < f.standbys.size(); ++i) {
      const std::size_t j = rng.below(standbys.size());
      faults.push_back({FaultKind::crash, plan.nodes[standbys[j]].name, "", t, 0.0});
      standbys.erase(standbys.begin() + static_cast<std::ptrdiff_t>(j));
    }
  } else {
    // 0.1 ms to 5 ms after the primary, in tenths of a millisecond.
    const double after_s = static_cast<double>(pick(rng, 1, 50)) / 10'000.0;
    faults.push_back({FaultKind::crash, plan.nodes[f.standbys.front()].name, "", std::round((t + after_s) * 10'000.0) / 10'000.0, 0.0});
  }
  if (contains(kinds, ChaosFault::restart)) {
    const std::size_t victims = faults.size();
    for (std::size_t i = 0; i < victims; ++i)
      if (rng.chance(0.5))
        faults.push_back({FaultKind::restart, faults[i].node, "", whole_ms(t + pick_ms(rng, 0.15, 0.6)), 0.0});
  }
  std::stable_sort(faults.begin(), faults.end(), [](const FaultSpec& a, const FaultSpec& b) { return a.at_s < b.at_s; });
  if (!validate_run_faults(plan, faults).empty()) return {};
  return faults;
}

// Live switches (issue 36), drawn from the case's own stream for them ("chaos.switches"), so the
// network, settings and schedule drawn above stay what they were. Half the cases whose network
// has a fragment that may switch (an approach among switchable_mode's, one standby, no arbitrary
// operator: what [[switch]] accepts) get one switch (30 %) or two (20 %) at random times, each to
// another switchable approach than the fragment's at that moment. Half of those replace the
// schedule with a crash around a switch: the primary or the standby of the switching fragment,
// 1 ms before to 5 ms after it (during the switch: the announcement, the checkpoint or the
// bootstrap in flight) or 10 to 300 ms after it (the new approach just settling), which may
// restart, and then the other replica may crash once the pair was restored.
struct SwitchDraw {
  std::vector<SwitchSpec> switches;
  std::vector<FaultSpec> faults;  // empty: the usual schedule stands
};

SwitchDraw pick_switches(const Plan& plan, Rng& rng, const std::vector<ChaosFault>& kinds, double duration_s) {
  SwitchDraw out;
  std::vector<const PlanFragment*> eligible;
  for (const PlanFragment& f : plan.fragments)
    if (f.kind == FragmentKind::operators && switchable_mode(plan.approaches, f.ha) && f.standbys.size() == 1 &&
        f.klass != OperatorClass::arbitrary)
      eligible.push_back(&f);
  std::vector<HaMode> targets;
  for (const ApproachTraits& a : plan.approaches.all())
    if (switchable_mode(plan.approaches, a.mode)) targets.push_back(a.mode);
  const auto shape = rng.below(10);
  if (eligible.empty() || targets.size() < 2 || shape < 5) return out;
  const std::size_t count = shape < 8 ? 1 : 2;
  std::map<FragmentId, HaMode> now;
  for (const PlanFragment* f : eligible) now[f->id] = f->ha;
  double t = pick_ms(rng, 0.15 * duration_s, 0.6 * duration_s);
  std::vector<FragmentId> switched;
  for (std::size_t i = 0; i < count && t < 0.85 * duration_s; ++i) {
    const PlanFragment& f = *eligible[rng.below(eligible.size())];
    std::vector<HaMode> others;
    for (HaMode m : targets)
      if (m != now[f.id]) others.push_back(m);
    const HaMode to = pick_one(rng, others);
    out.switches.push_back(SwitchSpec{f.name, to, t, "chaos"});
    switched.push_back(f.id);
    now[f.id] = to;
    t = whole_ms(t + pick_ms(rng, 0.1 * duration_s, 0.3 * duration_s));
  }
  if (!contains(kinds, ChaosFault::crash) || !rng.chance(0.5)) return out;

  // A crash around one of the switches (no fault before it, so the plan's primary still acts).
  const std::size_t which = rng.below(out.switches.size());
  const SwitchSpec& s = out.switches[which];
  const PlanFragment& f = plan.fragments[switched[which]];
  const bool standby = rng.chance(0.4);
  const std::string victim = plan.nodes[standby ? f.standbys.front() : f.primary].name;
  const std::string other = plan.nodes[standby ? f.primary : f.standbys.front()].name;
  // -1 ms to +5 ms in tenths of a millisecond, or 10 to 300 ms after.
  const double at_s = rng.chance(0.6) ? std::round((s.at_s + static_cast<double>(pick(rng, -10, 50)) / 10'000.0) * 10'000.0) / 10'000.0
                                      : whole_ms(s.at_s + pick_ms(rng, 0.01, 0.3));
  std::vector<FaultSpec> faults{{FaultKind::crash, victim, "", at_s, 0.0}};
  if (contains(kinds, ChaosFault::restart) && rng.chance(0.6)) {
    const double back_s = whole_ms(at_s + pick_ms(rng, 0.15, 0.5));
    faults.push_back({FaultKind::restart, victim, "", back_s, 0.0});
    // The survivor (the acting primary now) crashes once the restarted node rejoined.
    if (rng.chance(0.4)) faults.push_back({FaultKind::crash, other, "", whole_ms(back_s + pick_ms(rng, 0.2, 0.5)), 0.0});
  }
  faults.erase(std::remove_if(faults.begin(), faults.end(), [&](const FaultSpec& x) { return x.at_s > 0.9 * duration_s; }),
               faults.end());
  if (!faults.empty() && validate_run_faults(plan, faults).empty()) out.faults = std::move(faults);
  return out;
}

std::string describe_case(const ChaosCase& c) {
  const Settings& s = c.topology.settings;
  const SimSettings& n = c.topology.sim;
  std::ostringstream d;
  d << "network=" << c.network << " ha=" << to_string(c.approach);
  const ApproachTraits& approach = ApproachCatalog::builtin().of(c.approach);
  if (approach.reads_setting("determinants")) d << " determinants=" << (s.determinants ? "on" : "off");
  if (approach.reads_setting("trimming")) d << " trimming=" << to_string(s.trimming);
  d << " heartbeat_ms=" << s.heartbeat_interval_ms << " timeout_ms=" << s.failure_timeout_ms;
  if (s.standbys != 1) d << " standbys=" << s.standbys;
  if (approach.reads_setting("checkpoint_interval_ms"))
    d << " checkpoint_ms=" << s.checkpoint_interval_ms << " " << to_string(s.checkpoint_mode);
  if (approach.reads_setting("hybrid_switch_at_ms"))
    d << " switch_at_ms=" << s.hybrid_switch_at_ms << " stall_ms=" << s.hybrid_stall_ms << " calm_ms=" << s.hybrid_calm_ms
      << " latency_ms=" << s.hybrid_latency_ms;
  if (approach.reads_setting("failover")) d << " failover=" << to_string(s.failover) << " retained=" << s.checkpoints_retained;
  if (approach.reads_setting("checkpoint_alignment")) d << " " << to_string(s.checkpoint_alignment);
  if (approach.reads_setting("local_recovery") && s.local_recovery) d << " local_recovery";
  if (n.loss_ratio > 0) d << " loss=" << shortest_text(std::round(n.loss_ratio * 1e4) / 1e4);
  if (n.duplication_ratio > 0) d << " dup=" << shortest_text(std::round(n.duplication_ratio * 1e4) / 1e4);
  if (!c.topology.switches.empty()) {
    d << " switches:";
    for (std::size_t i = 0; i < c.topology.switches.size(); ++i) {
      const SwitchSpec& w = c.topology.switches[i];
      d << (i == 0 ? " " : ", ") << w.fragment << "=" << to_string(w.to) << "@" << shortest_text(w.at_s);
    }
  }
  d << " faults:";
  if (c.faults.empty() && c.host_losses.empty()) d << " none";
  for (std::size_t i = 0; i < c.faults.size(); ++i) d << (i == 0 ? " " : "; ") << describe(c.faults[i]);
  for (std::size_t i = 0; i < c.host_losses.size(); ++i)
    d << (i == 0 && c.faults.empty() ? " " : "; ") << "loss of the " << c.host_losses[i].host << " at "
      << shortest_text(c.host_losses[i].at_s) << " s";
  return d.str();
}

}  // namespace

// ---- names -------------------------------------------------------------------------------

const char* to_string(ChaosFault k) {
  switch (k) {
    case ChaosFault::crash: return "crash";
    case ChaosFault::pause: return "pause";
    case ChaosFault::partition: return "partition";
    case ChaosFault::restart: return "restart";
    case ChaosFault::loss: return "loss";
    case ChaosFault::duplication: return "duplication";
    case ChaosFault::host_loss: return "host-loss";
  }
  return "?";
}

std::optional<ChaosFault> parse_chaos_fault(const std::string& s) {
  for (ChaosFault k : kChaosFaults)
    if (s == to_string(k)) return k;
  return std::nullopt;
}

std::string allowed_chaos_faults() {
  std::vector<std::string> names;
  for (ChaosFault k : kChaosFaults) names.push_back(to_string(k));
  return fmt::format("{}", fmt::join(names, ", "));
}

std::vector<ChaosFault> chaos_faults_for_driver(const std::string& driver) {
  if (driver == "real") return {ChaosFault::crash, ChaosFault::pause, ChaosFault::restart};
  return {std::begin(kChaosFaults), std::end(kChaosFaults)};
}

std::vector<ChaosFault> chaos_faults_for_hosts() {
  return {ChaosFault::crash, ChaosFault::pause, ChaosFault::restart, ChaosFault::partition, ChaosFault::host_loss};
}

std::vector<ChaosFault> chaos_faults_possible(const std::string& driver) {
  std::vector<ChaosFault> kinds = chaos_faults_for_driver(driver);
  if (driver == "real" && net_isolation_unavailable().empty()) kinds.push_back(ChaosFault::partition);
  return kinds;
}

// ---- options and networks ----------------------------------------------------------------

std::vector<std::string> validate_chaos_options(const ChaosOptions& o) {
  std::vector<std::string> problems;
  if (o.driver != "sim" && o.driver != "real") problems.push_back(unknown_choice("driver", o.driver, "a driver", {"sim", "real"}));
  if (o.approaches.empty()) problems.push_back("no approach to run (allowed: " + allowed_ha_modes() + ")");
  if (o.networks.empty()) problems.push_back("no network to run");
  for (const auto& n : o.networks) {
    const bool known = std::find(std::begin(kChaosNetworks), std::end(kChaosNetworks), n) != std::end(kChaosNetworks);
    if (!known && o.networks_dir.empty())
      problems.push_back(unknown_choice("network", n, "an example network", {std::begin(kChaosNetworks), std::end(kChaosNetworks)}));
  }
  const auto possible = o.hosts.hosts ? chaos_faults_for_hosts() : chaos_faults_possible(o.driver);
  for (ChaosFault k : o.faults) {
    if (contains(possible, k)) continue;
    if (k == ChaosFault::host_loss) {
      problems.push_back("fault kind host-loss needs --hosts FILE (a whole machine lost: on one machine, crash the nodes)");
      continue;
    }
    if (k == ChaosFault::partition && o.driver == "real")
      problems.push_back(real_partition_refusal(net_isolation_unavailable()));
    else
      problems.push_back(std::string("fault kind ") + to_string(k) + " cannot be injected with --driver " + o.driver);
  }
  if (o.duration_s && !(*o.duration_s >= 0.5 && *o.duration_s <= 600.0))
    problems.push_back("--duration-s " + shortest_text(*o.duration_s) + ": must be from 0.5 to 600 s (faults fall in its middle)");
  if (!o.only_case && (o.runs == 0 || o.runs > kChaosRunsMax))
    problems.push_back("--runs " + std::to_string(o.runs) + ": must be from 1 to " + std::to_string(kChaosRunsMax));
  if (!(o.run_timeout_s > 0.0 && o.run_timeout_s <= 86'400.0))
    problems.push_back("--run-timeout-s " + shortest_text(o.run_timeout_s) + ": must be > 0 and <= 86400 s");
  if (o.jobs == 0 || o.jobs > 256) problems.push_back("--jobs " + std::to_string(o.jobs) + ": must be from 1 to 256");
  if (o.jobs > 1 && !o.isolate) problems.push_back("--jobs above 1 runs each case in its own child: not with --no-isolate");
  if (o.jobs > 1 && o.driver == "real")
    problems.push_back("--jobs above 1 needs --driver sim: real runs at once would disturb each other's timing");
  return problems;
}

std::map<std::string, Topology> load_chaos_networks(const ChaosOptions& options, std::vector<std::string>& problems) {
  std::map<std::string, Topology> out;
  const std::string dir = options.networks_dir.empty() ? source_dir() + "/experiments/networks" : options.networks_dir;
  for (const auto& name : options.networks) {
    if (out.count(name) != 0) continue;
    if (name == "default") {
      out[name] = default_topology();
      continue;
    }
    TopologyLoad load = load_topology_file(dir + "/" + name + ".toml");
    if (!load.topology) {
      for (const auto& p : load.problems) problems.push_back("network '" + name + "': " + p);
      continue;
    }
    out[name] = *load.topology;
  }
  return out;
}

// ---- the case ----------------------------------------------------------------------------

ChaosCase chaos_case(const ChaosOptions& options, const std::map<std::string, Topology>& networks, std::size_t index) {
  HAPAIR_CHECK(!options.approaches.empty() && !options.networks.empty());
  ChaosCase c;
  c.index = index;
  c.seed = mix64(options.seed, static_cast<std::uint64_t>(index));
  Rng rng = Rng::derive(c.seed, hash_name("chaos.case"));
  c.network = pick_one(rng, options.networks);
  c.approach = options.random_approach ? pick_one(rng, options.approaches)
                                       : options.approaches[index % options.approaches.size()];
  const auto kinds = effective_faults(options);
  const double duration_s = effective_duration_s(options);
  const bool sim = options.driver == "sim";

  const auto network = networks.find(c.network);
  HAPAIR_CHECK_MSG(network != networks.end(), "network '" << c.network << "' was not loaded");
  SwarmOptions swarm;
  swarm.base = network->second;
  swarm.ha_modes = {c.approach};
  swarm.duration_s = duration_s;
  swarm.crash = false;  // the schedule is ours
  swarm.loss_ratio_max = sim && contains(kinds, ChaosFault::loss) && rng.chance(0.5) ? 0.05 : 0.0;
  swarm.duplication_ratio_max = sim && contains(kinds, ChaosFault::duplication) && rng.chance(0.5) ? 0.05 : 0.0;
  c.topology = swarm_case(c.seed, swarm).topology;
  vary_network(c.topology, rng, options.driver);
  // k standbys, from a stream of their own, so the cases of every other approach (and the draws
  // above) stay what they were: 1, 2 or 3 standbys where the approach allows them.
  Rng k_rng = Rng::derive(c.seed, hash_name("chaos.standbys"));
  const ApproachTraits& traits = ApproachCatalog::builtin().of(c.approach);
  const std::size_t k_most = std::max(traits.standbys_max, traits.standbys);
  if (k_most > 1) c.topology.settings.standbys = static_cast<std::int64_t>(1 + k_rng.below(k_most));
  const auto problems = validate(c.topology);
  HAPAIR_CHECK_MSG(problems.empty(), "chaos case " << index << " picked an invalid topology: " << problems.front());

  const Plan plan = make_plan(c.topology);
  CaseHosts hosts;
  if (options.hosts.hosts) {
    hosts.hosts = options.hosts.hosts.get();
    hosts.placement = place_nodes(plan, *options.hosts.hosts).placement;
  }
  c.faults = pick_schedule(plan, rng, kinds, duration_s, hosts);
  c.host_losses = hosts.losses;
  if (auto k_faults = pick_k_standby_schedule(plan, k_rng, kinds, duration_s); !k_faults.empty()) {
    c.faults = std::move(k_faults);
    c.host_losses.clear();
  }
  if (options.switches) {
    // Live switches from their own stream (the draws above stay what they were; pick_switches).
    Rng switch_rng = Rng::derive(c.seed, hash_name("chaos.switches"));
    SwitchDraw draw = pick_switches(plan, switch_rng, kinds, duration_s);
    if (!draw.switches.empty()) {
      c.topology.switches = std::move(draw.switches);
      const auto switch_problems = validate(c.topology);
      HAPAIR_CHECK_MSG(switch_problems.empty(), "chaos case " << index << " drew an invalid switch: " << switch_problems.front());
    }
    if (!draw.faults.empty()) {
      c.faults = std::move(draw.faults);
      c.host_losses.clear();
      c.faults_around_switch = true;
    }
  }
  c.description = describe_case(c);
  return c;
}

}  // namespace hapair
