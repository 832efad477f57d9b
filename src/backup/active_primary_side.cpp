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
// dropped, not kept; a bootstrap is repeated, the same checkpoint id and chunks, every retransmit
// timeout until the standby acknowledges it (a lost chunk left the standby bootstrapping and my
// output held for its determinant acks forever: chaos case 209 of seed 1).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

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
    bootstrap_.reset();
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
    TimeUs next = determinants_ ? determinants_->retransmit(now, eff) : kNever;
    if (bootstrapping_standby_ != kNoNode) {
      HAPAIR_CHECK_MSG(bootstrap_.has_value(), "bootstrapping standby " << bootstrapping_standby_ << " without a bootstrap to send");
      const TimeUs rt = server_.node().retransmit_us();
      if (now - bootstrap_sent_us_ >= rt) resend_bootstrap(now, eff);
      next = std::min(next, bootstrap_sent_us_ + rt);
    }
    return next;
  }

  TimeUs next_wakeup_us() const override {
    if (bootstrapping_standby_ == kNoNode) return StatelessPrimarySide::next_wakeup_us();
    return std::min(StatelessPrimarySide::next_wakeup_us(), bootstrap_sent_us_ + server_.node().retransmit_us());
  }

  // Bootstrap: my full state now, then input from upstream after its input positions, then the
  // determinants of everything I do from here on.
  void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) override {
    HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                     "node " << server_.node().self() << " joined by standby " << standby);
    if (nondeterministic()) drop_determinants();
    const std::uint64_t previous_bootstrap = bootstrap_checkpoint_id_;
    bootstrap_ = capture_bootstrap(server_, ++bootstrap_checkpoint_id_);
    HAPAIR_CHECK_MSG(bootstrap_->summary.id == bootstrap_checkpoint_id_ && bootstrap_->summary.id > previous_bootstrap,
                     "bootstrap checkpoint " << bootstrap_->summary.id << " after " << previous_bootstrap);
    bootstrapping_standby_ = standby;
    send_bootstrap_chunks(server_, now, standby, *bootstrap_, eff);
    redirect_inputs(server_, now, standby, *bootstrap_, eff);
    bootstrap_sent_us_ = now;
    if (ships_determinants()) {
      determinants_.emplace(server_, standby);
      determinants_->on_start();
    }
  }

  void on_standby_lost(NodeId /*standby*/) override {
    determinants_.reset();
    bootstrapping_standby_ = kNoNode;
    bootstrap_.reset();
  }

 private:
  // The bootstrap again as it was (same id): the standby installs one copy and acknowledges
  // every further one (ActiveStandbyRole). Not the Redirects (bootstrap.h).
  void resend_bootstrap(TimeUs now, Effects& eff) {
    HAPAIR_CHECK_MSG(bootstrapping_standby_ != kNoNode && bootstrap_,
                     "bootstrap of standby " << bootstrapping_standby_ << " with nothing to send");
    send_bootstrap_chunks(server_, now, bootstrapping_standby_, *bootstrap_, eff);
    bootstrap_sent_us_ = now;
    server_.count("bootstrap_resent");
  }

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
  // What the bootstrap sends (kept until the standby acknowledges it) and when it last went out.
  std::optional<Bootstrap> bootstrap_;
  TimeUs bootstrap_sent_us_ = 0;
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
