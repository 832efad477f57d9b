// The standby's end of a process pair: what every approach's standby role shares (the spare of
// amnesia and upstream backup, the passive standby, the active standby). It watches its primary
// (PrimaryWatch: heartbeats to it, a failure detector fed by every message from it), learns of
// the primary's failure from its own detector or from the driver's (PeerLost), and hands over,
// once, to its successor: the primary role it becomes at a takeover (takeover.h has the steps
// every takeover shares), or the fenced role when the pair went on without it. What it does
// until then, and how it takes over, is the approach's: primary_failed and the rest of the role.
//
// Paper: the backup of a process pair detects its primary's fail-stop crash by missed heartbeats
// (section 2) and takes over (sections 4.1-4.3).
//
// Invariants: a failure is reported (primary_failed) only of the current primary, never after
// the role handed over; the successor is handed over once (each approach's primary_failed
// checks that it has no successor yet). "Never of the node itself" holds for the driver's
// PeerLost (on_peer_lost filters it) but is not an invariant of the heartbeat path: a Takeover
// of my own fragment in a newer epoch that names me (only a forged envelope says that) makes
// the route name me while I am still the standby, and my heartbeat detector then reports
// myself; begin_takeover and the announcement tolerate it (they never send to myself), so it
// is not checked.
#pragma once

#include <memory>

#include "primary/primary_watch.h"
#include "primary/role.h"

namespace hapair {

class StandbyRole : public RoleBehaviour {
 public:
  // The driver found the current primary failed (connection lost, or its own heartbeats).
  void on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) final;
  std::unique_ptr<RoleBehaviour> take_successor() final { return std::move(successor_); }

 protected:
  explicit StandbyRole(Server& server) : server_(server), watch_(server) {}

  // A tick's first step: heartbeats the primary and, unless `detect` is false (a standby that is
  // taking over already), checks it. True when it was found failed now (primary_failed ran).
  bool watch_primary(TimeUs now, Effects& eff, bool detect = true);
  // The primary failed, found by `detector`: take over (setting successor_), or say why this
  // standby cannot.
  virtual void primary_failed(TimeUs now, Effects& eff, Detector detector) = 0;
  // A standby that processes input never sends output before it takes over (its log waits for
  // the takeover): none of the messages sent since `first` is a tuple batch (checked). Cheap: a
  // standby sends a handful of acks and heartbeats per event.
  void check_no_output_sent(const Effects& eff, std::size_t first) const;

  Server& server_;
  PrimaryWatch watch_;
  // The role to swap to (set once: the primary role after a takeover, or the fenced role).
  std::unique_ptr<RoleBehaviour> successor_;
};

}  // namespace hapair
