#include "upstream_backup/spare_role.h"

#include <algorithm>
#include <type_traits>

#include "primary/takeover.h"
#include "primary/primary_role.h"
#include "upstream_backup/approaches.h"
#include "upstream_backup/forwarded_points.h"
#include "retention/restart_point_store.h"
#include "protocols/check.h"

namespace hapair {

void SpareRole::on_start(TimeUs now, Effects& eff) {
  watch_.start(now);
  server_.trace(eff, now, TraceKind::start).with(TraceKey::role, Role::spare).with(TraceKey::ha, server_.node().mode());
}

void SpareRole::on_tick(TimeUs now, Effects& eff) {
  watch_primary(now, eff, !collecting_);
  if (collecting_ && now >= next_offer_request_us_) {
    // An offer, or our Takeover, was lost: announce again to the producers that have not
    // answered (a repeated Takeover makes them send their restart points again).
    for (const auto& [s, in] : server_.inputs()) {
      if (offers_.count(s)) continue;
      const Route& r = server_.routes().route(server_.node().fragment_id());
      server_.send(eff, now, server_.routes().route(in.producer()).primary,
                   Takeover{server_.node().fragment_id(), server_.node().self(), r.epoch, r.standbys, r.mode});
      server_.count("restart_point_requests_repeated");
    }
    next_offer_request_us_ = now + server_.node().retransmit_us();
  }
  if (collecting_) server_.retransmit(now, eff);
}

void SpareRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  const NodeId from = env.header.sender;
  if (!collecting_) watch_.heard_from(from, now);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Takeover>) {
          if (collecting_ && m.fragment != server_.node().fragment_id()) {
            on_takeover_while_collecting(now, m, eff);
          } else if (collecting_) {
            if (m.epoch == server_.routes().epoch() && m.new_primary != server_.node().self()) epoch_tie_seen_ = true;
            if (m.epoch == server_.routes().epoch() && m.new_primary == failed_primary_ && failed_primary_ != kNoNode) {
              renew_claim_over_failed_primary(now, m, eff);
              return;
            }
            if (server_.on_takeover(now, m, eff)) {
              // A newer epoch of my fragment names another primary while I collect restart
              // points: my takeover was superseded (my primary had dissolved the pair without me
              // and renewed its claim). Stop, and rejoin.
              server_.trace(eff, now, TraceKind::fenced)
                  .with(TraceKey::fragment_primary, m.new_primary)
                  .with(TraceKey::epoch, m.epoch)
                  .with(TraceKey::claim_lost, false);
              collecting_ = false;
              successor_ = std::make_unique<FencedRole>(server_);
            }
          } else if (auto next = standby_learns_takeover(server_, now, m, eff)) {
            successor_ = std::move(next);
          }
        } else if constexpr (std::is_same_v<T, Heartbeat>) {
        } else if constexpr (std::is_same_v<T, RestartPoints>) {
          if (!collecting_) {
            server_.count("unexpected_restart_points_dropped");
            return;
          }
          auto in = server_.inputs().find(m.stream);
          if (in == server_.inputs().end() || from != server_.routes().route(in->second.producer()).primary) {
            server_.count("unexpected_restart_points_dropped");
            return;
          }
          offers_[m.stream] = m;
          HAPAIR_CHECK_MSG(offers_.size() <= server_.inputs().size(),
                           offers_.size() << " offers for " << server_.inputs().size() << " inputs");
          if (offers_.size() == server_.inputs().size()) finish_upstream_backup_takeover(now, eff);
        } else if constexpr (std::is_same_v<T, ReplayRequest>) {
          if (collecting_) server_.outputs().on_replay_request(now, from, m, eff);
          else server_.count("unexpected_replay_request_dropped");
        } else if constexpr (std::is_same_v<T, Level0Ack>) {
          server_.outputs().on_level0_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, Level1Ack>) {
          server_.outputs().on_level1_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, Rejoin>) {
          on_rejoin_while_collecting(now, from, m, eff);
        } else {
          server_.count(std::string("unexpected_") + message_kind_name(env.body) + "_dropped");
        }
      },
      env.body);
}

