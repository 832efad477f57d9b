#include "backup/checkpoint_sender.h"

#include "protocols/check.h"

namespace hapair {

CheckpointSender::CheckpointSender(Server& server, std::vector<NodeId> standbys, bool restoring, std::uint64_t first_id)
    : server_(server), standbys_(std::move(standbys)), next_id_(first_id) {
  HAPAIR_CHECK_MSG(!standbys_.empty() && standbys_.size() <= kStandbysMax && first_id >= 1,
                   "node " << server_.node().self() << " checkpoints to " << standbys_.size() << " standbys from id " << first_id);
  for (NodeId n : standbys_) {
    HAPAIR_CHECK_MSG(n != kNoNode && n != server_.node().self(), "node " << server_.node().self() << " checkpoints to node " << n);
    if (restoring) restoring_.insert(n);
  }
  const Fragment* fragment = server_.workload().fragment();
  hold_output_ = fragment && fragment->klass() == OperatorClass::arbitrary;
}

void CheckpointSender::add_standby(TimeUs now, NodeId standby, Effects& eff) {
  HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                   "node " << server_.node().self() << " checkpoints to node " << standby);
  std::erase(standbys_, standby);
  if (in_flight_) in_flight_->awaiting.erase(standby);  // a restarted standby: what it had is gone
  standbys_.push_back(standby);
  HAPAIR_CHECK_MSG(standbys_.size() <= kStandbysMax, "node " << server_.node().self() << " checkpoints to " << standbys_.size() << " standbys");
  restoring_.insert(standby);
  full_next_ = true;
  take_now(now, eff);
}

bool CheckpointSender::remove_standby(NodeId standby) {
  std::erase(standbys_, standby);
  restoring_.erase(standby);
  // The in-flight checkpoint no longer waits for it; if nobody else does, the next tick settles it.
  if (in_flight_) in_flight_->awaiting.erase(standby);
  return !standbys_.empty();
}

void CheckpointSender::on_start(TimeUs now, bool at_once) {
  next_due_us_ = at_once ? now : now + us_from_ms(static_cast<double>(server_.node().settings().checkpoint_interval_ms));
  // What was produced before this standby existed is released already (nothing, at the start
  // of a run); from here on an arbitrary fragment's output waits for a covering checkpoint.
  if (hold_output_) server_.outputs().hold_all();
}

void CheckpointSender::on_tick(TimeUs now, Effects& eff) {
  // An arbitrary fragment's output waits for a covering checkpoint: while this sender lives its
  // gates stay held (opened only once the standby is lost and this sender with it).
  if (hold_output_)
    for (const auto& [s, o] : server_.outputs())
      HAPAIR_CHECK_MSG(o.gate().held(), "stream " << s << " released past checkpoints while standby " << standbys_.front() << " lives");
  // Every standby it went to acknowledged it, or is gone (remove_standby).
  if (in_flight_ && in_flight_->awaiting.empty()) acknowledged(now, eff);
  if (in_flight_ && now - in_flight_sent_us_ >= ack_timeout_us_) {
    // No acknowledgement: a chunk or the ack was lost (or the standby is slow or gone). Start
    // over with a full checkpoint under a new id, and wait longer next time (a big checkpoint
    // on a slow link must get the chance to arrive).
    server_.count("checkpoint_retries");
    server_.trace(eff, now, TraceKind::checkpoint_retry).with(TraceKey::checkpoint, in_flight_->summary.id);
    in_flight_.reset();
    base_.reset();
    ack_timeout_us_ = std::min<TimeUs>(ack_timeout_us_ * 2, 64 * base_ack_timeout_us());
    take_checkpoint(now, eff);
    return;
  }
  if (!in_flight_ && now >= next_due_us_) take_checkpoint(now, eff);
}

TimeUs CheckpointSender::base_ack_timeout_us() const {
  return us_from_ms(static_cast<double>(server_.node().settings().retransmit_timeout_ms)) +
         us_from_ms(static_cast<double>(server_.node().settings().checkpoint_interval_ms));
}

