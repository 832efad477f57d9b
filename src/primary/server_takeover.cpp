// Server: what a node does when a fragment is taken over (following routes and epochs,
// answering a takeover with replay requests upstream and restart-point offers downstream,
// announcing its own, fencing stale senders), and the retransmission of everything that may
// have been lost on the way (server.h).
#include <algorithm>

#include "primary/server.h"

namespace hapair {

bool Server::is_current(TimeUs now, const Envelope& e, Effects& eff) {
  if (e.header.sender >= plan_->nodes.size()) {
    count("unknown_sender_dropped");
    return false;
  }
  if (routes_.is_stale(e)) {
    count("stale_dropped");
    tell_route(now, e.header.sender, eff);
    return false;
  }
  return true;
}

void Server::send_routes_to(TimeUs now, Effects& eff, NodeId node) {
  std::vector<FragmentId> fs = node_.fragment_plan().upstream;
  fs.insert(fs.end(), node_.fragment_plan().downstream.begin(), node_.fragment_plan().downstream.end());
  std::sort(fs.begin(), fs.end());
  fs.erase(std::unique(fs.begin(), fs.end()), fs.end());
  for (FragmentId f : fs) {
    if (route(f).epoch == 0) continue;  // the plan's route: the node knows it
    send(eff, now, node, routes_.statement_of(f));
  }
}

bool Server::on_takeover(TimeUs now, const Takeover& t, Effects& eff, bool answer) {
  switch (routes_.classify(t)) {
    case TakeoverNews::malformed:
      count("bad_takeover_dropped");
      return false;
    case TakeoverNews::epoch_tie:
      count("stale_takeover_dropped");
      if (role_ != Role::rejoining && role_ != Role::fenced) {
        // Another claim of an epoch whose first claim I follow: tell the claimant (a primary whose
        // dissolution of its pair is still pending stops on it, PrimaryRole::on_standby_lost).
        count("epoch_ties_answered");
        tell_route(now, t.new_primary, eff);
      }
      return false;
    case TakeoverNews::stale:
      count("stale_takeover_dropped");
      return false;
    case TakeoverNews::repeat:
      // The announcement came again: our answer (replay request, restart points) may have been
      // lost. Answer again; both answers are idempotent.
      count("repeated_takeovers");
      if (answer) answer_takeover(now, t, eff);
      return false;
    case TakeoverNews::newer: break;
  }
  // My own fragment's epoch changes: what my Unions chose so far belongs to the old one.
  if (t.fragment == frag_) collect_merge_order();
  routes_.follow(t);
  if (t.fragment == frag_) return t.new_primary != self_;
  trace(eff, now, TraceKind::route_change).with(TraceKey::fragment_primary, t.new_primary).with(TraceKey::epoch, t.epoch);

  // A downstream fragment moved: its old primary no longer consumes; the new one tells us where
  // to resume with a ReplayRequest.
  for (auto& [s, o] : outputs_) {
    const auto& consumers = plan_->streams[s].consumers;
    if (std::find(consumers.begin(), consumers.end(), t.fragment) == consumers.end()) continue;
    const auto live = input_nodes_of(t.fragment);
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
      offer.trimmed_up_to = o.queue().trimmed_up_to();
      auto rp = o.restart_points().find(t.fragment);
      if (rp != o.restart_points().end()) offer.points = rp->second.points();
      send(eff, now, t.new_primary, std::move(offer));
    }
  }
  // An upstream fragment moved: ask its new primary to continue after what I accepted.
  if (role_ == Role::primary || role_ == Role::active_backup)
    for (auto& [s, in] : inputs_)
      if (in.producer() == t.fragment) send(eff, now, t.new_primary, in.ask_new_producer(now));
}

void Server::claim_own_fragment() {
  collect_merge_order();
  routes_.claim_as_primary();
}

void Server::form_pair(NodeId standby, std::uint64_t incarnation) {
  collect_merge_order();
  routes_.form_pair(standby, incarnation);
}

void Server::announce_takeover(TimeUs now, Effects& eff, NodeId old_primary) {
  const Takeover t = routes_.statement_of(frag_);
  for (NodeId n : routes_.neighbour_nodes()) send(eff, now, n, t);
  if (old_primary != kNoNode && old_primary != self_) send(eff, now, old_primary, t);
  routes_.announced(now, old_primary);
}

TimeUs Server::retransmit(TimeUs now, Effects& eff) {
  const TimeUs rt = retransmit_us();
  TimeUs next = kNever;
  std::int64_t retransmissions = 0;
  for (auto& [s, o] : outputs_) next = std::min(next, o.retransmit(now, rt, retransmissions));
  if (retransmissions > 0) count("retransmissions", retransmissions);
  if (routes_.announcing() && role_ == Role::primary) {
    bool waiting = false;
    for (const auto& [s, o] : outputs_) waiting |= !o.all_ready();
    for (const auto& [s, in] : inputs_) waiting |= in.awaiting_producer();
    if (!waiting) {
      routes_.announcement_answered();
    } else if (now - routes_.announced_us() >= rt) {
      const Takeover t = routes_.statement_of(frag_);
      const auto neighbours = routes_.neighbour_nodes();
      for (NodeId n : neighbours) send(eff, now, n, t);
      // The other node of my fragment too: cut off when I first announced, it may still act in
      // the old epoch, or claim the same one (PrimaryRole::on_standby_lost).
      const NodeId old = routes_.announced_old_primary();
      if (old != kNoNode && old != self_ && std::find(neighbours.begin(), neighbours.end(), old) == neighbours.end())
        send(eff, now, old, t);
      routes_.reannounced(now);
      count("takeover_announcements_repeated");
    }
    if (routes_.announcing()) next = std::min(next, routes_.announced_us() + rt);
  }
  if (role_ == Role::primary || role_ == Role::active_backup) {
    for (auto& [s, in] : inputs_) {
      if (auto req = in.replay_request_due(now, rt)) {
        send(eff, now, route(in.producer()).primary, *req);
        count("replay_requests_repeated");
      }
      next = std::min(next, in.next_replay_request_us(rt));
    }
  }
  return next;
}

void Server::tell_route(TimeUs now, NodeId n, Effects& eff) {
  if (!routes_.fencing_notice_due(n, now, retransmit_us())) return;
  send(eff, now, n, routes_.statement_of(plan_->nodes[n].fragment));
  count("fencing_notices_sent");
}

}  // namespace hapair
