#include "checkpoint/checkpoint_ends.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <type_traits>

#include "checkpoint/coordinator_node.h"
#include "checkpoint/fragment_checkpointer.h"
#include "primary/checkpoint_state.h"
#include "primary/primary_role.h"
#include "primary/standby_role.h"
#include "primary/takeover.h"
#include "protocols/check.h"

namespace hapair {

namespace {

TimeUs ms(std::int64_t v) { return us_from_ms(static_cast<double>(v)); }

// The inputs whose barrier the coordinator's trigger sets: those produced outside the checkpoint
// (a source, or a fragment of another approach).
std::vector<StreamId> outside_inputs(const Plan& plan, const PlanFragment& f) {
  std::vector<StreamId> out;
  for (StreamId s : f.inputs)
    if (!plan.traits(plan.streams.at(s).producer).coordinator) out.push_back(s);
  return out;
}

// A fragment's checkpointer with nothing heard yet: its inputs, those outside the checkpoint.
FragmentCheckpointer fresh_checkpointer(const Server& server) {
  return FragmentCheckpointer(server.node().fragment_plan().inputs,
                              outside_inputs(server.node().plan(), server.node().fragment_plan()));
}

// The coordinator's chunks of a fragment's snapshot, ahead of its rollback order (both ends
// restore from it: the spare at a takeover, a live primary in place under failover = full).
class SnapshotFromStore {
 public:
  // A chunk from the coordinator; keeps the snapshot once it is whole, full and of its checkpoint.
  void add(Server& server, const Checkpoint& chunk) {
    auto payload = assembler_.add(chunk);
    if (!payload) return;
    auto content = parse_checkpoint(*payload, TupleParsing::unpack);
    if (content && !content->delta && content->id == chunk.checkpoint_id) snapshot_ = std::move(*content);
    else server.count("corrupt_snapshot_dropped");
  }
  // The snapshot of checkpoint `id`, when it came whole.
  const CheckpointContent* of(CheckpointId id) const { return snapshot_ && snapshot_->id == id ? &*snapshot_ : nullptr; }

 private:
  CheckpointAssembler assembler_;
  std::optional<CheckpointContent> snapshot_;
};

// Local recovery (Settings::local_recovery): my host's copy of my fragment's snapshot of
// checkpoint `id`, when the host holds it whole and complete (a copy is completed when its
// checkpoint is; the coordinator's order names a complete one).
std::optional<CheckpointContent> local_copy(Server& server, CheckpointId id) {
  CheckpointStore* copies = server.local_snapshots();
  if (copies == nullptr || id == 0) return std::nullopt;
  std::optional<Bytes> bytes;
  try {
    bytes = copies->snapshot(id, server.node().fragment_plan().name);
  } catch (const std::exception&) {
    server.count("local_copy_unreadable");
    return std::nullopt;
  }
  if (!bytes) {
    server.count("local_copy_missing");
    return std::nullopt;
  }
  auto content = parse_checkpoint(*bytes, TupleParsing::unpack);
  if (!content || content->delta || content->id != id) {
    server.count("local_copy_corrupt");
    return std::nullopt;
  }
  server.count("local_copy_restored");
  return content;
}

// The snapshot a rollback to `id` installs: the coordinator's, when its chunks came whole before
// the order, else my host's copy under local recovery (the coordinator then sends none with its
// first order). nullptr for checkpoint 0 or when neither is here (the order is repeated with
// the coordinator's chunks). `source` says which.
const CheckpointContent* rollback_snapshot(Server& server, const SnapshotFromStore& sent, CheckpointId id,
                                           std::optional<CheckpointContent>& local, const char*& source) {
  if (const CheckpointContent* c = sent.of(id)) {
    source = "from the coordinator's checkpoint";
    return c;
  }
  local = local_copy(server, id);
  source = "from its host's local copy";
  return local ? &*local : nullptr;
}

class CheckpointPrimarySide final : public StatelessPrimarySide {
 public:
  // `restored`: the coordinator's rollback order I took over with (0: none); a repetition of it
  // is answered with Restored again.
  CheckpointPrimarySide(Server& server, const PrimaryOptions& options, std::uint64_t restored = 0)
      : StatelessPrimarySide(server),
        restored_(restored),
        checkpointer_(fresh_checkpointer(server)),
        coordinator_(server.node().plan().coordinator),
        generation_(options.first_generation - 1),
        unaligned_(server.node().settings().checkpoint_alignment == CheckpointAlignment::unaligned) {
    HAPAIR_CHECK_MSG(coordinator_ != kNoNode, "ha checkpoint at " << server.node().name() << " without a coordinator");
  }

