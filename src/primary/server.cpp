#include "primary/server.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "operators/source_generator.h"
#include "primary/checkpoint.h"
#include "protocols/check.h"

namespace hapair {

Server::Server(std::shared_ptr<const Plan> plan, NodeId self)
    : node_(std::move(plan), self),
      plan_(&node_.plan()),
      self_(self),
      frag_(node_.fragment_id()),
      role_(node_.planned_standby() ? node_.standby_role() : Role::primary),
      routes_(node_.plan(), self),
      trace_data_plane_(node_.settings().trace_level == TraceLevel::data),
      reported_role_(role_) {
  const PlanFragment& f = plan_->fragments[frag_];

  for (StreamId s : f.inputs) inputs_.emplace(s, InputChannel(s, plan_->streams[s].producer));
  const auto queue_max = static_cast<std::size_t>(settings().output_queue_tuples_max);
  for (StreamId s : f.outputs) {
    OutputChannel o(s, queue_max);
    for (FragmentId d : plan_->streams[s].consumers)
      for (NodeId n : input_nodes_of(d)) {
        ConsumerState c = make_consumer(n, d);
        // A standby tracks its fragment's consumers (for acks) but sends nothing until it
        // takes over.
        c.sends = role_ == Role::primary;
        o.add_consumer(c);
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

void Server::set_role(Role r) {
  collect_merge_order();
  role_ = r;
}

void Server::become_standby(Role r) {
  set_role(r);
  if (kind() == FragmentKind::operators) reset_fragment();
  input_queue_.clear();
  for (auto& [s, in] : inputs_) in = InputChannel(s, in.producer());
  for (auto& [s, o] : outputs_) o.reset_for_standby();
}

void Server::send(Effects& eff, TimeUs now, NodeId to, Message body) {
  HAPAIR_CHECK_MSG(to < plan_->nodes.size() && to != self_, "send to node " << to << " from " << self_);
  if (auto* b = std::get_if<TupleBatch>(&body)) {
    auto o = outputs_.find(b->stream);
    if (o != outputs_.end()) b->held_generation = held_generation_for(o->second, plan_->nodes[to].fragment);
  }
  trace_sent(eff, now, to, body);
  Envelope e;
  e.header.sender = self_;
  e.header.epoch = epoch();
  e.header.sent_us = now;
  e.body = std::move(body);
  eff.sends.push_back(Outgoing{to, std::move(e)});
}

void Server::trace_sent(Effects& eff, TimeUs now, NodeId to, const Message& body) {
  if (const auto* b = std::get_if<TupleBatch>(&body)) {
    if (b->tuples.empty()) return;
    trace(eff, now, TraceKind::batch_sent)
        .with(TraceKey::peer, to)
        .with(TraceKey::stream, b->stream)
        .with(TraceKey::first_id, b->tuples.front().id)
        .with(TraceKey::last_id, b->tuples.back().id)
        .with(TraceKey::count, b->tuples.size())
        .with(TraceKey::replay, b->replay);
  } else if (const auto* a0 = std::get_if<Level0Ack>(&body)) {
    trace(eff, now, TraceKind::level0_ack).with(TraceKey::peer, to).with(TraceKey::stream, a0->stream).with(TraceKey::position, a0->up_to);
  } else if (const auto* a1 = std::get_if<Level1Ack>(&body)) {
    trace(eff, now, TraceKind::level1_ack)
        .with(TraceKey::peer, to)
        .with(TraceKey::stream, a1->stream)
        .with(TraceKey::position, a1->up_to)
        .with(TraceKey::generation, a1->generation);
  } else if (const auto* r = std::get_if<ReplayRequest>(&body)) {
    TraceEvent& e = trace(eff, now, TraceKind::replay_request)
                        .with(TraceKey::peer, to)
                        .with(TraceKey::stream, r->stream)
                        .with(TraceKey::after_id, r->after_id);
    if (r->up_to > 0) e.with(TraceKey::last_id, r->up_to);
  }
}

void Server::count(const std::string& name, std::int64_t n) {
  std::int64_t& c = counters_[name];
  if (n > 0 && c > std::numeric_limits<std::int64_t>::max() - n) c = std::numeric_limits<std::int64_t>::max();
  else if (n < 0 && c < std::numeric_limits<std::int64_t>::min() - n) c = std::numeric_limits<std::int64_t>::min();
  else c += n;
}

std::int64_t Server::tuples_between(TupleId a, TupleId b) {
  if (b <= a) return 0;
  return static_cast<std::int64_t>(std::min<TupleId>(b - a, std::numeric_limits<std::int64_t>::max()));
}

TraceEvent& Server::trace(Effects& eff, TimeUs now, TraceKind kind) {
  if (is_data_plane(kind) && !trace_data_plane_) {
    not_recorded_ = TraceEvent(now, self_, kind);
    return not_recorded_;
  }
  return eff.traces.emplace_back(now, self_, kind);
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

void Server::end_event(TimeUs now, Effects& eff) {
  for (const auto& [s, t] : trims_this_event_)
    trace(eff, now, TraceKind::trimmed).with(TraceKey::stream, s).with(TraceKey::position, t.position).with(TraceKey::count, t.count);
  trims_this_event_.clear();
  if (role_ != reported_role_) {
    reported_role_ = role_;
    trace(eff, now, TraceKind::role).with(TraceKey::role, role_);
  }
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

InputLimits Server::input_limits() const {
  return InputLimits{static_cast<std::size_t>(settings().inflight_tuples_max),
                     static_cast<std::size_t>(settings().input_queue_tuples_max), retransmit_us()};
}

std::size_t Server::accept_batch(TimeUs now, NodeId from, const TupleBatch& batch, Effects& eff) {
  auto it = inputs_.find(batch.stream);
  if (it == inputs_.end()) {
    count("unexpected_stream_dropped");
    return 0;
  }
  InputChannel& in = it->second;
  if (from != route(in.producer()).primary) {
    count("not_from_primary_dropped");
    // A node of the producer that is not its primary (as I know it) sends as one: it lost an
    // epoch tie or missed its fencing, so tell it who is.
    if (from < plan_->nodes.size() && plan_->nodes[from].fragment == in.producer()) tell_route(now, from, eff);
    return 0;
  }
  const Accepted a = in.accept(now, batch, input_limits(), input_queue_, from);
  hot_.duplicates_dropped += a.duplicates;
  if (a.gap_detected) {
    count("batch_gaps_detected");
    if (a.stash_overflow) count("stash_overflow_dropped");
    if (a.gap_request) {
      send(eff, now, from, *a.gap_request);
      count("gap_replay_requests");
    }
    return 0;
  }
  if (a.overflow_dropped > 0) count("input_overflow_dropped", a.overflow_dropped);
  if (a.replay_batches) count("replayed_tuples_received", a.replayed_tuples);
  if (!batch.tuples.empty()) {
    trace(eff, now, TraceKind::batch_received)
        .with(TraceKey::peer, from)
        .with(TraceKey::stream, batch.stream)
        .with(TraceKey::first_id, batch.tuples.front().id)
        .with(TraceKey::last_id, batch.tuples.back().id)
        .with(TraceKey::count, a.queued)
        .with(TraceKey::duplicates, a.duplicates);
  }
  if (a.duplicates > 0) {
    trace(eff, now, TraceKind::duplicates_dropped)
        .with(TraceKey::peer, from)
        .with(TraceKey::stream, batch.stream)
        .with(TraceKey::first_id, a.duplicate_first)
        .with(TraceKey::last_id, a.duplicate_last)
        .with(TraceKey::count, a.duplicates);
  }
  for (const auto& change : a.replay_changes) {
    if (!change) {
      trace(eff, now, TraceKind::replay_start)
          .with(TraceKey::stream, batch.stream)
          .with(TraceKey::peer, from)
          .with(TraceKey::first_id, batch.tuples.empty() ? TupleId{0} : batch.tuples.front().id);
    } else {
      trace(eff, now, TraceKind::replay_end).with(TraceKey::stream, batch.stream).with(TraceKey::peer, from).with(TraceKey::count, *change);
    }
  }
  return a.queued;
}

bool Server::any_output_full(std::string* which) const {
  for (const auto& [s, o] : outputs_)
    if (o.queue().full()) {
      if (which) *which = plan_->streams[s].name;
      return true;
    }
  return false;
}

void Server::on_queue_full(TimeUs now, Effects& eff, const std::string& what, const std::string& stream) {
  if (settings().queue_full_policy == QueueFullPolicy::error) {
    if (fatal_error_.empty()) {
      fatal_error_ = "output queue of " + what + " is full (" + std::to_string(settings().output_queue_tuples_max) +
                     " tuples = output_queue_tuples_max) and queue_full_policy = error";
      trace(eff, now, TraceKind::fatal)
          .with(TraceKey::reason, TraceReason::queue_full)
          .with(TraceKey::stream, plan_->stream_id(stream))
          .with_text(fatal_error_);
    }
    eff.fatal_error = fatal_error_;
    return;
  }
  if (!input_blocked_) {
    input_blocked_ = true;
    count("backpressure_episodes");
    trace(eff, now, TraceKind::backpressure).with(TraceKey::stream, plan_->stream_id(stream));
  }
}

void Server::process_input(TimeUs now, Effects& eff) {
  if (processing_paused_) return;
  if (role_ != Role::primary && role_ != Role::active_backup) return;
  while (!input_queue_.empty()) {
    std::string which;
    if (any_output_full(&which)) {
      on_queue_full(now, eff, "stream '" + which + "' on node '" + name() + "'", which);
      return;
    }
    InputItem item = std::move(input_queue_.front());
    input_queue_.pop_front();
    consume(now, item, eff);
  }
  input_blocked_ = false;
}

void Server::consume(TimeUs now, const InputItem& item, Effects& eff) {
  InputChannel& in = inputs_.at(item.stream);
  FragmentOutputs outs;
  if (item.eos) {
    in.processed_end_of_stream();
    if (kind() == FragmentKind::operators) {
      fragment_->end_of_stream(item.stream, outs);
      handle_fragment_outputs(outs);
      for (auto& [s, o] : outputs_)
        if (!o.queue().ended() && fragment_->output_ended(s)) o.end_stream();
    } else if (kind() == FragmentKind::sink && all_inputs_ended() && !end_of_output_traced_) {
      end_of_output_traced_ = true;
      trace(eff, now, TraceKind::end_of_output);
    }
    return;
  }
  in.processed_tuple(item.tuple, conservative_retention_us_);
  ++hot_.tuples_processed;
  if (kind() == FragmentKind::operators) {
    ++hot_.operator_tuples;
    fragment_->process(item.stream, item.tuple, outs);
    handle_fragment_outputs(outs);
  } else if (kind() == FragmentKind::sink) {
    eff.deliveries.push_back(Delivery{now, item.stream, item.tuple, item.from, item.replayed});
    ++hot_.tuples_delivered;
  }
}

void Server::handle_fragment_outputs(FragmentOutputs& outs) {
  for (auto& out : outs) append_output(out.stream, out.tuple);
  outs.clear();
}

bool Server::all_inputs_ended() const {
  for (const auto& [s, in] : inputs_)
    if (!in.eos_processed()) return false;
  return true;
}

void Server::send_level0_acks(TimeUs now, Effects& eff, bool force) {
  const TimeUs interval = us_from_ms(static_cast<double>(settings().ack_interval_ms));
  const auto half_window = static_cast<std::size_t>(std::max<std::int64_t>(1, settings().inflight_tuples_max / 2));
  for (auto& [s, in] : inputs_)
    if (auto ack = in.level0_due(now, interval, half_window, force))
      for (NodeId n : input_nodes_of(in.producer())) send(eff, now, n, *ack);
}

TimeUs Server::next_ack_due_us() const {
  TimeUs due = kNever;
  const TimeUs interval = us_from_ms(static_cast<double>(settings().ack_interval_ms));
  for (const auto& [s, in] : inputs_) due = std::min(due, in.next_level0_due_us(interval));
  return due;
}

void Server::request_replay(TimeUs now, Effects& eff, const std::map<StreamId, TupleId>& after,
                            std::uint64_t generation) {
  for (auto& [s, in] : inputs_) {
    auto it = after.find(s);
    const TupleId from = it != after.end() ? it->second : in.last_accepted();
    send(eff, now, route(in.producer()).primary, in.ask_replay(now, from, generation));
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
  it->second.append(t);
}

void Server::pump_outputs(TimeUs now, Effects& eff) {
  const auto batch_max = static_cast<std::size_t>(settings().batch_tuples);
  const auto inflight_max = static_cast<std::size_t>(settings().inflight_tuples_max);
  std::vector<OutgoingBatch> out;
  for (auto& [s, o] : outputs_) {
    out.clear();
    const PumpReport r = o.pump(now, batch_max, inflight_max, out);
    hot_.tuples_sent += r.tuples_sent;
    if (r.replayed) count("tuples_replayed", r.tuples_replayed);
    if (r.confirmations > 0) count("generation_confirmations", r.confirmations);
    for (auto& b : out) send(eff, now, b.to, std::move(b.batch));
  }
}

void Server::hold_outputs() {
  for (auto& [s, o] : outputs_) o.hold_after_last();
}

void Server::release_output(StreamId s, TupleId up_to) {
  auto it = outputs_.find(s);
  HAPAIR_CHECK_MSG(it != outputs_.end(), "stream " << s << " is not an output of node " << name());
  it->second.release_up_to(up_to);
}

std::size_t Server::release_held_outputs() {
  std::size_t released = 0;
  for (auto& [s, o] : outputs_) released += o.release_all();
  return released;
}

void Server::install_positions(const CheckpointContent& full) {
  for (const auto& ci : full.inputs) {
    auto it = inputs_.find(ci.stream);
    if (it != inputs_.end()) it->second.restore(ci.processed, ci.eos_processed);
  }
  for (const auto& co : full.outputs) {
    auto it = outputs_.find(co.stream);
    if (it != outputs_.end()) it->second.restore(co.offset, co.trimmed_up_to, co.last_id, co.ended, co.tuples);
  }
}

std::vector<DownstreamRestartPoints> Server::downstream_restart_points() const {
  std::vector<DownstreamRestartPoints> out;
  for (const auto& [s, o] : outputs_) {
    bool any = false;
    for (const auto& [f, store] : o.restart_points()) {
      auto points = store.points_to_forward(plan_->fragments[f].upstream.size() < 2);
      if (points.empty()) continue;  // a passive standby's direct acks: no restart points
      out.push_back(DownstreamRestartPoints{s, f, o.queue().trimmed_up_to(), std::move(points)});
      any = true;
    }
    if (!any) out.push_back(DownstreamRestartPoints{s, kNoFragment, o.queue().trimmed_up_to(), {}});
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
    outputs_.at(f.stream).install(f);
    if (f.consumer != kNoFragment)
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
    if (!it->second.confirm_forwarded(f.consumer, newest)) continue;
    if (plan_->fragments[f.consumer].upstream.size() < 2) continue;  // its held_generation is unchanged
    it->second.owe_confirmation(f.consumer);
  }
}

std::uint64_t Server::held_generation_for(const OutputChannel& o, FragmentId consumer) const {
  auto rp = o.restart_points().find(consumer);
  if (rp == o.restart_points().end()) return 0;
  const std::uint64_t newest = rp->second.newest_generation();
  // A source never fails and recovers, and a consumer with one producer restarts from whatever
  // my recovery node installs (docs/FAULTS.md): only the several-producers case needs more.
  if (kind() != FragmentKind::operators || mode() != HaMode::upstream ||
      settings().trimming == TrimmingRule::conservative || plan_->fragments[consumer].upstream.size() < 2)
    return newest;
  return std::min(newest, o.forwarded_confirmed(consumer));
}

void Server::trim_output(OutputChannel& o) {
  TupleId margin = 0;
  if (role_ == Role::active_backup && !settings().determinants && fragment_ && fragment_->is_nondeterministic()) {
    // Without determinants my ids name other tuples than the primary's, so the downstream's
    // acknowledgements say nothing exact about my log: keep a margin of one flow-control
    // window, which covers how far the two interleavings can drift apart.
    margin = static_cast<TupleId>(settings().inflight_tuples_max);
  }
  const std::uint64_t trimmed = o.trim(margin);
  hot_.tuples_trimmed += trimmed;
  if (trimmed > 0 && trace_data_plane_) {
    PendingTrim& t = trims_this_event_[o.stream()];
    t.position = o.queue().trimmed_up_to();
    t.count += trimmed;
  }
}

void Server::trim_outputs() {
  for (auto& [s, o] : outputs_) trim_output(o);
}

void Server::reset_consumers_awaiting_replay_request() {
  for (auto& [s, o] : outputs_) {
    std::vector<ConsumerState> consumers;
    for (FragmentId d : plan_->streams[s].consumers)
      for (NodeId n : input_nodes_of(d)) {
        ConsumerState c = make_consumer(n, d);
        c.ready = false;
        c.sends = true;
        consumers.push_back(c);
      }
    o.replace_consumers(std::move(consumers));
  }
}

void Server::track_consumers_without_sending() {
  for (auto& [s, o] : outputs_) o.set_sending_all(false);
}

void Server::rebase_outputs() {
  for (auto& [s, o] : outputs_) {
    o.rebase();
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
  if (after - before < d.records.size())
    count("determinant_records_not_applied", static_cast<std::int64_t>(d.records.size() - (after - before)));
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

void Server::trace_replay_gap(Effects& eff, TimeUs now, StreamId s, NodeId asker, TupleId after, TupleId trimmed,
                              const char* what) {
  count("replay_gap_tuples", tuples_between(after, trimmed));
  trace(eff, now, TraceKind::replay_gap)
      .with(TraceKey::stream, s)
      .with(TraceKey::peer, asker)
      .with(TraceKey::after_id, after)
      .with(TraceKey::position, trimmed)
      .with_text(what);
}

void Server::on_redirect(TimeUs now, NodeId from, const Redirect& r, Effects& eff) {
  auto it = outputs_.find(r.stream);
  if (it == outputs_.end() || r.consumer >= plan_->nodes.size()) {
    count("unexpected_redirect_dropped");
    return;
  }
  OutputChannel& o = it->second;
  const FragmentId d = plan_->nodes[r.consumer].fragment;
  // Only the consumer fragment's current primary may (un)subscribe its standby.
  if (route(d).primary != from || plan_->nodes[from].fragment != d) {
    count("unexpected_redirect_dropped");
    return;
  }
  if (!r.subscribe) {
    o.remove_consumer(r.consumer);
    trim_outputs();
    return;
  }
  if (!o.has_consumer(r.consumer)) o.add_consumer(make_consumer(r.consumer, d));
  o.set_sending(r.consumer, role_ == Role::primary);
  const TupleId trimmed = o.queue().trimmed_up_to();
  if (o.resume(r.consumer, r.after_id, false, now) > 0)
    trace_replay_gap(eff, now, r.stream, r.consumer, r.after_id, trimmed, "joining standby");
  count("standbys_subscribed");
}

void Server::on_level0_ack(TimeUs now, NodeId from, const Level0Ack& ack) {
  auto it = outputs_.find(ack.stream);
  if (it == outputs_.end() || !it->second.on_level0_ack(now, from, ack)) {
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
  it->second.add_level1(d, from, ack);
  count("level1_acks_received");
  trim_outputs();
}

void Server::on_replay_request(TimeUs now, NodeId from, const ReplayRequest& req, Effects& eff) {
  auto it = outputs_.find(req.stream);
  if (it == outputs_.end()) {
    count("unexpected_replay_request_dropped");
    return;
  }
  OutputChannel& o = it->second;
  const FragmentId d = plan_->nodes[from].fragment;
  if (!o.has_consumer(from)) {
    const auto nodes = input_nodes_of(d);
    if (std::find(nodes.begin(), nodes.end(), from) == nodes.end()) {
      count("unexpected_replay_request_dropped");
      // A node of a consumer fragment that is not the one I follow asks as its primary: tell it
      // who is (it claimed an epoch another node claimed first, or missed its fencing).
      const auto& consumers = plan_->streams[req.stream].consumers;
      if (std::find(consumers.begin(), consumers.end(), d) != consumers.end()) tell_route(now, from, eff);
      return;
    }
    ConsumerState c = make_consumer(from, d);
    c.sends = role_ == Role::primary;
    o.add_consumer(c);
  }
  if (req.up_to > 0 && o.ready(from)) {
    // A gap fill: the consumer kept what came after the lost batch; re-send only the gap.
    auto batches = o.gap_fill(from, req.after_id, req.up_to, static_cast<std::size_t>(settings().batch_tuples));
    if (!batches) return;
    if (req.after_id < o.queue().trimmed_up_to())
      trace_replay_gap(eff, now, req.stream, from, req.after_id, o.queue().trimmed_up_to(), "gap fill");
    for (TupleBatch& b : *batches) {
      hot_.tuples_sent += b.tuples.size();
      count("tuples_gap_filled", static_cast<std::int64_t>(b.tuples.size()));
      send(eff, now, from, std::move(b));
    }
    count("gap_fills");
    return;
  }
  if (role_ == Role::primary && from == route(d).primary) {
    // Echo the route I follow for the requester's fragment: proof, sent only after its request
    // reached me, that I serve it in that epoch (a primary that dissolved its pair waits for
    // it, PrimaryRole::on_standby_lost; data alone may have been on the way since before).
    send(eff, now, from, routes_.statement_of(d));
    count("route_echoes_sent");
  }
  const bool only_new = req.after_id == kReplayOnlyNew;
  const TupleId trimmed = o.queue().trimmed_up_to();
  if (o.resume(from, req.after_id, only_new, now) > 0)
    trace_replay_gap(eff, now, req.stream, from, req.after_id, trimmed, "");
  if (!only_new) count("replay_requests_served");
}

// ---- sources ----------------------------------------------------------------------------------

TimeUs Server::emit_source_tuples(TimeUs now, Effects& eff) {
  HAPAIR_CHECK(kind() == FragmentKind::source);
  const SourceSpec& spec = plan_->spec(frag_).source;
  OutputChannel& o = outputs_.begin()->second;
  while (next_source_id_ <= source_count_ && source_tuple_time_us(spec, next_source_id_) <= now) {
    if (o.queue().full()) {
      on_queue_full(now, eff, "source '" + name() + "'", plan_->streams[o.stream()].name);
      return kNever;  // woken again by the acknowledgement that makes room
    }
    input_blocked_ = false;
    o.append(source_tuple(spec, settings().seed, next_source_id_));
    ++next_source_id_;
    ++hot_.tuples_emitted;
  }
  if (next_source_id_ > source_count_) {
    if (!o.queue().ended()) o.end_stream();
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
  for (const auto& [s, o] : outputs_)
    if (!o.acked_to_end()) return false;
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
    m["output_queue_tuples." + plan_->streams[s].name] = static_cast<std::int64_t>(o.queue().size());
    total += static_cast<std::int64_t>(o.queue().size());
  }
  m["output_queue_tuples"] = total;
  m["input_queue_tuples"] = static_cast<std::int64_t>(input_queue_.size());
  m["epoch"] = static_cast<std::int64_t>(epoch());
  if (fragment_) m["operator_buffered_tuples"] = static_cast<std::int64_t>(fragment_->buffered_tuples());
  return m;
}

}  // namespace hapair
