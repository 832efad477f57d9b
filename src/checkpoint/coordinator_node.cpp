#include "checkpoint/coordinator_node.h"

#include <algorithm>
#include <utility>

#include "protocols/check.h"

namespace hapair {

std::vector<FragmentId> coordinated_fragments(const Plan& plan) {
  std::vector<FragmentId> out;
  for (const PlanFragment& f : plan.fragments)
    if (f.kind == FragmentKind::operators && plan.traits(f.id).coordinator) out.push_back(f.id);
  return out;
}

std::vector<FragmentId> source_readers(const Plan& plan, const std::vector<FragmentId>& fragments) {
  std::vector<FragmentId> out;
  for (FragmentId f : fragments) {
    const PlanFragment& pf = plan.fragments.at(f);
    const bool reads_source = std::any_of(pf.inputs.begin(), pf.inputs.end(), [&](StreamId s) {
      // Produced outside the checkpoint: a source, or a fragment of another approach.
      return !plan.traits(plan.streams.at(s).producer).coordinator;
    });
    if (reads_source) out.push_back(f);
  }
  return out;
}

namespace {

std::vector<CheckpointParticipant> participants_of(const Plan& plan, const std::vector<FragmentId>& fragments) {
  std::vector<CheckpointParticipant> out;
  for (FragmentId f : fragments) out.push_back(CheckpointParticipant{f, plan.fragments.at(f).name});
  return out;
}

std::map<FragmentId, std::vector<FragmentId>> rollback_sets_of(const Plan& plan, const std::vector<FragmentId>& fragments,
                                                               FailoverMode failover) {
  // In region failover every producer keeps its output since the last completed checkpoint
  // (docs/CHECKPOINT.md, "Recovery"), so every stream cuts a region.
  const std::vector<bool> retained(plan.streams.size(), failover == FailoverMode::region);
  std::map<FragmentId, std::vector<FragmentId>> out;
  for (FragmentId f : fragments) {
    // Only coordinated fragments roll back: a fragment of another approach recovers its own way.
    std::vector<FragmentId> set;
    for (FragmentId g : failover_fragments(plan, f, failover, retained))
      if (std::find(fragments.begin(), fragments.end(), g) != fragments.end()) set.push_back(g);
    out[f] = std::move(set);
  }
  return out;
}

}  // namespace

CoordinatorNode::CoordinatorNode(std::shared_ptr<const Plan> plan, NodeId self, CoordinatorNodeOptions options,
                                 CheckpointStore& store)
    : plan_(std::move(plan)),
      self_(self),
      options_(options),
      fragments_(coordinated_fragments(*plan_)),
      source_readers_(source_readers(*plan_, fragments_)),
      coordinator_(participants_of(*plan_, fragments_), rollback_sets_of(*plan_, fragments_, options.failover),
                   options.checkpoints, store),
      store_(store) {
  HAPAIR_CHECK_MSG(self_ < plan_->nodes.size() && !plan_->runs_fragment(self_),
                   "the coordinator is node " << self_ << ", which runs a fragment or is not in the plan");
  HAPAIR_CHECK_MSG(!source_readers_.empty(), "no coordinated fragment reads a source: no checkpoint could begin");
  // With detector = connection+heartbeat a crash arrives as PeerLost at once, and heartbeats only
  // find hangs and cuts: they wait the hang timeout, as the runtime's ZMTP heartbeats do, so a
  // fragment busy replaying after a rollback (silent to me for a while) is not taken for failed
  // and rolled back again, and again.
  const Settings& s = plan_->settings();
  const TimeUs timeout_us = 1000 * (s.detector == DetectorKind::connection_heartbeat
                                        ? std::max(s.hang_timeout_ms, s.failure_timeout_ms)
                                        : s.failure_timeout_ms);
  for (FragmentId f : fragments_) watched_[f] = Watched{plan_->fragments[f].primary, FailureDetector(timeout_us), false};
}

NodeId CoordinatorNode::acting(FragmentId f) const {
  auto it = watched_.find(f);
  return it == watched_.end() ? kNoNode : it->second.acting;
}

FragmentId CoordinatorNode::coordinated_fragment_of(NodeId n) const {
  if (!plan_->runs_fragment(n)) return kNoFragment;
  const FragmentId f = plan_->nodes[n].fragment;
  return watched_.count(f) != 0 ? f : kNoFragment;
}

TraceEvent& CoordinatorNode::trace(Effects& eff, TimeUs now, TraceKind kind) {
  eff.traces.emplace_back(now, self_, kind);
  return eff.traces.back();
}

void CoordinatorNode::order_rollback(TimeUs now, FragmentId f, const Rollback& r, bool first, Effects& eff) {
  const Settings& s = plan_->settings();
  const NodeId failed = failed_node_[r.failed];
  // Under local recovery the first order goes without the snapshot to a node whose host should
  // hold a copy: the failed node's replacement on the failed node's host, or a live primary
  // rolling back in place (it took the snapshots). It is repeated soon (a heartbeat interval)
  // with the snapshot, for a host that had no complete copy after all.
  const auto local_expected = [&](NodeId n) {
    if (!first || !s.local_recovery) return false;
    return f == r.failed ? host_of(*plan_, n) == host_of(*plan_, failed) : n == watched_[f].acting;
  };
  bool waits_for_local = false;
  const std::optional<Bytes> snapshot = r.to != 0 ? store_.snapshot(r.to, plan_->fragments[f].name) : std::nullopt;
  // The snapshot goes to the nodes that install it: the failed fragment's nodes but the failed
  // one (its replacement is among them), another fragment's acting node (it rolls back in
  // place; its spares ignore the order).
  const auto installs = [&](NodeId n) { return f == r.failed ? n != failed : n == watched_[f].acting; };
  for (NodeId n : plan_->fragments[f].replicas()) {
    if (snapshot && installs(n)) {
      if (local_expected(n)) waits_for_local = true;
      else send_snapshot(now, n, r.to, *snapshot, eff);
    }
    send(now, n, r, eff);
  }
  const TimeUs resend_us = now + 1000 * (waits_for_local ? s.heartbeat_interval_ms : s.retransmit_timeout_ms);
  rollback_resend_us_ = first ? std::min(rollback_resend_us_, resend_us) : resend_us;
}

void CoordinatorNode::repeat_rollbacks(TimeUs now, Effects& eff) {
  for (auto it = pending_rollbacks_.begin(); it != pending_rollbacks_.end();)
    it = coordinator_.restoring(it->first) ? std::next(it) : pending_rollbacks_.erase(it);
  if (pending_rollbacks_.empty()) {
    rollback_resend_us_ = kNever;
    return;
  }
  if (now < rollback_resend_us_) return;
  // The order or a chunk of its snapshot was lost, or the Restored: the order again (a node
  // that restored from it answers Restored again).
  for (const auto& [f, r] : pending_rollbacks_) {
    order_rollback(now, f, r, false, eff);
    count("rollbacks_repeated");
  }
}

void CoordinatorNode::send_snapshot(TimeUs now, NodeId to, CheckpointId id, const Bytes& snapshot, Effects& eff) {
  const auto chunk = static_cast<std::size_t>(std::max<std::int64_t>(plan_->settings().checkpoint_chunk_bytes, 1));
  const auto count = static_cast<std::uint32_t>(std::max<std::size_t>((snapshot.size() + chunk - 1) / chunk, 1));
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t from = std::size_t{i} * chunk;
    const std::size_t to_byte = std::min(snapshot.size(), from + chunk);
    Bytes part(snapshot.begin() + static_cast<std::ptrdiff_t>(from), snapshot.begin() + static_cast<std::ptrdiff_t>(to_byte));
    send(now, to, Checkpoint{id, false, 0, i, count, std::move(part)}, eff);
  }
  count_bytes("snapshot_bytes_restored", snapshot.size());
}