  void on_start(TimeUs now, const std::vector<NodeId>& standbys) override {
    standbys_.insert(standbys.begin(), standbys.end());
    next_heartbeat_us_ = server_.pair().own_heartbeats() ? now : kNever;
    // An arbitrary fragment (a Union in arrival order) would regenerate another interleaving
    // under the same ids after a rollback: its output goes out only once a complete checkpoint
    // covers it (a transactional sink's price, paid at the fragment). What a restored queue
    // holds is covered already.
    const Fragment* fragment = server_.workload().fragment();
    hold_output_ = fragment != nullptr && fragment->klass() == OperatorClass::arbitrary;
    if (hold_output_) server_.outputs().hold_all();
    StatelessPrimarySide::on_start(now, standbys);
  }

  void on_tick(TimeUs now, Effects& eff) override {
    if (now >= next_heartbeat_us_) {
      // Any message of mine feeds the coordinator's detector; this is the one sent when
      // nothing else goes to it.
      server_.send(eff, now, coordinator_, Heartbeat{});
      next_heartbeat_us_ = now + ms(server_.node().settings().heartbeat_interval_ms);
    }
    StatelessPrimarySide::on_tick(now, eff);
  }

  bool on_neighbour_message(TimeUs now, NodeId from, const Message& m, Effects& eff) override {
    const bool from_coordinator = from == coordinator_;
    if (const auto* t = std::get_if<CheckpointTrigger>(&m)) {
      if (!from_coordinator) return false;
      on_trigger(now, t->checkpoint_id, eff);
      return true;
    }
    if (const auto* b = std::get_if<CheckpointBarrier>(&m)) {
      on_barrier(now, from, *b, eff);
      return true;
    }
    if (const auto* c = std::get_if<CheckpointComplete>(&m)) {
      if (!from_coordinator) return false;
      on_complete(now, c->checkpoint_id, eff);
      return true;
    }
    if (const auto* chunk = std::get_if<Checkpoint>(&m)) {
      if (!from_coordinator) return false;
      // My snapshot of the checkpoint a rollback goes to (failover = full), ahead of the order.
      snapshot_.add(server_, *chunk);
      return true;
    }
    if (std::holds_alternative<Rollback>(m)) {
      if (!from_coordinator) return false;
      if (const auto* r = std::get_if<Rollback>(&m); r != nullptr && restored_ != 0 && r->number == restored_) {
        // The order I took over with, repeated: my Restored was lost.
        server_.send(eff, now, coordinator_, Restored{restored_, server_.node().fragment_id()});
        server_.count("restored_repeated");
        return true;
      }
      const auto* r = std::get_if<Rollback>(&m);
      const FragmentId own = server_.node().fragment_id();
      const bool names_me = std::find(r->fragments.begin(), r->fragments.end(), own) != r->fragments.end();
      if (names_me && r->failed != own && r->number > restored_) {
        // failover = full: another fragment failed, and I roll back with everyone.
        roll_back_in_place(now, *r, eff);
        return true;
      }
      if (names_me && r->failed == own && standbys_.empty()) {
        // The coordinator found me failed, but I live (a stall, a cut), and no spare of mine can
        // take over: my state is whole, so my region needs no rollback. I answer for it.
        restored_ = r->number;
        server_.send(eff, now, coordinator_, Restored{restored_, own});
        server_.count("rollbacks_answered_alive");
        return true;
      }
      // A rollback of my own fragment reaches me when the coordinator found me failed but I
      // live (a stall, a cut): my spare takes over and its Takeover fences me.
      server_.count("primary_rollback_ignored");
      return true;
    }
    return false;
  }

