#include "judge/guarantee_rules.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "judge/merge_order.h"
#include "protocols/number_text.h"

namespace hapair {

const char* to_string(GuaranteeClass k) {
  switch (k) {
    case GuaranteeClass::ok: return "ok";
    case GuaranteeClass::beyond: return "beyond";
    case GuaranteeClass::violation: return "violation";
  }
  return "?";
}

// ---- classification ----------------------------------------------------------------------

std::vector<StreamId> unjudged_streams(const Plan& plan) { return order_dependent_streams(plan); }

namespace {

// The first fragment downstream of f (transitively) whose operators hold state, if any.
std::optional<FragmentId> stateful_downstream(const Plan& plan, FragmentId f) {
  std::vector<FragmentId> todo = plan.fragments[f].downstream;
  std::vector<bool> seen(plan.fragments.size(), false);
  while (!todo.empty()) {
    const FragmentId g = todo.front();
    todo.erase(todo.begin());
    if (g >= plan.fragments.size() || seen[g]) continue;
    seen[g] = true;
    const PlanFragment& pg = plan.fragments[g];
    if (pg.kind != FragmentKind::operators) continue;
    if (pg.klass != OperatorClass::repeatable) return g;
    todo.insert(todo.end(), pg.downstream.begin(), pg.downstream.end());
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> beyond_guarantee(const Plan& plan, const RunResult& result) {
  // A fragment's replicas: who acts as its primary, and the live standbys that hold (or can
  // rebuild) its state. With one standby a pair; with k standbys the holders are k at first, and
  // the fragment survives as long as one of them is left when the acting primary fails.
  struct Pair {
    NodeId acting = kNoNode;
    bool acting_alive = true;
    std::set<NodeId> holders;  // a live standby holds (or can rebuild) the fragment's state
    bool has_standby = false;
  };
  std::map<FragmentId, Pair> pairs;
  for (const auto& f : plan.fragments) {
    if (f.kind != FragmentKind::operators) continue;
    Pair p;
    p.acting = f.primary;
    p.has_standby = f.has_standby();
    p.holders.insert(f.standbys.begin(), f.standbys.end());
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
  // Fragments recovered from their upstreams' restart points under the exact rule (upstream backup).
  auto upstream_backup = [&](FragmentId f) {
    return f < plan.fragments.size() && plan.fragments[f].kind == FragmentKind::operators &&
           plan.traits(f).recovers_from_restart_points && settings.trimming != TrimmingRule::conservative;
  };
  auto is_recovering = [&](FragmentId f, TimeUs t) {
    auto it = recovering.find(f);
    return it != recovering.end() && it->second.down && t >= it->second.down_us && t < it->second.settled_us;
  };
  // What fragment f's recovery did after `t`, read from its takeover (said, not assumed).
  auto what_happened = [&](FragmentId f, TimeUs t) -> std::string {
    for (const TraceEvent& e : result.events) {
      if (e.kind != TraceKind::takeover || e.at_us < t || e.node >= plan.nodes.size() || plan.nodes[e.node].fragment != f)
        continue;
      const std::optional<std::int64_t> exact = e.get(TraceKey::exact_ids);
      if (!exact) return "";
      const bool from_point = e.get(TraceKey::generation).value_or(1) != 0;  // generation 0: no restart point
      if (*exact != 0 && !from_point)
        return " (here it found none, and its operators, which keep their input's ids, replayed exactly)";
      return *exact != 0 ? " (here it found one and restarted exactly)"
                         : " (here it found none in common and rebased its output ids)";
    }
    return " (here it did not take over before the run ended)";
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
               plan.fragments[f].name + "'s recovery node need not find a restart point" + what_happened(f, t);
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
    // A node of no fragment (the coordinator of global checkpoints) holds no fragment's state:
    // the pairs' rules do not cover it.
    if (node >= plan.nodes.size() || !plan.runs_fragment(node)) continue;
    // A source or a sink has no standby (only processing fragments are paired): its crash (on
    // several hosts, with the loss of its host) leaves nothing that holds its state.
    if (crash && plan.fragments[plan.nodes[node].fragment].kind != FragmentKind::operators)
      return "crash of " + name(node) + " at " + at(e) + ": a " +
             (plan.fragments[plan.nodes[node].fragment].kind == FragmentKind::sink ? "sink" : "source") +
             " has no standby (only processing fragments are paired), so its loss is beyond every approach's guarantee";
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
    } else if (e.kind == TraceKind::takeover && e.get(TraceKey::exact_ids).value_or(1) == 0 &&
               rebases_ids(plan.traits(fid), settings)) {
      if (auto g = stateful_downstream(plan, fid))
        return "takeover of " + fragment + " by " + name(node) + " at " + at(e) +
               ": under the conservative trimming rule it restarted from the oldest retained input and renumbered "
               "its output, and " + plan.fragments[*g].name + " downstream holds state (" + to_string(plan.fragments[*g].klass) +
               "): it may take the replayed tuples again under their new ids; upstream backup promises no loss "
               "past a stateful consumer only with trimming = \"exact\"";
    }
    if (e.kind == TraceKind::takeover && recovering.count(fid) && recovering[fid].settled_us == kNever) {
      recovering[fid].settled_us = e.at_us + settle_us;
    } else if (e.kind == TraceKind::fenced && recovering.count(fid) && recovering[fid].settled_us == kNever) {
      recovering[fid].settled_us = e.at_us;  // a detection that lost its epoch tie: the primary acts on
    }
    if (row) return row;
    if (takes_over) {
      // The other standbys still hold state (k standbys: they follow it); with one standby its
      // partner is dead or fenced until it rejoins.
      p.acting = node;
      p.acting_alive = true;
      p.holders.erase(node);
    } else if (e.kind == TraceKind::fenced) {
      p.holders.erase(node);
      // A node that took over and then was fenced by its primary's renewed claim (the primary
      // dissolved the pair first, PrimaryRole::on_competing_claim) stops acting: its partner acts.
      if (node == p.acting) {
        const PlanFragment& pf = plan.fragments[plan.nodes[node].fragment];
        p.acting = pf.standbys.size() > 1 && !p.holders.empty() ? *p.holders.begin() : pf.plan_partner(node);
        p.holders.erase(p.acting);
      }
    } else if (e.kind == TraceKind::standby_lost) {
      // The primary runs without it (unprotected, when it was the last) until a standby rejoins.
      const std::optional<std::int64_t> lost = e.get(TraceKey::standby);
      if (lost) p.holders.erase(static_cast<NodeId>(*lost));
      else p.holders.clear();
    } else if (e.kind == TraceKind::pair_restored) {
      p.acting = node;
      p.acting_alive = true;
      if (const std::optional<std::int64_t> restored = e.get(TraceKey::standby)) p.holders.insert(static_cast<NodeId>(*restored));
      p.holders.erase(node);
    } else if (!p.has_standby) {
      return "crash of " + name(node) + " at " + at(e) + ": fragment " + fragment + " has no standby (" +
             plan.traits(fid).title + ")";
    } else if (node == p.acting) {
      // (Down already: it restarted and failed again before anyone took over.)
      if (p.holders.empty() || !p.acting_alive)
        return "crash of " + name(node) + " at " + at(e) + ", the acting primary of " + fragment +
               ", before its pair was restored (no standby held its state)";
      p.acting_alive = false;
    } else {
      p.holders.erase(node);
      if (!p.acting_alive && p.holders.empty())
        return "crash of " + name(node) + " at " + at(e) + " while the primary of " + fragment +
               " was down and not yet replaced (" +
               (plan.fragments[fid].standbys.size() > 1 ? "every replica lost" : "both nodes of the pair lost") + ")";
    }
  }
  return std::nullopt;
}

bool rebases_ids(const ApproachTraits& approach, const Settings& settings) {
  return approach.conservative_trimming_rebases_ids && settings.trimming == TrimmingRule::conservative;
}

GuaranteeJudgement judge_guarantee(const ApproachTraits& approach, bool determinants, bool arbitrary_network,
                                   const SemanticsReport& s, bool completed, const std::vector<std::string>& errors,
                                   const std::optional<std::string>& beyond) {
  if (beyond) return {GuaranteeClass::beyond, *beyond};
  if (approach.promise == Promise{}) return {GuaranteeClass::ok, "no guarantee (" + approach.title + ")"};
  if (!completed || !errors.empty()) {
    std::string why = completed ? "the run reported an error" : "the run did not complete";
    if (!errors.empty()) why += ": " + errors.front();
    return {GuaranteeClass::violation, why + " (" + approach.name + " should have recovered)"};
  }
  const std::string counts = " (lost " + std::to_string(s.lost) + ", duplicates " + std::to_string(s.duplicates) +
                             ", differing " + std::to_string(s.differing) + ")";
  // An approach whose promise drops to rollback on any network with an arbitrary operator
  // (upstream backup) is precise only on deterministic ones; one that drops only without
  // determinants (active standby) is precise on both when it ships them.
  const bool weak_on_arbitrary = approach.promise.arbitrary_network == RecoveryType::rollback;
  switch (approach.promise.on(arbitrary_network, determinants)) {
    case RecoveryType::nothing: break;
    case RecoveryType::gap:
      return {GuaranteeClass::ok, s.lost > 0 ? "gap expected (" + approach.name + ")" : approach.name + " lost nothing this time"};
    case RecoveryType::rollback: {
      const std::string without = weak_on_arbitrary ? "" : " without determinants";
      if (s.lost > 0) return {GuaranteeClass::violation, approach.title + without + " lost output" + counts};
      const std::string cause = weak_on_arbitrary ? "arbitrary network" : "no determinants";
      return {GuaranteeClass::ok, s.verdict != "precise" ? "rollback expected (" + cause + ")" : ""};
    }
    case RecoveryType::precise:
      if (weak_on_arbitrary) {
        if (s.lost > 0) return {GuaranteeClass::violation, approach.title + " lost output" + counts};
        if (s.verdict != "precise")
          return {GuaranteeClass::violation, approach.title + " on a deterministic network gave " + s.verdict + counts};
        return {GuaranteeClass::ok, ""};
      }
      if (s.verdict != "precise") return {GuaranteeClass::violation, approach.title + " gave " + s.verdict + counts};
      return {GuaranteeClass::ok, ""};
  }
  return {GuaranteeClass::ok, ""};
}

}  // namespace hapair
