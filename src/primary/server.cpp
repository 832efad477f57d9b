#include "primary/server.h"

#include <algorithm>
#include <set>
#include <utility>

#include "operators/source_generator.h"
#include "protocols/check.h"

namespace hapair {

const char* to_string(Role r) {
  switch (r) {
    case Role::primary: return "primary";
    case Role::spare: return "spare";
    case Role::passive_backup: return "passive_backup";
    case Role::active_backup: return "active_backup";
    case Role::fenced: return "fenced";
    case Role::rejoining: return "rejoining";
  }
  return "?";
}

Server::Server(std::shared_ptr<const Plan> plan, NodeId self) : plan_(std::move(plan)), self_(self) {
  HAPAIR_CHECK_MSG(self_ < plan_->nodes.size(), "node " << self_ << " of " << plan_->nodes.size());
  const PlanNode& me = plan_->nodes[self_];
  frag_ = me.fragment;
  const PlanFragment& f = plan_->fragments[frag_];
  if (!me.standby) {
    role_ = Role::primary;
  } else if (f.ha == HaMode::passive) {
    role_ = Role::passive_backup;
  } else if (f.ha == HaMode::active) {
    role_ = Role::active_backup;
  } else {
    role_ = Role::spare;
  }

  routes_.resize(plan_->fragments.size());
  for (const auto& pf : plan_->fragments) routes_[pf.id] = Route{pf.primary, pf.standby, 0};

  for (StreamId s : f.inputs) {
    InputState in;
    in.stream = s;
    in.producer = plan_->streams[s].producer;
    inputs_.emplace(s, in);
  }
  const auto queue_max = static_cast<std::size_t>(settings().output_queue_tuples_max);
  for (StreamId s : f.outputs) {
    OutputState o(queue_max);
    o.stream = s;
    for (FragmentId d : plan_->streams[s].consumers)
      for (NodeId n : input_nodes_of(d)) {
        ConsumerState c = make_consumer(n, d);
        // A standby tracks its fragment's consumers (for acks) but sends nothing until it
        // takes over.
        c.sends = role_ == Role::primary;
        o.consumers.push_back(c);
      }
    outputs_.emplace(s, std::move(o));
  }

  if (f.kind == FragmentKind::operators) reset_fragment();
  if (f.ha == HaMode::upstream && settings().trimming == TrimmingRule::conservative)
    conservative_retention_us_ = us_from_ms(static_cast<double>(settings().conservative_retention_ms));
  if (f.kind == FragmentKind::source) {
    source_count_ = source_tuple_count(plan_->spec(frag_).source, settings().duration_s);
  }
}

Role Server::standby_role() const {
  switch (mode()) {
    case HaMode::passive: return Role::passive_backup;
    case HaMode::active: return Role::active_backup;
    default: return Role::spare;
  }
}

void Server::become_standby(Role r) {
  set_role(r);
  if (kind() == FragmentKind::operators) reset_fragment();
  input_queue_.clear();
  for (auto& [s, in] : inputs_) {
    InputState fresh;
    fresh.stream = s;
    fresh.producer = in.producer;
    in = fresh;
  }
  for (auto& [s, o] : outputs_) {
    o.queue.reset(0, 0, false);
    o.offset = 0;
    o.released_up_to = ~TupleId{0};
    for (ConsumerState& c : o.consumers) {
      c.sends = false;
      c.ready = true;
    }
  }
}

NodeId Server::partner() const {
  const PlanFragment& f = fragment_plan();
  if (self_ == f.primary) return f.standby;
  return f.primary;
}

std::vector<NodeId> Server::input_nodes_of(FragmentId f) const {
  std::vector<NodeId> out;
  const Route& r = routes_.at(f);
  if (r.primary != kNoNode) out.push_back(r.primary);
  if (plan_->fragments[f].ha == HaMode::active && r.standby != kNoNode) out.push_back(r.standby);
  return out;
}

std::vector<NodeId> Server::neighbour_nodes() const {
  std::vector<NodeId> out;
  auto add_fragment = [&](FragmentId f) {
    const PlanFragment& pf = plan_->fragments[f];
    for (NodeId n : {pf.primary, pf.standby})
      if (n != kNoNode && n != self_ && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (FragmentId f : fragment_plan().upstream) add_fragment(f);
  for (FragmentId f : fragment_plan().downstream) add_fragment(f);
  std::sort(out.begin(), out.end());
  return out;
}

bool Server::is_current(const Envelope& e) {
  const NodeId sender = e.header.sender;
  if (sender >= plan_->nodes.size()) {
    count("unknown_sender_dropped");
    return false;
  }
  const FragmentId f = plan_->nodes[sender].fragment;
  if (e.header.epoch < routes_[f].epoch) {
    count("stale_dropped");
    return false;
  }
  return true;
}

Envelope Server::envelope(TimeUs now, Message body) const {
  Envelope e;
  e.header.sender = self_;
  e.header.epoch = epoch();
  e.header.sent_us = now;
  e.body = std::move(body);
  return e;
}

void Server::send(Effects& eff, TimeUs now, NodeId to, Message body) {
  HAPAIR_CHECK_MSG(to < plan_->nodes.size() && to != self_, "send to node " << to << " from " << self_);
  if (auto* b = std::get_if<TupleBatch>(&body)) {
    auto o = outputs_.find(b->stream);
    if (o != outputs_.end()) {
      b->held_generation = held_generation_for(o->second, plan_->nodes[to].fragment);
    }
  }
  eff.sends.push_back(Outgoing{to, envelope(now, std::move(body))});
}

void Server::trace(Effects& eff, TimeUs now, std::string event, std::string details) {
  eff.traces.push_back(TraceEvent{now, self_, std::move(event), std::move(details)});
}

void Server::reset_fragment() {
  collect_merge_order();
  fragment_ = std::make_unique<Fragment>(*plan_, frag_);
  if (role_ == Role::active_backup && settings().determinants) fragment_->set_follow_determinants(true);
}

void Server::collect_merge_order() {
  if (!fragment_) return;
  for (auto& [op, seg] : fragment_->take_merge_order())
    merge_collected_.push_back(
        MergeOrder{self_, epoch(), role_ == Role::primary, seg.following, op, seg.first_output, std::move(seg.runs)});
}

void Server::report_merge_order(Effects& eff) {
  collect_merge_order();
  if (merge_collected_.empty()) return;
  if (eff.merge_orders.empty()) {
    eff.merge_orders.swap(merge_collected_);
  } else {
    eff.merge_orders.insert(eff.merge_orders.end(), std::make_move_iterator(merge_collected_.begin()),
                            std::make_move_iterator(merge_collected_.end()));
    merge_collected_.clear();
  }
}

// ---- input side -------------------------------------------------------------------------------

std::size_t Server::accept_batch(TimeUs now, NodeId from, const TupleBatch& batch, Effects& eff) {
  auto it = inputs_.find(batch.stream);
  if (it == inputs_.end()) {
    count("unexpected_stream_dropped");
    return 0;
  }
  InputState& in = it->second;
  if (from != routes_[in.producer].primary) {
    count("not_from_primary_dropped");
    // A node of the producer that is not its primary (as I know it) sends as one: it lost an
    // epoch tie or missed its fencing, so tell it who is.
    if (from < plan_->nodes.size() && plan_->nodes[from].fragment == in.producer) tell_route(now, from, eff);
    return 0;
  }
  in.held_generation = std::max(in.held_generation, batch.held_generation);
  in.awaiting_producer = false;
  if (!in.accept_any_prev && batch.prev_id > in.accepted.last_accepted()) {
    // Something the producer sent before this batch never arrived (a lost message or a broken
    // connection). Keep this batch and ask for just the missing tuples.
    count("batch_gaps_detected");
    const auto window = static_cast<std::size_t>(settings().inflight_tuples_max);
    if (!in.stash.count(batch.prev_id) && in.stash_tuples + batch.tuples.size() <= window) {
      in.stash.emplace(batch.prev_id, batch);
      in.stash_tuples += batch.tuples.size();
    } else if (!in.stash.count(batch.prev_id)) {
      count("stash_overflow_dropped");  // re-sent later by the producer's retransmission
    }
    const TupleId after = in.accepted.last_accepted();
    if (in.gap_requested_after != after || now - in.gap_requested_us >= retransmit_us()) {
      in.gap_requested_us = now;
      in.gap_requested_after = after;
      send(eff, now, from, ReplayRequest{batch.stream, after, 0, in.stash.begin()->first});
      count("gap_replay_requests");
    }
    return 0;
  }
  in.accept_any_prev = false;
  std::size_t queued = accept_in_order(now, in, batch, eff);
  // The gap may be filled now: what was kept beyond it follows, in order.
  while (!in.stash.empty() && in.stash.begin()->first <= in.accepted.last_accepted()) {
    TupleBatch next = std::move(in.stash.begin()->second);
    in.stash_tuples -= next.tuples.size();
    in.stash.erase(in.stash.begin());
    queued += accept_in_order(now, in, next, eff);
  }
  return queued;
}

void Server::clear_stash(InputState& in) {
  in.stash.clear();
  in.stash_tuples = 0;
  in.gap_requested_after = ~TupleId{0};
}

std::size_t Server::accept_in_order(TimeUs now, InputState& in, const TupleBatch& batch, Effects& eff) {
  const auto queue_max = static_cast<std::size_t>(settings().input_queue_tuples_max);
  std::size_t queued = 0;
  for (const Tuple& t : batch.tuples) {
    if (t.id <= in.accepted.last_accepted()) {
      ++hot_.duplicates_dropped;
      in.ack_owed = true;  // the sender re-sent: our acknowledgement may have been lost
      continue;
    }
    if (in.queued >= queue_max) {
      // The producer sent beyond its credit; the tuple is not accepted, so a later replay or
      // re-send can still deliver it. Counted, never silent.
      count("input_overflow_dropped");
      continue;
    }
    in.accepted.accept(t.id);
    input_queue_.push_back(InputItem{batch.stream, t, false});
    ++in.queued;
    ++queued;
  }
  if (batch.replay) {
    if (!in.replaying) {
      in.replaying = true;
      trace(eff, now, "replay_start", "stream=" + plan_->streams[batch.stream].name);
    }
    in.replayed_tuples += batch.tuples.size();
    count("replayed_tuples_received", static_cast<std::int64_t>(batch.tuples.size()));
  } else if (in.replaying) {
    in.replaying = false;
    trace(eff, now, "replay_end",
          "stream=" + plan_->streams[batch.stream].name + " tuples=" + std::to_string(in.replayed_tuples));
  }
  if (batch.end_of_stream && in.eos_received) in.eos_acked = false;  // a repeat: acknowledge it again
  if (batch.end_of_stream && !in.eos_received) {
    in.eos_received = true;
    input_queue_.push_back(InputItem{batch.stream, Tuple{}, true});
    if (in.replaying) {
      in.replaying = false;
      trace(eff, now, "replay_end",
            "stream=" + plan_->streams[batch.stream].name + " tuples=" + std::to_string(in.replayed_tuples));
    }
  }
  return queued;
}

bool Server::any_output_full(std::string* which) const {
  for (const auto& [s, o] : outputs_)
    if (o.queue.full()) {
      if (which) *which = plan_->streams[s].name;
      return true;
    }
  return false;
}

void Server::process_input(TimeUs now, Effects& eff) {
  if (processing_paused_) return;
  if (role_ != Role::primary && role_ != Role::active_backup) return;
  while (!input_queue_.empty()) {
    std::string which;
    if (any_output_full(&which)) {
      if (settings().queue_full_policy == QueueFullPolicy::error) {
        if (fatal_error_.empty()) {
          fatal_error_ = "output queue of stream '" + which + "' on node '" + name() + "' is full (" +
                         std::to_string(settings().output_queue_tuples_max) +
                         " tuples = output_queue_tuples_max) and queue_full_policy = error";
          trace(eff, now, "fatal", "queue_full stream=" + which);
        }
        eff.fatal_error = fatal_error_;
        return;
      }
      if (!input_blocked_) {
        input_blocked_ = true;
        count("backpressure_episodes");
        trace(eff, now, "backpressure", "stream=" + which);
      }
      return;
    }
    InputItem item = std::move(input_queue_.front());
    input_queue_.pop_front();
    consume(now, item, eff);
  }
  input_blocked_ = false;
}

void Server::consume(TimeUs now, const InputItem& item, Effects& eff) {
  InputState& in = inputs_.at(item.stream);
  FragmentOutputs outs;
  if (item.eos) {
    in.eos_processed = true;
    if (kind() == FragmentKind::operators) {
      fragment_->end_of_stream(item.stream, outs);
      handle_fragment_outputs(outs);
      for (auto& [s, o] : outputs_)
        if (!o.queue.ended() && fragment_->output_ended(s)) o.queue.end_stream();
    } else if (kind() == FragmentKind::sink && all_inputs_ended() && !end_of_output_traced_) {
      end_of_output_traced_ = true;
      trace(eff, now, "end_of_output");
    }
    return;
  }
  HAPAIR_CHECK(in.queued > 0);
  --in.queued;
  in.processed = item.tuple.id;
  ++in.processed_since_ack;
  if (conservative_retention_us_ > 0) {
    in.horizon.emplace_back(item.tuple.id, item.tuple.ts_us);
    while (!in.horizon.empty() && in.horizon.front().second < item.tuple.ts_us - conservative_retention_us_) {
      in.beyond_horizon = in.horizon.front().first;
      in.horizon.pop_front();
    }
  }
  ++hot_.tuples_processed;
  if (kind() == FragmentKind::operators) {
    ++hot_.operator_tuples;
    fragment_->process(item.stream, item.tuple, outs);
    handle_fragment_outputs(outs);
  } else if (kind() == FragmentKind::sink) {
    eff.deliveries.push_back(Delivery{now, item.stream, item.tuple});
    ++hot_.tuples_delivered;
  }
}

void Server::handle_fragment_outputs(FragmentOutputs& outs) {
  for (auto& out : outs) append_output(out.stream, out.tuple);
  outs.clear();
}

bool Server::all_inputs_ended() const {
  for (const auto& [s, in] : inputs_)
    if (!in.eos_processed) return false;
  return true;
}

void Server::send_level0_acks(TimeUs now, Effects& eff, bool force) {
  const TimeUs interval = us_from_ms(static_cast<double>(settings().ack_interval_ms));
  const auto half_window = static_cast<std::size_t>(std::max<std::int64_t>(1, settings().inflight_tuples_max / 2));
  for (auto& [s, in] : inputs_) {
    const bool owed = in.ack_owed || (in.eos_processed && !in.eos_acked);
    if (in.processed <= in.level0_sent && !owed) continue;
    const bool due = force || owed || now >= in.level0_sent_us + interval || in.processed_since_ack >= half_window;
    if (!due) continue;
    for (NodeId n : input_nodes_of(in.producer)) send(eff, now, n, Level0Ack{s, in.processed, in.eos_processed});
    in.level0_sent = in.processed;
    in.level0_sent_us = now;
    in.processed_since_ack = 0;
    in.ack_owed = false;
    if (in.eos_processed) in.eos_acked = true;
  }
}

TimeUs Server::next_ack_due_us() const {
  TimeUs due = kNever;
  const TimeUs interval = us_from_ms(static_cast<double>(settings().ack_interval_ms));
  for (const auto& [s, in] : inputs_)
    if (in.processed > in.level0_sent) due = std::min(due, in.level0_sent_us + interval);
  return due;
}

void Server::request_replay(TimeUs now, Effects& eff, const std::map<StreamId, TupleId>& after,
                            std::uint64_t generation) {
  for (auto& [s, in] : inputs_) {
    auto it = after.find(s);
    const TupleId from = it != after.end() ? it->second : in.accepted.last_accepted();
    if (from != kReplayOnlyNew) {
      in.accepted.reset_to(from);
      in.processed = std::max(in.processed, from);
      in.level0_sent = std::max(in.level0_sent, from);
    } else {
      in.accept_any_prev = true;
    }
    in.replaying = false;
    in.replayed_tuples = 0;
    clear_stash(in);
    in.awaiting_producer = true;
    in.replay_requested_us = now;
    in.replay_after = from;
    in.replay_generation = generation;
    send(eff, now, routes_[in.producer].primary, ReplayRequest{s, from, generation});
  }
}

// ---- output side ------------------------------------------------------------------------------

ConsumerState Server::make_consumer(NodeId node, FragmentId consumer_fragment) const {
  ConsumerState c;
  c.node = node;
  c.fragment = consumer_fragment;
  c.retention = Plan::needs_retention(plan_->fragments[consumer_fragment].ha);
  return c;
}

void Server::append_output(StreamId s, Tuple t) {
  auto it = outputs_.find(s);
  HAPAIR_CHECK_MSG(it != outputs_.end(), "stream " << s << " is not an output of node " << name());
  OutputState& o = it->second;
  t.id += o.offset;
  o.queue.append(t);
}

std::size_t Server::inflight(const OutputState& o, const ConsumerState& c) const {
  return o.queue.count_between(c.level0, c.sent_up_to);
}

void Server::pump_outputs(TimeUs now, Effects& eff) {
  const auto batch_max = static_cast<std::size_t>(settings().batch_tuples);
  const auto inflight_max = static_cast<std::size_t>(settings().inflight_tuples_max);
  for (auto& [s, o] : outputs_) {
    const TupleId limit = std::min(o.queue.last_id(), o.released_up_to);
    for (ConsumerState& c : o.consumers) {
      if (!c.sends || !c.ready) continue;
      const TupleId sent_before = c.sent_up_to;
      const bool eos_before = c.eos_sent;
      for (;;) {
        const std::size_t used = inflight(o, c);
        if (used >= inflight_max) break;
        const std::size_t start = o.queue.index_after(c.sent_up_to);
        std::size_t end = start;
        const std::size_t stop = std::min(o.queue.size(), start + std::min(batch_max, inflight_max - used));
        while (end < stop && o.queue.at(end).id <= limit) ++end;
        const bool at_end = o.queue.ended() && limit == o.queue.last_id() &&
                            (end == o.queue.size()) ;
        if (end == start && !(at_end && !c.eos_sent)) break;
        TupleBatch b;
        b.stream = s;
        b.prev_id = c.sent_up_to;
        if (used == 0) c.progress_us = now;  // the retransmission clock starts with the first unacknowledged send
        b.tuples.reserve(end - start);
        for (std::size_t i = start; i < end; ++i) b.tuples.push_back(o.queue.at(i));
        if (!b.tuples.empty()) {
          c.sent_up_to = b.tuples.back().id;
          b.replay = b.tuples.front().id <= c.replay_until;
          hot_.tuples_sent += b.tuples.size();
          if (b.replay) count("tuples_replayed", static_cast<std::int64_t>(b.tuples.size()));
        }
        if (at_end) {
          b.end_of_stream = true;
          c.eos_sent = true;
        }
        send(eff, now, c.node, std::move(b));
        if (at_end) break;
      }
      if (c.confirm_owed && c.sent_up_to == sent_before && c.eos_sent == eos_before) {
        // Nothing went out to carry held_generation: an empty batch does (its prev_id is what
        // was sent, so it opens no gap).
        TupleBatch b;
        b.stream = s;
        b.prev_id = c.sent_up_to;
        b.replay = c.sent_up_to < c.replay_until;
        count("generation_confirmations");
        send(eff, now, c.node, std::move(b));
      }
      c.confirm_owed = false;
    }
  }
}

std::map<StreamId, TupleId> Server::acked_outputs_internal() const {
  std::map<StreamId, TupleId> out;
  for (const auto& [s, o] : outputs_) {
    TupleId acked = ~TupleId{0};
    for (const ConsumerState& c : o.consumers) acked = std::min(acked, c.level0);
    if (o.consumers.empty()) acked = 0;
    out[s] = acked > o.offset ? acked - o.offset : 0;
  }
  return out;
}

std::map<StreamId, TupleId> Server::trimmed_outputs_internal() const {
  std::map<StreamId, TupleId> out;
  for (const auto& [s, o] : outputs_) {
    const TupleId trimmed = o.queue.trimmed_up_to();
    out[s] = trimmed > o.offset ? trimmed - o.offset : 0;
  }
  return out;
}

std::vector<DownstreamRestartPoints> Server::downstream_restart_points() const {
  std::vector<DownstreamRestartPoints> out;
  for (const auto& [s, o] : outputs_) {
    bool any = false;
    for (const auto& [f, store] : o.restart_points) {
      auto points = store.points_to_forward(plan_->fragments[f].upstream.size() < 2);
      if (points.empty()) continue;  // a passive standby's direct acks: no restart points
      out.push_back(DownstreamRestartPoints{s, f, o.queue.trimmed_up_to(), std::move(points)});
      any = true;
    }
    if (!any) out.push_back(DownstreamRestartPoints{s, kNoFragment, o.queue.trimmed_up_to(), {}});
  }
  return out;
}

bool Server::install_downstream_restart_points(const std::vector<DownstreamRestartPoints>& forwarded) {
  std::set<StreamId> named;
  for (const auto& f : forwarded) {
    if (!outputs_.count(f.stream)) {
      count("bad_downstream_restart_points_dropped");
      return false;
    }
    if (f.consumer != kNoFragment) {
      const auto& consumers = plan_->streams[f.stream].consumers;
      if (std::find(consumers.begin(), consumers.end(), f.consumer) == consumers.end()) {
        count("bad_downstream_restart_points_dropped");
        return false;
      }
    }
    named.insert(f.stream);
  }
  if (named.size() != outputs_.size()) return false;
  for (const auto& f : forwarded) {
    OutputState& o = outputs_.at(f.stream);
    o.queue.trim_up_to(f.trimmed_up_to);
    if (f.consumer == kNoFragment) continue;
    RestartPointStore& store = o.restart_points[f.consumer];
    for (const auto& p : f.points) store.add(p);
    count("downstream_restart_points_installed", static_cast<std::int64_t>(f.points.size()));
  }
  confirm_forwarded(forwarded);  // they came from my upstream: it holds them
  return true;
}

void Server::confirm_forwarded(const std::vector<DownstreamRestartPoints>& forwarded) {
  for (const auto& f : forwarded) {
    auto it = outputs_.find(f.stream);
    if (it == outputs_.end() || f.consumer == kNoFragment) continue;
    std::uint64_t newest = 0;
    for (const auto& p : f.points) newest = std::max(newest, p.generation);
    std::uint64_t& confirmed = it->second.forwarded_confirmed[f.consumer];
    if (newest <= confirmed) continue;
    confirmed = newest;
    if (plan_->fragments[f.consumer].upstream.size() < 2) continue;  // its held_generation is unchanged
    for (ConsumerState& c : it->second.consumers)
      if (c.fragment == f.consumer) c.confirm_owed = true;
  }
}

std::uint64_t Server::held_generation_for(const OutputState& o, FragmentId consumer) const {
  auto rp = o.restart_points.find(consumer);
  if (rp == o.restart_points.end()) return 0;
  const std::uint64_t newest = rp->second.newest_generation();
  // A source never fails and recovers, and a consumer with one producer restarts from whatever
  // my recovery node installs (docs/FAULTS.md): only the several-producers case needs more.
  if (kind() != FragmentKind::operators || mode() != HaMode::upstream ||
      settings().trimming == TrimmingRule::conservative || plan_->fragments[consumer].upstream.size() < 2)
    return newest;
  auto c = o.forwarded_confirmed.find(consumer);
  return std::min(newest, c == o.forwarded_confirmed.end() ? 0 : c->second);
}

void Server::trim_outputs() {
  for (auto& [s, o] : outputs_) {
    if (o.consumers.empty()) continue;
    TupleId trim_to = ~TupleId{0};
    for (const ConsumerState& c : o.consumers) {
      TupleId pos = c.level0;
      if (c.retention) {
        auto rp = o.restart_points.find(c.fragment);
        pos = rp == o.restart_points.end() ? 0 : std::min(pos, rp->second.trim_position());
      }
      trim_to = std::min(trim_to, pos);
    }
    if (role_ == Role::active_backup && !settings().determinants && fragment_ && fragment_->is_nondeterministic()) {
      // Without determinants my ids name other tuples than the primary's, so the downstream's
      // acknowledgements say nothing exact about my log: keep a margin of one flow-control
      // window, which covers how far the two interleavings can drift apart.
      const auto margin = static_cast<TupleId>(settings().inflight_tuples_max);
      trim_to = trim_to > margin ? trim_to - margin : 0;
    }
    const std::size_t n = o.queue.trim_up_to(trim_to);
    hot_.tuples_trimmed += n;
  }
}

void Server::reset_consumers_awaiting_replay_request() {
  for (auto& [s, o] : outputs_) {
    o.consumers.clear();
    for (FragmentId d : plan_->streams[s].consumers)
      for (NodeId n : input_nodes_of(d)) {
        ConsumerState c = make_consumer(n, d);
        c.ready = false;
        c.sends = true;
        o.consumers.push_back(c);
      }
  }
}

bool Server::all_consumers_ready() const {
  for (const auto& [s, o] : outputs_)
    for (const ConsumerState& c : o.consumers)
      if (!c.ready) return false;
  return true;
}

void Server::rebase_outputs() {
  for (auto& [s, o] : outputs_) {
    TupleId highest = 0;
    for (const ConsumerState& c : o.consumers) highest = std::max(highest, c.sent_up_to);
    TupleId shift = 0;
    if (!o.queue.empty()) {
      const TupleId first = o.queue.at(0).id;
      shift = highest + 1 > first ? highest + 1 - first : 0;
    } else {
      shift = highest > o.queue.last_id() ? highest - o.queue.last_id() : 0;
    }
    if (shift > 0) {
      std::vector<Tuple> kept;
      kept.reserve(o.queue.size());
      for (std::size_t i = 0; i < o.queue.size(); ++i) {
        Tuple t = o.queue.at(i);
        t.id += shift;
        kept.push_back(t);
      }
      const bool ended = o.queue.ended();
      o.queue.reset(highest, o.queue.last_id() + shift, ended);
      for (const Tuple& t : kept) o.queue.restore_append(t);
      o.offset += shift;
    }
    for (ConsumerState& c : o.consumers) c.replay_until = o.queue.last_id();
    count("rebased_streams");
  }
}

std::uint64_t Server::apply_determinants(const Determinants& d) {
  if (!fragment_) {
    count("unexpected_determinants_dropped");
    return 0;
  }
  FragmentOutputs outs;
  const std::uint64_t before = fragment_->determinants_applied(d.op_index);
  fragment_->add_determinants(d, outs);
  const std::uint64_t after = fragment_->determinants_applied(d.op_index);
  count("determinant_records_applied", static_cast<std::int64_t>(after - before));
  if (after - before < d.records.size()) count("determinant_records_not_applied", static_cast<std::int64_t>(d.records.size() - (after - before)));
  handle_fragment_outputs(outs);
  return after;
}

void Server::release_determinant_buffers() {
  if (!fragment_) return;
  FragmentOutputs outs;
  fragment_->release_buffered(outs);
  handle_fragment_outputs(outs);
}

// ---- messages ---------------------------------------------------------------------------------

void Server::on_redirect(TimeUs now, NodeId from, const Redirect& r, Effects& eff) {
  auto it = outputs_.find(r.stream);
  if (it == outputs_.end() || r.consumer >= plan_->nodes.size()) {
    count("unexpected_redirect_dropped");
    return;
  }
  OutputState& o = it->second;
  const FragmentId d = plan_->nodes[r.consumer].fragment;
  // Only the consumer fragment's current primary may (un)subscribe its standby.
  if (routes_[d].primary != from || plan_->nodes[from].fragment != d) {
    count("unexpected_redirect_dropped");
    return;
  }
  if (!r.subscribe) {
    std::erase_if(o.consumers, [&](const ConsumerState& c) { return c.node == r.consumer; });
    trim_outputs();
    return;
  }
  ConsumerState* c = nullptr;
  for (ConsumerState& x : o.consumers)
    if (x.node == r.consumer) c = &x;
  if (!c) {
    o.consumers.push_back(make_consumer(r.consumer, d));
    c = &o.consumers.back();
  }
  c->sends = role_ == Role::primary;
  c->ready = true;
  c->eos_sent = false;
  c->eos_acked = false;
  c->progress_us = now;
  if (r.after_id < o.queue.trimmed_up_to()) {
    count("replay_gap_tuples", static_cast<std::int64_t>(o.queue.trimmed_up_to() - r.after_id));
    trace(eff, now, "replay_gap",
          "stream=" + plan_->streams[r.stream].name + " after=" + std::to_string(r.after_id) +
              " trimmed_up_to=" + std::to_string(o.queue.trimmed_up_to()) + " (joining standby)");
  }
  c->sent_up_to = r.after_id;
  c->level0 = std::max(c->level0, r.after_id);
  c->replay_until = o.queue.last_id();
  count("standbys_subscribed");
}

void Server::send_routes_to(TimeUs now, Effects& eff, NodeId node) {
  std::vector<FragmentId> fs = fragment_plan().upstream;
  fs.insert(fs.end(), fragment_plan().downstream.begin(), fragment_plan().downstream.end());
  std::sort(fs.begin(), fs.end());
  fs.erase(std::unique(fs.begin(), fs.end()), fs.end());
  for (FragmentId f : fs) {
    const Route& r = routes_[f];
    if (r.epoch == 0) continue;  // the plan's route: the node knows it
    send(eff, now, node, Takeover{f, r.primary, r.epoch, r.standby, r.standby_incarnation});
  }
}

void Server::on_level0_ack(TimeUs now, NodeId from, const Level0Ack& ack) {
  auto it = outputs_.find(ack.stream);
  if (it == outputs_.end()) {
    count("unexpected_ack_dropped");
    return;
  }
  bool known = false;
  for (ConsumerState& c : it->second.consumers)
    if (c.node == from) {
      if (ack.up_to > c.level0 || (ack.end_of_stream && !c.eos_acked)) {
        c.progress_us = now;
        c.retransmits = 0;
      }
      c.level0 = std::max(c.level0, ack.up_to);
      if (ack.end_of_stream && it->second.queue.ended() && ack.up_to >= it->second.queue.last_id()) c.eos_acked = true;
      known = true;
    }
  if (!known) {
    count("unexpected_ack_dropped");
    return;
  }
  trim_outputs();
}

void Server::on_level1_ack(TimeUs, NodeId from, const Level1Ack& ack) {
  auto it = outputs_.find(ack.stream);
  if (it == outputs_.end()) {
    count("unexpected_ack_dropped");
    return;
  }
  const FragmentId d = plan_->nodes[from].fragment;
  const auto& consumers = plan_->streams[ack.stream].consumers;
  if (std::find(consumers.begin(), consumers.end(), d) == consumers.end()) {
    count("unexpected_ack_dropped");
    return;
  }
  RestartPointStore& store = it->second.restart_points[d];
  const std::uint64_t before = store.newest_generation();
  store.add(ack);
  if (store.newest_generation() != before)
    for (ConsumerState& c : it->second.consumers)
      if (c.node == from) c.confirm_owed = true;
  count("level1_acks_received");
  trim_outputs();
}

void Server::on_replay_request(TimeUs now, NodeId from, const ReplayRequest& req, Effects& eff) {
  auto it = outputs_.find(req.stream);
  if (it == outputs_.end()) {
    count("unexpected_replay_request_dropped");
    return;
  }
  OutputState& o = it->second;
  const FragmentId d = plan_->nodes[from].fragment;
  ConsumerState* c = nullptr;
  for (ConsumerState& x : o.consumers)
    if (x.node == from) c = &x;
  if (!c) {
    const auto nodes = input_nodes_of(d);
    if (std::find(nodes.begin(), nodes.end(), from) == nodes.end()) {
      count("unexpected_replay_request_dropped");
      // A node of a consumer fragment that is not the one I follow asks as its primary: tell it
      // who is (it claimed an epoch another node claimed first, or missed its fencing).
      const auto& consumers = plan_->streams[req.stream].consumers;
      if (std::find(consumers.begin(), consumers.end(), d) != consumers.end()) tell_route(now, from, eff);
      return;
    }
    o.consumers.push_back(make_consumer(from, d));
    c = &o.consumers.back();
    c->sends = role_ == Role::primary;
  }
  if (req.up_to > 0 && c->ready) {
    // A gap fill: the consumer kept what came after the lost batch; re-send only the gap.
    send_gap_fill(now, o, *c, req.after_id, req.up_to, eff);
    return;
  }
  c->ready = true;
  c->eos_sent = false;
  c->eos_acked = false;
  c->progress_us = now;
  if (role_ == Role::primary && from == routes_[d].primary) {
    // Echo the route I follow for the requester's fragment: proof, sent only after its request
    // reached me, that I serve it in that epoch (a primary that dissolved its pair waits for
    // it, PrimaryRole::on_standby_lost; data alone may have been on the way since before).
    const Route& r = routes_[d];
    send(eff, now, from, Takeover{d, r.primary, r.epoch, r.standby, r.standby_incarnation});
    count("route_echoes_sent");
  }
  if (req.after_id == kReplayOnlyNew) {
    c->sent_up_to = o.queue.last_id();
    c->level0 = std::max(c->level0, c->sent_up_to);
    c->replay_until = 0;
  } else {
    if (req.after_id < o.queue.trimmed_up_to()) {
      count("replay_gap_tuples", static_cast<std::int64_t>(o.queue.trimmed_up_to() - req.after_id));
      trace(eff, now, "replay_gap",
            "stream=" + plan_->streams[req.stream].name + " after=" + std::to_string(req.after_id) +
                " trimmed_up_to=" + std::to_string(o.queue.trimmed_up_to()));
    }
    c->sent_up_to = req.after_id;
    c->level0 = std::max(c->level0, req.after_id);
    c->replay_until = o.queue.last_id();
    count("replay_requests_served");
  }
}

void Server::send_gap_fill(TimeUs now, OutputState& o, ConsumerState& c, TupleId after, TupleId up_to,
                           Effects& eff) {
  if (!c.sends) return;
  up_to = std::min(up_to, c.sent_up_to);
  if (after < o.queue.trimmed_up_to()) {
    count("replay_gap_tuples", static_cast<std::int64_t>(o.queue.trimmed_up_to() - after));
    trace(eff, now, "replay_gap",
          "stream=" + plan_->streams[o.stream].name + " after=" + std::to_string(after) +
              " trimmed_up_to=" + std::to_string(o.queue.trimmed_up_to()) + " (gap fill)");
  }
  const auto batch_max = static_cast<std::size_t>(settings().batch_tuples);
  std::size_t i = o.queue.index_after(after);
  TupleId prev = after;
  while (i < o.queue.size() && o.queue.at(i).id <= up_to) {
    TupleBatch b;
    b.stream = o.stream;
    b.prev_id = prev;
    while (i < o.queue.size() && o.queue.at(i).id <= up_to && b.tuples.size() < batch_max) b.tuples.push_back(o.queue.at(i++));
    prev = b.tuples.back().id;
    hot_.tuples_sent += b.tuples.size();
    count("tuples_gap_filled", static_cast<std::int64_t>(b.tuples.size()));
    send(eff, now, c.node, std::move(b));
  }
  count("gap_fills");
}

bool Server::on_takeover(TimeUs now, const Takeover& t, Effects& eff, bool answer) {
  if (t.fragment >= plan_->fragments.size() || t.new_primary >= plan_->nodes.size() ||
      plan_->nodes[t.new_primary].fragment != t.fragment) {
    count("bad_takeover_dropped");
    return false;
  }
  Route& r = routes_[t.fragment];
  const bool repeat = t.epoch == r.epoch && t.new_primary == r.primary && t.fragment != frag_;
  if (t.epoch < r.epoch || (t.epoch == r.epoch && !repeat)) {
    count("stale_takeover_dropped");
    if (t.epoch == r.epoch && t.fragment != frag_ && role_ != Role::rejoining && role_ != Role::fenced) {
      // Another claim of an epoch whose first claim I follow: tell the claimant (a primary whose
      // dissolution of its pair is still pending stops on it, PrimaryRole::on_standby_lost).
      count("epoch_ties_answered");
      tell_route(now, t.new_primary, eff);
    }
    return false;
  }
  if (repeat) {
    // The announcement came again: our answer (replay request, restart points) may have been
    // lost. Answer again; both answers are idempotent.
    count("repeated_takeovers");
    if (answer) answer_takeover(now, t, eff);
    return false;
  }
  // My own fragment's epoch changes: what my Unions chose so far belongs to the old one.
  if (t.fragment == frag_) collect_merge_order();
  r.primary = t.new_primary;
  r.epoch = t.epoch;
  r.standby = t.standby;
  r.standby_incarnation = t.standby_incarnation;
  if (t.fragment == frag_) return t.new_primary != self_;
  trace(eff, now, "route_change",
        "fragment=" + plan_->fragments[t.fragment].name + " primary=" + plan_->nodes[t.new_primary].name +
            " epoch=" + std::to_string(t.epoch));

  // A downstream fragment moved: its old primary no longer consumes; the new one tells us where
  // to resume with a ReplayRequest.
  for (auto& [s, o] : outputs_) {
    const auto& consumers = plan_->streams[s].consumers;
    if (std::find(consumers.begin(), consumers.end(), t.fragment) == consumers.end()) continue;
    const auto live = input_nodes_of(t.fragment);
    std::erase_if(o.consumers, [&](const ConsumerState& c) {
      return c.fragment == t.fragment && std::find(live.begin(), live.end(), c.node) == live.end();
    });
    for (NodeId n : live) {
      bool present = false;
      for (const ConsumerState& c : o.consumers) present |= c.node == n;
      if (present) continue;
      // A new primary tells us where to resume with a ReplayRequest; a joining active standby
      // is subscribed by its primary's Redirect. Until then it holds trimming back (its level-0
      // is 0), so what it needs is still here when it asks.
      ConsumerState c = make_consumer(n, t.fragment);
      c.ready = false;
      c.sends = role_ == Role::primary;
      o.consumers.push_back(c);
    }
  }
  if (answer) answer_takeover(now, t, eff);
  return false;
}

void Server::answer_takeover(TimeUs now, const Takeover& t, Effects& eff) {
  for (auto& [s, o] : outputs_) {
    const auto& consumers = plan_->streams[s].consumers;
    if (std::find(consumers.begin(), consumers.end(), t.fragment) == consumers.end()) continue;
    if (role_ == Role::primary && plan_->fragments[t.fragment].ha == HaMode::upstream) {
      RestartPoints offer;
      offer.stream = s;
      offer.trimmed_up_to = o.queue.trimmed_up_to();
      auto rp = o.restart_points.find(t.fragment);
      if (rp != o.restart_points.end()) offer.points = rp->second.points();
      send(eff, now, t.new_primary, std::move(offer));
    }
  }
  // An upstream fragment moved: ask its new primary to continue after what I accepted.
  if (role_ == Role::primary || role_ == Role::active_backup) {
    for (auto& [s, in] : inputs_) {
      if (in.producer != t.fragment) continue;
      in.replaying = false;
      in.replayed_tuples = 0;
      clear_stash(in);
      in.held_generation = 0;  // the new primary holds none of our restart points until told
      in.awaiting_producer = true;
      in.replay_requested_us = now;
      in.replay_after = in.accepted.last_accepted();
      in.replay_generation = 0;
      send(eff, now, t.new_primary, ReplayRequest{s, in.accepted.last_accepted(), 0});
    }
  }
}

void Server::announce_takeover(TimeUs now, Effects& eff, NodeId old_primary) {
  const Takeover t{frag_, self_, epoch(), routes_[frag_].standby, routes_[frag_].standby_incarnation};
  for (NodeId n : neighbour_nodes()) send(eff, now, n, t);
  if (old_primary != kNoNode && old_primary != self_) send(eff, now, old_primary, t);
  announce_pending_ = true;
  announce_old_primary_ = old_primary;
  announced_us_ = now;
}

TimeUs Server::retransmit_us() const { return us_from_ms(static_cast<double>(settings().retransmit_timeout_ms)); }

TimeUs Server::retransmit(TimeUs now, Effects& eff) {
  const TimeUs rt = retransmit_us();
  TimeUs next = kNever;
  for (auto& [s, o] : outputs_) {
    for (ConsumerState& c : o.consumers) {
      if (!c.sends || !c.ready) continue;
      const bool unacked = c.sent_up_to > c.level0 || (c.eos_sent && !c.eos_acked);
      if (!unacked) continue;
      // Exponential back-off, so a consumer that is gone for good costs little.
      const TimeUs timeout = rt << std::min(c.retransmits, kRetransmitBackoffDoublingsMax);
      if (now - c.progress_us >= timeout) {
        c.sent_up_to = c.level0;
        c.eos_sent = false;
        c.progress_us = now;
        ++c.retransmits;
        count("retransmissions");
        next = std::min(next, now + (rt << std::min(c.retransmits, kRetransmitBackoffDoublingsMax)));
      } else {
        next = std::min(next, c.progress_us + timeout);
      }
    }
  }
  if (announce_pending_ && role_ == Role::primary) {
    bool waiting = !all_consumers_ready();
    for (const auto& [s, in] : inputs_) waiting |= in.awaiting_producer;
    if (!waiting) {
      announce_pending_ = false;
    } else if (now - announced_us_ >= rt) {
      const Takeover t{frag_, self_, epoch(), routes_[frag_].standby, routes_[frag_].standby_incarnation};
      const auto neighbours = neighbour_nodes();
      for (NodeId n : neighbours) send(eff, now, n, t);
      // The other node of my fragment too: cut off when I first announced, it may still act in
      // the old epoch, or claim the same one (PrimaryRole::on_standby_lost).
      if (announce_old_primary_ != kNoNode && announce_old_primary_ != self_ &&
          std::find(neighbours.begin(), neighbours.end(), announce_old_primary_) == neighbours.end())
        send(eff, now, announce_old_primary_, t);
      announced_us_ = now;
      count("takeover_announcements_repeated");
    }
    if (announce_pending_) next = std::min(next, announced_us_ + rt);
  }
  if (role_ == Role::primary || role_ == Role::active_backup) {
    for (auto& [s, in] : inputs_) {
      if (!in.awaiting_producer) continue;
      if (now - in.replay_requested_us >= rt) {
        send(eff, now, routes_[in.producer].primary, ReplayRequest{s, in.replay_after, in.replay_generation});
        in.replay_requested_us = now;
        count("replay_requests_repeated");
      }
      next = std::min(next, in.replay_requested_us + rt);
    }
  }
  return next;
}

void Server::answer_stale_sender(TimeUs now, const Envelope& e, Effects& eff) { tell_route(now, e.header.sender, eff); }

void Server::tell_route(TimeUs now, NodeId n, Effects& eff) {
  if (n >= plan_->nodes.size() || n == self_) return;
  const FragmentId f = plan_->nodes[n].fragment;
  const Route& r = routes_[f];
  if (r.primary == n || r.primary == kNoNode) return;  // a late message of the current primary itself
  auto it = stale_answered_us_.find(n);
  if (it != stale_answered_us_.end() && now - it->second < retransmit_us()) return;
  stale_answered_us_[n] = now;
  send(eff, now, n, Takeover{f, r.primary, r.epoch, r.standby, r.standby_incarnation});
  count("fencing_notices_sent");
}

std::optional<Takeover> Server::implied_takeover(const Envelope& e) const {
  if (std::holds_alternative<Takeover>(e.body)) return std::nullopt;
  const NodeId n = e.header.sender;
  if (n >= plan_->nodes.size()) return std::nullopt;
  const FragmentId f = plan_->nodes[n].fragment;
  const Route& r = routes_[f];
  if (e.header.epoch <= r.epoch) return std::nullopt;
  // Only a node that took over (or renewed its pair) speaks in a newer epoch than we know.
  return Takeover{f, n, e.header.epoch, r.primary == n ? r.standby : kNoNode, r.primary == n ? r.standby_incarnation : 0};
}

// ---- sources ----------------------------------------------------------------------------------

TimeUs Server::emit_source_tuples(TimeUs now, Effects& eff) {
  HAPAIR_CHECK(kind() == FragmentKind::source);
  const SourceSpec& spec = plan_->spec(frag_).source;
  OutputState& o = outputs_.begin()->second;
  while (next_source_id_ <= source_count_ && source_tuple_time_us(spec, next_source_id_) <= now) {
    if (o.queue.full()) {
      if (settings().queue_full_policy == QueueFullPolicy::error) {
        if (fatal_error_.empty()) {
          fatal_error_ = "output queue of source '" + name() + "' is full (" +
                         std::to_string(settings().output_queue_tuples_max) +
                         " tuples = output_queue_tuples_max) and queue_full_policy = error";
          trace(eff, now, "fatal", "queue_full stream=" + plan_->streams[o.stream].name);
        }
        eff.fatal_error = fatal_error_;
        return kNever;
      }
      if (!input_blocked_) {
        input_blocked_ = true;
        count("backpressure_episodes");
        trace(eff, now, "backpressure", "stream=" + plan_->streams[o.stream].name);
      }
      return kNever;  // woken again by the acknowledgement that makes room
    }
    input_blocked_ = false;
    append_output(o.stream, source_tuple(spec, settings().seed, next_source_id_));
    ++next_source_id_;
    ++hot_.tuples_emitted;
  }
  if (next_source_id_ > source_count_) {
    if (!o.queue.ended()) o.queue.end_stream();
    return kNever;
  }
  // Batch what falls due within one flush interval into one wake-up.
  const TimeUs next = source_tuple_time_us(spec, next_source_id_);
  const TimeUs flush = us_from_ms(static_cast<double>(settings().batch_flush_ms));
  const TupleId batch_last = std::min<TupleId>(source_count_, next_source_id_ + settings().batch_tuples - 1);
  return std::max(next, std::min(next + flush, source_tuple_time_us(spec, batch_last)));
}

// ---- end and metrics --------------------------------------------------------------------------

bool Server::finished() const {
  if (role_ != Role::primary) return false;
  if (kind() == FragmentKind::sink) return all_inputs_ended();
  for (const auto& [s, o] : outputs_) {
    if (!o.queue.ended()) return false;
    for (const ConsumerState& c : o.consumers)
      if (!c.eos_acked || c.level0 < o.queue.last_id()) return false;
  }
  return true;
}

Metrics Server::metrics() const {
  Metrics m = counters_;
  // The per-tuple counters live in plain integers (a map lookup per tuple is too slow for the
  // simulator's million-tuple runs) and are merged here.
  auto put = [&](const char* name, std::uint64_t v) {
    if (v) m[name] += static_cast<std::int64_t>(v);
  };
  put("duplicates_dropped", hot_.duplicates_dropped);
  put("tuples_processed", hot_.tuples_processed);
  put("tuples_delivered", hot_.tuples_delivered);
  put("tuples_emitted", hot_.tuples_emitted);
  put("tuples_sent", hot_.tuples_sent);
  put("tuples_trimmed", hot_.tuples_trimmed);
  std::int64_t total = 0;
  for (const auto& [s, o] : outputs_) {
    m["output_queue_tuples." + plan_->streams[s].name] = static_cast<std::int64_t>(o.queue.size());
    total += static_cast<std::int64_t>(o.queue.size());
  }
  m["output_queue_tuples"] = total;
  m["input_queue_tuples"] = static_cast<std::int64_t>(input_queue_.size());
  m["epoch"] = static_cast<std::int64_t>(epoch());
  if (fragment_) m["operator_buffered_tuples"] = static_cast<std::int64_t>(fragment_->buffered_tuples());
  return m;
}

}  // namespace hapair