  void after_processing(TimeUs now, Effects& eff) override {
    for (const auto& [s, in] : server_.inputs())
      if (in.eos_processed()) checkpointer_.input_ended(s, in.processed());
    std::map<StreamId, TupleId> processed;
    for (const auto& [s, in] : server_.inputs()) processed[s] = in.processed();
    const std::optional<DueSnapshot> due = checkpointer_.due(processed, {});
    if (due) snapshot(now, due->id, eff);
  }

  TimeUs retransmit(TimeUs now, Effects& eff) override {
    if (!barriers_) return kNever;
    if (now >= barriers_->resend_us) {
      // No completion yet: a barrier, a chunk of my snapshot or the completion may have been
      // lost. Both again (the coordinator takes a repeated chunk as the same).
      for (const Checkpoint& c : barriers_->chunks) server_.send(eff, now, coordinator_, c);
      send_barriers(now, eff);
      server_.count("checkpoint_snapshots_repeated");
    }
    return barriers_->resend_us;
  }

  void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) override {
    // A spare holds nothing: what it will need at a takeover is in the coordinator's store.
    standbys_.insert(standby);
    StatelessPrimarySide::on_standby_joined(now, standby, eff);
  }
  void on_standby_lost(NodeId standby) override { standbys_.erase(standby); }

  // My held output waits for a complete checkpoint, not for my spare.
  bool output_held_for_standby() const override { return false; }

  TimeUs next_wakeup_us() const override {
    TimeUs t = std::min(next_heartbeat_us_, StatelessPrimarySide::next_wakeup_us());
    if (barriers_) t = std::min(t, barriers_->resend_us);
    return t;
  }

 private:
  // My last snapshot's chunks and barriers, kept until its checkpoint completes.
  struct SentBarriers {
    CheckpointId id = 0;
    std::vector<Checkpoint> chunks;
    std::vector<CheckpointBarrier> barriers;
    std::vector<NodeId> to;  // per barrier
    TimeUs resend_us = kNever;
  };

  void on_trigger(TimeUs now, CheckpointId id, Effects& eff) {
    if (unaligned_) {
      snapshot_unaligned(now, id, eff);
      return;
    }
    std::map<StreamId, TupleId> accepted;
    for (const auto& [s, in] : server_.inputs()) accepted[s] = in.last_accepted();
    if (!checkpointer_.trigger(id, accepted)) {
      server_.count("stale_checkpoint_triggers");
      return;
    }
    // A trigger behind what was processed cannot happen (accepted >= processed), so no overtaking.
    sync_holds();
  }

  void on_barrier(TimeUs now, NodeId from, const CheckpointBarrier& b, Effects& eff) {
    (void)eff;
    const auto in = server_.inputs().find(b.stream);
    const bool from_producer = in != server_.inputs().end() && server_.node().plan().runs_fragment(from) &&
                               server_.node().plan().nodes[from].fragment == in->second.producer();
    if (!from_producer || checkpointer_.is_outside(b.stream)) {
      server_.count("unexpected_checkpoint_barrier_dropped");
      return;
    }
    if (unaligned_) {
      snapshot_unaligned(now, b.checkpoint_id, eff);
      return;
    }
    if (b.checkpoint_id <= abandoned_here_) {
      server_.count("stale_checkpoint_barriers");
      return;
    }
    if (in->second.processed() > b.after_id) {
      // Tuples beyond the barrier overtook it (a reordering or a retransmission on the link):
      // my snapshot could no longer be consistent. I abandon the checkpoint (it cannot complete;
      // the coordinator abandons it at its timeout and triggers the next).
      abandoned_here_ = b.checkpoint_id;
      checkpointer_.abandon(b.checkpoint_id);
      sync_holds();
      server_.count("checkpoint_barriers_overtaken");
      server_.trace(eff, now, TraceKind::checkpoint_abandoned).with(TraceKey::checkpoint, b.checkpoint_id).with(TraceKey::stream, b.stream);
      return;
    }
    const BarrierAligner::Heard heard = checkpointer_.barrier(b.stream, b.checkpoint_id, b.after_id);
    if (heard == BarrierAligner::Heard::stale) server_.count("stale_checkpoint_barriers");
    sync_holds();
  }

