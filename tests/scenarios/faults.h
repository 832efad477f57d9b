// Faults for the scenario tests, shared: a crash, or any fault kind with its duration and peer.
#pragma once

#include <string>

#include "protocols/topology.h"

namespace hapair::test {

// A fault of `kind` on `node` at `at_s`; `duration_s` for a pause or partition, `peer` for a
// partition's other side.
inline FaultSpec fault(FaultKind kind, const std::string& node, double at_s, double duration_s = 0,
                       const std::string& peer = "") {
  FaultSpec f;
  f.kind = kind;
  f.node = node;
  f.peer = peer;
  f.at_s = at_s;
  f.duration_s = duration_s;
  return f;
}

inline FaultSpec crash(const std::string& node, double at_s) { return fault(FaultKind::crash, node, at_s); }

}  // namespace hapair::test
