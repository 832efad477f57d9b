// Hybrid standby at the primary: passive standby's end (checkpoints to the standby, level-1 acks
// from acknowledged checkpoints, direct acks without a standby) plus the switches of its standby
// between passive and active.
//
// Paper: passive and active standby (Hwang et al., ICDE 2005, sections 4.1-4.2); switching
// between them when a failure becomes likely follows Zhang, Gu et al. (ICDCS 2010), whose
// thresholds are not public: ours are settings (docs/TOPOLOGY.md, hybrid_*).
//
// To active (a trigger: my own tick ran hybrid_stall_ms late, more than
// hybrid_input_queue_tuples input tuples were queued when an event's processing began, an input
// tuple was processed more than hybrid_latency_ms after its source emitted it, or the command
// time hybrid_switch_at_ms came): a full bootstrap checkpoint of my state goes to the
// standby (ids from kHybridBootstrapIdFirst), and every node
// of each producer is asked to send the stream to the standby too, after the checkpoint's input
// position (Redirect), as a rejoining active standby is brought up to date. To passive (no
// trigger for hybrid_calm_ms): the producers are asked to stop (Redirect, unsubscribe). The
// passive checkpoints go on in both modes: upstream servers trim only what an acknowledged
// checkpoint covers, so whichever copy the standby takes over with, live or checkpointed, the
// input after it is still retained (hybrid_standby_role.h).
//
// k standbys (issue 36): passive standby's end checkpoints to all of them; a switch bootstraps
// every one (one capture, the same id) and redirects the producers to each; the mode is active
// once every standby acknowledged the bootstrap; the loss of any standby (a new epoch) makes it
// passive again.
//
// Invariants: a switch goes only to my live standbys, never to myself (checked); a fragment with
// an arbitrary operator never switches (its standby could not replay its choices; it stays
// passive, precise by held output); a bootstrap id is new for every switch and above every
// passive checkpoint id; the mode goes back to passive whenever the pair changes (a new epoch
// drops the producers' subscriptions).
#include <algorithm>
#include <set>
#include <vector>

#include "backup/approaches.h"
#include "backup/bootstrap.h"
#include "hybrid/approaches.h"
#include "hybrid/hybrid_standby_role.h"
#include "protocols/check.h"

namespace hapair {

namespace {

class HybridPrimarySide : public PrimarySide {
 public:
  HybridPrimarySide(Server& server, const PrimaryOptions& options)
      : server_(server), passive_(make_passive_primary_side(server, options)) {}

  void on_start(TimeUs now, const std::vector<NodeId>& standbys) override {
    HAPAIR_CHECK_MSG(standbys.size() <= kStandbysMax, "hybrid standby switches " << standbys.size() << " standbys");
    standbys_ = standbys;
    next_watch_us_ = now + heartbeat_us();
    work_seen_ = server_.workload().operator_work_done();
    passive_->on_start(now, standbys);
  }

  void on_tick(TimeUs now, Effects& eff) override {
    passive_->on_tick(now, eff);
    check_triggers(now, eff);
  }

  bool on_message(TimeUs now, NodeId from, const Message& m, Effects& eff) override {
    if (const auto* ack = std::get_if<CheckpointAck>(&m); ack && ack->checkpoint_id >= kHybridBootstrapIdFirst) {
      if (mode_ != Mode::activating || !awaiting_ack_.count(from) || ack->checkpoint_id != bootstrap_id_) {
        server_.count("unexpected_checkpoint_ack_dropped");
        return true;
      }
      awaiting_ack_.erase(from);
      if (awaiting_ack_.empty()) {
        mode_ = Mode::active;
        server_.count("hybrid_activations");
      }
      return true;
    }
    return passive_->on_message(now, from, m, eff);
  }

