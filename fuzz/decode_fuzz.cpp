// Fuzz target: raw frames into the wire decoder (protocols/codec.h), as any process that can
// reach a node's port could send them.
//
// Checks, beyond "no crash, no sanitizer report": every input is either decoded or counted as
// exactly one drop with a reason; the result does not depend on the frame's alignment (ZeroMQ
// frames often are unaligned and the decoder copies them); and whatever the decoder accepts is a
// valid message: it encodes again, and that encoding decodes to the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "protocols/codec.h"

#include "fuzz_check.h"

namespace {

void require(bool ok, const char* what) { hapair::fuzz::require(ok, "decode_fuzz", what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hapair;
  // Small limits as well as the defaults, so the limit paths are reached by small inputs.
  DecodeLimits small;
  small.traversal_limit_words = 64;
  small.nesting_limit = 4;
  small.max_message_bytes = 4096;
  for (const DecodeLimits& limits : {DecodeLimits{}, small}) {
    DecodeStats stats;
    const auto decoded = decode(data, size, stats, limits);
    require(stats.decoded + stats.dropped == 1, "not exactly one of decoded and dropped");
    require(decoded.has_value() == (stats.decoded == 1), "result and counters disagree");
    require(decoded || (!stats.last_error.empty() && stats.dropped_by_reason.size() == 1),
            "a drop without a reason");

    // The same bytes at an odd address.
    std::vector<std::uint8_t> shifted(size + 1);
    if (size > 0) std::memcpy(shifted.data() + 1, data, size);
    DecodeStats shifted_stats;
    const auto decoded_shifted = decode(shifted.data() + 1, size, shifted_stats, limits);
    require(decoded.has_value() == decoded_shifted.has_value(), "alignment changed the verdict");

    if (decoded) {
      const Bytes once = encode(*decoded);
      require(encode(*decoded_shifted) == once, "alignment changed the decoded value");
      DecodeStats again_stats;
      const auto again = decode(once, again_stats);
      require(again.has_value(), "an accepted message does not decode after re-encoding");
      require(encode(*again) == once, "re-encoding is not stable");
    }
  }
  return 0;
}
