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
  if (on_election_message(now, env, eff)) return;
  const NodeId from = env.header.sender;
  const bool from_primary = watch_.heard_from(from, now);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Checkpoint>) {
          if (!from_primary) server_.count("unexpected_checkpoint_dropped");
          else if (checkpoints_.on_chunk(server_, now, from, m, eff) != 0) {
            awaiting_first_checkpoint_ = false;
            first_state_installed();
          }
        } else if constexpr (std::is_same_v<T, Takeover>) {
          if (auto next = learn_takeover(now, m, eff)) successor_ = std::move(next);
        } else if constexpr (std::is_same_v<T, Heartbeat>) {
        } else {
          server_.count(std::string("unexpected_") + message_kind_name(env.body) + "_dropped");
        }
      },
      env.body);
}

void PassiveStandbyRole::leave_copy_in_node() {
  if (awaiting_first_checkpoint_ || checkpoints_.installed().id == 0) return;
  std::string how;
  server_.inputs().reset_for_standby();
  checkpoints_.install_into(server_, how);
  server_.count("checkpoint_left_in_node");
}

void PassiveStandbyRole::primary_failed(TimeUs now, Effects& eff, Detector detector) {
  HAPAIR_CHECK_MSG(!successor_, "passive standby " << server_.node().self() << " takes over twice");
  if (awaiting_first_checkpoint_) {
    // The primary that accepted my Rejoin went silent before its first checkpoint reached me: if
    // it only stalled, it goes on and checkpoints; if it died, both copies of the state are gone
    // (beyond the guarantee), and empty state would only replay into trimmed input.
    cannot_take_over(now, eff, detector, "takeover_impossible_before_first_checkpoint",
                     "no checkpoint since rejoining: cannot take over");
    return;
  }
  const NodeId old = begin_takeover(server_, now, eff, watch_.silence_us(now, detector), detector, followers());
  (void)old;
  std::string how;
  const std::uint64_t installed = checkpoints_.install_into(server_, how);
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