void SpareRole::on_takeover_while_collecting(TimeUs now, const Takeover& t, Effects& eff) {
  HAPAIR_CHECK(collecting_);
  // Until my own restart point is chosen I hold nothing a neighbour's recovery could use: no
  // restart points for a downstream recovery node (they come with mine from my upstream), no
  // input positions for an upstream one. Learn the route now, answer once I have restarted.
  server_.on_takeover(now, t, eff, false);
  // Stale or malformed: counted by on_takeover. A fragment outside the plan has no route to
  // compare with (found by envelope_fuzz: reading it fired RouteTable's range check).
  if (t.fragment >= server_.node().plan().fragments.size()) return;
  const Route& r = server_.routes().route(t.fragment);
  if (r.epoch != t.epoch || r.primary != t.new_primary) return;
  bool upstream = false;
  for (const auto& [s, in] : server_.inputs()) {
    if (in.producer() != t.fragment) continue;
    // An upstream fragment moved while I collect: its old primary's offer names a queue that
    // is gone. Ask the new primary (which answers when it has restarted itself).
    upstream = true;
    offers_.erase(s);
  }
  if (upstream) {
    const Route& mine = server_.routes().route(server_.node().fragment_id());
    server_.send(eff, now, t.new_primary,
                 Takeover{server_.node().fragment_id(), server_.node().self(), mine.epoch, mine.standbys, mine.mode});
    server_.count("restart_point_requests_repeated");
    return;
  }
  deferred_takeovers_[t.fragment] = t;
  server_.count("takeover_answers_deferred");
}

void SpareRole::on_rejoin_while_collecting(TimeUs now, NodeId from, const Rejoin& r, Effects& eff) {
  const FragmentId own = server_.node().fragment_id();
  const PlanFragment& f = server_.node().fragment_plan();
  const NodeId partner = f.plan_partner(server_.node().self());
  // My old primary dissolved the pair without me in the epoch I then claimed; some neighbours
  // follow its claim (they heard it first) and so never send me their restart points, and it
  // lost to mine (it rejoins). Until I have restarted I cannot take it as my standby: a newer
  // epoch of my own brings those neighbours over, as a primary's renewed claim does
  // (PrimaryRole::on_competing_claim). Its later requests are answered once I am primary.
  if (!collecting_ || !epoch_tie_seen_ || partner == kNoNode || from != partner || r.node != from || r.fragment != own) {
    server_.count("unexpected_rejoin_dropped");
    return;
  }
  epoch_tie_seen_ = false;
  server_.pair().renew_claim();
  server_.pair().announce_takeover(now, eff, from);
  next_offer_request_us_ = now + server_.node().retransmit_us();
  server_.count("epoch_claims_renewed");
  server_.trace(eff, now, TraceKind::claim_renewed).with(TraceKey::epoch, server_.routes().epoch()).with(TraceKey::over, from);
}

void SpareRole::renew_claim_over_failed_primary(TimeUs now, const Takeover& t, Effects& eff) {
  HAPAIR_CHECK(collecting_ && t.new_primary == failed_primary_);
  // Chaos case 247 (real processes, seed 1): paused through its primary's live switch, I found
  // the primary dead at my resume before I read the switch's announcement, and claimed the epoch
  // the switch had opened; the neighbours followed the primary's claim of it and never answered
  // mine. That claim is of the node I found failed: no one serves it any more, so mine is
  // renewed in a newer epoch that brings them over (as for a rejoining old primary, below).
  server_.count("epoch_claims_renewed_over_failed_primary");
  server_.pair().renew_claim();
  server_.pair().announce_takeover(now, eff, failed_primary_);
  next_offer_request_us_ = now + server_.node().retransmit_us();
  server_.trace(eff, now, TraceKind::claim_renewed).with(TraceKey::epoch, server_.routes().epoch()).with(TraceKey::over, t.new_primary);
}

