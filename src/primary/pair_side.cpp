#include "primary/pair_side.h"

#include <algorithm>
#include <utility>

namespace hapair {

PairSide::PairSide(const NodeIdentity& node, RouteTable& routes, Outbox& outbox, std::function<void()> before_epoch_ends)
    : node_(node), routes_(routes), outbox_(outbox), before_epoch_ends_(std::move(before_epoch_ends)) {}

bool PairSide::from_a_peer(const Envelope& e) {
  if (e.header.sender < node_.plan().nodes.size() && e.header.sender != node_.self()) return true;
  outbox_.count("unknown_sender_dropped");
  return false;
}

bool PairSide::is_current(TimeUs now, const Envelope& e, Effects& eff) {
  if (!from_a_peer(e)) return false;
  if (routes_.is_stale(e)) {
    outbox_.count("stale_dropped");
    tell_route(now, e.header.sender, eff);
    return false;
  }
  return true;
}

void PairSide::tell_route(TimeUs now, NodeId n, Effects& eff) {
  if (!routes_.fencing_notice_due(n, now, node_.retransmit_us())) return;
  outbox_.send(eff, now, n, routes_.statement_of(node_.plan().nodes[n].fragment));
  outbox_.count("fencing_notices_sent");
}

void PairSide::echo_route(TimeUs now, NodeId to, Effects& eff) {
  outbox_.send(eff, now, to, routes_.statement_of(node_.plan().nodes[to].fragment));
  outbox_.count("route_echoes_sent");
}

void PairSide::ask_route(TimeUs now, const Envelope& e, Effects& eff) {
  if (routes_.newer_epoch_without_route(e)) exchange_route(now, e.header.sender, true, eff);
}

void PairSide::answer_old_statement(TimeUs now, const Envelope& e, Effects& eff) {
  if (routes_.old_statement_of_mine(e)) exchange_route(now, e.header.sender, false, eff);
}

void PairSide::exchange_route(TimeUs now, NodeId n, bool asking, Effects& eff) {
  if (!routes_.route_exchange_due(n, asking, now, node_.retransmit_us())) return;
  // Asking: the route I follow for n's fragment. Answering: my own fragment's.
  const FragmentId f = asking ? node_.plan().nodes[n].fragment : node_.fragment_id();
  outbox_.send(eff, now, n, routes_.statement_of(f));
  outbox_.count(asking ? "route_queries_sent" : "old_statements_answered");
}

TakeoverNews PairSide::learn(TimeUs now, const Takeover& t, Effects& eff, bool answer_ties) {
  const TakeoverNews news = routes_.classify(t);
  switch (news) {
    case TakeoverNews::malformed:
      outbox_.count("bad_takeover_dropped");
      break;
    case TakeoverNews::epoch_tie:
      outbox_.count("stale_takeover_dropped");
      if (answer_ties) {
        // Another claim of an epoch whose first claim I follow: tell the claimant (a primary whose
        // dissolution of its pair is still pending stops on it, PrimaryRole::on_standby_lost).
        outbox_.count("epoch_ties_answered");
        tell_route(now, t.new_primary, eff);
      }
      break;
    case TakeoverNews::stale:
      outbox_.count("stale_takeover_dropped");
      break;
    case TakeoverNews::repeat:
      outbox_.count("repeated_takeovers");
      break;
    case TakeoverNews::newer:
      // My own fragment's epoch changes: what my Unions chose so far belongs to the old one.
      if (t.fragment == node_.fragment_id()) before_epoch_ends_();
      routes_.follow(t);
      break;
  }
  return news;
}

void PairSide::claim_own_fragment(const std::vector<StandbyRef>& followers) {
  before_epoch_ends_();
  routes_.claim_as_primary(followers);
}

void PairSide::drop_standby(NodeId standby) { routes_.drop_standby(standby); }

void PairSide::form_pair(NodeId standby, std::uint64_t incarnation) {
  before_epoch_ends_();
  routes_.form_pair(standby, incarnation);
}

void PairSide::dissolve_pair() { routes_.dissolve_pair(); }

void PairSide::renew_claim() { routes_.renew_claim(); }

void PairSide::switch_approach(HaMode mode) {
  before_epoch_ends_();
  routes_.switch_approach(mode);
}

void PairSide::announce_takeover(TimeUs now, Effects& eff, NodeId old_primary) {
  const Takeover t = routes_.statement_of(node_.fragment_id());
  for (NodeId n : routes_.neighbour_nodes()) outbox_.send(eff, now, n, t);
  if (old_primary != kNoNode && old_primary != node_.self()) outbox_.send(eff, now, old_primary, t);
  send_to_other_standbys(now, eff, t, old_primary);
  routes_.announced(now, old_primary);
}

void PairSide::send_to_other_standbys(TimeUs now, Effects& eff, const Takeover& t, NodeId old_primary) {
  // k standbys: the other nodes of my fragment (the standbys I name follow me; the others are
  // fenced by it and rejoin). With one standby the other node is the old primary, sent above.
  for (NodeId n : node_.fragment_plan().replicas())
    if (n != node_.self() && n != old_primary) outbox_.send(eff, now, n, t);
}

TimeUs PairSide::repeat_announcement(TimeUs now, Effects& eff, bool answered) {
  if (!routes_.announcing()) return kNever;
  const TimeUs rt = node_.retransmit_us();
  if (answered) {
    routes_.announcement_answered();
  } else if (now - routes_.announced_us() >= rt) {
    const Takeover t = routes_.statement_of(node_.fragment_id());
    const auto neighbours = routes_.neighbour_nodes();
    for (NodeId n : neighbours) outbox_.send(eff, now, n, t);
    // The other node of my fragment too: cut off when I first announced, it may still act in
    // the old epoch, or claim the same one (PrimaryRole::on_standby_lost).
    const NodeId old = routes_.announced_old_primary();
    if (old != kNoNode && old != node_.self() && std::find(neighbours.begin(), neighbours.end(), old) == neighbours.end())
      outbox_.send(eff, now, old, t);
    send_to_other_standbys(now, eff, t, old);
    routes_.reannounced(now);
    outbox_.count("takeover_announcements_repeated");
  }
  return routes_.announcing() ? routes_.announced_us() + rt : kNever;
}

void PairSide::send_routes_to(TimeUs now, Effects& eff, NodeId node) {
  std::vector<FragmentId> fs = node_.fragment_plan().upstream;
  fs.insert(fs.end(), node_.fragment_plan().downstream.begin(), node_.fragment_plan().downstream.end());
  std::sort(fs.begin(), fs.end());
  fs.erase(std::unique(fs.begin(), fs.end()), fs.end());
  for (FragmentId f : fs) {
    if (routes_.route(f).epoch == 0) continue;  // the plan's route: the node knows it
    outbox_.send(eff, now, node, routes_.statement_of(f));
  }
}

}  // namespace hapair
