// The active standby's approach at the primary: the determinants of a non-deterministic
// fragment go to the live standby (DeterminantShipper); a restarted node that rejoins as the
// standby is bootstrapped with a full checkpoint of my state, then subscribed to my producers
// after its input positions.
//
// Paper: active standby (section 4.2): both servers process the same input; the primary sends
// what the standby cannot decide alone (here, a Union's interleaving) and releases output only
// once the standby has it.
//
// Invariants: determinants go to one standby at most, never to myself; a bootstrap checkpoint
// id is new for every joining standby, so an ack of an older bootstrap is not taken for this
// one (checked in on_standby_joined); without a standby that follows them, recorded choices are
// dropped, not kept.
#include <optional>

#include "backup/active_standby_role.h"
#include "backup/approaches.h"
#include "backup/bootstrap.h"
#include "backup/determinant_shipper.h"
#include "primary/checkpoint_state.h"
#include "protocols/check.h"

namespace hapair {

namespace {

class ActivePrimarySide : public StatelessPrimarySide {
 public:
  using StatelessPrimarySide::StatelessPrimarySide;

  void on_start(TimeUs now, const std::vector<NodeId>& standbys) override {
    HAPAIR_CHECK_MSG(standbys.size() <= 1, "active standby ships determinants to one standby, given " << standbys.size());
    if (!standbys.empty() && ships_determinants()) {
      determinants_.emplace(server_, standbys.front());
      determinants_->on_start();
    }
    StatelessPrimarySide::on_start(now, standbys);
  }

  bool on_message(TimeUs now, NodeId from, const Message& m, Effects& eff) override {
    if (const auto* ack = std::get_if<DeterminantAck>(&m)) {
      if (!determinants_) return false;
      determinants_->on_ack(*ack);
      return true;
    }
    const auto* ack = std::get_if<CheckpointAck>(&m);
    if (!ack || from != bootstrapping_standby_ || ack->checkpoint_id != bootstrap_checkpoint_id_) return false;
    bootstrapping_standby_ = kNoNode;
    server_.trace(eff, now, TraceKind::pair_restored).with(TraceKey::standby, from).with_text("bootstrapped from a checkpoint");
    return true;
  }

  void after_processing(TimeUs now, Effects& eff) override {
    if (determinants_) {
      determinants_->after_processing(now, eff);
    } else if (nondeterministic()) {
      // Without a standby that follows them, the Union's recorded choices are of no use: drop
      // them so they do not pile up (a rejoining standby is bootstrapped from a checkpoint).
      drop_determinants();
    }
  }

  TimeUs retransmit(TimeUs now, Effects& eff) override {
    return determinants_ ? determinants_->retransmit(now, eff) : kNever;
  }

  // Bootstrap: my full state now, then input from upstream after its input positions, then the
  // determinants of everything I do from here on.
  void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) override {
    HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                     "node " << server_.node().self() << " joined by standby " << standby);
    if (nondeterministic()) drop_determinants();
    const std::uint64_t previous_bootstrap = bootstrap_checkpoint_id_;
    const CheckpointContent state = send_bootstrap(server_, now, standby, ++bootstrap_checkpoint_id_, eff);
    HAPAIR_CHECK_MSG(state.id == bootstrap_checkpoint_id_ && state.id > previous_bootstrap && !state.delta,
                     "bootstrap checkpoint " << state.id << " after " << previous_bootstrap);
    bootstrapping_standby_ = standby;
    if (ships_determinants()) {
      determinants_.emplace(server_, standby);
      determinants_->on_start();
    }
  }

  void on_standby_lost() override {
    determinants_.reset();
    bootstrapping_standby_ = kNoNode;
  }

 private:
  bool nondeterministic() const {
    const Fragment* fragment = server_.workload().fragment();
    return fragment && fragment->is_nondeterministic();
  }
  bool ships_determinants() const { return server_.node().settings().determinants && nondeterministic(); }
  void drop_determinants() {
    server_.workload().act_on_fragment([](Fragment& f, FragmentOutputs&) { (void)f.take_determinants(); });
  }

  std::optional<DeterminantShipper> determinants_;  // a non-deterministic fragment's live standby
  NodeId bootstrapping_standby_ = kNoNode;          // a rejoined standby installing my checkpoint
  std::uint64_t bootstrap_checkpoint_id_ = 0;
};

std::unique_ptr<RoleBehaviour> make_active_standby_role(Server& server, bool rejoined) {
  return std::make_unique<ActiveStandbyRole>(server, rejoined);
}

}  // namespace

std::unique_ptr<PrimarySide> make_active_primary_side(Server& server, const PrimaryOptions& /*options*/) {
  return std::make_unique<ActivePrimarySide>(server);
}

Approach active_standby_approach() {
  return Approach{HaMode::active, &make_active_primary_side, &make_active_standby_role};
}

}  // namespace hapair