  void on_complete(TimeUs now, CheckpointId id, Effects& eff) {
    if (barriers_ && barriers_->id <= id) barriers_.reset();
    complete_local_copy(id);
    std::optional<std::map<StreamId, TupleId>> positions;
    if (!unaligned_) {
      positions = checkpointer_.completed(id);
    } else if (auto it = unaligned_taken_.find(id); it != unaligned_taken_.end()) {
      positions = std::move(it->second);
      unaligned_taken_.erase(unaligned_taken_.begin(), std::next(it));
    }
    if (!positions) return;
    if (auto out = taken_outputs_.find(id); out != taken_outputs_.end()) {
      for (const auto& [s, last] : out->second) server_.outputs().release(s, last);
      taken_outputs_.erase(taken_outputs_.begin(), std::next(out));
    }
    // My producers may trim what checkpoint `id` covers: a rollback goes back at most to it.
    ++generation_;
    for (const auto& [s, done] : *positions) {
      TupleId& last = level1_[s];
      if (done <= last) continue;
      last = done;
      const FragmentId producer = server_.inputs().at(s).producer();
      for (NodeId n : server_.routes().input_nodes_of(producer)) server_.send(eff, now, n, Level1Ack{s, done, generation_, {}, {}});
    }
  }

  // checkpoint_alignment = unaligned: the first barrier (or the trigger) of a checkpoint takes my
  // snapshot at once, at whatever each input was processed to, and sends my barriers on; later
  // barriers of it are stale. Consistent without holding input: my snapshot holds my output
  // queues (the tuples in flight to my consumers, Flink's unaligned channel state), ids are
  // deterministic, so a consumer whose snapshot went past my barrier drops what I regenerate up
  // to its position as duplicates, and an arbitrary fragment released nothing beyond a complete
  // checkpoint.
  void snapshot_unaligned(TimeUs now, CheckpointId id, Effects& eff) {
    if (id <= last_unaligned_) {
      server_.count("stale_checkpoint_barriers");
      return;
    }
    last_unaligned_ = id;
    std::map<StreamId, TupleId>& inputs = unaligned_taken_[id];
    for (const auto& [s, in] : server_.inputs()) inputs[s] = in.processed();
    while (unaligned_taken_.size() > FragmentCheckpointer::kTakenMax) unaligned_taken_.erase(unaligned_taken_.begin());
    snapshot(now, id, eff);
  }

  // failover = full: I install my snapshot of checkpoint r.to (empty state when it is 0) in
  // place, start a new epoch so my neighbours re-route and ask me to replay (the takeover's
  // announcement, with me as my own successor), ask my producers to replay after the snapshot's
  // input positions, and tell the coordinator. Input queued or held, alignment, barriers and
  // the outputs awaiting completion belong to the abandoned timeline and go.
  void roll_back_in_place(TimeUs now, const Rollback& r, Effects& eff) {
    std::optional<CheckpointContent> local;
    const char* source = "";
    const CheckpointContent* snapshot = r.to == 0 ? nullptr : rollback_snapshot(server_, snapshot_, r.to, local, source);
    if (r.to != 0 && snapshot == nullptr) {
      server_.count("rollback_without_snapshot");  // a lost chunk: the order is repeated
      return;
    }
    restored_ = r.number;
    server_.inputs().reset_for_standby();
    holds_.clear();
    if (r.to == 0) {
      server_.workload().reset();
      std::vector<CheckpointInput> inputs;
      for (StreamId s : server_.node().fragment_plan().inputs) inputs.push_back(CheckpointInput{s, 0, false});
      std::vector<CheckpointOutput> outputs;
      for (StreamId s : server_.node().fragment_plan().outputs) outputs.push_back(CheckpointOutput{s, 0, 0, 0, false, {}});
      server_.inputs().restore(inputs);
      server_.outputs().restore(outputs);
    } else if (!install_checkpoint(server_, *snapshot)) {
      server_.count("checkpoint_install_failed");
      return;
    }
    server_.outputs().reset_consumers_awaiting_replay_request();
    server_.pair().renew_claim();
    server_.pair().announce_takeover(now, eff, kNoNode);
    server_.inputs().request_replay(now, eff, {}, 0);
    checkpointer_ = fresh_checkpointer(server_);
    barriers_.reset();
    taken_outputs_.clear();
    unaligned_taken_.clear();
    if (hold_output_) server_.outputs().hold_all();
    server_.count("rollbacks_in_place");
    server_.trace(eff, now, TraceKind::checkpoint_restore)
        .with(TraceKey::checkpoint, r.to)
        .with(TraceKey::count, r.number)
        .with_text(std::string("in place ") + (r.to == 0 ? "(empty: no checkpoint complete)" : source));
    server_.send(eff, now, coordinator_, Restored{r.number, server_.node().fragment_id()});
  }

