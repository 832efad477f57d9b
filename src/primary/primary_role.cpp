#include "primary/primary_role.h"

#include <algorithm>
#include <type_traits>

#include "primary/checkpoint_state.h"
#include "upstream_backup/level1_round.h"

namespace hapair {

PrimaryRole::PrimaryRole(Server& server, PrimaryOptions options)
    : server_(server),
      options_(options),
      standby_detector_(us_from_ms(static_cast<double>(server.settings().failure_timeout_ms))) {
  generation_ = options_.first_generation - 1;
}

void PrimaryRole::on_start(TimeUs now, Effects& eff) {
  server_.set_role(Role::primary);
  const PlanFragment& f = server_.fragment_plan();
  // The original primary heartbeats its standby; a primary that took over has no live partner.
  if (!options_.took_over && f.standby != kNoNode) {
    heartbeat_to_ = f.standby;
    next_heartbeat_us_ = now;
    standby_detector_.start(now);
  }
  if (!server_.own_heartbeats()) {
    standby_detector_.disable();
    next_heartbeat_us_ = kNever;
  }
  const TimeUs ack_interval = us_from_ms(static_cast<double>(server_.settings().ack_interval_ms));
  const bool has_live_standby = heartbeat_to_ != kNoNode;
  if (server_.kind() == FragmentKind::operators) {
    if (server_.mode() == HaMode::passive && has_live_standby) {
      checkpoints_.emplace(server_, heartbeat_to_);
      checkpoints_->on_start(now);
    }
    if (server_.mode() == HaMode::active && has_live_standby && server_.settings().determinants &&
        server_.fragment()->is_nondeterministic()) {
      determinants_.emplace(server_, heartbeat_to_);
      determinants_->on_start();
    }
    // Upstream backup sends level-1 rounds; a passive primary without a live standby (after a
    // takeover) has nothing to checkpoint to, and acknowledges what it processed directly so
    // upstream queues stay bounded.
    if (server_.mode() == HaMode::upstream || (server_.mode() == HaMode::passive && !checkpoints_))
      next_level1_us_ = now + ack_interval;
  }
  if (server_.kind() == FragmentKind::operators) next_forget_us_ = now + ack_interval;
  if (server_.kind() == FragmentKind::source) next_source_us_ = now;
  if (options_.rebase_when_consumers_ready) {
    rebase_pending_ = true;
    server_.set_processing_paused(true);
    maybe_finish_rebase(now, eff);
  }
  if (!options_.took_over) server_.trace(eff, now, "start", std::string("role=primary ha=") + to_string(server_.mode()));
  on_tick(now, eff);
}

void PrimaryRole::on_tick(TimeUs now, Effects& eff) {
  if (heartbeat_to_ != kNoNode && standby_detector_.check(now)) standby_suspected(now, eff, Detector::heartbeat);
  if (now >= next_heartbeat_us_) {
    server_.send(eff, now, heartbeat_to_, Heartbeat{static_cast<std::uint64_t>(now)});
    next_heartbeat_us_ = now + us_from_ms(static_cast<double>(server_.settings().heartbeat_interval_ms));
  }
  if (checkpoints_) checkpoints_->on_tick(now, eff);
  if (now >= next_level1_us_) {
    level1_round(now, eff);
    next_level1_us_ = now + us_from_ms(static_cast<double>(server_.settings().ack_interval_ms));
  }
  if (now >= next_forget_us_) {
    // Cause bookkeeping of outputs every consumer has acknowledged is never needed again.
    if (server_.mode() != HaMode::upstream && server_.fragment())
      server_.fragment()->forget_up_to(server_.acked_outputs_internal());
    next_forget_us_ = now + us_from_ms(static_cast<double>(server_.settings().ack_interval_ms));
  }
  after_event(now, eff);
}

void PrimaryRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  const NodeId from = env.header.sender;
  if (from == heartbeat_to_ && heartbeat_to_ != kNoNode) {
    if (standby_detector_.suspected()) server_.trace(eff, now, "standby_heard", "standby=" + server_.plan().nodes[from].name);
    standby_detector_.heard(now);
  }
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, TupleBatch>) {
          server_.accept_batch(now, from, m, eff);
        } else if constexpr (std::is_same_v<T, Level0Ack>) {
          server_.on_level0_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, Level1Ack>) {
          server_.on_level1_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, ReplayRequest>) {
          server_.on_replay_request(now, from, m, eff);
          maybe_finish_rebase(now, eff);
        } else if constexpr (std::is_same_v<T, Takeover>) {
          if (server_.on_takeover(now, m, eff)) {
            server_.trace(eff, now, "fenced",
                          "new_primary=" + server_.plan().nodes[m.new_primary].name + " epoch=" +
                              std::to_string(m.epoch));
            successor_ = std::make_unique<FencedRole>(server_);
          }
        } else if constexpr (std::is_same_v<T, Heartbeat>) {
          // A standby's heartbeat: nothing to do.
        } else if constexpr (std::is_same_v<T, Rejoin>) {
          on_rejoin(now, from, m, eff);
        } else if constexpr (std::is_same_v<T, CheckpointAck>) {
          if (checkpoints_ && from == heartbeat_to_) {
            checkpoints_->on_ack(now, m, eff);
          } else if (from == bootstrapping_standby_ && m.checkpoint_id == bootstrap_checkpoint_id_) {
            bootstrapping_standby_ = kNoNode;
            server_.trace(eff, now, "pair_restored", "standby=" + server_.plan().nodes[from].name + " bootstrap=active");
          } else {
            server_.count("unexpected_checkpoint_ack_dropped");
          }
        } else if constexpr (std::is_same_v<T, DeterminantAck>) {
          if (determinants_ && from == heartbeat_to_) determinants_->on_ack(m);
          else server_.count("unexpected_determinant_ack_dropped");
        } else {
          server_.count(std::string("unexpected_") + message_kind_name(env.body) + "_dropped");
        }
      },
      env.body);
  if (!successor_) after_event(now, eff);
}

