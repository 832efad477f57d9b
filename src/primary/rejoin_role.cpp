#include "primary/rejoin_role.h"

#include <string>
#include <type_traits>

#include "protocols/check.h"

namespace hapair {

RejoiningRole::RejoiningRole(Server& server, const Approach& approach) : server_(server), approach_(approach) {
  const PlanFragment& f = server_.node().fragment_plan();
  partner_ = f.plan_partner(server_.node().self());
}

void RejoiningRole::on_start(TimeUs now, Effects& eff) {
  server_.become_standby(Role::rejoining);
  incarnation_ = static_cast<std::uint64_t>(now) + 1;
  server_.trace(eff, now, TraceKind::rejoin_requested).with(TraceKey::partner, partner_);
  if (partner_ == kNoNode) return;  // a fragment without a standby has nobody to rejoin
  request(now, eff);
}

void RejoiningRole::request(TimeUs now, Effects& eff) {
  const Rejoin r{server_.node().fragment_id(), server_.node().self(), incarnation_};
  server_.send(eff, now, partner_, r);
  // k standbys: whichever node of my fragment is its primary now (an election may have made
  // another standby primary) answers; the others drop the request.
  for (NodeId n : server_.node().fragment_plan().replicas())
    if (n != partner_ && n != server_.node().self()) server_.send(eff, now, n, r);
  next_request_us_ = now + server_.node().retransmit_us();
}

void RejoiningRole::on_tick(TimeUs now, Effects& eff) {
  if (successor_) return;
  if (now >= orphan_claim_us_) {
    const Route& r = server_.routes().route(server_.node().fragment_id());
    if (r.primary == server_.node().self()) {
      // My neighbours still follow me as the primary (my partner never took over): a standby
      // cannot take over from itself. Keep asking; an answer or a newer route comes in time.
      server_.count("orphan_claims_refused");
      orphan_claim_us_ = kNever;
    } else {
      become_standby(now, eff, r.primary, r.epoch, true);
      return;
    }
  }
  if (now >= next_request_us_) request(now, eff);
}

void RejoiningRole::on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) {
  if (successor_ || lost.peer != partner_ || partner_ == kNoNode) return;
  orphaned(now, eff, "partner lost", lost);
}

void RejoiningRole::orphaned(TimeUs now, Effects& eff, const char* why, PeerLost loss) {
  if (server_.node().traits().standby_holds_state) {
    server_.count("partner_lost_while_rejoining");
    return;
  }
  partner_loss_ = loss;
  if (orphan_claim_us_ != kNever) return;  // asked already
  server_.count("rejoins_orphaned");
  server_.trace(eff, now, TraceKind::rejoin_requested).with(TraceKey::partner, partner_).with_text(std::string("orphaned: ") + why);
  for (NodeId n : server_.routes().neighbour_nodes()) server_.send(eff, now, n, Heartbeat{});
  orphan_claim_us_ = now + server_.node().retransmit_us();
}

void RejoiningRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  if (const auto* r = std::get_if<Rejoin>(&env.body)) {
    // My partner restarted too and asks me. The plan's primary of the pair takes over; the other
    // keeps asking it.
    if (env.header.sender == partner_ && r->fragment == server_.node().fragment_id() &&
        server_.node().self() == server_.node().fragment_plan().primary)
      orphaned(now, eff, "partner rejoining too", PeerLost{partner_, Detector::heartbeat});
    else
      server_.count("rejoining_dropped");
    return;
  }
  const auto* t = std::get_if<Takeover>(&env.body);
  if (!t) {
    server_.count("rejoining_dropped");
    return;
  }
  if (t->fragment != server_.node().fragment_id()) {
    server_.on_takeover(now, *t, eff);  // a neighbour's current route
    return;
  }
  server_.on_takeover(now, *t, eff);
  // Only the answer to this incarnation's request names us: an older announcement naming us as
  // standby (from before a restart) does not, since the primary does not know we lost our state.
  const StandbyRef* named = nullptr;
  for (const StandbyRef& s : t->standbys)
    if (s.node == server_.node().self()) named = &s;
  if (named == nullptr || named->incarnation != incarnation_ ||
      server_.routes().route(server_.node().fragment_id()).epoch != t->epoch)
    return;
  // Named as standby: become the one the mode needs.
  become_standby(now, eff, t->new_primary, t->epoch, false);
}

void RejoiningRole::become_standby(TimeUs now, Effects& eff, NodeId primary, std::uint64_t epoch, bool orphan) {
  const Role r = server_.node().standby_role();
  server_.become_standby(r);
  TraceEvent& e = server_.trace(eff, now, TraceKind::rejoined)
                      .with(TraceKey::role, r)
                      .with(TraceKey::fragment_primary, primary)
                      .with(TraceKey::epoch, epoch);
  if (orphan) e.with_text("orphaned: a standby of a lost primary");
  HAPAIR_CHECK_MSG(approach_.standby_role != nullptr, "no standby role for ha " << to_string(approach_.mode));
  successor_ = approach_.standby_role(server_, true);
}

}  // namespace hapair
