#include "primary/standby_role.h"

#include <variant>

#include "protocols/check.h"

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

void StandbyRole::check_no_output_sent(const Effects& eff, std::size_t first) const {
  for (std::size_t i = first; i < eff.sends.size(); ++i)
    HAPAIR_CHECK_MSG(!std::holds_alternative<TupleBatch>(eff.sends[i].envelope.body),
                     "standby " << server_.node().self() << " (" << to_string(server_.node().mode()) << ") sends output to node "
                                << eff.sends[i].to << " before taking over");
}

}  // namespace hapair
