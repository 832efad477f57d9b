#include "backup/active_standby_role.h"

#include <algorithm>
#include <type_traits>

#include "primary/takeover.h"
#include "primary/checkpoint_state.h"
#include "backup/approaches.h"
#include "primary/primary_role.h"

namespace hapair {

ActiveStandbyRole::ActiveStandbyRole(Server& server, bool bootstrapping)
    : server_(server),
      watch_(server),
      bootstrapping_(bootstrapping) {}

void ActiveStandbyRole::on_start(TimeUs now, Effects& eff) {
  watch_.start(now);
  server_.trace(eff, now, TraceKind::start)
      .with(TraceKey::role, Role::active_backup)
      .with(TraceKey::ha, HaMode::active)
      .with(TraceKey::determinants, server_.node().settings().determinants);
}

void ActiveStandbyRole::on_tick(TimeUs now, Effects& eff) {
  if (!successor_) watch_.send_heartbeat(now, eff);
  if (!successor_ && watch_.check(now, eff)) {
    if (bootstrapping_) {
      // The primary died before this standby had its state: nothing to take over with.
      server_.count("takeover_impossible_while_bootstrapping");
      server_.trace(eff, now, TraceKind::detection)
          .with(TraceKey::failed, server_.routes().route(server_.node().fragment_id()).primary)
          .with(TraceKey::detector, Detector::heartbeat)
          .with(TraceKey::silent_us, now - watch_.last_heard_us())
          .with_text("not bootstrapped: cannot take over");
      return;
    }
    take_over(now, eff, Detector::heartbeat);
    return;
  }
  server_.process_input(now, eff);
  server_.send_level0_acks(now, eff, false);
  next_retransmit_us_ = server_.retransmit(now, eff);
}

void ActiveStandbyRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  const NodeId from = env.header.sender;
  const bool from_primary = watch_.heard_from(from, now);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if (bootstrapping_ && !std::is_same_v<T, Checkpoint> && !std::is_same_v<T, Takeover> &&
            !std::is_same_v<T, Heartbeat>) {
          // Nothing applies before the primary's state is installed; what is dropped here is
          // asked for again (a gap) once it is.
          server_.count("bootstrapping_dropped");
          return;
        }
        if constexpr (std::is_same_v<T, Checkpoint>) {
          if (from_primary && bootstrapping_) on_bootstrap_chunk(now, from, m, eff);
          else server_.count("unexpected_checkpoint_dropped");
        } else if constexpr (std::is_same_v<T, TupleBatch>) {
          server_.accept_batch(now, from, m, eff);
        } else if constexpr (std::is_same_v<T, Determinants>) {
          if (!from_primary) {
            server_.count("unexpected_determinants_dropped");
            return;
          }
          // Acknowledge what is applied, cumulatively: records after a lost batch are not applied
          // (the primary re-sends from the gap), so acknowledging them would release output this
          // copy cannot reproduce.
          const std::uint64_t applied = server_.apply_determinants(m);
          if (applied > 0) server_.send(eff, now, from, DeterminantAck{m.op_index, applied});
        } else if constexpr (std::is_same_v<T, Level0Ack>) {
          server_.on_level0_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, Level1Ack>) {
          server_.on_level1_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, Redirect>) {
          // A consumer's primary subscribes its rejoined standby: I track it, as my primary sends.
          server_.on_redirect(now, from, m, eff);
        } else if constexpr (std::is_same_v<T, Takeover>) {
          if (auto next = standby_learns_takeover(server_, now, m, eff, !bootstrapping_)) successor_ = std::move(next);
        } else if constexpr (std::is_same_v<T, Heartbeat>) {
        } else {
          server_.count(std::string("unexpected_") + message_kind_name(env.body) + "_dropped");
        }
      },
      env.body);
  server_.process_input(now, eff);
  server_.send_level0_acks(now, eff, false);
}

void ActiveStandbyRole::on_bootstrap_chunk(TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff) {
  auto payload = assembler_.add(chunk);
  if (!payload) return;
  auto content = parse_checkpoint(*payload);
  if (!content || content->delta || !install_checkpoint(server_, *content)) {
    server_.count("corrupt_checkpoint_dropped");
    return;
  }
  // The primary recorded its interleaving; from here on this copy follows it.
  if (server_.fragment() && server_.node().settings().determinants) server_.fragment()->set_follow_determinants(true);
  server_.track_consumers_without_sending();
  bootstrapping_ = false;
  server_.trace(eff, now, TraceKind::bootstrap_installed).with(TraceKey::checkpoint, content->id);
  server_.send(eff, now, from, CheckpointAck{content->id});
}

void ActiveStandbyRole::on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) {
  const NodeId primary = server_.routes().route(server_.node().fragment_id()).primary;
  if (successor_ || lost.peer != primary || primary == server_.node().self()) return;
  if (bootstrapping_) {
    server_.count("takeover_impossible_while_bootstrapping");
    server_.trace(eff, now, TraceKind::detection)
        .with(TraceKey::failed, primary)
        .with(TraceKey::detector, lost.detector)
        .with(TraceKey::silent_us, now - watch_.last_heard_us())
        .with_text("not bootstrapped: cannot take over");
    return;
  }
  take_over(now, eff, lost.detector);
}

void ActiveStandbyRole::take_over(TimeUs now, Effects& eff, Detector detector) {
  begin_takeover(server_, now, eff, watch_.last_heard_us(), detector);
  const bool follow = server_.node().settings().determinants && server_.fragment() &&
                      server_.fragment()->is_nondeterministic();
  if (follow) server_.release_determinant_buffers();
  // Fill whatever was in flight to me when the primary died.
  server_.request_replay(now, eff, {}, 0);
  const bool exact = !server_.fragment() || server_.fragment()->klass() != OperatorClass::arbitrary || follow;
  server_.trace(eff, now, TraceKind::takeover).with(TraceKey::ha, HaMode::active).with(TraceKey::exact_ids, exact);
  PrimaryOptions options;
  options.took_over = true;
  options.rebase_when_consumers_ready = !exact;
  successor_ = std::make_unique<PrimaryRole>(server_, options, make_active_primary_side(server_, options));
}

TimeUs ActiveStandbyRole::next_wakeup_us() const {
  if (successor_) return kNever;
  return std::min({watch_.next_wakeup_us(), server_.next_ack_due_us(), next_retransmit_us_});
}

}  // namespace hapair
