// The steps every standby performs when it takes over its fragment, whatever the approach:
// detect, start a new epoch, point the routes at itself, announce the takeover to every
// neighbour (and to the old primary, which is fenced if it is still alive), and wait for every
// consumer to say where it resumes.
//
// Paper: a backup that detects its primary's failure takes over as the new primary and the
// neighbours re-route to it (sections 4.1-4.3). Epochs (docs/FAULTS.md, "Who may act as primary") make the takeover
// safe against a primary that was only paused.
#pragma once

#include <memory>

#include "primary/role.h"
#include "primary/server.h"

namespace hapair {

// Becomes the primary of my fragment at a new epoch; returns the old primary.
// `detector` is the one that found the failure and `silent_us` how long the primary had been
// silent then (PrimaryWatch::silence_us); the detection trace says both.
// `followers`: the other standbys that follow me (k standbys: the election's, StandbyRole::
// followers()); my new route names them as my standbys.
NodeId begin_takeover(Server& server, TimeUs now, Effects& eff, TimeUs silent_us, Detector detector,
                      const std::vector<StandbyRef>& followers = {});

// A standby (spare, passive or active) learns a Takeover (Server::on_takeover, `answer` as
// there). When it names a newer epoch of my own fragment in which I am not the standby, my
// primary dissolved the pair while I was silent to it (paused, cut off: PrimaryRole::
// on_standby_lost) and released output my state cannot reproduce: I must not act on that
// state. Returns the role to swap to (fenced, which rejoins and gets fresh state); otherwise null.
std::unique_ptr<RoleBehaviour> standby_learns_takeover(Server& server, TimeUs now, const Takeover& t, Effects& eff,
                                                       bool answer = true);

}  // namespace hapair
