// The active standby's approach at the primary: the determinants of a non-deterministic
// fragment go to the live standby (DeterminantShipper); a restarted node that rejoins as the
// standby is bootstrapped with a full checkpoint of my state, then subscribed to my producers
// after its input positions.
//
// Paper: active standby (section 4.2): both servers process the same input; the primary sends
// what the standby cannot decide alone (here, a Union's interleaving) and releases output only
// once the standby has it.
//
// k standbys (issue 36): determinants go to every live standby and output waits for all of them
// (DeterminantShipper); a primary that took over with followers brings each of them up to date
// from its own state (a bootstrap, as for a rejoined standby) when the fragment follows
// determinants, since their states may differ from mine; a deterministic fragment's followers
// are copies of mine already and continue.
//
// Invariants: determinants go to my standbys, never to myself; a bootstrap checkpoint
// id is new for every capture, so an ack of an older bootstrap is not taken for this
// one (checked in start_bootstrap); without a standby that follows them, recorded choices are
// dropped, not kept; a bootstrap is repeated, the same checkpoint id and chunks, every retransmit
// timeout until the standby acknowledges it (a lost chunk left the standby bootstrapping and my
// output held for its determinant acks forever: chaos case 209 of seed 1).
#include <algorithm>
#include <map>
#include <memory>
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
  ActivePrimarySide(Server& server, const PrimaryOptions& options)
      : StatelessPrimarySide(server), took_over_(options.took_over), redirect_after_ack_(options.switched) {}

  void on_start(TimeUs now, const std::vector<NodeId>& standbys) override {
    HAPAIR_CHECK_MSG(standbys.size() <= kStandbysMax, "active standby ships determinants to " << standbys.size() << " standbys");
    if (!standbys.empty() && ships_determinants()) {
      // A primary that took over with followers (k standbys): each of them applied the old
      // primary's determinants as far as it got, which may be short of mine or beyond them, and
      // I made choices of my own at the takeover. They are brought up to date from my state (a
      // bootstrap, on the first tick), and until each has installed it nothing I produce goes
      // out (the gate the standby role held before its takeover), so should I fail before, the
      // survivor's own state still covers everything downstream has.
      const std::vector<NodeId> not_ready = took_over_ ? standbys : std::vector<NodeId>{};
      determinants_.emplace(server_, standbys, not_ready);
      determinants_->on_start();
      if (took_over_) followers_to_bootstrap_ = standbys;
    }
    StatelessPrimarySide::on_start(now, standbys);
  }

  void on_tick(TimeUs now, Effects& eff) override {
    // Only the standbys of the switch itself (joined right after on_start) wait for their ack.
    redirect_after_ack_ = false;
    if (!followers_to_bootstrap_.empty()) {
      settle_determinants(now, eff);
      const auto b = std::make_shared<const Bootstrap>(capture_bootstrap(server_, ++bootstrap_checkpoint_id_));
      for (NodeId f : followers_to_bootstrap_) start_bootstrap(now, f, b, eff);
      server_.count("followers_bootstrapped", static_cast<std::int64_t>(followers_to_bootstrap_.size()));
      followers_to_bootstrap_.clear();
    }
    StatelessPrimarySide::on_tick(now, eff);
  }

  bool on_message(TimeUs now, NodeId from, const Message& m, Effects& eff) override {
    if (const auto* ack = std::get_if<DeterminantAck>(&m)) {
      if (!determinants_) return false;
      determinants_->on_ack(from, *ack);
      return true;
    }
    const auto* ack = std::get_if<CheckpointAck>(&m);
    if (!ack) return false;
    auto it = bootstrapping_.find(from);
    if (it == bootstrapping_.end() || ack->checkpoint_id != it->second.bootstrap->summary.id) return false;
    if (determinants_) determinants_->mark_ready(from, it->second.covered);
    if (it->second.redirect_pending) {
      redirect_inputs(server_, now, from, *it->second.bootstrap, eff);
      server_.count("redirects_after_bootstrap_ack");
    }
    bootstrapping_.erase(it);
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
    const TimeUs rt = server_.node().retransmit_us();
    for (auto& [standby, b] : bootstrapping_) {
      if (now - b.sent_us >= rt) {
        // The bootstrap again as it was (same id): the standby installs one copy and acknowledges
        // every further one (ActiveStandbyRole). Not the Redirects (bootstrap.h).
        send_bootstrap_chunks(server_, now, standby, *b.bootstrap, eff);
        b.sent_us = now;
        server_.count("bootstrap_resent");
      }
      next = std::min(next, b.sent_us + rt);
    }
    return next;
  }

  TimeUs next_wakeup_us() const override {
    TimeUs t = StatelessPrimarySide::next_wakeup_us();
    for (const auto& [standby, b] : bootstrapping_) t = std::min(t, b.sent_us + server_.node().retransmit_us());
    if (!followers_to_bootstrap_.empty()) t = 0;
    return t;
  }

  // Bootstrap: my full state now, then input from upstream after its input positions, then the
  // determinants of everything I do from here on.
  void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) override {
    HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                     "node " << server_.node().self() << " joined by standby " << standby);
    settle_determinants(now, eff);
    const auto b = std::make_shared<const Bootstrap>(capture_bootstrap(server_, ++bootstrap_checkpoint_id_));
    if (ships_determinants()) {
      if (determinants_) {
        // k standbys: the others keep acknowledging; the new one counts once it acknowledges.
        determinants_->add_standby(standby);
      } else {
        determinants_.emplace(server_, std::vector<NodeId>{standby});
        determinants_->on_start();
      }
    }
    start_bootstrap(now, standby, b, eff);
  }

  void on_standby_lost(NodeId standby) override {
    if (determinants_ && !determinants_->remove_standby(standby)) determinants_.reset();
    bootstrapping_.erase(standby);
    std::erase(followers_to_bootstrap_, standby);
  }

 private:
  struct InFlight {
    std::shared_ptr<const Bootstrap> bootstrap;
    std::map<std::uint16_t, std::uint64_t> covered;  // the determinants I had sent when I captured it
    TimeUs sent_us = 0;
    bool redirect_pending = false;  // its Redirects go out once it acknowledged (a switch's standby)
  };

  void start_bootstrap(TimeUs now, NodeId standby, const std::shared_ptr<const Bootstrap>& b, Effects& eff) {
    // A bootstrap checkpoint id is new for every one captured, so an ack of an older bootstrap
    // is not taken for this one.
    HAPAIR_CHECK_MSG(b->summary.id == bootstrap_checkpoint_id_, "bootstrap checkpoint " << b->summary.id << " after " << bootstrap_checkpoint_id_);
    InFlight f{b, determinants_ ? determinants_->sent() : std::map<std::uint16_t, std::uint64_t>{}, now,
               redirect_after_ack_};
    bootstrapping_[standby] = std::move(f);
    send_bootstrap_chunks(server_, now, standby, *b, eff);
    // A standby of my switch keeps its copy of the previous approach until my bootstrap is
    // installed, and takes over with it should I fail first (docs/ARCHITECTURE.md "The window
    // after a switch"). My producers hold back their trimming for a new consumer until it is
    // redirected (its level-0 is 0), so that copy's replay is retained until the ack: the
    // Redirects wait for it (chaos case 247, real processes, seed 1: a spare paused through a
    // switch to active found its restart point trimmed).
    if (!redirect_after_ack_) redirect_inputs(server_, now, standby, *b, eff);
  }

  bool nondeterministic() const {
    const Fragment* fragment = server_.workload().fragment();
    return fragment && fragment->is_nondeterministic();
  }
  bool ships_determinants() const { return server_.node().settings().determinants && nondeterministic(); }
  void drop_determinants() {
    server_.workload().act_on_fragment([](Fragment& f, FragmentOutputs&) { (void)f.take_determinants(); });
  }
  // Before a capture: the choices recorded since the last event are in my state but not yet
  // numbered. Alone, a standby that installs my state has no use for them (dropped); with
  // other standbys (k standbys) they are shipped now, so the state I capture counts them and
  // whoever installs it takes them for what it has (a first version captured them unnumbered,
  // and a follower applied them twice: chaos case 375 of seed 1, active, k = 3).
  void settle_determinants(TimeUs now, Effects& eff) {
    if (!nondeterministic()) return;
    if (determinants_) determinants_->after_processing(now, eff);
    else drop_determinants();
  }

  bool took_over_ = false;
  // I began at a live switch and have not ticked yet: the standbys joining now are redirected
  // once they acknowledged my bootstrap.
  bool redirect_after_ack_ = false;
  std::optional<DeterminantShipper> determinants_;  // a non-deterministic fragment's live standbys
  // Standbys installing my state (a rejoined standby, or a follower after my takeover): what
  // was sent, kept until each acknowledges it, and when it last went out.
  std::map<NodeId, InFlight> bootstrapping_;
  std::vector<NodeId> followers_to_bootstrap_;  // bootstrapped on my first tick
  std::uint64_t bootstrap_checkpoint_id_ = 0;
};

std::unique_ptr<RoleBehaviour> make_active_standby_role(Server& server, bool rejoined) {
  return std::make_unique<ActiveStandbyRole>(server, rejoined);
}

}  // namespace

std::unique_ptr<PrimarySide> make_active_primary_side(Server& server, const PrimaryOptions& options) {
  return std::make_unique<ActivePrimarySide>(server, options);
}

Approach active_standby_approach() {
  return Approach{HaMode::active, &make_active_primary_side, &make_active_standby_role};
}

}  // namespace hapair
