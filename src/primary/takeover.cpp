#include "primary/takeover.h"

#include "primary/primary_role.h"

namespace hapair {

NodeId begin_takeover(Server& server, TimeUs now, Effects& eff, TimeUs silent_us, Detector detector,
                      const std::vector<StandbyRef>& followers) {
  const NodeId old_primary = server.routes().route(server.node().fragment_id()).primary;
  server.trace(eff, now, TraceKind::detection)
      .with(TraceKey::failed, old_primary)
      .with(TraceKey::detector, detector)
      .with(TraceKey::silent_us, silent_us);
  // What my Unions chose so far was chosen as the standby, in the old epoch (collected first).
  server.pair().claim_own_fragment(followers);
  server.set_role(Role::primary);
  server.outputs().reset_consumers_awaiting_replay_request();
  server.pair().announce_takeover(now, eff, old_primary);
  server.count("takeovers");
  return old_primary;
}

std::unique_ptr<RoleBehaviour> standby_learns_takeover(Server& server, TimeUs now, const Takeover& t, Effects& eff,
                                                       bool answer) {
  if (!server.on_takeover(now, t, eff, answer)) return nullptr;
  const Route& r = server.routes().route(server.node().fragment_id());
  if (r.standby(server.node().self()) != nullptr) return nullptr;  // still the standby in the new epoch
  server.trace(eff, now, TraceKind::fenced)
      .with(TraceKey::fragment_primary, t.new_primary)
      .with(TraceKey::epoch, t.epoch)
      .with(TraceKey::claim_lost, false)
      .with_text("as standby: the pair was dissolved without me");
  return std::make_unique<FencedRole>(server);
}

}  // namespace hapair
