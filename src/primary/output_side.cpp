#include "primary/output_side.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include "operators/source_generator.h"
#include "primary/input_channel.h"  // kReplayOnlyNew
#include "protocols/check.h"

namespace hapair {

namespace {

bool consumes(const Plan& plan, StreamId s, FragmentId d) {
  const auto& consumers = plan.streams[s].consumers;
  return std::find(consumers.begin(), consumers.end(), d) != consumers.end();
}

}  // namespace

OutputSide::OutputSide(const NodeIdentity& node, const Role& role, Outbox& outbox, PairSide& pair)
    : node_(node), role_(role), outbox_(outbox), pair_(pair) {
  const Plan& plan = node_.plan();
  const auto queue_max = static_cast<std::size_t>(node_.settings().output_queue_tuples_max);
  // A source's tuples are a pure function of their ids: its queue recomputes what it retains.
  std::shared_ptr<const TupleRecipe> recipe;
  if (node_.kind() == FragmentKind::source)
    recipe = std::make_shared<SourceGenerator>(plan.spec(node_.fragment_id()).source, node_.settings().seed);
  for (StreamId s : node_.fragment_plan().outputs) {
    OutputChannel o(s, queue_max, ConsumerRestartPoints::for_stream(plan, node_.fragment_id(), s), recipe);
    o.set_boundary_interval(us_from_ms(static_cast<double>(node_.settings().boundary_interval_ms)));
    for (FragmentId d : plan.streams[s].consumers)
      for (NodeId n : pair_.routes().input_nodes_of(d)) {
        ConsumerState c = make_consumer(n, d);
        // A standby tracks its fragment's consumers (for acks) but sends nothing until it
        // takes over.
        c.sends = role_ == Role::primary;
        o.add_consumer(c);
      }
    channels_.emplace(s, std::move(o));
  }
}

ConsumerState OutputSide::make_consumer(NodeId node, FragmentId consumer_fragment) const {
  ConsumerState c;
  c.node = node;
  c.fragment = consumer_fragment;
  c.retention = pair_.routes().traits(consumer_fragment).consumers_retain;
  return c;
}

OutputChannel& OutputSide::channel(StreamId s) {
  auto it = channels_.find(s);
  HAPAIR_CHECK_MSG(it != channels_.end(), "stream " << s << " is not an output of node " << node_.name());
  return it->second;
}

bool OutputSide::all_ready() const {
  return std::all_of(channels_.begin(), channels_.end(), [](const auto& c) { return c.second.all_ready(); });
}

bool OutputSide::all_acked_to_end() const {
  return std::all_of(channels_.begin(), channels_.end(), [](const auto& c) { return c.second.acked_to_end(); });
}

bool OutputSide::any_full(std::string* which) const {
  for (const auto& [s, o] : channels_)
    if (o.queue().full()) {
      if (which) *which = node_.plan().streams[s].name;
      return true;
    }
  return false;
}

void OutputSide::append(StreamId s, const Tuple& t) { channel(s).append(t); }

std::size_t OutputSide::room() const {
  std::size_t room = std::numeric_limits<std::size_t>::max();
  for (const auto& [s, o] : channels_) room = std::min(room, o.queue().room());
  return room;
}

void OutputSide::append(const FragmentOutputs& outs) {
  // One channel lookup and one append per stretch of outputs to the same stream.
  outs.for_each_stretch([this](StreamId stream, const Tuple* first, std::size_t n) { channel(stream).append_run(first, n); });
}

void OutputSide::extend_source(StreamId s, TupleId last) { channel(s).extend_to(last); }

void OutputSide::set_boundary(StreamId s, TimeUs boundary_us) { channel(s).set_boundary(boundary_us); }

void OutputSide::end_stream(StreamId s) {
  OutputChannel& o = channel(s);
  if (!o.queue().ended()) o.end_stream();
}

// ---- the data plane ---------------------------------------------------------------------------

void OutputSide::pump(TimeUs now, Effects& eff) {
  const auto batch_max = static_cast<std::size_t>(node_.settings().batch_tuples);
  const auto inflight_max = static_cast<std::size_t>(node_.settings().inflight_tuples_max);
  std::vector<OutgoingBatch>& out = pumped_;
  for (auto& [s, o] : channels_) {
    out.clear();
    const PumpReport r = o.pump(now, batch_max, inflight_max, out);
    tuples_sent_ += r.tuples_sent;
    if (r.replayed) outbox_.count("tuples_replayed", r.tuples_replayed);
    if (r.confirmations > 0) outbox_.count("generation_confirmations", r.confirmations);
    if (r.boundaries > 0) outbox_.count("boundary_batches", r.boundaries);
    for (auto& b : out) outbox_.send(eff, now, b.to, std::move(b.batch));
  }
  out.clear();
}

void OutputSide::trim_all() {
  for (auto& [s, o] : channels_) {
    const std::uint64_t trimmed = o.trim(trim_margin_);
    tuples_trimmed_ += trimmed;
    if (trimmed > 0 && outbox_.traces_data_plane()) {
      PendingTrim& t = trims_this_event_[s];
      t.position = o.queue().trimmed_up_to();
      t.count += trimmed;
    }
  }
}

void OutputSide::on_level0_ack(TimeUs now, NodeId from, const Level0Ack& ack) {
  auto it = channels_.find(ack.stream);
  if (it == channels_.end() || !it->second.on_level0_ack(now, from, ack)) {
    outbox_.count("unexpected_ack_dropped");
    return;
  }
  trim_all();
}

void OutputSide::on_level1_ack(TimeUs, NodeId from, const Level1Ack& ack) {
  auto it = channels_.find(ack.stream);
  if (it == channels_.end()) {
    outbox_.count("unexpected_ack_dropped");
    return;
  }
  const FragmentId d = node_.plan().nodes[from].fragment;
  if (!consumes(node_.plan(), ack.stream, d)) {
    outbox_.count("unexpected_ack_dropped");
    return;
  }
  it->second.add_level1(d, from, ack);
  outbox_.count("level1_acks_received");
  trim_all();
}

void OutputSide::trace_replay_gap(Effects& eff, TimeUs now, StreamId s, NodeId asker, TupleId after, TupleId trimmed,
                                  const char* what) {
  outbox_.count("replay_gap_tuples", Outbox::tuples_between(after, trimmed));
  outbox_.trace(eff, now, TraceKind::replay_gap)
      .with(TraceKey::stream, s)
      .with(TraceKey::peer, asker)
      .with(TraceKey::after_id, after)
      .with(TraceKey::position, trimmed)
      .with_text(what);
}

void OutputSide::on_replay_request(TimeUs now, NodeId from, const ReplayRequest& req, Effects& eff) {
  auto it = channels_.find(req.stream);
  if (it == channels_.end()) {
    outbox_.count("unexpected_replay_request_dropped");
    return;
  }
  OutputChannel& o = it->second;
  const FragmentId d = node_.plan().nodes[from].fragment;
  if (!o.has_consumer(from)) {
    if (!consumes(node_.plan(), req.stream, d)) {
      // The requester's fragment does not read this stream (a forged or corrupt request).
      outbox_.count("unexpected_replay_request_dropped");
      return;
    }
    const auto nodes = pair_.routes().input_nodes_of(d);
    if (std::find(nodes.begin(), nodes.end(), from) == nodes.end()) {
      outbox_.count("unexpected_replay_request_dropped");
      // A node of a consumer fragment that is not the one I follow asks as its primary: tell it
      // who is (it claimed an epoch another node claimed first, or missed its fencing).
      pair_.tell_route(now, from, eff);
      // It may yet become the primary I follow (its claim wins in a newer epoch): then this is
      // where it resumes, and it may not ask again — batches sent to it before, while it was
      // the standby, reach it after the request and look like my answer (chaos case 574 of
      // seed 1). Kept until the consumer fragment's next route change, served then if it names
      // this node its primary (serve_refused_replay_requests).
      if (req.up_to == 0) refused_replay_requests_[from][req.stream] = req;
      return;
    }
    ConsumerState c = make_consumer(from, d);
    c.sends = role_ == Role::primary;
    o.add_consumer(c);
  }
  // A gap fill whose start I trimmed already cannot be filled: the consumer would ask forever
  // (an amnesia primary that took a stale batch, queued for its killed predecessor, as its start;
  // docs/FAULTS.md). It is served as a replay from there: what I still hold follows `after_id`,
  // so the consumer accepts it, the trimmed part is the (traced) gap, the rest it kept is dropped
  // as duplicates.
  if (req.up_to > 0 && o.ready(from) && req.after_id >= o.queue().trimmed_up_to()) {
    // A gap fill: the consumer kept what came after the lost batch; re-send only the gap.
    auto batches = o.gap_fill(from, req.after_id, req.up_to, static_cast<std::size_t>(node_.settings().batch_tuples));
    if (!batches) return;
    for (TupleBatch& b : *batches) {
      tuples_sent_ += b.tuples.size();
      outbox_.count("tuples_gap_filled", static_cast<std::int64_t>(b.tuples.size()));
      outbox_.send(eff, now, from, std::move(b));
    }
    outbox_.count("gap_fills");
    return;
  }
  // Echo the route I follow for the requester's fragment: proof, sent only after its request
  // reached me, that I serve it in that epoch (a primary that dissolved its pair waits for it,
  // PrimaryRole::on_standby_lost; data alone may have been on the way since before).
  const bool gap_fill = req.up_to > 0;
  if (role_ == Role::primary && !gap_fill && from == pair_.routes().route(d).primary) pair_.echo_route(now, from, eff);
  const bool only_new = req.after_id == kReplayOnlyNew;
  const TupleId trimmed = o.queue().trimmed_up_to();
  if (o.resume(from, req.after_id, only_new, now) > 0)
    trace_replay_gap(eff, now, req.stream, from, req.after_id, trimmed, gap_fill ? "gap fill of trimmed tuples" : "");
  if (gap_fill) outbox_.count("gap_fills_of_trimmed");
  if (!only_new) outbox_.count("replay_requests_served");
}

void OutputSide::on_redirect(TimeUs now, NodeId from, const Redirect& r, Effects& eff) {
  auto it = channels_.find(r.stream);
  if (it == channels_.end() || r.consumer >= node_.plan().nodes.size()) {
    outbox_.count("unexpected_redirect_dropped");
    return;
  }
  OutputChannel& o = it->second;
  const FragmentId d = node_.plan().nodes[r.consumer].fragment;
  // Only the consumer fragment's current primary may (un)subscribe its standby.
  if (pair_.routes().route(d).primary != from || node_.plan().nodes[from].fragment != d ||
      r.consumer == node_.self() || !consumes(node_.plan(), r.stream, d)) {
    outbox_.count("unexpected_redirect_dropped");
    return;
  }
  if (!r.subscribe) {
    o.remove_consumer(r.consumer);
    trim_all();
    return;
  }
  if (!o.has_consumer(r.consumer)) o.add_consumer(make_consumer(r.consumer, d));
  o.set_sending(r.consumer, role_ == Role::primary);
  const TupleId trimmed = o.queue().trimmed_up_to();
  if (o.resume(r.consumer, r.after_id, false, now) > 0)
    trace_replay_gap(eff, now, r.stream, r.consumer, r.after_id, trimmed, "joining standby");
  outbox_.count("standbys_subscribed");
}

TimeUs OutputSide::retransmit(TimeUs now) {
  const TimeUs rt = node_.retransmit_us();
  TimeUs next = kNever;
  std::int64_t retransmissions = 0;
  for (auto& [s, o] : channels_) next = std::min(next, o.retransmit(now, rt, retransmissions));
  if (retransmissions > 0) outbox_.count("retransmissions", retransmissions);
  return next;
}

// ---- consumers and takeovers ------------------------------------------------------------------

void OutputSide::follow_consumer_takeover(const Takeover& t) {
  for (auto& [s, o] : channels_) {
    if (!consumes(node_.plan(), s, t.fragment)) continue;
    // The route names the consumer's approach in the new epoch (a live switch may change it):
    // what its nodes need kept follows it.
    const ApproachTraits& traits = pair_.routes().traits(t.fragment);
    o.follow_consumer_approach(t.fragment, traits.consumers_retain, traits.recovers_from_restart_points);
    const auto live = pair_.routes().input_nodes_of(t.fragment);
    o.keep_only_live(t.fragment, live);
    for (NodeId n : live) {
      if (o.has_consumer(n)) continue;
      // A new primary tells us where to resume with a ReplayRequest; a joining active standby
      // is subscribed by its primary's Redirect. Until then it holds trimming back (its level-0
      // is 0), so what it needs is still here when it asks.
      ConsumerState c = make_consumer(n, t.fragment);
      c.ready = false;
      c.sends = role_ == Role::primary;
      o.add_consumer(c);
    }
  }
}

void OutputSide::follow_own_approach() {
  const bool recovers = node_.traits().recovers_from_restart_points;
  for (auto& [s, o] : channels_) o.follow_own_approach(node_.plan(), node_.fragment_id(), recovers);
}

void OutputSide::serve_refused_replay_requests(TimeUs now, FragmentId d, Effects& eff) {
  // Only the fragment's primary: a standby is subscribed by its primary's Redirect, never by a
  // request it made before it became one.
  const NodeId primary = pair_.routes().route(d).primary;
  std::vector<std::pair<NodeId, ReplayRequest>> due;
  for (auto it = refused_replay_requests_.begin(); it != refused_replay_requests_.end();) {
    if (node_.plan().nodes[it->first].fragment != d) {
      ++it;
      continue;
    }
    if (it->first == primary)
      for (const auto& [s, req] : it->second) due.emplace_back(it->first, req);
    it = refused_replay_requests_.erase(it);
  }
  for (const auto& [n, req] : due) {
    HAPAIR_CHECK_MSG(req.up_to == 0 && consumes(node_.plan(), req.stream, d),
                     "refused request of node " << n << " on stream " << req.stream << " up to " << req.up_to);
    outbox_.count("refused_replay_requests_served");
    on_replay_request(now, n, req, eff);
  }
}

void OutputSide::offer_restart_points(TimeUs now, const Takeover& t, Effects& eff) {
  for (const auto& [s, o] : channels_) {
    if (!consumes(node_.plan(), s, t.fragment)) continue;
    if (auto offer = o.restart_points().offer(t.fragment, s, o.queue().trimmed_up_to()))
      outbox_.send(eff, now, t.new_primary, std::move(*offer));
  }
}

void OutputSide::reset_consumers_awaiting_replay_request() {
  for (auto& [s, o] : channels_) {
    std::vector<ConsumerState> consumers;
    for (FragmentId d : node_.plan().streams[s].consumers)
      for (NodeId n : pair_.routes().input_nodes_of(d)) {
        ConsumerState c = make_consumer(n, d);
        c.ready = false;
        c.sends = true;
        consumers.push_back(c);
      }
    o.replace_consumers(std::move(consumers));
  }
}

void OutputSide::track_consumers_without_sending() {
  for (auto& [s, o] : channels_) o.set_sending_all(false);
}

void OutputSide::clear_logs() {
  for (auto& [s, o] : channels_) o.clear_log();
}

void OutputSide::reset_for_standby() {
  for (auto& [s, o] : channels_) o.reset_for_standby();
}

// ---- holding output back ----------------------------------------------------------------------

void OutputSide::hold_all() {
  for (auto& [s, o] : channels_) o.hold_after_last();
}

void OutputSide::hold_from_log_start() {
  for (auto& [s, o] : channels_)
    if (!o.gate().held()) o.hold_after_log_start();
}

void OutputSide::release(StreamId s, TupleId up_to) { channel(s).release_up_to(up_to); }

std::size_t OutputSide::release_all_held() {
  std::size_t released = 0;
  for (auto& [s, o] : channels_) released += o.release_all();
  return released;
}

void OutputSide::rebase_all() {
  for (auto& [s, o] : channels_) {
    o.rebase();
    outbox_.count("rebased_streams");
  }
}

// ---- state transfer ---------------------------------------------------------------------------

void OutputSide::restore(const std::vector<CheckpointOutput>& queues) {
  for (const auto& co : queues) {
    auto it = channels_.find(co.stream);
    if (it != channels_.end()) it->second.restore(co.offset, co.trimmed_up_to, co.last_id, co.ended, co.tuples);
  }
}

void OutputSide::trim_log_up_to(StreamId s, TupleId up_to) {
  auto it = channels_.find(s);
  if (it == channels_.end()) return;
  // Never beyond what the log holds: a copy that lags its primary appends those ids later.
  it->second.install(DownstreamRestartPoints{s, kNoFragment, std::min(up_to, it->second.queue().last_id()), {}});
}

void OutputSide::install_forwarded(const DownstreamRestartPoints& forwarded) { channel(forwarded.stream).install(forwarded); }

bool OutputSide::confirm_forwarded(StreamId s, FragmentId d, std::uint64_t generation) {
  OutputChannel& o = channel(s);
  if (!o.confirm_forwarded(d, generation)) return false;
  // A consumer with one producer is told the newest generation already; only one with several
  // producers waits for my upstream, so only its held generation may rise now.
  if (o.restart_points().several_producers(d)) o.owe_confirmation(d);
  return true;
}

// ---- the end of an event ----------------------------------------------------------------------

void OutputSide::trace_trims(TimeUs now, Effects& eff) {
  for (const auto& [s, t] : trims_this_event_)
    outbox_.trace(eff, now, TraceKind::trimmed).with(TraceKey::stream, s).with(TraceKey::position, t.position).with(TraceKey::count, t.count);
  trims_this_event_.clear();
}

}  // namespace hapair
