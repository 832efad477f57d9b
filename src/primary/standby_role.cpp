#include "primary/standby_role.h"

namespace hapair {

bool StandbyRole::watch_primary(TimeUs now, Effects& eff, bool detect) {
  if (successor_) return false;
  watch_.send_heartbeat(now, eff);
  if (!detect || !watch_.check(now, eff)) return false;
  primary_failed(now, eff, Detector::heartbeat);
  return true;
}

void StandbyRole::on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) {
  const NodeId primary = server_.routes().route(server_.node().fragment_id()).primary;
  if (successor_ || lost.peer != primary || primary == server_.node().self()) return;
  primary_failed(now, eff, lost.detector);
}

}  // namespace hapair
