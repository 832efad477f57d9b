// The steps every standby performs when it takes over its fragment, whatever the approach:
// detect, start a new epoch, point the routes at itself, announce the takeover to every
// neighbour (and to the old primary, which is fenced if it is still alive), and wait for every
// consumer to say where it resumes.
//
// Paper: a backup that detects its primary's failure takes over as the new primary and the
// neighbours re-route to it (sections 4.1-4.3). Epochs (DESIGN.md section 6) make the takeover
// safe against a primary that was only paused.
#pragma once

#include "primary/server.h"

namespace hapair {

// Becomes the primary of my fragment at a new epoch; returns the old primary.
// `detector` is the one that found the failure (the detection trace says which).
NodeId begin_takeover(Server& server, TimeUs now, Effects& eff, TimeUs last_heard_us, Detector detector);

}  // namespace hapair