  // Holds every input at its barrier of the checkpoint being aligned, and releases the rest.
  void sync_holds() {
    for (const auto& [s, in] : server_.inputs()) {
      const TupleId limit = checkpointer_.limit(s);
      auto held = holds_.find(s);
      if (held != holds_.end() && held->second == limit) continue;
      if (held != holds_.end()) {
        server_.inputs().release_input(s);
        holds_.erase(held);
      }
      if (limit != BarrierAligner::kNoLimit) {
        server_.inputs().hold_input(s, limit);
        holds_[s] = limit;
      }
    }
  }

  void snapshot(TimeUs now, CheckpointId id, Effects& eff) {
    const auto chunk_bytes = static_cast<std::size_t>(server_.node().settings().checkpoint_chunk_bytes);
    CapturedCheckpoint captured = capture_checkpoint(server_, id, nullptr, chunk_bytes);
    keep_local_copy(id, captured.chunks);
    const auto count = static_cast<std::uint32_t>(captured.chunks.size());
    SentBarriers sent;
    for (std::uint32_t i = 0; i < count; ++i) sent.chunks.push_back(Checkpoint{id, false, 0, i, count, std::move(captured.chunks[i])});
    for (const Checkpoint& c : sent.chunks) server_.send(eff, now, coordinator_, c);
    // My barriers of `id`: after the last id I produced, on every stream to a coordinated consumer.
    const Plan& plan = server_.node().plan();
    sent.id = id;
    for (const CheckpointOutput& o : captured.summary.outputs) {
      // The barrier falls after what a consumer can get now: held output (an arbitrary
      // fragment's, released at completion) would otherwise wait for a completion that waits
      // for this consumer. What lies between the barrier and the last id is in my snapshot's
      // output queue, the channel's state of the cut, and is re-sent from it after a rollback.
      const ReleaseGate& gate = server_.outputs().at(o.stream).gate();
      const TupleId after = gate.held() ? std::min(o.last_id, gate.limit()) : o.last_id;
      for (FragmentId f : plan.streams.at(o.stream).consumers) {
        if (!plan.traits(f).coordinator) continue;
        sent.barriers.push_back(CheckpointBarrier{o.stream, id, after});
        sent.to.push_back(f);
      }
    }
    barriers_ = std::move(sent);
    if (hold_output_) {
      std::map<StreamId, TupleId>& outputs = taken_outputs_[id];
      for (const CheckpointOutput& o : captured.summary.outputs) outputs[o.stream] = o.last_id;
      while (taken_outputs_.size() > FragmentCheckpointer::kTakenMax) taken_outputs_.erase(taken_outputs_.begin());
    }
    send_barriers(now, eff);
    sync_holds();
    server_.count("checkpoint_snapshots");
    server_.trace(eff, now, TraceKind::checkpoint_snapshot)
        .with(TraceKey::checkpoint, id)
        .with(TraceKey::bytes, static_cast<std::int64_t>(captured.payload_bytes));
  }

