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

TEST_CASE("a held stream's items beyond its barrier wait aside while the other streams are processed, then rejoin in order",
          "[roles][input_queue]") {
  InputQueue q;
  for (TupleId id = 1; id <= 4; ++id) q.push_tuple(1, 10, false, tuple_of(id));
  q.push_tuple(2, 11, false, tuple_of(50));
  q.push_tuple(1, 10, false, tuple_of(5));
  q.pop_front(1);  // tuple 1 of stream 1 was processed
  q.hold(1, 2);    // the barrier of stream 1 falls after tuple 2
  CHECK(q.held(1));
  REQUIRE(q.size() == 2);
  CHECK(q.aside() == 3);  // 3, 4 and 5 of stream 1
  std::vector<InputItem> now = q.items();
  CHECK(now[0].stream == 1);
  CHECK(now[0].tuple.id == 2);
  CHECK(now[1].stream == 2);
  // Later items of the held stream beyond the barrier go aside too; the other stream's do not.
  q.push_tuple(1, 10, false, tuple_of(6));
  q.push_end_of_stream(1, 10, false);
  q.push_tuple(2, 11, false, tuple_of(51));
  CHECK(q.size() == 3);
  q.pop_front(1);
  q.pop_front(1);
  q.pop_front(1);
  CHECK(q.empty());
  q.release(1);
  CHECK(!q.held(1));
  CHECK(q.aside() == 0);
  now = q.items();
  REQUIRE(now.size() == 5);
  for (std::size_t i = 0; i < 4; ++i) CHECK(now[i].tuple.id == 3 + i);
  CHECK(now[4].eos);
}

TEST_CASE("a barrier that arrives before its tuples lets them in up to it and sets the rest aside", "[roles][input_queue]") {
  InputQueue q;
  q.hold(3, 10);
  CHECK(q.empty());
  std::vector<Tuple> batch;
  for (TupleId id = 8; id <= 12; ++id) batch.push_back(tuple_of(id));
  q.push_tuples(3, 10, false, batch.data(), batch.size());
  REQUIRE(q.size() == 3);  // 8, 9, 10
  CHECK(q.back().tuple.id == 10);
  CHECK(q.aside() == 2);
  // A boundary after the items set aside waits with them.
  q.push_boundary(3, 10, false, 500);
  CHECK(q.size() == 3);
  q.release(3);
  REQUIRE(q.size() == 5);
  CHECK(q.back().tuple.id == 12);
  q.pop_front(3);
  CHECK(q.front().boundary_us == 500);
}
