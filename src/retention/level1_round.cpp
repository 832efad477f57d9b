#include "retention/level1_round.h"

#include <algorithm>

#include "protocols/check.h"

namespace hapair {

Level1Round make_level1_round(const Fragment& fragment, const std::map<StreamId, TupleId>& acked_outputs,
                              const std::map<StreamId, TupleId>& processed) {
  Level1Round round;
  round.restart_point = fragment.restart_point(acked_outputs);
  auto positions = Fragment::replay_positions(round.restart_point);
  HAPAIR_CHECK_MSG(positions.has_value(), "a fragment produced a restart point it cannot read back");
  for (StreamId s : fragment.inputs()) {
    auto p = processed.find(s);
    const TupleId done = p == processed.end() ? 0 : p->second;
    auto r = positions->find(s);
    const TupleId needed_after = r == positions->end() ? done : r->second;
    round.up_to[s] = std::min(needed_after, done);
    HAPAIR_CHECK_MSG(round.up_to[s] <= done, "level-1 round acknowledges " << round.up_to[s] << " on stream " << s
                                                                       << " beyond processed " << done);
  }
  // One ack per input stream of the fragment, no more (a level-1 ack for a stream I do not
  // consume would trim a queue I have no say over).
  HAPAIR_CHECK_MSG(round.up_to.size() == fragment.inputs().size(),
                   "level-1 round names " << round.up_to.size() << " streams for " << fragment.inputs().size() << " inputs");
  return round;
}

Level1Round make_conservative_level1_round(const std::map<StreamId, TupleId>& horizon_ids) {
  Level1Round round;
  round.restart_point = kConservativeRestartPoint;
  round.up_to = horizon_ids;
  return round;
}

}  // namespace hapair
