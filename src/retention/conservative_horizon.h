// The conservative trimming rule's horizon on one input stream (settings.trimming =
// conservative, experiment 6): a server that knows nothing about its operators' cause functions
// can only say "input older than conservative_retention_ms of event time is no longer needed".
// The horizon follows the processed tuples' timestamps and names the last processed id that fell
// out of it; the level-1 rounds of upstream backup (level1_sender.cpp) acknowledge up to there.
//
// Paper: upstream backup without cause functions keeps a fixed window of input (section 4.3, the
// "conservative" variant the paper compares against).
//
// Invariants: the tuple just processed is kept, and the oldest (id, timestamp) kept is within
// retention_us of the latest processed timestamp (both checked in processed()). While a
// stream's timestamps do not decrease, every (id, timestamp) kept is then within the horizon,
// so what it holds is bounded by the input rate times the retention. Timestamps come from the
// producer and may decrease (a Union upstream merges in arrival order): then an entry behind
// the front can be older than the horizon, and it stays until the front falls out, so what is
// held is bounded only by how soon the front's timestamp does, and beyond() lags (the rule
// keeps more input, never less). That per-entry form is not checked: it would scan the deque
// on every processed tuple.
#pragma once

#include <deque>
#include <utility>

#include "protocols/ids.h"

namespace hapair {

class ConservativeHorizon {
 public:
  // retention_us > 0: how much event time before the newest processed tuple is kept.
  explicit ConservativeHorizon(TimeUs retention_us);

  // The workload processed tuple `id` with timestamp `ts_us`.
  void processed(TupleId id, TimeUs ts_us);
  // The last processed id older than the horizon (0: none yet).
  TupleId beyond() const { return beyond_; }
  TimeUs retention_us() const { return retention_us_; }

 private:
  TimeUs retention_us_;
  std::deque<std::pair<TupleId, TimeUs>> kept_;  // processed (id, ts) within the horizon
  TupleId beyond_ = 0;
};

}  // namespace hapair
