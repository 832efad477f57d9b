#include "sim/message_size.h"

#include "protocols/wire_size.h"

namespace hapair::sim {

// The exact size the real transport puts on the wire, the size of the Cap'n Proto encoding of
// the envelope, computed without encoding it (protocols/wire_size.h).
std::size_t wire_bytes(const Envelope& envelope) { return hapair::wire_bytes(envelope); }

std::size_t message_kind_index(const std::string& kind_name) {
  for (std::size_t i = 0; i < kMessageKindCount; ++i)
    if (kind_name == kMessageKindNames[i]) return i;
  return kMessageKindCount;
}

}  // namespace hapair::sim
