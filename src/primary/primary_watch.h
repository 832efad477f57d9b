// A standby's watch over its primary, the same in every standby role (spare, passive standby,
// active standby): a heartbeat failure detector that every message from the primary feeds, and
// heartbeats sent to the primary, so that the primary watches its standby too.
//
// Paper: servers detect fail-stop crashes of their partners by missed heartbeats (section 2).
// When the driver watches the pair partner itself (Start::driver_watches_partner, so
// Server::own_heartbeats() is false) the detector never fires, no heartbeat is sent, and a
// failure arrives as PeerLost instead.
//
// Invariants: check() is true once per suspicion; a heartbeat goes out at most every
// heartbeat_interval_ms, always to the primary of the current route, never to the node itself.
#pragma once

#include "primary/server.h"
#include "protocols/failure_detector.h"

namespace hapair {

class PrimaryWatch {
 public:
  explicit PrimaryWatch(Server& server);

  // The role starts: the primary counts as heard now.
  void start(TimeUs now);
  // A message from the primary arrived.
  void heard(TimeUs now) { detector_.heard(now); }
  // A message from `sender` arrived: true, and heard, when it is the current primary.
  bool heard_from(NodeId sender, TimeUs now);
  // True at the moment the primary is first suspected (nothing heard for failure_timeout_ms).
  // Also traces heartbeat_missed once per silence that reaches two heartbeat intervals (seen at
  // the watch's own ticks, so it adds no wake-up of its own).
  bool check(TimeUs now, Effects& eff);
  // Sends the primary a heartbeat when one is due. A heartbeat due a failure timeout ago or more
  // means I myself did not run meanwhile: that silence is not counted against the primary
  // (discount_own_stall).
  void send_heartbeat(TimeUs now, Effects& eff);

  TimeUs last_heard_us() const { return detector_.last_heard_us(); }
  // How long the primary had been silent when `detector` found it failed at `now`
  // (FailureDetector::silence_us: the driver's detector when it watches the partner).
  TimeUs silence_us(TimeUs now, Detector detector) const;
  TimeUs next_heartbeat_us() const { return next_heartbeat_us_; }
  // When the watch next needs a Tick: a heartbeat due or the detector's deadline.
  TimeUs next_wakeup_us() const;

 private:
  // Chaos case 7192 of seed 1 (10,000 runs): a standby paused past its primary's loss timeout
  // found the primary failed at the first tick after it resumed, before it read the primary's
  // announcement that had dropped it, and claimed the primary's epoch with its stale state.
  void discount_own_stall(TimeUs now);

  Server& server_;
  FailureDetector detector_;
  TimeUs next_heartbeat_us_ = 0;
  TimeUs missed_reported_for_us_ = -1;  // last_heard_us of the silence already reported
};

}  // namespace hapair
