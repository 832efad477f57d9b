// InputQueue on its own: items in arrival order, kept as runs of one stream, sender and replay
// flag; an end of stream is a run of its own.
#include <catch2/catch.hpp>

#include "primary/input_queue.h"

using namespace hapair;

namespace {

Tuple tuple_of(TupleId id) { return Tuple{id, static_cast<TimeUs>(id), 0, 0.0, id}; }

}  // namespace

TEST_CASE("the input queue keeps arrival order in runs and takes items from the front", "[roles][input_queue]") {
  InputQueue q;
  CHECK(q.empty());
  q.push_tuple(1, 10, false, tuple_of(1));
  q.push_tuple(1, 10, false, tuple_of(2));
  q.push_tuple(2, 10, false, tuple_of(7));   // another stream: a new run
  q.push_tuple(2, 11, false, tuple_of(8));   // another sender: a new run
  q.push_tuple(2, 11, true, tuple_of(9));    // replayed: a new run
  q.push_end_of_stream(2, 11, true);         // its own run
  q.push_tuple(2, 11, true, tuple_of(10));   // after an end of stream: a new run
  REQUIRE(q.size() == 7);

  const std::vector<InputItem> all = q.items();
  REQUIRE(all.size() == 7);
  CHECK(all[0].tuple.id == 1);
  CHECK(all[2].stream == 2);
  CHECK(all[3].from == 11);
  CHECK(all[4].replayed);
  CHECK(all[5].eos);
  CHECK(q.back().tuple.id == 10);

  CHECK(q.front().items() == 2);
  q.pop_front(1);
  CHECK(q.front().first()->id == 2);
  CHECK(q.size() == 6);
  q.pop_front(1);
  CHECK(q.front().stream == 2);
  CHECK(q.front().items() == 1);
  q.pop_front(1);
  q.pop_front(1);
  q.pop_front(1);
  CHECK(q.front().eos);
  CHECK(q.front().items() == 1);
  q.pop_front(1);
  CHECK(q.front().first()->id == 10);
  q.pop_front(1);
  CHECK(q.empty());
  CHECK(q.items().empty());

  q.push_tuple(3, 1, false, tuple_of(20));
  q.clear();
  CHECK(q.size() == 0);
}
