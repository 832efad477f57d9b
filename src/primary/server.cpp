#include "primary/server.h"

#include <utility>

namespace hapair {

Server::Server(std::shared_ptr<const Plan> plan, NodeId self, CheckpointStore* local_snapshots)
    : node_(std::move(plan), self),
      role_(node_.planned_standby() ? node_.standby_role() : Role::primary),
      reported_role_(role_),
      routes_(node_.plan(), self),
      outbox_(node_, routes_),
      pair_(node_, routes_, outbox_, [this] { workload_.collect_merge_order(); }),
      inputs_(node_, outbox_, pair_),
      outputs_(node_, role_, outbox_, pair_),
      workload_(node_, role_, routes_, outbox_, inputs_, outputs_),
      local_snapshots_(local_snapshots) {}

void Server::set_role(Role r) {
  workload_.collect_merge_order();
  role_ = r;
  outputs_.set_trim_margin(0);
}

void Server::become_standby(Role r) {
  set_role(r);
  workload_.reset();
  inputs_.reset_for_standby();
  outputs_.reset_for_standby();
}

bool Server::on_takeover(TimeUs now, const Takeover& t, Effects& eff, bool answer) {
  switch (pair_.learn(now, t, eff, role_ != Role::rejoining && role_ != Role::fenced)) {
    case TakeoverNews::malformed:
    case TakeoverNews::epoch_tie:
    case TakeoverNews::stale:
      return false;
    case TakeoverNews::repeat:
      // The announcement came again: our answer (replay request, restart points) may have been
      // lost. Answer again; both answers are idempotent.
      if (answer) answer_takeover(now, t, eff);
      return false;
    case TakeoverNews::newer: break;
  }
  if (t.fragment == node_.fragment_id()) return t.new_primary != node_.self();
  trace(eff, now, TraceKind::route_change).with(TraceKey::fragment_primary, t.new_primary).with(TraceKey::epoch, t.epoch);
  // A downstream fragment moved: its old primary no longer consumes; the new one tells us where
  // to resume with a ReplayRequest.
  outputs_.follow_consumer_takeover(t);
  outputs_.serve_refused_replay_requests(now, t.fragment, eff);
  if (answer) answer_takeover(now, t, eff);
  return false;
}

void Server::switch_approach(HaMode mode) {
  if (role_ == Role::primary) pair_.switch_approach(mode);
  HAPAIR_CHECK_MSG(routes_.route(node_.fragment_id()).mode == mode,
                   "node " << node_.name() << " switches to mode " << static_cast<int>(mode) << ", its route names "
                           << static_cast<int>(routes_.route(node_.fragment_id()).mode));
  node_.set_mode(mode);
  outputs_.follow_own_approach();
}

void Server::resume_approach(HaMode mode, Role role) {
  HAPAIR_CHECK_MSG(role_ != Role::primary, "node " << node_.name() << " resumes an earlier approach as primary");
  pair_.resume_approach(mode);
  node_.set_mode(mode);
  outputs_.follow_own_approach();
  set_role(role);
}

void Server::answer_takeover(TimeUs now, const Takeover& t, Effects& eff) {
  if (role_ == Role::primary) outputs_.offer_restart_points(now, t, eff);
  // An upstream fragment moved: ask its new primary to continue after what I accepted.
  if (role_ == Role::primary || role_ == Role::active_backup) inputs_.ask_new_producer(now, t, eff);
}

TimeUs Server::retransmit(TimeUs now, Effects& eff) {
  TimeUs next = outputs_.retransmit(now);
  if (role_ == Role::primary)
    next = std::min(next, pair_.repeat_announcement(now, eff, outputs_.all_ready() && !inputs_.awaiting_producer()));
  if (role_ == Role::primary || role_ == Role::active_backup) next = std::min(next, inputs_.repeat_replay_requests(now, eff));
  return next;
}

bool Server::finished() const {
  if (role_ != Role::primary) return false;
  if (node_.kind() == FragmentKind::sink) return inputs_.all_ended();
  return outputs_.all_acked_to_end();
}

void Server::end_event(TimeUs now, Effects& eff) {
  outputs_.trace_trims(now, eff);
  if (role_ != reported_role_) {
    reported_role_ = role_;
    trace(eff, now, TraceKind::role).with(TraceKey::role, role_);
  }
  workload_.collect_merge_order();
  workload_.report_merge_orders(eff);
  eff.finished = finished();
  eff.tuples_processed = workload_.work_done() - work_reported_;
  eff.operator_tuples = workload_.operator_work_done() - operator_work_reported_;
  work_reported_ = workload_.work_done();
  operator_work_reported_ = workload_.operator_work_done();
  if (!workload_.fatal_error().empty()) eff.fatal_error = workload_.fatal_error();
}

Metrics Server::metrics() const {
  Metrics m = outbox_.counters();
  // The per-tuple counters live in plain integers (a map lookup per tuple is too slow for the
  // simulator's million-tuple runs) and are merged here.
  auto put = [&](const char* name, std::uint64_t v) {
    if (v) m[name] += static_cast<std::int64_t>(v);
  };
  put("duplicates_dropped", inputs_.duplicates_dropped());
  put("tuples_sent", outputs_.tuples_sent());
  put("tuples_trimmed", outputs_.tuples_trimmed());
  workload_.add_metrics(m);
  std::int64_t total = 0;
  for (const auto& [s, o] : outputs_) {
    m["output_queue_tuples." + node_.plan().streams[s].name] = static_cast<std::int64_t>(o.queue().size());
    total += static_cast<std::int64_t>(o.queue().size());
  }
  m["output_queue_tuples"] = total;
  m["input_queue_tuples"] = static_cast<std::int64_t>(inputs_.queued());
  m["epoch"] = static_cast<std::int64_t>(routes_.epoch());
  return m;
}

}  // namespace hapair
