#include "primary/primary_role.h"

#include <algorithm>
#include <type_traits>

#include "upstream_backup/level1_round.h"

namespace hapair {

PrimaryRole::PrimaryRole(Server& server, PrimaryOptions options) : server_(server), options_(options) {
  generation_ = options_.first_generation - 1;
}

void PrimaryRole::on_start(TimeUs now, Effects& eff) {
  server_.set_role(Role::primary);
  const PlanFragment& f = server_.fragment_plan();
  // The original primary heartbeats its standby; a primary that took over has no live partner.
  if (!options_.took_over && f.standby != kNoNode) {
    heartbeat_to_ = f.standby;
    next_heartbeat_us_ = now;
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
        } else if constexpr (std::is_same_v<T, CheckpointAck>) {
          if (checkpoints_ && from == heartbeat_to_) checkpoints_->on_ack(now, m, eff);
          else server_.count("unexpected_checkpoint_ack_dropped");
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
  if (acked == last_round_acked_ && processed == last_round_processed_) return;
  if (server_.mode() == HaMode::passive) {
    ++generation_;
    for (const auto& [s, done] : processed) {
      const FragmentId producer = server_.inputs().at(s).producer;
      for (NodeId n : server_.input_nodes_of(producer)) server_.send(eff, now, n, Level1Ack{s, done, generation_, {}});
    }
    last_round_acked_ = acked;
    last_round_processed_ = processed;
    return;
  }
  Level1Round round;
  if (server_.settings().trimming == TrimmingRule::conservative) {
    std::map<StreamId, TupleId> horizon;
    for (const auto& [s, in] : server_.inputs()) horizon[s] = in.beyond_horizon;
    round = make_conservative_level1_round(horizon);
  } else {
    round = make_level1_round(*fragment, acked, processed);
  }
  ++generation_;
  for (const auto& [s, up_to] : round.up_to) {
    const FragmentId producer = server_.inputs().at(s).producer;
    for (NodeId n : server_.input_nodes_of(producer))
      server_.send(eff, now, n, Level1Ack{s, up_to, generation_, round.restart_point});
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
  t = std::min(t, next_retransmit_us_);
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
