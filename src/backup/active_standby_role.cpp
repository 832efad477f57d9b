#include "backup/active_standby_role.h"

#include <algorithm>
#include <type_traits>

#include "backup/approaches.h"
#include "primary/checkpoint_state.h"
#include "primary/primary_role.h"
#include "primary/takeover.h"
#include "protocols/check.h"

namespace hapair {

void ActiveStandbyRole::on_start(TimeUs now, Effects& eff) {
  watch_.start(now);
  const bool determinants = server_.node().settings().determinants;
  // This copy follows the primary's interleaving (its determinants), so its output ids are the
  // primary's. Without determinants they may name other tuples than the primary's, so the
  // downstream's acknowledgements say nothing exact about my log: keep a margin of one
  // flow-control window, which covers how far the two interleavings can drift apart.
  if (determinants) server_.workload().act_on_fragment([](Fragment& f, FragmentOutputs&) { f.set_follow_determinants(true); });
  const Fragment* fragment = server_.workload().fragment();
  if (!determinants && fragment && fragment->is_nondeterministic())
    server_.outputs().set_trim_margin(static_cast<TupleId>(server_.node().settings().inflight_tuples_max));
  server_.trace(eff, now, TraceKind::start)
      .with(TraceKey::role, Role::active_backup)
      .with(TraceKey::ha, HaMode::active)
      .with(TraceKey::determinants, determinants);
}

void ActiveStandbyRole::on_tick(TimeUs now, Effects& eff) {
  const std::size_t sends_before = eff.sends.size();
  if (watch_primary(now, eff)) return;
  server_.workload().run(now, eff);
  if (!awaiting_bootstrap_) server_.inputs().send_level0_acks(now, eff, false);
  next_retransmit_us_ = server_.retransmit(now, eff);
  check_no_output_sent(eff, sends_before);
}

void ActiveStandbyRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  if (on_election_message(now, env, eff)) return;
  const std::size_t sends_before = eff.sends.size();
  const NodeId from = env.header.sender;
  const bool from_primary = watch_.heard_from(from, now);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if (awaiting_bootstrap_ && std::is_same_v<T, Determinants>) {
          // The new primary's choices continue its state, not mine: applied after its bootstrap
          // (it repeats what I have not acknowledged).
          server_.count("determinants_awaiting_bootstrap_dropped");
          return;
        }
        if (bootstrapping_ && !std::is_same_v<T, Checkpoint> && !std::is_same_v<T, Takeover> &&
            !std::is_same_v<T, Heartbeat>) {
          // Nothing applies before the primary's state is installed; what is dropped here is
          // asked for again (a gap) once it is.
          server_.count("bootstrapping_dropped");
          return;
        }
        if constexpr (std::is_same_v<T, Checkpoint>) {
          if (from_primary && (bootstrapping_ || awaiting_bootstrap_)) {
            on_bootstrap_chunk(now, from, m, eff);
          } else if (from_primary && installed_bootstrap_id_ != 0 && m.checkpoint_id == installed_bootstrap_id_) {
            // The primary repeats the bootstrap I installed: my acknowledgement was lost.
            server_.count("bootstrap_acks_repeated");
            server_.send(eff, now, from, CheckpointAck{installed_bootstrap_id_});
          } else {
            server_.count("unexpected_checkpoint_dropped");
          }
        } else if constexpr (std::is_same_v<T, TupleBatch>) {
          server_.inputs().accept_batch(now, from, m, eff);
        } else if constexpr (std::is_same_v<T, Determinants>) {
          if (!from_primary) {
            server_.count("unexpected_determinants_dropped");
            return;
          }
          // Acknowledge what is applied, cumulatively: records after a lost batch are not applied
          // (the primary re-sends from the gap), so acknowledging them would release output this
          // copy cannot reproduce.
          const std::uint64_t applied = apply_determinants(m);
          if (applied > 0) server_.send(eff, now, from, DeterminantAck{m.op_index, applied});
        } else if constexpr (std::is_same_v<T, Level0Ack>) {
          server_.outputs().on_level0_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, Level1Ack>) {
          server_.outputs().on_level1_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, Redirect>) {
          // A consumer's primary subscribes its rejoined standby: I track it, as my primary sends.
          server_.outputs().on_redirect(now, from, m, eff);
        } else if constexpr (std::is_same_v<T, Takeover>) {
          if (auto next = learn_takeover(now, m, eff, !bootstrapping_)) successor_ = std::move(next);
        } else if constexpr (std::is_same_v<T, Heartbeat>) {
        } else {
          server_.count(std::string("unexpected_") + message_kind_name(env.body) + "_dropped");
        }
      },
      env.body);
  server_.workload().run(now, eff);
  if (!awaiting_bootstrap_) server_.inputs().send_level0_acks(now, eff, false);
  check_no_output_sent(eff, sends_before);
}

bool ActiveStandbyRole::follows_determinants() const {
  const Fragment* f = server_.workload().fragment();
  return server_.node().settings().determinants && f && f->is_nondeterministic();
}

std::uint64_t ActiveStandbyRole::election_position() const {
  std::uint64_t processed = 0;
  for (const auto& [s, in] : server_.inputs()) processed += in.processed();
  return processed;
}

void ActiveStandbyRole::on_followed(TimeUs /*now*/, Effects& /*eff*/) {
  if (bootstrapping_ || !follows_determinants()) return;
  // The new primary numbers its bootstraps on its own: one with the id I installed from the old
  // primary is not a repeat of it.
  installed_bootstrap_id_ = 0;
  assembler_ = CheckpointAssembler{};
  awaiting_bootstrap_ = true;
  server_.count("followers_awaiting_bootstrap");
}