void SpareRole::primary_failed(TimeUs now, Effects& eff, Detector detector) {
  if (collecting_) return;  // taking over already
  // At most once: a spare that took over (or was fenced) has a successor and is watched no more.
  HAPAIR_CHECK_MSG(!successor_ && offers_.empty() && deferred_takeovers_.empty(),
                   "spare " << server_.node().self() << " takes over again (" << offers_.size() << " offers held)");
  failed_primary_ = begin_takeover(server_, now, eff, watch_.silence_us(now, detector), detector);
  // The new epoch is announced (begin_takeover) before any replay or restart points are asked for.
  HAPAIR_CHECK_MSG(server_.role() == Role::primary &&
                       server_.routes().route(server_.node().fragment_id()).primary == server_.node().self(),
                   "spare " << server_.node().self() << " takes over as role " << static_cast<int>(server_.role()));
  if (server_.node().mode() == HaMode::upstream) {
    // Every upstream answers the Takeover with the restart points it holds for this fragment.
    collecting_ = true;
    next_offer_request_us_ = now + server_.node().retransmit_us();
    return;
  }
  // Amnesia: start from empty state; upstreams send only tuples that are new from now on.
  server_.workload().reset();
  std::map<StreamId, TupleId> after;
  for (const auto& [s, in] : server_.inputs()) after[s] = kReplayOnlyNew;
  server_.inputs().request_replay(now, eff, after, 0);
  server_.trace(eff, now, TraceKind::takeover)
      .with(TraceKey::ha, HaMode::amnesia)
      .with(TraceKey::exact_ids, false)
      .with_text("state=empty");
  PrimaryOptions options;
  options.took_over = true;
  options.rebase_when_consumers_ready = true;
  successor_ = std::make_unique<PrimaryRole>(server_, options, make_stateless_primary_side(server_, options));
}

