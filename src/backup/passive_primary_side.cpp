// The passive standby's approach at the primary: checkpoints to a live standby
// (CheckpointSender); without one (after a takeover, or once a lost standby's held output is
// released) the primary acknowledges what it processed directly, so upstream queues stay
// bounded.
//
// Paper: passive standby (section 4.1): upstream servers trim only what an acknowledged
// checkpoint covers; a primary without a backup has no checkpoint to wait for.
//
// Invariants: checkpoints go to every live standby (k standbys: one CheckpointSender for all of
// them); direct acks and checkpoints never overlap (no direct ack while a CheckpointSender lives:
// checked in direct_acks).
#include <optional>

#include "backup/approaches.h"
#include "backup/checkpoint_sender.h"
#include "backup/passive_standby_role.h"
#include "protocols/check.h"

namespace hapair {

namespace {

class PassivePrimarySide : public StatelessPrimarySide {
 public:
  PassivePrimarySide(Server& server, const PrimaryOptions& options)
      : StatelessPrimarySide(server), generation_(options.first_generation - 1), took_over_(options.took_over) {}

  void on_start(TimeUs now, const std::vector<NodeId>& standbys) override {
    HAPAIR_CHECK_MSG(standbys.size() <= kStandbysMax, "passive standby ships checkpoints to " << standbys.size() << " standbys");
    if (!standbys.empty()) {
      // A primary that took over with followers (k standbys) restores them with a full
      // checkpoint at once; its ids continue above its predecessor's (the epoch's), so a
      // follower never takes one for a checkpoint of the old primary's.
      const std::uint64_t first_id = took_over_ ? (server_.routes().epoch() << 32) + 1 : 1;
      checkpoints_.emplace(server_, standbys, took_over_, first_id);
      checkpoints_->on_start(now, took_over_);
    } else {
      next_direct_ack_us_ = now + ack_interval_us();
    }
    StatelessPrimarySide::on_start(now, standbys);
  }

  void on_tick(TimeUs now, Effects& eff) override {
    if (checkpoints_) checkpoints_->on_tick(now, eff);
    if (now >= next_direct_ack_us_) {
      direct_acks(now, eff);
      next_direct_ack_us_ = now + ack_interval_us();
    }
    StatelessPrimarySide::on_tick(now, eff);
  }

  bool on_message(TimeUs now, NodeId from, const Message& m, Effects& eff) override {
    const auto* ack = std::get_if<CheckpointAck>(&m);
    if (!ack || !checkpoints_) return false;
    checkpoints_->on_ack(now, from, *ack, eff);
    return true;
  }

  void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) override {
    HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                     "node " << server_.node().self() << " joined by standby " << standby);
    next_direct_ack_us_ = kNever;  // level-1 acks come from acknowledged checkpoints again
    if (checkpoints_) {
      // k standbys: the others still install my checkpoints; the new one gets a full one.
      checkpoints_->add_standby(now, standby, eff);
      return;
    }
    checkpoints_.emplace(server_, std::vector<NodeId>{standby}, true);
    checkpoints_->on_start(now);
    checkpoints_->take_now(now, eff);
  }

  void on_standby_lost(NodeId standby) override {
    if (checkpoints_ && !checkpoints_->remove_standby(standby)) checkpoints_.reset();
  }
  void on_held_output_released(TimeUs now) override { next_direct_ack_us_ = now; }

  TimeUs next_wakeup_us() const override {
    TimeUs t = std::min(next_direct_ack_us_, StatelessPrimarySide::next_wakeup_us());
    if (checkpoints_) t = std::min(t, checkpoints_->next_due_us());
    return t;
  }

 private:
  TimeUs ack_interval_us() const { return us_from_ms(static_cast<double>(server_.node().settings().ack_interval_ms)); }

  // A level-1 ack of everything processed, to every node of each producer, when anything moved.
  void direct_acks(TimeUs now, Effects& eff) {
    // While a standby lives, level-1 acks name only input an acknowledged checkpoint covers
    // (CheckpointSender::on_ack): acknowledging what was processed would let upstream servers
    // trim input the standby could not recover without. on_standby_joined stops these acks.
    HAPAIR_CHECK_MSG(!checkpoints_, "direct level-1 acks while standby checkpoints are in use");
    if (!server_.workload().fragment() || server_.workload().paused()) return;
    const auto acked = acked_positions(server_);
    std::map<StreamId, TupleId> processed;
    for (const auto& [s, in] : server_.inputs()) processed[s] = in.processed();
    if (acked == last_acked_ && processed == last_processed_) return;
    ++generation_;
    for (const auto& [s, done] : processed) {
      const FragmentId producer = server_.inputs().at(s).producer();
      for (NodeId n : server_.routes().input_nodes_of(producer))
        server_.send(eff, now, n, Level1Ack{s, done, generation_, {}, {}});
    }
    last_acked_ = acked;
    last_processed_ = processed;
  }

  std::optional<CheckpointSender> checkpoints_;  // while the standby lives
  TimeUs next_direct_ack_us_ = kNever;
  std::uint64_t generation_;
  bool took_over_ = false;
  std::map<StreamId, TupleId> last_acked_;
  std::map<StreamId, TupleId> last_processed_;
};

std::unique_ptr<RoleBehaviour> make_passive_standby_role(Server& server, bool rejoined) {
  return std::make_unique<PassiveStandbyRole>(server, rejoined);
}

}  // namespace

std::unique_ptr<PrimarySide> make_passive_primary_side(Server& server, const PrimaryOptions& options) {
  return std::make_unique<PassivePrimarySide>(server, options);
}

Approach passive_standby_approach() {
  return Approach{HaMode::passive, &make_passive_primary_side, &make_passive_standby_role};
}

}  // namespace hapair
