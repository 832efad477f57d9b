// The registration table of HA approaches: one line per approach (approaches.cpp). The node
// core looks up its fragment's approach here and reaches it only through the record
// (primary/approach.h); what the rest of the system asks of an approach is its traits record
// (protocols/approach_traits.h), kept under the same mode. docs/ARCHITECTURE.md, "How to add an
// approach".
//
// Invariant: a registry holds each mode once, and the built-in registry holds an approach for
// every mode of the built-in traits catalog (checked when it is built).
#pragma once

#include <memory>
#include <vector>

#include "primary/approach.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {

class ApproachRegistry {
 public:
  // The approaches of this repository: one registration line each in approaches.cpp.
  static const ApproachRegistry& builtin();
  // A copy with one more approach (a test's, a researcher's); its mode must be new.
  ApproachRegistry with(Approach extra) const;
  // The approach registered for `mode` (a missing one is a fatal error).
  const Approach& of(HaMode mode) const;
  bool has(HaMode mode) const;

 private:
  std::vector<Approach> approaches_;
};

}  // namespace hapair