void CoordinatorNode::send(TimeUs now, NodeId to, Message body, Effects& eff) {
  // The coordinator runs no fragment, so it has no fragment epoch: 0.
  eff.sends.push_back(Outgoing{to, Envelope{Header{self_, 0, now}, std::move(body)}});
  count(std::string("messages_to_fragments.") + message_kind_name(eff.sends.back().envelope.body));
}

Effects CoordinatorNode::handle(TimeUs now, const Event& event) {
  Effects eff;
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, Start>) {
          on_start(now, e, eff);
        } else if constexpr (std::is_same_v<T, Tick>) {
          CoordinatorOutput out;
          for (auto& [f, w] : watched_)
            if (!w.restoring && w.detector.check(now)) failed(now, f, w.acting, Detector::heartbeat, out, eff);
          coordinator_.tick(now, out);
          apply(now, out, eff);
          repeat_rollbacks(now, eff);
        } else if constexpr (std::is_same_v<T, PeerLost>) {
          const FragmentId f = coordinated_fragment_of(e.peer);
          if (f == kNoFragment || watched_[f].acting != e.peer || watched_[f].restoring) {
            count("peer_lost_ignored");  // not a node acting for a coordinated fragment now
            return;
          }
          CoordinatorOutput out;
          failed(now, f, e.peer, e.detector, out, eff);
          apply(now, out, eff);
        } else {
          on_message(now, e.envelope, eff);
        }
      },
      event);
  if (started_) {
    eff.wake_at(coordinator_.next_wakeup_us());
    if (!pending_rollbacks_.empty()) eff.wake_at(rollback_resend_us_);
    for (const auto& [f, w] : watched_)
      if (!w.restoring) eff.wake_at(w.detector.deadline_us());
  }
  return eff;
}

void CoordinatorNode::on_start(TimeUs now, const Start& start, Effects& eff) {
  HAPAIR_CHECK_MSG(!started_, "coordinator started twice");
  started_ = true;
  for (auto& [f, w] : watched_) {
    w.detector.start(now);
    if (start.driver_watches_partner) w.detector.disable();
  }
  trace(eff, now, TraceKind::start)
      .with(TraceKey::role, Role::coordinator)
      .with(TraceKey::ha, plan_->fragments.at(fragments_.front()).ha);
  CoordinatorOutput out;
  coordinator_.start(now, out);
  apply(now, out, eff);
}