void SpareRole::finish_upstream_backup_takeover(TimeUs now, Effects& eff) {
  // Nothing is processed until every upstream offered its restart points, one offer per input
  // stream; and I am still my fragment's primary (a newer claim would have fenced me).
  HAPAIR_CHECK_MSG(collecting_ && offers_.size() == server_.inputs().size(),
                   "spare restarts with " << offers_.size() << " offers for " << server_.inputs().size() << " inputs");
  for (const auto& [s, o] : offers_)
    HAPAIR_CHECK_MSG(o.stream == s && server_.inputs().find(s) != server_.inputs().end(), "offer for stream " << s);
  HAPAIR_CHECK_MSG(server_.role() == Role::primary &&
                       server_.routes().route(server_.node().fragment_id()).primary == server_.node().self(),
                   "spare " << server_.node().self() << " restarts as role " << static_cast<int>(server_.role()));
  std::vector<RestartPoints> offers;
  std::uint64_t newest = 0;
  for (const auto& [s, o] : offers_) {
    offers.push_back(o);
    for (const auto& p : o.points) newest = std::max(newest, p.generation);
  }
  if (continue_live_copy(now, eff, offers, newest)) return;
  // A copy kept across a live switch that does not take over: restart as an empty spare would.
  server_.inputs().reset_for_standby();
  server_.outputs().clear_logs();
  server_.workload().reset();
  std::map<StreamId, TupleId> after;
  std::uint64_t generation = 0;
  std::string how;
  const bool conservative = server_.node().settings().trimming == TrimmingRule::conservative;
  bool restarted_from_point = false;  // its operators restarted, its queues' starts installed
  if (conservative) {
    // No cause functions: restart from empty state at the oldest retained tuple of every input.
    how = "restart=from_retained_start(conservative)";
  } else if (auto g = choose_generation(offers)) {
    generation = *g;
    const auto point = find_generation(offers, generation);
    HAPAIR_CHECK_MSG(point.has_value(), "generation " << generation << " chosen but not found in the offers");
    auto positions = Fragment::replay_positions(point->restart_point);
    bool restarted = false;
    if (positions)
      server_.workload().act_on_fragment(
          [&](Fragment& f, FragmentOutputs&) { restarted = f.restart_from(point->restart_point); });
    if (!restarted) {
      server_.count("corrupt_restart_point");
      server_.workload().reset();
      positions.reset();
      generation = 0;
    } else if (!install_downstream_restart_points(server_, point->forwarded)) {
      // The point does not say where my output queues begin once regenerated, so I could not
      // tell a downstream recovery node what I hold: restart as if there were no point.
      server_.count("restart_point_without_trim_positions");
      server_.workload().reset();
      positions.reset();
      generation = 0;
    }
    if (positions) {
      restarted_from_point = true;
      after = *positions;
      how = "restart_generation=" + std::to_string(generation);
      for (const auto& f : point->forwarded)
        if (!f.points.empty())
          how += " downstream_points=" + server_.node().plan().fragments[f.consumer].name + ":" + std::to_string(f.points.size());
    }
  }
  for (const auto& [s, o] : offers_) {
    if (!after.count(s)) after[s] = o.trimmed_up_to;
    if (after[s] < o.trimmed_up_to) {
      // The upstream no longer holds what the restart point needs: a gap we cannot avoid.
      server_.count("replay_gap_tuples", Outbox::tuples_between(after[s], o.trimmed_up_to));
      server_.trace(eff, now, TraceKind::replay_gap)
          .with(TraceKey::stream, s)
          .with(TraceKey::after_id, after[s])
          .with(TraceKey::position, o.trimmed_up_to)
          .with_text("the restart point needs input the upstream trimmed");
      after[s] = o.trimmed_up_to;
    }
  }
  // The replay asked for starts nowhere below what an upstream still holds, on every input.
  HAPAIR_CHECK_MSG(after.size() == offers_.size(), "replay asked on " << after.size() << " of " << offers_.size() << " inputs");
  for (const auto& [s, o] : offers_)
    HAPAIR_CHECK_MSG(after.at(s) >= o.trimmed_up_to,
                     "replay of stream " << s << " after " << after.at(s) << " below its start " << o.trimmed_up_to);
  bool trimmed = false;
  for (const auto& [s, o] : offers_) trimmed |= o.trimmed_up_to > 0;
  const bool without_point = !conservative && how.empty() && trimmed;
  if (how.empty()) how = "restart=from_retained_start";
  if (without_point) {
    // Upstreams trimmed, yet none holds a restart point: the output ids that the retained input
    // regenerates are unknown. Number above what consumers accepted (never drop new output as
    // duplicates), and say so: this recovery cannot be precise.
    std::string held;
    for (const auto& [s, o] : offers_) {
      held += " " + server_.node().plan().streams[s].name + "=[";
      for (std::size_t i = 0; i < o.points.size(); ++i) held += (i ? "," : "") + std::to_string(o.points[i].generation);
      held += "]";
    }
    server_.count("restart_point_missing");
    server_.trace(eff, now, TraceKind::replay_gap).with_text("no restart point in common: output ids rebased; generations held:" + held);
  }
  server_.inputs().request_replay(now, eff, after, generation);
  HAPAIR_CHECK_MSG(server_.workload().fragment() != nullptr, "spare " << server_.node().self() << " restarts no operators");
  // A repeatable fragment's operators keep their input's ids (Filter, Map, Project, Lookup), so
  // a replay from any retained start regenerates the very ids its consumers saw: exact under
  // either trimming rule. Rebasing them instead would hand a stateful consumer the same tuples
  // under new ids, counted twice.
  const OperatorClass klass = server_.workload().fragment()->klass();
  const bool keeps_input_ids = klass == OperatorClass::repeatable;
  const bool exact = keeps_input_ids || (!conservative && !without_point && klass != OperatorClass::arbitrary);
  // Exact ids only from a restart point whose output positions were installed, from the very
  // start (nothing trimmed anywhere: the ids begin where the stream began), or from operators
  // whose output ids are their input's.
  HAPAIR_CHECK_MSG(!exact || restarted_from_point || !trimmed || keeps_input_ids, "exact ids claimed without a restart point");
  server_.trace(eff, now, TraceKind::takeover)
      .with(TraceKey::ha, server_.node().mode())
      .with(TraceKey::exact_ids, exact)
      .with(TraceKey::generation, generation)
      .with_text(how);
  PrimaryOptions options;
  options.took_over = true;
  options.rebase_when_consumers_ready = !exact;
  options.first_generation = newest + 1;
  collecting_ = false;
  // The downstream recovery nodes that asked while I collected get my answer now: the restart
  // points that came with mine, and where my queues begin.
  for (const auto& [f, t] : deferred_takeovers_) server_.on_takeover(now, t, eff);
  deferred_takeovers_.clear();
  successor_ = std::make_unique<PrimaryRole>(server_, options, make_level1_sender(server_, options));
}

