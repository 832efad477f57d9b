// Duplicate elimination by tuple id on one input stream.
//
// Paper: after a failover, upstream servers re-send retained tuples and a recovered operator
// regenerates output; downstream servers drop duplicates by tuple id (section 4). Invariant:
// ids on a stream only grow (across takeovers too: a takeover that cannot regenerate the same
// ids rebases them above the last accepted one), so "drop every id <= the last accepted" is
// exact.
#pragma once

#include "protocols/ids.h"

namespace hapair {

class DuplicateFilter {
 public:
  // True if the id is new (and remembers it); false for a duplicate.
  bool accept(TupleId id) {
    if (id <= last_accepted_) return false;
    last_accepted_ = id;
    return true;
  }
  TupleId last_accepted() const { return last_accepted_; }
  void reset_to(TupleId last_accepted) { last_accepted_ = last_accepted; }

 private:
  TupleId last_accepted_ = 0;
};

}  // namespace hapair
