// The size a message takes on the simulated wire, for the bandwidth model and for the
// bytes_sent.<kind> counters (docs/EXPERIMENTS.md, "How we measure": runtime overhead is measured as bytes per
// message kind, so the simulator must count the same sizes the real transport would).
//
// Invariant: wire_bytes has one call site in the simulator and returns exactly the size of the
// Cap'n Proto encoding (protocols/codec.h), the bytes the ZeroMQ runtime would send, computed by
// protocols/wire_size.h (the simulator never sends control-plane messages, the only kinds it
// does not know). Kind names
// (kMessageKindNames) map to kind indexes here too, for drop rules and counts by kind.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>

#include "protocols/messages.h"

namespace hapair::sim {

std::size_t wire_bytes(const Envelope& envelope);

// The index of a kind name in kMessageKindNames; kMessageKindCount when there is no such kind.
inline constexpr std::size_t kMessageKindCount = std::size(kMessageKindNames);
std::size_t message_kind_index(const std::string& kind_name);

}  // namespace hapair::sim
