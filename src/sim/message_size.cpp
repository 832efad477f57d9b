#include "sim/message_size.h"

#include "protocols/codec.h"

namespace hapair::sim {

// The exact size the real transport puts on the wire: the Cap'n Proto encoding of the envelope.
std::size_t wire_bytes(const Envelope& envelope) { return encode(envelope).size(); }

}  // namespace hapair::sim
