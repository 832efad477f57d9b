// What an upstream server keeps of the level-1 acknowledgements a downstream fragment sends it.
//
// Paper: a level-1 ack says input up to id y is no longer needed by the downstream server, so
// the upstream may trim its output queue up to y (section 4.3). hapair's upstream-backup level-1
// acks also carry the downstream fragment's restart point (its composed cause functions), which
// the upstream hands to a recovery node. Because a level-1 ack to one upstream may be lost when
// the downstream crashes while a sibling upstream got it, an upstream keeps the last two restart
// points and trims only to the older one: the recovery node then always finds a generation that
// every upstream can still replay from.
//
// Each stored point keeps what its sender held for its own downstream (forwarded, one hop): a
// recovery node of the sender installs it, so a recovery node of the sender's consumer that
// failed at the same time finds its restart points there (two adjacent failures).
//
// Passive standby level-1 acks carry no restart point: they are "checkpoint k covers input up
// to y", and the queue may be trimmed up to y at once.
//
// Invariants: generations and trim positions never move backwards, and the two points kept are
// in generation order, oldest first (checked in add); choose_generation picks a generation
// that every offer holds (checked there, read back by the recovery node with find_generation).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "protocols/messages.h"

namespace hapair {

class RestartPointStore {
 public:
  // Records a level-1 ack; stale generations (at or below the newest) are ignored.
  void add(const Level1Ack& ack);
  // The same for a point a recovery node installs from its upstream's offer (forwarded).
  void add(const StoredRestartPoint& point);
  // Up to where the upstream may trim its queue for this consumer fragment.
  TupleId trim_position() const { return trim_position_; }
  // The stored restart points, oldest first (at most two).
  std::vector<StoredRestartPoint> points() const;
  // The stored points as this server forwards them upstream with its own level-1 ack: without
  // the points they forwarded in turn (one hop), keeping their trim positions. A consumer with
  // one producer restarts from the newest point its producer's recovery node has, so only that
  // one needs to travel (newest_only); one with several needs both, to find a generation in
  // common with its other producers.
  std::vector<StoredRestartPoint> points_to_forward(bool newest_only) const;
  std::uint64_t newest_generation() const;
  bool empty() const { return !newest_ && !direct_; }

 private:
  std::optional<StoredRestartPoint> older_;
  std::optional<StoredRestartPoint> newest_;
  bool direct_ = false;
  TupleId trim_position_ = 0;
};

// The recovery node's choice among the RestartPoints offers of all its input streams: the
// newest generation every offer holds. nullopt when there is none in common.
std::optional<std::uint64_t> choose_generation(const std::vector<RestartPoints>& offers);
// The restart point blob of that generation (from any offer that has it).
std::optional<StoredRestartPoint> find_generation(const std::vector<RestartPoints>& offers, std::uint64_t generation);

}  // namespace hapair
