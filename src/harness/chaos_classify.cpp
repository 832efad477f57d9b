// Classification of a fault-campaign run (`hapair chaos`): whether its schedule stayed within
// the guarantee of its approach (beyond_guarantee, read from the run's own events in time
// order), and whether the verdict kept that guarantee (classify_chaos_run).
//
// Paper: Hwang et al. (ICDE 2005), section 3, promise each approach's recovery type for a single
// fail-stop crash: precise for passive standby, active standby with determinants and, on
// deterministic networks, upstream backup; gap for amnesia. docs/FAULTS.md states the rules.
//
// Invariant: a run is a violation only when its schedule stayed within the guarantee and the
// verdict (or completion) broke it; a schedule that left a fragment without any node holding its
// state is "beyond the guarantee", never a violation.
#include "harness/chaos.h"

#include <algorithm>
#include <charconv>

#include "harness/csv.h"
#include "harness/merge_order.h"

namespace hapair {

const char* to_string(ChaosClass k) {
  switch (k) {
    case ChaosClass::ok: return "ok";
    case ChaosClass::beyond: return "beyond";
    case ChaosClass::violation: return "violation";
  }
  return "?";
}

// ---- classification ----------------------------------------------------------------------

std::vector<StreamId> unjudged_streams(const Plan& plan) { return order_dependent_streams(plan); }

std::optional<std::string> beyond_guarantee(const Plan& plan, const RunResult& result) {
  struct Pair {
    NodeId acting = kNoNode;
    bool acting_alive = true;
    bool paired = false;  // a live standby holds (or can rebuild) the fragment's state
    bool has_standby = false;
  };
  std::map<FragmentId, Pair> pairs;
  for (const auto& f : plan.fragments) {
    if (f.kind != FragmentKind::operators) continue;
    Pair p;
    p.acting = f.primary;
    p.has_standby = f.standby != kNoNode;
    p.paired = p.has_standby;
    pairs[f.id] = p;
  }
  auto name = [&](NodeId id) { return id < plan.nodes.size() ? plan.nodes[id].name : std::to_string(id); };
  auto at = [](const TraceEvent& e) { return shortest_text(static_cast<double>(e.at_us) / 1e6) + " s"; };

  // Upstream backup recovers two adjacent fragments that lose their primaries together: the
  // upstream one's recovery node restarts from its producer's log and brings the downstream
  // one's restart points with it. A third fragment in the row is beyond that: when fragment U
  // went down while its upstream W was still recovering, U's recovery node got U's restart
  // points from W's recovery node, which has them only as forwarded by W (without what U held
  // for its own consumers); if U's consumer F goes down before U's recovery settled, F's
  // recovery node finds no restart point. A fragment is "recovering" from the moment its primary
  // stopped (the crash, or last heard before a detection) until its takeover plus the time for
  // its neighbours' level-1 acks to reach the new primary again (settle_us).
  struct Recovery {
    bool down = false;
    TimeUs down_us = 0;
    TimeUs settled_us = 0;
    bool behind_recovering = false;  // it went down while an upstream fragment was recovering
  };
  std::map<FragmentId, Recovery> recovering;
  const Settings& settings = plan.settings();
  const TimeUs settle_us =
      us_from_ms(static_cast<double>(2 * settings.retransmit_timeout_ms + 4 * settings.ack_interval_ms));
  auto upstream_backup = [&](FragmentId f) {
    return f < plan.fragments.size() && plan.fragments[f].kind == FragmentKind::operators &&
           plan.fragments[f].ha == HaMode::upstream && settings.trimming != TrimmingRule::conservative;
  };
  auto is_recovering = [&](FragmentId f, TimeUs t) {
    auto it = recovering.find(f);
    return it != recovering.end() && it->second.down && t >= it->second.down_us && t < it->second.settled_us;
  };
  // Returns the reason when this is the third fragment in a row.
  auto went_down = [&](FragmentId f, TimeUs t, const std::string& what) -> std::optional<std::string> {
    if (!upstream_backup(f)) return std::nullopt;
    auto known = recovering.find(f);
    if (known != recovering.end() && known->second.down && known->second.settled_us == kNever) {
      // The detection of a crash already seen: it went down when it was last heard, if earlier.
      known->second.down_us = std::min(known->second.down_us, t);
      return std::nullopt;
    }
    if (is_recovering(f, t)) return std::nullopt;
    bool behind = false;
    for (FragmentId u : plan.fragments[f].upstream) {
      if (!upstream_backup(u) || !is_recovering(u, t)) continue;
      if (recovering[u].behind_recovering) {
        std::string w;
        for (FragmentId x : plan.fragments[u].upstream)
          if (upstream_backup(x) && recovering.count(x) && recovering[x].down_us <= recovering[u].down_us)
            w = plan.fragments[x].name;
        return what + ": fragments " + w + ", " + plan.fragments[u].name + " and " + plan.fragments[f].name +
               " (three in a row) were recovering at once; upstream backup recovers two adjacent fragments, and " +
               plan.fragments[f].name + "'s recovery node finds no restart point (its ids are rebased)";
      }
      behind = true;
    }
    recovering[f] = Recovery{true, t, kNever, behind};
    return std::nullopt;
  };

  for (const TraceEvent& e : result.events) {
    const bool crash = e.kind == TraceKind::failure && e.enum_of<FaultKind>(TraceKey::fault) == FaultKind::crash;
    // A standby acts from its detection on (a takeover of upstream backup is traced only once
    // every restart point arrived); a fenced node no longer acts, and rejoins as the standby.
    const bool takes_over = e.kind == TraceKind::takeover || e.kind == TraceKind::detection;
    if (!crash && !takes_over && e.kind != TraceKind::fenced && e.kind != TraceKind::pair_restored &&
        e.kind != TraceKind::standby_lost)
      continue;
    const NodeId node = e.node;
    if (node >= plan.nodes.size()) continue;
    auto it = pairs.find(plan.nodes[node].fragment);
    if (it == pairs.end()) continue;
    Pair& p = it->second;
    const std::string fragment = plan.fragments[plan.nodes[node].fragment].name;
    const FragmentId fid = plan.nodes[node].fragment;
    std::optional<std::string> row;
    if (crash && node == p.acting) {
      row = went_down(fid, e.at_us, "crash of " + name(node) + " at " + at(e));
    } else if (e.kind == TraceKind::detection) {
      const TimeUs silent_us = e.get(TraceKey::silent_us).value_or(us_from_ms(static_cast<double>(settings.failure_timeout_ms)));
      row = went_down(fid, e.at_us - silent_us, "detection by " + name(node) + " at " + at(e));
    } else if (e.kind == TraceKind::takeover && recovering.count(fid) && recovering[fid].settled_us == kNever) {
      recovering[fid].settled_us = e.at_us + settle_us;
    } else if (e.kind == TraceKind::fenced && recovering.count(fid) && recovering[fid].settled_us == kNever) {
      recovering[fid].settled_us = e.at_us;  // a detection that lost its epoch tie: the primary acts on
    }
    if (row) return row;
    if (takes_over) {
      p.acting = node;
      p.acting_alive = true;
      p.paired = false;  // the partner is dead or fenced until it rejoins
    } else if (e.kind == TraceKind::fenced) {
      p.paired = false;
      // A node that took over and then was fenced by its primary's renewed claim (the primary
      // dissolved the pair first, PrimaryRole::on_competing_claim) stops acting: its partner acts.
      if (node == p.acting) {
        const PlanFragment& pf = plan.fragments[plan.nodes[node].fragment];
        p.acting = node == pf.primary ? pf.standby : pf.primary;
      }
    } else if (e.kind == TraceKind::standby_lost) {
      p.paired = false;  // the primary runs unprotected until a standby rejoins
    } else if (e.kind == TraceKind::pair_restored) {
      p.acting = node;
      p.acting_alive = true;
      p.paired = true;
    } else if (!p.has_standby) {
      return "crash of " + name(node) + " at " + at(e) + ": fragment " + fragment + " has no standby (ha none)";
    } else if (node == p.acting) {
      if (!p.paired)
        return "crash of " + name(node) + " at " + at(e) + ", the acting primary of " + fragment +
               ", before its pair was restored (no standby held its state)";
      p.paired = false;
      p.acting_alive = false;
    } else {
      if (!p.acting_alive)
        return "crash of " + name(node) + " at " + at(e) + " while the primary of " + fragment +
               " was down and not yet replaced (both nodes of the pair lost)";
      p.paired = false;
    }
  }
  return std::nullopt;
}

ChaosJudgement classify_chaos_run(HaMode approach, bool determinants, bool arbitrary_network,
                                  const SemanticsReport& s, bool completed, const std::vector<std::string>& errors,
                                  const std::optional<std::string>& beyond) {
  if (beyond) return {ChaosClass::beyond, *beyond};
  if (approach == HaMode::none) return {ChaosClass::ok, "no guarantee (ha none)"};
  if (!completed || !errors.empty()) {
    std::string why = completed ? "the run reported an error" : "the run did not complete";
    if (!errors.empty()) why += ": " + errors.front();
    return {ChaosClass::violation, why + " (" + to_string(approach) + " should have recovered)"};
  }
  const std::string counts = " (lost " + std::to_string(s.lost) + ", duplicates " + std::to_string(s.duplicates) +
                             ", differing " + std::to_string(s.differing) + ")";
  switch (approach) {
    case HaMode::none: break;
    case HaMode::amnesia:
      return {ChaosClass::ok, s.lost > 0 ? "gap expected (amnesia)" : "amnesia lost nothing this time"};
    case HaMode::upstream:
      if (s.lost > 0) return {ChaosClass::violation, "upstream backup lost output" + counts};
      if (!arbitrary_network && s.verdict != "precise")
        return {ChaosClass::violation, "upstream backup on a deterministic network gave " + s.verdict + counts};
      return {ChaosClass::ok, arbitrary_network && s.verdict != "precise" ? "rollback expected (arbitrary network)" : ""};
    case HaMode::passive:
      if (s.verdict != "precise") return {ChaosClass::violation, "passive standby gave " + s.verdict + counts};
      return {ChaosClass::ok, ""};
    case HaMode::active:
      if (!determinants && arbitrary_network) {
        if (s.lost > 0) return {ChaosClass::violation, "active standby without determinants lost output" + counts};
        return {ChaosClass::ok, s.verdict != "precise" ? "rollback expected (no determinants)" : ""};
      }
      if (s.verdict != "precise") return {ChaosClass::violation, "active standby gave " + s.verdict + counts};
      return {ChaosClass::ok, ""};
  }
  return {ChaosClass::ok, ""};
}

}  // namespace hapair
