#include "hybrid/hybrid_standby_role.h"

#include <algorithm>
#include <type_traits>

#include "hybrid/approaches.h"
#include "primary/checkpoint_state.h"
#include "primary/primary_role.h"
#include "primary/takeover.h"
#include "protocols/check.h"

namespace hapair {

void HybridStandbyRole::on_start(TimeUs now, Effects& eff) {
  watch_.start(now);
  server_.trace(eff, now, TraceKind::start).with(TraceKey::role, Role::passive_backup).with(TraceKey::ha, server_.node().mode());
}

void HybridStandbyRole::on_tick(TimeUs now, Effects& eff) {
  const std::size_t sends_before = eff.sends.size();
  if (watch_primary(now, eff)) return;
  if (live_) {
    server_.workload().run(now, eff);
    server_.inputs().send_level0_acks(now, eff, false);
    next_retransmit_us_ = server_.retransmit(now, eff);
  }
  check_no_output_sent(eff, sends_before);
}

void HybridStandbyRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  if (on_election_message(now, env, eff)) return;
  const std::size_t sends_before = eff.sends.size();
  const NodeId from = env.header.sender;
  const bool from_primary = watch_.heard_from(from, now);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Checkpoint>) {
          if (!from_primary) {
            server_.count("unexpected_checkpoint_dropped");
          } else if (m.checkpoint_id >= kHybridBootstrapIdFirst) {
            on_bootstrap_chunk(now, from, m, eff);
          } else if (checkpoints_.on_chunk(server_, now, from, m, eff) != 0) {
            if (!holds_takeover_state()) first_state_installed();
            awaiting_first_checkpoint_ = false;
            if (live_) trim_live_log();
          }
        } else if constexpr (std::is_same_v<T, TupleBatch>) {
          // Input redirected to me while I am active; before my current primary's bootstrap is
          // installed it is dropped (asked for again, a gap, once it is): a new primary's
          // redirection starts after its bootstrap's positions, not after my old live copy's.
          if (live_ && live_input_open_) server_.inputs().accept_batch(now, from, m, eff);
          else server_.count(live_ ? "hybrid_stale_live_batches_dropped" : "hybrid_passive_batches_dropped");
        } else if constexpr (std::is_same_v<T, Takeover>) {
          if (auto next = learn_takeover(now, m, eff)) successor_ = std::move(next);
        } else if constexpr (std::is_same_v<T, Heartbeat>) {
        } else {
          server_.count(std::string("unexpected_") + message_kind_name(env.body) + "_dropped");
        }
      },
      env.body);
  if (live_ && !successor_) {
    server_.workload().run(now, eff);
    server_.inputs().send_level0_acks(now, eff, false);
  }
  check_no_output_sent(eff, sends_before);
}

void HybridStandbyRole::on_bootstrap_chunk(TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff) {
  auto payload = bootstrap_.add(chunk);
  if (!payload) return;
  auto content = parse_checkpoint(*payload);
  if (!content || content->delta) {
    server_.count("corrupt_checkpoint_dropped");
    return;
  }
  // What an earlier live copy still had queued is not this state's input (nor what a live
  // switch's predecessor kept in the node).
  if (!holds_takeover_state()) first_state_installed();
  server_.inputs().reset_for_standby();
  if (!install_checkpoint(server_, *content)) {
    live_ = false;
    server_.set_role(Role::passive_backup);
    server_.count("corrupt_checkpoint_dropped");
    return;
  }
  // My consumers' acknowledgements go to my primary: I keep my log and send nothing.
  server_.outputs().track_consumers_without_sending();
  // An active standby from now on: the node processes the redirected input (a passive standby's
  // node queues it and processes nothing).
  server_.set_role(Role::active_backup);  // traced as a role event at the end of the event
  live_ = true;
  live_input_open_ = true;
  trim_live_log();
  server_.count("hybrid_bootstraps_installed");
  server_.trace(eff, now, TraceKind::bootstrap_installed).with(TraceKey::checkpoint, content->id);
  server_.send(eff, now, from, CheckpointAck{content->id});
}