void CheckpointSender::take_checkpoint(TimeUs now, Effects& eff) {
  // At most one checkpoint in flight: the next waits for the ack (or the retry that gives up on
  // it), so a delta always applies to what the standby installed.
  HAPAIR_CHECK_MSG(!in_flight_, "checkpoint " << next_id_ << " taken while " << in_flight_->summary.id << " is in flight");
  const bool delta = server_.node().settings().checkpoint_mode == CheckpointMode::delta && base_.has_value() && !full_next_;
  full_next_ = false;
  const std::uint64_t id = next_id_++;
  HAPAIR_CHECK_MSG(!base_ || base_->id < id, "checkpoint " << id << " after its base " << base_->id);
  next_due_us_ = now + us_from_ms(static_cast<double>(server_.node().settings().checkpoint_interval_ms));
  CapturedCheckpoint captured = capture_checkpoint(server_, id, delta ? &*base_ : nullptr,
                                                   static_cast<std::size_t>(server_.node().settings().checkpoint_chunk_bytes));
  CheckpointContent& content = captured.summary;
  HAPAIR_CHECK_MSG(content.id == id && content.delta == delta && content.base_id == (delta ? base_->id : 0),
                   "checkpoint " << id << " captured as " << content.id << " delta " << content.delta << " on base "
                                 << content.base_id);
  std::vector<std::uint64_t> versions;
  if (const Fragment* fragment = server_.workload().fragment()) versions = fragment->state_versions();
  const std::size_t payload_bytes = captured.payload_bytes;
  auto chunks = checkpoint_messages(id, delta, content.base_id, std::move(captured.chunks));
  const std::size_t chunk_count = chunks.size();
  for (std::size_t i = 0; i + 1 < standbys_.size(); ++i)
    for (const auto& c : chunks) server_.send(eff, now, standbys_[i], Checkpoint(c));
  for (auto& c : chunks) server_.send(eff, now, standbys_.back(), std::move(c));
  server_.count("checkpoints_sent");
  server_.count("checkpoint_payload_bytes", static_cast<std::int64_t>(payload_bytes));
  server_.count(delta ? "checkpoint_delta_payload_bytes" : "checkpoint_full_payload_bytes",
                static_cast<std::int64_t>(payload_bytes));
  server_.count(delta ? "checkpoints_delta" : "checkpoints_full");
  server_.trace(eff, now, TraceKind::checkpoint)
      .with(TraceKey::checkpoint, id)
      .with(TraceKey::mode, delta ? CheckpointMode::delta : CheckpointMode::full)
      .with(TraceKey::bytes, payload_bytes)
      .with(TraceKey::chunks, chunk_count)
      .with(TraceKey::standby, standbys_.front());
  if (standbys_.size() > 1) server_.count("checkpoint_copies_sent", static_cast<std::int64_t>(standbys_.size() - 1));
  for (const auto& in : content.inputs) {
    server_.trace(eff, now, TraceKind::checkpoint_covers)
        .with(TraceKey::checkpoint, id)
        .with(TraceKey::stream, in.stream)
        .with(TraceKey::position, in.processed);
  }
  const std::set<NodeId> to(standbys_.begin(), standbys_.end());
  in_flight_ = InFlight{std::move(content), std::move(versions), to, to};
  in_flight_sent_us_ = now;
  if (ack_timeout_us_ == 0) ack_timeout_us_ = base_ack_timeout_us();
}

void CheckpointSender::on_ack(TimeUs now, NodeId from, const CheckpointAck& ack, Effects& eff) {
  if (!in_flight_ || ack.checkpoint_id != in_flight_->summary.id || !in_flight_->awaiting.count(from)) {
    server_.count("unexpected_checkpoint_ack_dropped");
    return;
  }
  in_flight_->awaiting.erase(from);
  if (!in_flight_->awaiting.empty()) {
    server_.count("checkpoint_acks_awaiting_others");
    return;
  }
  acknowledged(now, eff);
}

void CheckpointSender::acknowledged(TimeUs now, Effects& eff) {
  HAPAIR_CHECK_MSG(in_flight_ && in_flight_->awaiting.empty(), "checkpoint acknowledged while standbys still install it");
  const CheckpointContent& c = in_flight_->summary;
  server_.trace(eff, now, TraceKind::checkpoint_acked).with(TraceKey::checkpoint, c.id);
  // Upstream servers may now trim everything this checkpoint covers. Acknowledged checkpoints
  // were captured in order, so what they cover never moves back (an upstream keeps the highest
  // level-1 position; a lower one here would mean a checkpoint covered input it had not).
  for (const auto& in : c.inputs) {
    TupleId& covered = acked_inputs_[in.stream];
    HAPAIR_CHECK_MSG(in.processed >= covered, "checkpoint " << c.id << " covers stream " << in.stream << " up to "
                                                            << in.processed << ", an earlier one up to " << covered);
    covered = in.processed;
    const FragmentId producer = server_.inputs().at(in.stream).producer();
    for (NodeId n : server_.routes().input_nodes_of(producer))
      server_.send(eff, now, n, Level1Ack{in.stream, in.processed, c.id, {}, {}});
  }
  if (hold_output_)
    for (const auto& o : c.outputs) {
      // Only output that exists (and so that the checkpoint holds) is released.
      HAPAIR_CHECK_MSG(o.last_id <= server_.outputs().at(o.stream).queue().last_id(),
                       "checkpoint " << c.id << " releases stream " << o.stream << " up to " << o.last_id << " beyond "
                                     << server_.outputs().at(o.stream).queue().last_id());
      server_.outputs().release(o.stream, o.last_id);
    }
  HAPAIR_CHECK_MSG(!base_ || base_->id < c.id, "acknowledged checkpoint " << c.id << " after base " << base_->id);
  base_ = base_of(c, in_flight_->versions);
  // The standbys this checkpoint went to that were being restored are restored now.
  for (NodeId n : in_flight_->sent_to)
    if (restoring_.erase(n) != 0) server_.trace(eff, now, TraceKind::pair_restored).with(TraceKey::standby, n).with(TraceKey::checkpoint, c.id);
  in_flight_.reset();
  ack_timeout_us_ = base_ack_timeout_us();
  server_.count("checkpoints_acked");
}

}  // namespace hapair
