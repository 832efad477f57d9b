#include "primary/approach.h"

namespace hapair {

std::map<StreamId, TupleId> acked_positions(const Server& server) {
  std::map<StreamId, TupleId> out;
  for (const auto& [s, o] : server.outputs()) out[s] = o.acked_internal();
  return out;
}

void StatelessPrimarySide::on_start(TimeUs now, const std::vector<NodeId>& /*standbys*/) {
  if (server_.node().kind() == FragmentKind::operators)
    next_forget_us_ = now + us_from_ms(static_cast<double>(server_.node().settings().ack_interval_ms));
}

void StatelessPrimarySide::on_tick(TimeUs now, Effects& /*eff*/) {
  if (now < next_forget_us_) return;
  // Cause bookkeeping of outputs every consumer has acknowledged is never needed again.
  server_.workload().forget_causes_up_to(acked_positions(server_));
  next_forget_us_ = now + us_from_ms(static_cast<double>(server_.node().settings().ack_interval_ms));
}

void StatelessPrimarySide::on_standby_joined(TimeUs now, NodeId standby, Effects& eff) {
  server_.trace(eff, now, TraceKind::pair_restored).with(TraceKey::standby, standby).with_text("spare: no state");
}

std::unique_ptr<PrimarySide> make_stateless_primary_side(Server& server, const PrimaryOptions& /*options*/) {
  return std::make_unique<StatelessPrimarySide>(server);
}

}  // namespace hapair