  // The input queue trigger: the tuples queued when this event's processing began (those it
  // processed, and what back-pressure left queued). A message brings at most batch_tuples, so
  // more is a backlog: input that waited behind full output queues or a slow operator.
  void after_processing(TimeUs now, Effects& eff) override {
    passive_->after_processing(now, eff);
    const std::uint64_t work = server_.workload().operator_work_done();
    const std::size_t backlog = static_cast<std::size_t>(work - work_seen_) + server_.inputs().queued();
    work_seen_ = work;
    const std::int64_t queue_max = settings().hybrid_input_queue_tuples;
    if (queue_max > 0 && backlog > static_cast<std::size_t>(queue_max)) trigger(now, eff, TraceReason::input_queue, 0, backlog);
    // The latency trigger: the oldest input this event processed was emitted this long ago.
    const TimeUs oldest = server_.workload().take_oldest_processed_ts();
    const std::int64_t latency_ms = settings().hybrid_latency_ms;
    if (latency_ms > 0 && oldest != kNever && now - oldest > us_from_ms(static_cast<double>(latency_ms)))
      trigger(now, eff, TraceReason::latency, now - oldest, 0);
  }

  TimeUs retransmit(TimeUs now, Effects& eff) override {
    // A bootstrap (or its ack) that was lost: bootstrap again, under a new id.
    if (mode_ == Mode::activating && now >= bootstrap_sent_us_ + bootstrap_timeout_us()) {
      server_.count("hybrid_bootstrap_retries");
      bootstrap(now, eff);
    }
    TimeUs t = passive_->retransmit(now, eff);
    if (mode_ == Mode::activating) t = std::min(t, bootstrap_sent_us_ + bootstrap_timeout_us());
    return t;
  }

  void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) override {
    // A new pair (a new epoch): producers dropped what was redirected to the old standby.
    HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                     "node " << server_.node().self() << " joined by standby " << standby);
    if (std::find(standbys_.begin(), standbys_.end(), standby) == standbys_.end()) standbys_.push_back(standby);
    mode_ = Mode::passive;
    awaiting_ack_.clear();
    passive_->on_standby_joined(now, standby, eff);
  }

  void on_standby_lost(NodeId standby) override {
    // k standbys: the others remain, in a new epoch that dropped the producers' subscriptions.
    std::erase(standbys_, standby);
    mode_ = Mode::passive;
    awaiting_ack_.clear();
    passive_->on_standby_lost(standby);
  }

  void on_held_output_released(TimeUs now) override { passive_->on_held_output_released(now); }

  TimeUs next_wakeup_us() const override {
    TimeUs t = std::min(passive_->next_wakeup_us(), next_watch_us_);
    if (!standbys_.empty() && mode_ == Mode::passive && !commanded_ && switch_at_us() >= 0)
      t = std::min(t, switch_at_us());
    if (mode_ != Mode::passive) t = std::min(t, last_trigger_us_ + calm_us());
    return t;
  }

 private:
  enum class Mode : std::uint8_t { passive, activating, active };

  const Settings& settings() const { return server_.node().settings(); }
  TimeUs heartbeat_us() const { return us_from_ms(static_cast<double>(settings().heartbeat_interval_ms)); }
  TimeUs calm_us() const { return us_from_ms(static_cast<double>(settings().hybrid_calm_ms)); }
  TimeUs switch_at_us() const {
    return settings().hybrid_switch_at_ms < 0 ? -1 : us_from_ms(static_cast<double>(settings().hybrid_switch_at_ms));
  }
  TimeUs bootstrap_timeout_us() const {
    return us_from_ms(static_cast<double>(settings().retransmit_timeout_ms + settings().checkpoint_interval_ms));
  }
  bool switchable() const {
    const Fragment* f = server_.workload().fragment();
    return !standbys_.empty() && f != nullptr && f->klass() != OperatorClass::arbitrary;
  }

  // The triggers at every tick: a stall (this tick came hybrid_stall_ms or more after the one I
  // asked for: the process was paused or starved, and the standby missed my heartbeat deadline),
  // the command time (the input queue's is after_processing). Then the calm rule.
  void check_triggers(TimeUs now, Effects& eff) {
    if (now >= next_watch_us_) {
      const TimeUs late_us = now - next_watch_us_;
      next_watch_us_ = now + heartbeat_us();
      const std::int64_t stall_ms = settings().hybrid_stall_ms;
      if (stall_ms > 0 && late_us >= us_from_ms(static_cast<double>(stall_ms)))
        trigger(now, eff, TraceReason::stalled, late_us, 0);
    }
    if (!commanded_ && switch_at_us() >= 0 && now >= switch_at_us()) {
      commanded_ = true;
      trigger(now, eff, TraceReason::command, 0, 0);
    }
    if (mode_ != Mode::passive && now >= last_trigger_us_ + calm_us()) deactivate(now, eff);
  }