void HybridStandbyRole::trim_live_log() {
  const InstalledCheckpoint& c = checkpoints_.installed();
  if (c.id == 0) return;
  for (const CheckpointOutput& o : c.full.outputs) server_.outputs().trim_log_up_to(o.stream, o.trimmed_up_to);
}

bool HybridStandbyRole::live_is_ahead() const {
  if (!live_) return false;
  const InstalledCheckpoint& c = checkpoints_.installed();
  for (const CheckpointInput& in : c.full.inputs) {
    if (in.eos_processed && !server_.inputs().at(in.stream).eos_processed()) return false;
    if (server_.inputs().at(in.stream).last_accepted() < in.processed) return false;
  }
  return true;
}

void HybridStandbyRole::leave_copy_in_node() {
  if (live_is_ahead() || checkpoints_.installed().id == 0) return;
  std::string how;
  server_.inputs().reset_for_standby();
  checkpoints_.install_into(server_, how);
  server_.count("checkpoint_left_in_node");
}

void HybridStandbyRole::primary_failed(TimeUs now, Effects& eff, Detector detector) {
  HAPAIR_CHECK_MSG(!successor_, "hybrid standby " << server_.node().self() << " takes over twice");
  if (awaiting_first_checkpoint_ && !live_) {
    // Rejoined, and neither a checkpoint nor a bootstrap of the new pair arrived (as a passive
    // standby, PassiveStandbyRole::primary_failed).
    cannot_take_over(now, eff, detector, "takeover_impossible_before_first_checkpoint",
                     "no checkpoint since rejoining: cannot take over");
    return;
  }
  const bool live = live_is_ahead();
  begin_takeover(server_, now, eff, watch_.silence_us(now, detector), detector, followers());
  std::string how = "from its live state";
  std::uint64_t installed = 0;
  if (!live) {
    // A live copy that lags the checkpoint: its queued input is not the checkpoint's.
    if (live_) server_.inputs().reset_for_standby();
    installed = checkpoints_.install_into(server_, how);
  }
  // Re-send after what my state has accepted (live) or processed (the checkpoint).
  server_.inputs().request_replay(now, eff, {}, 0);
  server_.trace(eff, now, TraceKind::takeover)
      .with(TraceKey::ha, server_.node().mode())
      .with(TraceKey::exact_ids, true)
      .with(TraceKey::checkpoint, installed)
      .with_text(how);
  PrimaryOptions options;
  options.took_over = true;
  successor_ = std::make_unique<PrimaryRole>(server_, options, make_hybrid_primary_side(server_, options));
  HAPAIR_CHECK(server_.role() == Role::primary);
}

void HybridStandbyRole::on_followed(TimeUs /*now*/, Effects& /*eff*/) {
  // Chaos case 7373 of seed 1 (10,000 runs): the winner's first bootstrap had the id the old
  // primary's had, so my assembler took it for a repeat and dropped it, while the producers, asked
  // to send me input after the winner's bootstrap, filled my old live copy's hole with a gap (they
  // had trimmed it); I then took over with that copy and lost output.
  bootstrap_ = CheckpointAssembler{};
  if (live_ && live_input_open_) server_.count("hybrid_live_input_closed_on_follow");
  live_input_open_ = false;
}

std::uint64_t HybridStandbyRole::election_position() const {
  std::uint64_t processed = 0;
  if (live_is_ahead()) {
    for (const auto& [s, in] : server_.inputs()) processed += in.processed();
  } else {
    for (const CheckpointInput& in : checkpoints_.installed().full.inputs) processed += in.processed;
  }
  return processed;
}

TimeUs HybridStandbyRole::next_wakeup_us() const {
  if (successor_) return kNever;
  TimeUs t = watch_wakeup_us();
  if (live_) t = std::min({t, server_.inputs().next_ack_due_us(), next_retransmit_us_});
  return t;
}

}  // namespace hapair
