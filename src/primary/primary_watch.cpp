#include "primary/primary_watch.h"

#include <algorithm>

namespace hapair {

PrimaryWatch::PrimaryWatch(Server& server)
    : server_(server), detector_(us_from_ms(static_cast<double>(server.node().settings().failure_timeout_ms))) {}

void PrimaryWatch::start(TimeUs now) {
  detector_.start(now);
  if (!server_.pair().own_heartbeats()) {
    detector_.disable();
    next_heartbeat_us_ = kNever;
  }
}

void PrimaryWatch::send_heartbeat(TimeUs now, Effects& eff) {
  if (now < next_heartbeat_us_) return;
  discount_own_stall(now);
  const NodeId primary = server_.routes().route(server_.node().fragment_id()).primary;
  if (primary != kNoNode && primary != server_.node().self()) server_.send(eff, now, primary, Heartbeat{static_cast<std::uint64_t>(now)});
  next_heartbeat_us_ = now + us_from_ms(static_cast<double>(server_.node().settings().heartbeat_interval_ms));
}

void PrimaryWatch::discount_own_stall(TimeUs now) {
  if (detector_.disabled() || !detector_.started() || detector_.suspected() || next_heartbeat_us_ <= 0) return;
  const TimeUs timeout_us = us_from_ms(static_cast<double>(server_.node().settings().failure_timeout_ms));
  if (now - next_heartbeat_us_ < timeout_us) return;
  // My heartbeat was due a failure timeout ago or more: I did not run (paused, starved), and
  // what the primary sent me meanwhile is still to be read. The silence is mine, not the
  // primary's: the watch starts again now, so what arrived first decides (a newer epoch that
  // dropped me fences me), and a primary that is really gone is found one failure timeout later.
  detector_.heard(now);
  server_.count("own_stalls_discounted");
}

bool PrimaryWatch::heard_from(NodeId sender, TimeUs now) {
  if (sender != server_.routes().route(server_.node().fragment_id()).primary) return false;
  heard(now);
  return true;
}

bool PrimaryWatch::check(TimeUs now, Effects& eff) {
  if (detector_.disabled() || !detector_.started() || detector_.suspected()) return false;
  const TimeUs silent_us = now - detector_.last_heard_us();
  const TimeUs interval_us = us_from_ms(static_cast<double>(server_.node().settings().heartbeat_interval_ms));
  if (silent_us >= 2 * interval_us && missed_reported_for_us_ != detector_.last_heard_us()) {
    missed_reported_for_us_ = detector_.last_heard_us();
    server_.trace(eff, now, TraceKind::heartbeat_missed)
        .with(TraceKey::peer, server_.routes().route(server_.node().fragment_id()).primary)
        .with(TraceKey::silent_us, silent_us);
  }
  return detector_.check(now);
}

TimeUs PrimaryWatch::silence_us(TimeUs now, Detector detector) const {
  return detector_.silence_us(now, detector == Detector::connection,
                              us_from_ms(static_cast<double>(server_.node().settings().hang_timeout_ms)));
}

TimeUs PrimaryWatch::next_wakeup_us() const { return std::min(detector_.deadline_us(), next_heartbeat_us_); }

}  // namespace hapair
