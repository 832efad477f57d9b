// A recipe for a stream's tuples: a pure function from tuple id to tuple.
//
// Paper: not a paper concept. A source in hapair is deterministic (its tuple i depends on the
// seed, the source's spec and i alone), so its output queue need not store the tuples it
// retains for recovery (Hwang et al., section 4.1: output queues double as logs): it keeps the
// range of retained ids and recomputes a tuple whenever it is sent, re-sent or replayed. The
// same tuples, at no memory per retained tuple and no copy into and out of a log.
//
// Invariant: tuple(id) is the same for the same id, however often and in whatever order it
// is asked for, and tuple(id).id == id.
#pragma once

#include <cstddef>

#include "protocols/tuple.h"

namespace hapair {

class TupleRecipe {
 public:
  virtual ~TupleRecipe() = default;
  virtual Tuple tuple(TupleId id) const = 0;
  // Appends tuples first, first + 1, ..., first + count - 1 to `out`.
  virtual void append_tuples(TupleId first, std::size_t count, Tuples& out) const {
    for (std::size_t i = 0; i < count; ++i) out.push_back(tuple(first + i));
  }
};

}  // namespace hapair