void CoordinatorNode::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  const FragmentId f = coordinated_fragment_of(env.header.sender);
  const char* kind = message_kind_name(env.body);
  if (f == kNoFragment) {
    count(std::string("unexpected_") + kind + "_dropped");
    return;
  }
  Watched& w = watched_[f];
  CoordinatorOutput out;
  if (const auto* r = std::get_if<Restored>(&env.body)) {
    if (r->fragment != f) {
      count("unexpected_restored_dropped");
      return;
    }
    // The node that restored acts for the fragment from now on (a spare that replaced it, or
    // the primary itself): watched again.
    const bool was_restoring = w.restoring;
    coordinator_.restored(now, f, r->number, out);
    if (was_restoring && !coordinator_.restoring(f)) {
      w.acting = env.header.sender;
      w.restoring = false;
      w.detector.heard(now);
      trace(eff, now, TraceKind::checkpoint_restore)
          .with(TraceKey::checkpoint, coordinator_.newest_complete().value_or(0))
          .with(TraceKey::count, r->number)
          .with(TraceKey::peer, env.header.sender);
    }
    apply(now, out, eff);
    return;
  }
  if (env.header.sender != w.acting) {
    count(std::string("not_acting_") + kind + "_dropped");  // a standby's, or a failed node's late message
    return;
  }
  w.detector.heard(now);  // any message of the acting node is a heartbeat
  if (const auto* c = std::get_if<Checkpoint>(&env.body)) {
    on_chunk(now, f, *c, out);
  } else if (!std::holds_alternative<Heartbeat>(env.body)) {
    count(std::string("unexpected_") + kind + "_dropped");
  }
  apply(now, out, eff);
}

void CoordinatorNode::on_chunk(TimeUs now, FragmentId f, const Checkpoint& chunk, CoordinatorOutput& out) {
  const auto in_flight = coordinator_.in_flight();
  if (!in_flight || chunk.checkpoint_id != *in_flight || chunk.delta || chunk.chunk_count == 0 ||
      chunk.chunk_count > kSnapshotChunksMax || chunk.chunk_index >= chunk.chunk_count) {
    count("stale_snapshot_chunks");
    return;
  }
  Reassembly& r = reassembly_[f];
  if (r.id != chunk.checkpoint_id || r.count != chunk.chunk_count) r = Reassembly{chunk.checkpoint_id, chunk.chunk_count, {}};
  r.chunks[chunk.chunk_index] = chunk.payload;  // a repeated chunk replaces itself
  if (r.chunks.size() < r.count) return;
  Bytes whole;
  for (const auto& [index, part] : r.chunks) whole.insert(whole.end(), part.begin(), part.end());
  reassembly_.erase(f);
  coordinator_.snapshot(now, f, chunk.checkpoint_id, whole, out);
  count("snapshots_received");
}

void CoordinatorNode::failed(TimeUs now, FragmentId f, NodeId node, Detector detector, CoordinatorOutput& out,
                             Effects& eff) {
  trace(eff, now, TraceKind::detection)
      .with(TraceKey::failed, node)
      .with(TraceKey::detector, detector)
      .with(TraceKey::silent_us, watched_[f].detector.silence_us(now, detector == Detector::connection, 0));
  failed_node_[f] = node;
  coordinator_.fragment_failed(now, f, out);
}

void CoordinatorNode::apply(TimeUs now, const CoordinatorOutput& out, Effects& eff) {
  for (CheckpointId id : out.abandoned) {
    trace(eff, now, TraceKind::checkpoint_abandoned).with(TraceKey::checkpoint, id);
    count("checkpoints_abandoned");
    reassembly_.clear();
  }
  for (const Rollback& r : out.rollbacks) {
    trace(eff, now, TraceKind::checkpoint_rollback)
        .with(TraceKey::checkpoint, r.to)
        .with(TraceKey::failed, failed_node_[r.failed])
        .with(TraceKey::count, r.fragments.size());
    count("rollbacks");
    rollback_resend_us_ = kNever;  // each first order below sets when its repetition is due
    for (FragmentId f : r.fragments) {
      watched_[f].restoring = true;
      reassembly_.erase(f);
      // Every node of the fragment: the one that acts for it restores in place, the
      // replacement of a failed one (its spare, or its restarted process) takes over. The
      // snapshot goes first, in chunks, to every node but the failed one (one connection: it
      // arrives before the order).
      order_rollback(now, f, r, true, eff);
      pending_rollbacks_[f] = r;
    }
  }
  for (CheckpointId id : out.triggered) {
    trace(eff, now, TraceKind::checkpoint_triggered).with(TraceKey::checkpoint, id);
    count("checkpoints_triggered");
    for (FragmentId f : source_readers_) send(now, watched_[f].acting, CheckpointTrigger{id}, eff);
  }
  for (CheckpointId id : out.completed) {
    trace(eff, now, TraceKind::checkpoint_completed).with(TraceKey::checkpoint, id);
    count("checkpoints_completed");
    for (FragmentId f : fragments_) send(now, watched_[f].acting, CheckpointComplete{id}, eff);
  }
}

}  // namespace hapair