  void trigger(TimeUs now, Effects& eff, TraceReason why, TimeUs late_us, std::size_t queued) {
    if (!switchable()) return;
    last_trigger_us_ = now;
    if (mode_ != Mode::passive) return;  // already (becoming) active: the calm period starts again
    trigger_reason_ = why;
    trigger_late_us_ = late_us;
    trigger_queued_ = queued;
    bootstrap(now, eff);
  }

  // My full state now goes to every standby, and my producers send each my input after the
  // positions that state has processed.
  void bootstrap(TimeUs now, Effects& eff) {
    for (NodeId standby : standbys_)
      HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                       "node " << server_.node().self() << " switches standby " << standby);
    const std::uint64_t previous = bootstrap_id_;
    bootstrap_id_ = bootstrap_id_ == 0 ? kHybridBootstrapIdFirst : bootstrap_id_ + 1;
    HAPAIR_CHECK_MSG(bootstrap_id_ > previous && bootstrap_id_ >= kHybridBootstrapIdFirst,
                     "bootstrap " << bootstrap_id_ << " after " << previous);
    const Bootstrap b = capture_bootstrap(server_, bootstrap_id_);
    awaiting_ack_.clear();
    for (NodeId standby : standbys_) {
      send_bootstrap_chunks(server_, now, standby, b, eff);
      // Once per bootstrap: a repeat of the redirection would move a cursor back (bootstrap.h).
      redirect_inputs(server_, now, standby, b, eff);
      awaiting_ack_.insert(standby);
    }
    mode_ = Mode::activating;
    bootstrap_sent_us_ = now;
    server_.count("hybrid_switches_to_active");
    auto& e = server_.trace(eff, now, TraceKind::hybrid_switch)
                  .with(TraceKey::role, Role::active_backup)
                  .with(TraceKey::reason, trigger_reason_)
                  .with(TraceKey::standby, standbys_.front())
                  .with(TraceKey::checkpoint, bootstrap_id_);
    if (trigger_reason_ == TraceReason::stalled || trigger_reason_ == TraceReason::latency)
      e.with(TraceKey::duration_us, trigger_late_us_);
    if (trigger_reason_ == TraceReason::input_queue) e.with(TraceKey::count, trigger_queued_);
  }

  void deactivate(TimeUs now, Effects& eff) {
    HAPAIR_CHECK_MSG(!standbys_.empty(), "node " << server_.node().self() << " switches to passive without a standby");
    for (NodeId standby : standbys_) undo_redirection(server_, now, standby, eff);
    mode_ = Mode::passive;
    server_.count("hybrid_switches_to_passive");
    server_.trace(eff, now, TraceKind::hybrid_switch)
        .with(TraceKey::role, Role::passive_backup)
        .with(TraceKey::reason, TraceReason::calm)
        .with(TraceKey::standby, standbys_.front());
  }

  Server& server_;
  std::unique_ptr<PrimarySide> passive_;  // passive standby's end, in both modes
  std::vector<NodeId> standbys_;  // my live standbys (k standbys), in the order the pair names them
  std::set<NodeId> awaiting_ack_;  // activating: the standbys that have not acknowledged the bootstrap
  Mode mode_ = Mode::passive;
  bool commanded_ = false;
  TimeUs next_watch_us_ = kNever;
  TimeUs last_trigger_us_ = 0;
  TimeUs bootstrap_sent_us_ = 0;
  std::uint64_t bootstrap_id_ = 0;
  TraceReason trigger_reason_ = TraceReason::command;
  TimeUs trigger_late_us_ = 0;
  std::size_t trigger_queued_ = 0;
  std::uint64_t work_seen_ = 0;  // operator tuples processed up to the last event
};

std::unique_ptr<RoleBehaviour> make_hybrid_standby_role(Server& server, bool rejoined) {
  return std::make_unique<HybridStandbyRole>(server, rejoined);
}

}  // namespace

std::unique_ptr<PrimarySide> make_hybrid_primary_side(Server& server, const PrimaryOptions& options) {
  return std::make_unique<HybridPrimarySide>(server, options);
}

Approach hybrid_standby_approach() {
  return Approach{HaMode::hybrid, &make_hybrid_primary_side, &make_hybrid_standby_role};
}

}  // namespace hapair