  // Local recovery: my host keeps my snapshot too (completed with its checkpoint, on_complete).
  // A store that fails (a full disk) costs the copy, not the run: a replacement then restores
  // from the coordinator's store.
  void keep_local_copy(CheckpointId id, const std::vector<Bytes>& chunks) {
    CheckpointStore* copies = server_.local_snapshots();
    if (copies == nullptr) return;
    Bytes whole;
    for (const Bytes& c : chunks) whole.insert(whole.end(), c.begin(), c.end());
    try {
      copies->put_snapshot(id, server_.node().fragment_plan().name, whole);
      local_copies_.insert(id);
      while (local_copies_.size() > FragmentCheckpointer::kTakenMax) local_copies_.erase(local_copies_.begin());
      server_.count("local_copies_written");
    } catch (const std::exception&) {
      server_.count("local_copy_write_failed");
    }
  }

  void complete_local_copy(CheckpointId id) {
    CheckpointStore* copies = server_.local_snapshots();
    if (copies == nullptr || local_copies_.count(id) == 0) return;
    try {
      copies->complete(id, {server_.node().fragment_plan().name},
                       static_cast<std::size_t>(server_.node().settings().checkpoints_retained));
    } catch (const std::exception&) {
      server_.count("local_copy_write_failed");
    }
    local_copies_.erase(local_copies_.begin(), local_copies_.upper_bound(id));
  }

  void send_barriers(TimeUs now, Effects& eff) {
    for (std::size_t i = 0; i < barriers_->barriers.size(); ++i) {
      const NodeId to = server_.routes().route(barriers_->to[i]).primary;
      if (to != kNoNode) server_.send(eff, now, to, barriers_->barriers[i]);
    }
    barriers_->resend_us = now + ms(server_.node().settings().retransmit_timeout_ms);
  }

  std::uint64_t restored_;
  std::set<NodeId> standbys_;  // my live spares
  SnapshotFromStore snapshot_;  // for a rollback in place
  FragmentCheckpointer checkpointer_;
  NodeId coordinator_;
  std::uint64_t generation_;
  TimeUs next_heartbeat_us_ = kNever;
  std::map<StreamId, TupleId> holds_;
  std::map<StreamId, TupleId> level1_;
  std::optional<SentBarriers> barriers_;  // of my last snapshot, until it completes
  CheckpointId abandoned_here_ = 0;
  bool hold_output_ = false;
  // checkpoint_alignment = unaligned: the input positions of each snapshot awaiting completion.
  bool unaligned_;
  CheckpointId last_unaligned_ = 0;
  std::map<CheckpointId, std::map<StreamId, TupleId>> unaligned_taken_;
  // An arbitrary fragment: its output positions at each snapshot awaiting completion.
  std::map<CheckpointId, std::map<StreamId, TupleId>> taken_outputs_;
  // Local recovery: the checkpoints whose snapshot I put in my host's store, awaiting completion.
  std::set<CheckpointId> local_copies_;
};

// The spare of a fragment under global checkpoints: holds nothing, takes over on the
// coordinator's Rollback with the snapshot the coordinator sent.
class CheckpointSpareRole final : public StandbyRole {
 public:
  explicit CheckpointSpareRole(Server& server) : StandbyRole(server) {}

  void on_start(TimeUs now, Effects& eff) override {
    watch_.start(now);
    server_.trace(eff, now, TraceKind::start).with(TraceKey::role, Role::spare).with(TraceKey::ha, server_.node().mode());
  }
  void on_tick(TimeUs now, Effects& eff) override { watch_primary(now, eff); }
  TimeUs next_wakeup_us() const override { return successor_ ? kNever : watch_wakeup_us(); }

  void on_message(TimeUs now, const Envelope& env, Effects& eff) override {
    if (on_election_message(now, env, eff)) return;
    const NodeId from = env.header.sender;
    const bool from_coordinator = from == server_.node().plan().coordinator;
    watch_.heard_from(from, now);
    std::visit(
        [&](const auto& m) {
          using T = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<T, Checkpoint>) {
            if (from_coordinator) snapshot_.add(server_, m);
            else server_.count("unexpected_checkpoint_dropped");
          } else if constexpr (std::is_same_v<T, Rollback>) {
            if (from_coordinator) on_rollback(now, m, eff);
            else server_.count("unexpected_rollback_dropped");
          } else if constexpr (std::is_same_v<T, Takeover>) {
            if (auto next = learn_takeover(now, m, eff)) successor_ = std::move(next);
          } else if constexpr (std::is_same_v<T, Heartbeat>) {
          } else {
            server_.count(std::string("unexpected_") + message_kind_name(env.body) + "_dropped");
          }
        },
        env.body);
  }

