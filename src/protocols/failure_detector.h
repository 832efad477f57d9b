// A heartbeat failure detector with injected time.
//
// Paper: servers detect fail-stop crashes of their partners by missed heartbeats (section 2).
// A peer is suspected once nothing has been heard from it for `timeout_us`; any message from
// the peer counts as a heartbeat. Invariant: time only moves forward; suspicion is sticky until
// heard() is called again (a paused peer that comes back is heard again, and the owner decides
// what that means — see epochs).
#pragma once

#include "protocols/check.h"
#include "protocols/ids.h"

namespace hapair {

class FailureDetector {
 public:
  FailureDetector() = default;
  explicit FailureDetector(TimeUs timeout_us) : timeout_us_(timeout_us) { HAPAIR_CHECK(timeout_us > 0); }

  void start(TimeUs now) {
    last_heard_us_ = now;
    started_ = true;
    suspected_ = false;
  }
  void heard(TimeUs now) {
    if (!started_) started_ = true;
    if (now > last_heard_us_) last_heard_us_ = now;
    suspected_ = false;
  }
  // Re-evaluates at `now`; true exactly once per suspicion (the moment it is first suspected).
  bool check(TimeUs now) {
    if (disabled_ || !started_ || suspected_) return false;
    if (now - last_heard_us_ >= timeout_us_) {
      suspected_ = true;
      return true;
    }
    return false;
  }
  bool suspected() const { return suspected_; }
  bool started() const { return started_; }
  TimeUs last_heard_us() const { return last_heard_us_; }
  // When check() could next turn true.
  TimeUs deadline_us() const {
    return !disabled_ && started_ && !suspected_ ? last_heard_us_ + timeout_us_ : kNever;
  }
  void stop() { started_ = false; }
  // How long the peer had been silent when it was found failed at `now`. A disabled detector's
  // last_heard_us is not a silence (nothing need be heard when the driver watches the partner,
  // e.g. an idle spare): then only the driver's detector knows, and a closed connection
  // (`connection`) means no silence at all, its heartbeat timeout `driver_timeout_us` of silence.
  TimeUs silence_us(TimeUs now, bool connection, TimeUs driver_timeout_us) const {
    if (!disabled_) return now - last_heard_us_;
    return connection ? 0 : driver_timeout_us;
  }
  // For good: the driver watches the partner (core.h Start::driver_watches_partner), so this
  // detector never suspects anyone; heard() still records when the peer was last heard.
  void disable() { disabled_ = true; }
  bool disabled() const { return disabled_; }

 private:
  TimeUs timeout_us_ = 30'000;
  TimeUs last_heard_us_ = 0;
  bool started_ = false;
  bool suspected_ = false;
  bool disabled_ = false;
};

}  // namespace hapair
