// The size a message takes on the simulated wire, for the bandwidth model and for the
// bytes_sent.<kind> counters (DESIGN.md section 5: runtime overhead is measured as bytes per
// message kind, so the simulator must count the same sizes the real transport would).
//
// Invariant: one function, one call site in the simulator, and it returns exactly the size of
// the Cap'n Proto encoding (protocols/codec.h), the bytes the ZeroMQ runtime would send.
#pragma once

#include <cstddef>

#include "protocols/messages.h"

namespace hapair::sim {

std::size_t wire_bytes(const Envelope& envelope);

}  // namespace hapair::sim