 private:
  // My own watch found the primary silent: the coordinator decides (it watches the primary too,
  // and holds the state), and its detection is the one traced; I only count it.
  void primary_failed(TimeUs /*now*/, Effects& /*eff*/, Detector /*detector*/) override {
    server_.count("spare_suspected_primary");
  }

  void on_rollback(TimeUs now, const Rollback& r, Effects& eff) {
    const FragmentId own = server_.node().fragment_id();
    // Only the failed fragment's spare takes over; under failover = full the others' primaries
    // roll back in place.
    if (successor_ || r.number <= last_rollback_ || r.failed != own ||
        std::find(r.fragments.begin(), r.fragments.end(), own) == r.fragments.end()) {
      server_.count("rollbacks_not_mine");
      return;
    }
    std::optional<CheckpointContent> local;
    const char* source = "";
    const CheckpointContent* snapshot = r.to == 0 ? nullptr : rollback_snapshot(server_, snapshot_, r.to, local, source);
    if (r.to != 0 && snapshot == nullptr) {
      // The snapshot did not come whole before the order (a lost chunk, or under local recovery
      // my host holds no copy): I cannot take over with it. Counted; the coordinator repeats
      // its order with its snapshot's chunks.
      server_.count("rollback_without_snapshot");
      return;
    }
    last_rollback_ = r.number;
    begin_takeover(server_, now, eff, watch_.silence_us(now, Detector::heartbeat), Detector::heartbeat);
    std::string how = "state=empty (no checkpoint complete)";
    if (r.to == 0) {
      server_.workload().reset();
    } else if (!install_checkpoint(server_, *snapshot)) {
      server_.count("checkpoint_install_failed");
      server_.workload().reset();
      how = "state=empty checkpoint_install_failed";
    } else {
      how = source;
    }
    server_.inputs().request_replay(now, eff, {}, 0);
    server_.trace(eff, now, TraceKind::takeover)
        .with(TraceKey::ha, server_.node().mode())
        .with(TraceKey::exact_ids, true)
        .with(TraceKey::checkpoint, r.to)
        .with_text(how);
    server_.send(eff, now, server_.node().plan().coordinator, Restored{r.number, own});
    PrimaryOptions options;
    options.took_over = true;
    successor_ = std::make_unique<PrimaryRole>(server_, options, std::make_unique<CheckpointPrimarySide>(server_, options, r.number));
  }

  SnapshotFromStore snapshot_;
  std::uint64_t last_rollback_ = 0;
};

std::unique_ptr<RoleBehaviour> make_checkpoint_spare_role(Server& server, bool /*rejoined*/) {
  return std::make_unique<CheckpointSpareRole>(server);
}

std::unique_ptr<NodeCore> make_checkpoint_coordinator(std::shared_ptr<const Plan> plan, NodeId self, CheckpointStore& store) {
  const Settings& s = plan->settings();
  CoordinatorNodeOptions options;
  options.checkpoints.interval_us = ms(s.checkpoint_interval_ms);
  // An unfinished checkpoint is abandoned after ten intervals (at least a second): one whose
  // barrier or trigger was lost, or whose fragment abandoned it, must not hold the next back
  // for Flink's ten minutes.
  options.checkpoints.timeout_us = std::max<TimeUs>(10 * options.checkpoints.interval_us, 1'000'000);
  options.checkpoints.checkpoints_retained = static_cast<std::size_t>(s.checkpoints_retained);
  options.failover = s.failover;
  return std::make_unique<CoordinatorNode>(std::move(plan), self, options, store);
}

}  // namespace

std::unique_ptr<PrimarySide> make_checkpoint_primary_side(Server& server, const PrimaryOptions& options) {
  return std::make_unique<CheckpointPrimarySide>(server, options);
}

Approach global_checkpoints_approach() {
  return Approach{HaMode::checkpoint, &make_checkpoint_primary_side, &make_checkpoint_spare_role,
                  &make_checkpoint_coordinator};
}

}  // namespace hapair
