// The registration table of HA approaches: one line per approach (approaches.cpp). The node
// core looks up its fragment's approach here and reaches it only through the record
// (primary/approach.h). docs/ARCHITECTURE.md, "How to add an approach".
#pragma once

#include "primary/approach.h"

namespace hapair {

// The approach registered for `mode` (every HaMode has one; a missing one is a fatal error).
const Approach& approach_for(HaMode mode);

}  // namespace hapair
