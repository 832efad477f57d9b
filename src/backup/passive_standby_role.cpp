#include "backup/passive_standby_role.h"

#include <type_traits>

#include "primary/takeover.h"
#include "backup/approaches.h"
#include "primary/primary_role.h"
#include "protocols/check.h"

namespace hapair {

void PassiveStandbyRole::on_start(TimeUs now, Effects& eff) {
  watch_.start(now);
  server_.trace(eff, now, TraceKind::start).with(TraceKey::role, Role::passive_backup).with(TraceKey::ha, HaMode::passive);
}

void PassiveStandbyRole::on_tick(TimeUs now, Effects& eff) { watch_primary(now, eff); }

void PassiveStandbyRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  const NodeId from = env.header.sender;
  const bool from_primary = watch_.heard_from(from, now);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Checkpoint>) {
          if (from_primary) on_checkpoint(now, from, m, eff);
          else server_.count("unexpected_checkpoint_dropped");
        } else if constexpr (std::is_same_v<T, Takeover>) {
          if (auto next = standby_learns_takeover(server_, now, m, eff)) successor_ = std::move(next);
        } else if constexpr (std::is_same_v<T, Heartbeat>) {
        } else {
          server_.count(std::string("unexpected_") + message_kind_name(env.body) + "_dropped");
        }
      },
      env.body);
}

void PassiveStandbyRole::on_checkpoint(TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff) {
  auto payload = assembler_.add(chunk);
  if (!payload) return;
  // Checked whole, unpacked only as far as needed: a full checkpoint stays packed until a
  // takeover needs its tuples (InstalledCheckpoint); a delta merges with the base tuple by tuple.
  // (The chunks say which it is; a payload that says otherwise is corrupt.)
  auto content = parse_checkpoint(*payload, chunk.delta ? TupleParsing::unpack : TupleParsing::check);
  if (!content || content->delta != chunk.delta) {
    server_.count("corrupt_checkpoint_dropped");
    server_.trace(eff, now, TraceKind::checkpoint_rejected)
        .with(TraceKey::checkpoint, chunk.checkpoint_id)
        .with(TraceKey::reason, TraceReason::corrupt);
    return;
  }
  const std::uint64_t id = content->id;
  Bytes packed = content->delta ? Bytes{} : std::move(*payload);
  if (!apply_checkpoint(server_.node().plan(), server_.node().fragment_id(), std::move(*content), installed_,
                        std::move(packed))) {
    server_.count("unappliable_checkpoint_dropped");
    server_.trace(eff, now, TraceKind::checkpoint_rejected)
        .with(TraceKey::checkpoint, id)
        .with(TraceKey::reason, TraceReason::does_not_apply);
    return;
  }
  // Acknowledged only once installed: what the ack lets the primary release and its upstream
  // trim is in my copy now, whole (a delta merged into a full one).
  HAPAIR_CHECK_MSG(installed_.id == id && installed_.full.id == id && !installed_.full.delta,
                   "checkpoint " << id << " acknowledged with " << installed_.id << " (full " << installed_.full.id
                                 << ", delta " << installed_.full.delta << ") installed");
  server_.count("checkpoints_installed");
  server_.trace(eff, now, TraceKind::checkpoint_installed).with(TraceKey::checkpoint, id);
  server_.send(eff, now, from, CheckpointAck{id});
}

void PassiveStandbyRole::primary_failed(TimeUs now, Effects& eff, Detector detector) {
  HAPAIR_CHECK_MSG(!successor_, "passive standby " << server_.node().self() << " takes over twice");
  const NodeId old = begin_takeover(server_, now, eff, watch_.silence_us(now, detector), detector);
  (void)old;
  std::string how = "state=empty";
  std::uint64_t installed = 0;
  if (installed_.id != 0) {
    installed_.unpack();
    HAPAIR_CHECK_MSG(installed_.packed.empty() && installed_.full.id == installed_.id,
                     "checkpoint " << installed_.id << " still packed at takeover");
    if (install_checkpoint(server_, installed_.full)) {
      how = "from its last checkpoint";
      installed = installed_.id;
    } else {
      server_.count("checkpoint_install_failed");
      how = "state=empty checkpoint_install_failed";
    }
  } else {
    server_.workload().reset();
  }
  // Re-send after the checkpoint's input positions (what the installed state has processed).
  server_.inputs().request_replay(now, eff, {}, 0);
  server_.trace(eff, now, TraceKind::takeover)
      .with(TraceKey::ha, HaMode::passive)
      .with(TraceKey::exact_ids, true)
      .with(TraceKey::checkpoint, installed)
      .with_text(how);
  PrimaryOptions options;
  options.took_over = true;
  successor_ = std::make_unique<PrimaryRole>(server_, options, make_passive_primary_side(server_, options));
  HAPAIR_CHECK(server_.role() == Role::primary);
}

}  // namespace hapair
