#include "primary/rejoin_role.h"

#include <type_traits>

#include "protocols/check.h"

namespace hapair {

RejoiningRole::RejoiningRole(Server& server, const Approach& approach) : server_(server), approach_(approach) {
  const PlanFragment& f = server_.node().fragment_plan();
  partner_ = server_.node().self() == f.primary ? f.standby : f.primary;
}

void RejoiningRole::on_start(TimeUs now, Effects& eff) {
  server_.become_standby(Role::rejoining);
  incarnation_ = static_cast<std::uint64_t>(now) + 1;
  server_.trace(eff, now, TraceKind::rejoin_requested).with(TraceKey::partner, partner_);
  if (partner_ == kNoNode) return;  // a fragment without a standby has nobody to rejoin
  request(now, eff);
}

void RejoiningRole::request(TimeUs now, Effects& eff) {
  server_.send(eff, now, partner_, Rejoin{server_.node().fragment_id(), server_.node().self(), incarnation_});
  next_request_us_ = now + server_.node().retransmit_us();
}

void RejoiningRole::on_tick(TimeUs now, Effects& eff) {
  if (!successor_ && now >= next_request_us_) request(now, eff);
}

void RejoiningRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
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
  if (t->standby != server_.node().self() || t->standby_incarnation != incarnation_ ||
      server_.routes().route(server_.node().fragment_id()).epoch != t->epoch)
    return;
  // Named as standby: become the one the mode needs.
  const Role r = server_.node().standby_role();
  server_.become_standby(r);
  server_.trace(eff, now, TraceKind::rejoined)
      .with(TraceKey::role, r)
      .with(TraceKey::fragment_primary, t->new_primary)
      .with(TraceKey::epoch, t->epoch);
  HAPAIR_CHECK_MSG(approach_.standby_role != nullptr, "no standby role for ha " << to_string(approach_.mode));
  successor_ = approach_.standby_role(server_, true);
}

}  // namespace hapair