std::uint64_t ActiveStandbyRole::apply_determinants(const Determinants& d) {
  std::uint64_t before = 0;
  std::uint64_t after = 0;
  const bool applied = server_.workload().act_on_fragment([&](Fragment& f, FragmentOutputs& outs) {
    before = f.determinants_applied(d.op_index);
    f.add_determinants(d, outs);
    after = f.determinants_applied(d.op_index);
  });
  if (!applied) {
    server_.count("unexpected_determinants_dropped");
    return 0;
  }
  // Applied records are counted once and cumulatively: the count grows by at most this message's
  // records, and when it grows it covers this message to its end (records after a gap are not
  // applied at all), so the ack the caller sends names exactly what is applied. (Unsigned
  // arithmetic throughout: a bootstrapped count came in the primary's checkpoint and may be any
  // number, so "never moves back" is not checked here.)
  const std::uint64_t n = d.records.size();
  HAPAIR_CHECK_MSG(after - before <= n && (after == before || after == d.first_seq + n - 1),
                   "operator " << d.op_index << " applied " << before << " -> " << after << " from records "
                               << d.first_seq << "+" << n);
  server_.count("determinant_records_applied", static_cast<std::int64_t>(after - before));
  if (after - before < d.records.size())
    server_.count("determinant_records_not_applied", static_cast<std::int64_t>(d.records.size() - (after - before)));
  return after;
}

void ActiveStandbyRole::release_determinant_buffers() {
  server_.workload().act_on_fragment([](Fragment& f, FragmentOutputs& outs) { f.release_buffered(outs); });
}

void ActiveStandbyRole::on_bootstrap_chunk(TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff) {
  auto payload = assembler_.add(chunk);
  if (!payload) return;
  auto content = parse_checkpoint(*payload);
  if (!content || content->delta) {
    server_.count("corrupt_checkpoint_dropped");
    return;
  }
  // The copy a live switch's predecessor kept in the node goes (the state comes into a fresh one).
  if (bootstrapping_) first_state_installed();
  if (!install_checkpoint(server_, *content)) {
    server_.count("corrupt_checkpoint_dropped");
    return;
  }
  // The primary recorded its interleaving; from here on this copy follows it.
  if (server_.node().settings().determinants)
    server_.workload().act_on_fragment([](Fragment& f, FragmentOutputs&) { f.set_follow_determinants(true); });
  server_.outputs().track_consumers_without_sending();
  if (awaiting_bootstrap_) server_.count("follower_bootstraps_installed");
  bootstrapping_ = false;
  awaiting_bootstrap_ = false;
  installed_bootstrap_id_ = content->id;
  HAPAIR_CHECK_MSG(!successor_, "active standby " << server_.node().self() << " bootstraps after handing over");
  server_.trace(eff, now, TraceKind::bootstrap_installed).with(TraceKey::checkpoint, content->id);
  server_.send(eff, now, from, CheckpointAck{content->id});
}

void ActiveStandbyRole::primary_failed(TimeUs now, Effects& eff, Detector detector) {
  HAPAIR_CHECK_MSG(!successor_, "active standby " << server_.node().self() << " takes over twice");
  if (bootstrapping_) {
    // The primary died before this standby had its state: nothing to take over with.
    cannot_take_over(now, eff, detector, "takeover_impossible_while_bootstrapping", "not bootstrapped: cannot take over");
    return;
  }
  {
    // Without determinants my log kept one flow-control window more than acknowledgements
    // allowed until now (set in on_start, cleared by the role change below).
    const Fragment* f = server_.workload().fragment();
    const bool margin = !server_.node().settings().determinants && f && f->is_nondeterministic();
    const TupleId expected = margin ? static_cast<TupleId>(server_.node().settings().inflight_tuples_max) : 0;
    HAPAIR_CHECK_MSG(server_.outputs().trim_margin() == expected,
                     "active standby log margin " << server_.outputs().trim_margin() << ", expected " << expected);
  }
  const std::vector<StandbyRef> my_followers = followers();
  begin_takeover(server_, now, eff, watch_.silence_us(now, detector), detector, my_followers);
  const Fragment* fragment = server_.workload().fragment();
  const bool follow = follows_determinants();
  // With followers, my log is mine alone until they installed my state: it may hold output of
  // the old primary's choices that a follower never applied (the old primary released only what
  // every standby acknowledged), and the choices I make now (what waited for determinants, in my
  // arrival order) are nobody else's. So nothing of my log goes out until every follower has my
  // state (the new primary's determinant shipper releases it then); what the downstream
  // acknowledged is where the log begins, and it has that already.
  if (follow && !my_followers.empty()) server_.outputs().hold_from_log_start();
  if (follow) release_determinant_buffers();
  // Fill whatever was in flight to me when the primary died.
  server_.inputs().request_replay(now, eff, {}, 0);
  const bool exact = !fragment || fragment->klass() != OperatorClass::arbitrary || follow;
  server_.trace(eff, now, TraceKind::takeover).with(TraceKey::ha, HaMode::active).with(TraceKey::exact_ids, exact);
  PrimaryOptions options;
  options.took_over = true;
  options.rebase_when_consumers_ready = !exact;
  successor_ = std::make_unique<PrimaryRole>(server_, options, make_active_primary_side(server_, options));
}

TimeUs ActiveStandbyRole::next_wakeup_us() const {
  if (successor_) return kNever;
  return std::min({watch_wakeup_us(), server_.inputs().next_ack_due_us(), next_retransmit_us_});
}

}  // namespace hapair