void PrimaryRole::on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) {
  if (heartbeat_to_ == kNoNode || lost.peer != heartbeat_to_) return;
  standby_suspected(now, eff, lost.detector);
}

void PrimaryRole::standby_suspected(TimeUs now, Effects& eff, Detector detector) {
  server_.count("standby_suspected");
  server_.trace(eff, now, "standby_suspected",
                "standby=" + server_.plan().nodes[heartbeat_to_].name + " detector=" + to_string(detector) +
                    " (output that waits for it stays held)");
}

void PrimaryRole::on_rejoin(TimeUs now, NodeId from, const Rejoin& r, Effects& eff) {
  const PlanFragment& f = server_.fragment_plan();
  const NodeId other = server_.self() == f.primary ? f.standby : f.primary;
  if (r.fragment != server_.fragment_id() || r.node != from || from != other) {
    server_.count("unexpected_rejoin_dropped");
    return;
  }
  Route& route = server_.route_mut(server_.fragment_id());
  if (route.standby == from && r.incarnation == route.standby_incarnation) {
    // A repeated request: our answer was lost. Answer again.
    server_.send(eff, now, from, Takeover{server_.fragment_id(), server_.self(), route.epoch, from, r.incarnation});
    return;
  }
  if (route.standby == from) {
    // My standby restarted (a new incarnation asks): what it had is gone. Form the pair again,
    // in a new epoch, with fresh state for it.
    server_.count("standby_restarted");
    server_.trace(eff, now, "standby_restarted", "standby=" + server_.plan().nodes[from].name);
  } else if (route.standby != kNoNode) {
    server_.count("unexpected_rejoin_dropped");
    return;
  }
  // A new epoch names the pair: me as primary, the rejoined node as standby. The announcement
  // goes out before any state is captured, so upstream servers hold back trimming for the new
  // standby before the checkpoint position is fixed.
  server_.collect_merge_order();  // chosen in the epoch that ends here
  route.standby = from;
  route.standby_incarnation = r.incarnation;
  route.epoch += 1;
  server_.announce_takeover(now, eff, from);
  server_.send_routes_to(now, eff, from);
  heartbeat_to_ = from;
  next_heartbeat_us_ = server_.own_heartbeats() ? now : kNever;
  standby_detector_.start(now);
  server_.trace(eff, now, "rejoin_accepted",
                "standby=" + server_.plan().nodes[from].name + " epoch=" + std::to_string(route.epoch));
  if (server_.kind() != FragmentKind::operators) return;
  switch (server_.mode()) {
    case HaMode::passive:
      next_level1_us_ = kNever;  // level-1 acks come from acknowledged checkpoints again
      checkpoints_.emplace(server_, from, true);
      checkpoints_->on_start(now);
      checkpoints_->take_now(now, eff);
      break;
    case HaMode::active: {
      // Bootstrap: my full state now, then input from upstream after its input positions, then
      // the determinants of everything I do from here on.
      if (server_.fragment()->is_nondeterministic()) (void)server_.fragment()->take_determinants();
      CheckpointContent state = capture_checkpoint(server_, ++bootstrap_checkpoint_id_, nullptr);
      const Bytes payload = serialize_checkpoint(state);
      for (auto& c : chunk_checkpoint(state.id, false, 0, payload,
                                      static_cast<std::size_t>(server_.settings().checkpoint_chunk_bytes)))
        server_.send(eff, now, from, std::move(c));
      server_.count("bootstrap_checkpoint_bytes", static_cast<std::int64_t>(payload.size()));
      for (const auto& in : state.inputs) {
        const FragmentId producer = server_.inputs().at(in.stream).producer;
        server_.send(eff, now, server_.route(producer).primary, Redirect{in.stream, from, true, in.processed});
      }
      bootstrapping_standby_ = from;
      if (server_.settings().determinants && server_.fragment()->is_nondeterministic()) {
        determinants_.emplace(server_, from);
        determinants_->on_start();
      }
      break;
    }
    default:
      server_.trace(eff, now, "pair_restored", "standby=" + server_.plan().nodes[from].name + " (spare: no state)");
      break;
  }
}

