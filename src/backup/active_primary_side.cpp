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
    bootstrap_.clear();
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
      HAPAIR_CHECK_MSG(!bootstrap_.empty(), "bootstrapping standby " << bootstrapping_standby_ << " without a bootstrap to send");
      const TimeUs rt = server_.node().retransmit_us();
      if (now - bootstrap_sent_us_ >= rt) send_bootstrap(now, eff, true);
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
    CapturedCheckpoint captured = capture_checkpoint(server_, ++bootstrap_checkpoint_id_, nullptr,
                                                     static_cast<std::size_t>(server_.node().settings().checkpoint_chunk_bytes));
    const CheckpointContent& state = captured.summary;
    HAPAIR_CHECK_MSG(state.id == bootstrap_checkpoint_id_ && state.id > previous_bootstrap && !state.delta,
                     "bootstrap checkpoint " << state.id << " after " << previous_bootstrap);
    bootstrap_ = checkpoint_messages(state.id, false, 0, std::move(captured.chunks));
    server_.count("bootstrap_checkpoint_bytes", static_cast<std::int64_t>(captured.payload_bytes));
    bootstrap_inputs_.clear();
    for (const auto& in : state.inputs) bootstrap_inputs_.emplace_back(in.stream, in.processed);
    bootstrapping_standby_ = standby;
    send_bootstrap(now, eff, false);
    if (ships_determinants()) {
      determinants_.emplace(server_, standby);
      determinants_->on_start();
    }
  }

  void on_standby_lost() override {
    determinants_.reset();
    bootstrapping_standby_ = kNoNode;
    bootstrap_.clear();
  }

 private:
  // The bootstrap: my checkpoint to the standby, then every producer's node is told to send it
  // my input after the checkpoint's positions. The checkpoint is repeated as it was (same id):
  // the standby installs one copy and acknowledges every further one (ActiveStandbyRole). The
  // Redirects are not: a producer that got one subscribed the standby already, and a repeat
  // would move its cursor back behind what the standby acknowledged since.
  void send_bootstrap(TimeUs now, Effects& eff, bool again) {
    HAPAIR_CHECK_MSG(bootstrapping_standby_ != kNoNode && !bootstrap_.empty(),
                     "bootstrap of standby " << bootstrapping_standby_ << " with " << bootstrap_.size() << " chunks");
    for (const Checkpoint& c : bootstrap_) {
      HAPAIR_CHECK_MSG(c.checkpoint_id == bootstrap_checkpoint_id_ && !c.delta,
                       "bootstrap chunk of checkpoint " << c.checkpoint_id << ", bootstrapping " << bootstrap_checkpoint_id_);
      server_.send(eff, now, bootstrapping_standby_, Checkpoint(c));
    }
    bootstrap_sent_us_ = now;
    if (again) {
      server_.count("bootstrap_resent");
      return;
    }
    for (const auto& [stream, processed] : bootstrap_inputs_) {
      const FragmentId producer = server_.inputs().at(stream).producer();
      // Every node that sends me this stream (an active producer's standby tracks it too).
      for (NodeId n : server_.routes().input_nodes_of(producer))
        server_.send(eff, now, n, Redirect{stream, bootstrapping_standby_, true, processed});
    }
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
  std::vector<Checkpoint> bootstrap_;
  std::vector<std::pair<StreamId, TupleId>> bootstrap_inputs_;
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