bool SpareRole::continue_live_copy(TimeUs now, Effects& eff, const std::vector<RestartPoints>& offers, std::uint64_t newest) {
  const Fragment* fragment = server_.workload().fragment();
  // Only a copy left by the standby role a live switch replaced (it accepted input, or a
  // checkpoint installed says it did): a spare's own fragment is empty.
  bool holds_copy = server_.workload().operator_work_done() > 0;
  for (const auto& [s, in] : server_.inputs()) holds_copy = holds_copy || in.last_accepted() > 0;
  if (fragment == nullptr || !holds_copy || server_.node().settings().trimming == TrimmingRule::conservative) return false;
  // The restart point every upstream holds, and whether its input is all still there.
  bool point_restarts = false;
  if (auto g = choose_generation(offers))
    if (const auto point = find_generation(offers, *g))
      if (const auto positions = Fragment::replay_positions(point->restart_point)) {
        point_restarts = true;
        for (const auto& [s, o] : offers_)
          if (auto it = positions->find(s); it == positions->end() || it->second < o.trimmed_up_to) point_restarts = false;
      }
  if (point_restarts) return false;
  // The copy (an active standby's live one, or a passive standby's last checkpoint, kept across a
  // live switch) has accepted at least what every upstream trimmed: its replay after what it
  // accepted is all there.
  for (const auto& [s, o] : offers_)
    if (server_.inputs().at(s).last_accepted() < o.trimmed_up_to) return false;
  server_.count("takeovers_from_live_copy");
  server_.inputs().request_replay(now, eff, {}, 0);
  server_.trace(eff, now, TraceKind::takeover)
      .with(TraceKey::ha, server_.node().mode())
      .with(TraceKey::exact_ids, fragment->klass() != OperatorClass::arbitrary)
      .with_text("from the live copy kept across a live switch: the restart point needs input upstream trimmed");
  PrimaryOptions options;
  options.took_over = true;
  options.rebase_when_consumers_ready = fragment->klass() == OperatorClass::arbitrary;
  options.first_generation = newest + 1;
  collecting_ = false;
  for (const auto& [f, t] : deferred_takeovers_) server_.on_takeover(now, t, eff);
  deferred_takeovers_.clear();
  successor_ = std::make_unique<PrimaryRole>(server_, options, make_level1_sender(server_, options));
  return true;
}

namespace {

std::unique_ptr<RoleBehaviour> make_spare_role(Server& server, bool /*rejoined*/) {
  return std::make_unique<SpareRole>(server);
}

}  // namespace

Approach upstream_backup_approach() { return Approach{HaMode::upstream, &make_level1_sender, &make_spare_role}; }
Approach amnesia_approach() { return Approach{HaMode::amnesia, &make_stateless_primary_side, &make_spare_role}; }

TimeUs SpareRole::next_wakeup_us() const {
  if (successor_) return kNever;
  if (collecting_) return std::min(next_offer_request_us_, watch_.next_heartbeat_us());
  return watch_.next_wakeup_us();
}

}  // namespace hapair
