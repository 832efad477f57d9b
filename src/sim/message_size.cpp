#include "sim/message_size.h"

#include "protocols/codec.h"

namespace hapair::sim {

// The exact size the real transport puts on the wire: the Cap'n Proto encoding of the envelope.
std::size_t wire_bytes(const Envelope& envelope) { return encode(envelope).size(); }

std::size_t message_kind_index(const std::string& kind_name) {
  for (std::size_t i = 0; i < kMessageKindCount; ++i)
    if (kind_name == kMessageKindNames[i]) return i;
  return kMessageKindCount;
}

}  // namespace hapair::sim