void PrimaryRole::after_event(TimeUs now, Effects& eff) {
  if (server_.kind() == FragmentKind::source) next_source_us_ = server_.emit_source_tuples(now, eff);
  server_.process_input(now, eff);
  if (determinants_) determinants_->after_processing(now, eff);
  server_.pump_outputs(now, eff);
  server_.send_level0_acks(now, eff, false);
  next_retransmit_us_ = server_.retransmit(now, eff);
  if (determinants_) next_retransmit_us_ = std::min(next_retransmit_us_, determinants_->retransmit(now, eff));
  // Rewound consumers are re-sent at once.
  server_.pump_outputs(now, eff);
}

void PrimaryRole::level1_round(TimeUs now, Effects& eff) {
  Fragment* fragment = server_.fragment();
  if (!fragment || server_.processing_paused()) return;
  const auto acked = server_.acked_outputs_internal();
  std::map<StreamId, TupleId> processed;
  for (const auto& [s, in] : server_.inputs()) processed[s] = in.processed;
  if (server_.mode() == HaMode::passive) {
    if (acked == last_round_acked_ && processed == last_round_processed_) return;
    ++generation_;
    for (const auto& [s, done] : processed) {
      const FragmentId producer = server_.inputs().at(s).producer;
      for (NodeId n : server_.input_nodes_of(producer)) server_.send(eff, now, n, Level1Ack{s, done, generation_, {}});
    }
    last_round_acked_ = acked;
    last_round_processed_ = processed;
    return;
  }
  const bool exact_trimming =
      server_.mode() == HaMode::upstream && server_.settings().trimming != TrimmingRule::conservative;
  if (exact_trimming && !generation_acks_.empty()) {
    bool lagging = false;
    for (const auto& [s, ack] : generation_acks_) lagging |= server_.inputs().at(s).held_generation < ack.generation;
    if (lagging) {
      // Every round: a lagging upstream may be a new primary that holds none of our restart
      // points yet, and until it does a failure of this fragment could not be recovered.
      server_.count("level1_rounds_held");
      for (const auto& [s, ack] : generation_acks_) {
        if (server_.inputs().at(s).held_generation >= ack.generation) continue;
        const FragmentId producer = server_.inputs().at(s).producer;
        for (NodeId n : server_.input_nodes_of(producer)) server_.send(eff, now, n, ack);
        server_.count("level1_acks_repeated");
      }
      fragment->forget_up_to(acked);
      return;
    }
  }
  if (acked == last_round_acked_ && processed == last_round_processed_) return;
  Level1Round round;
  if (server_.settings().trimming == TrimmingRule::conservative) {
    std::map<StreamId, TupleId> horizon;
    for (const auto& [s, in] : server_.inputs()) horizon[s] = in.beyond_horizon;
    round = make_conservative_level1_round(horizon);
  } else {
    round = make_level1_round(*fragment, acked, processed);
  }
  ++generation_;
  generation_acks_.clear();
  for (const auto& [s, up_to] : round.up_to) {
    const FragmentId producer = server_.inputs().at(s).producer;
    const Level1Ack ack{s, up_to, generation_, round.restart_point};
    if (exact_trimming) generation_acks_[s] = ack;
    for (NodeId n : server_.input_nodes_of(producer)) server_.send(eff, now, n, ack);
  }
  fragment->forget_up_to(acked);
  last_round_acked_ = acked;
  last_round_processed_ = processed;
  server_.count("level1_rounds");
}

void PrimaryRole::maybe_finish_rebase(TimeUs now, Effects& eff) {
  if (!rebase_pending_ || !server_.all_consumers_ready()) return;
  server_.rebase_outputs();
  rebase_pending_ = false;
  server_.set_processing_paused(false);
  server_.trace(eff, now, "rebased", "output ids continue above what consumers accepted");
}

TimeUs PrimaryRole::next_wakeup_us() const {
  TimeUs t = std::min({next_heartbeat_us_, next_level1_us_, next_source_us_, next_forget_us_,
                       server_.next_ack_due_us()});
  if (checkpoints_) t = std::min(t, checkpoints_->next_due_us());
  t = std::min({t, next_retransmit_us_, standby_detector_.deadline_us()});
  return t;
}

void FencedRole::on_start(TimeUs now, Effects& eff) {
  server_.set_role(Role::fenced);
  server_.count("fenced");
  (void)now;
  (void)eff;
}

void FencedRole::on_message(TimeUs, const Envelope&, Effects&) { server_.count("fenced_dropped"); }

}  // namespace hapair
