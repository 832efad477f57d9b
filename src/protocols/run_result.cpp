#include "protocols/run_result.h"

namespace hapair {

const char* to_string(FaultKind k) {
  switch (k) {
    case FaultKind::crash: return "crash";
    case FaultKind::pause: return "pause";
    case FaultKind::partition: return "partition";
    case FaultKind::restart: return "restart";
  }
  return "?";
}

}  // namespace hapair
