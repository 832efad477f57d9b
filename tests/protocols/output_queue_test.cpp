#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <memory>

#include "protocols/output_queue.h"
#include "protocols/rng.h"

using namespace hapair;

namespace {

Tuple tuple_of(TupleId id) { return Tuple{id, static_cast<TimeUs>(id * 10), static_cast<std::int64_t>(id % 7), static_cast<double>(id) / 2, mix64(id)}; }

class CountingRecipe final : public TupleRecipe {
 public:
  Tuple tuple(TupleId id) const override {
    ++asked;
    return tuple_of(id);
  }
  mutable std::int64_t asked = 0;
};

// Every observable of the queue against a plain deque of the retained tuples.
void require_same(const OutputQueue& q, const std::deque<Tuple>& model) {
  REQUIRE(q.size() == model.size());
  REQUIRE(q.empty() == model.empty());
  for (std::size_t i = 0; i < model.size(); ++i) {
    REQUIRE(q.at(i) == model[i]);
  }
  Tuples all;
  q.copy_to(0, q.size(), all);
  REQUIRE(all.size() == model.size());
  for (std::size_t i = 0; i < model.size(); ++i) REQUIRE(all[i] == model[i]);
  if (!model.empty()) {
    REQUIRE(q.index_after(0) == 0);
    REQUIRE(q.index_after(model.front().id) == 1);
    REQUIRE(q.index_after(model.back().id) == model.size());
  }
  // index_after at ids in the queue, in its gaps and around it, against the model.
  const std::size_t step = model.size() / 40 + 1;
  for (std::size_t i = 0; i < model.size(); i += step)
    for (TupleId after : {model[i].id - 1, model[i].id, model[i].id + 1}) {
      const auto expected = std::upper_bound(model.begin(), model.end(), after,
                                             [](TupleId a, const Tuple& t) { return a < t.id; }) - model.begin();
      REQUIRE(q.index_after(after) == static_cast<std::size_t>(expected));
    }
}

}  // namespace

TEST_CASE("a stored output queue keeps its tuples across wrap-around, growth and shrinking", "[output_queue]") {
  OutputQueue q(1'000'000);
  std::deque<Tuple> model;
  Rng rng(5);
  TupleId next = 1;
  TupleId trimmed = 0;
  // Random runs of appends (ids with gaps, as operators' outputs may have) and trims, so the
  // ring wraps, doubles and halves many times.
  for (int step = 0; step < 400; ++step) {
    const auto appends = static_cast<int>(rng.below(step < 200 ? 3000 : 300));
    for (int i = 0; i < appends; ++i) {
      next += 1 + rng.below(3);
      q.append(tuple_of(next));
      model.push_back(tuple_of(next));
    }
    if (!model.empty() && rng.chance(0.7)) {
      const TupleId up_to = model[rng.below(model.size())].id;
      std::size_t dropped = 0;
      while (!model.empty() && model.front().id <= up_to) {
        model.pop_front();
        ++dropped;
      }
      CHECK(q.trim_up_to(up_to) == (up_to > trimmed ? dropped : 0));
      trimmed = std::max(trimmed, up_to);
    }
    require_same(q, model);
    REQUIRE(q.trimmed_up_to() == trimmed);
    REQUIRE(q.last_id() == (next == 1 ? 0 : next));
  }
  // A range in the middle, across wherever the ring wraps.
  if (model.size() > 10) {
    Tuples part;
    q.copy_to(3, model.size() - 2, part);
    REQUIRE(part.size() == model.size() - 5);
    for (std::size_t i = 0; i < part.size(); ++i) CHECK(part[i] == model[i + 3]);
  }
  CHECK(q.trim_up_to(q.last_id()) == model.size());
  CHECK(q.empty());
  CHECK(q.count_between(0, q.last_id()) == 0);
}

TEST_CASE("a stored output queue is bounded and restores in order", "[output_queue]") {
  OutputQueue q(3);
  q.append(tuple_of(5));
  q.append(tuple_of(6));
  q.append(tuple_of(9));
  CHECK(q.full());
  CHECK(q.room() == 0);
  CHECK(q.count_between(5, 9) == 2);
  q.reset(4, 20, false);
  CHECK(q.trimmed_up_to() == 4);
  CHECK(q.empty());
  q.restore_append(tuple_of(11));
  CHECK(q.at(0) == tuple_of(11));
  CHECK(q.last_id() == 20);
}

TEST_CASE("a recomputed output queue retains a range of ids and reads them from its recipe", "[output_queue]") {
  auto recipe = std::make_shared<CountingRecipe>();
  OutputQueue q(1000, recipe);
  CHECK(q.recomputed());
  std::deque<Tuple> model;
  q.extend_to(0);
  CHECK(q.empty());
  q.extend_to(250);
  for (TupleId i = 1; i <= 250; ++i) model.push_back(tuple_of(i));
  CHECK(recipe->asked == 0);  // extending computes nothing
  require_same(q, model);
  CHECK(q.room() == 750);

  CHECK(q.trim_up_to(100) == 100);
  model.erase(model.begin(), model.begin() + 100);
  require_same(q, model);
  CHECK(q.count_between(0, 1000) == 150);
  CHECK(q.count_between(120, 130) == 10);
  CHECK(q.index_after(50) == 0);
  CHECK(q.trim_up_to(90) == 0);  // never backwards

  // Trimmed to the end, then extended again: the new ids follow the last one.
  CHECK(q.trim_up_to(250) == 150);
  CHECK(q.empty());
  q.extend_to(260);
  model.clear();
  for (TupleId i = 251; i <= 260; ++i) model.push_back(tuple_of(i));
  require_same(q, model);
  q.extend_to(1260);
  CHECK(q.full());
  q.end_stream();
  CHECK(q.ended());
  CHECK(q.last_id() == 1260);

  // A restarted source starts afresh (RejoiningRole resets every output queue): empty, and
  // extended again from the reset position.
  q.reset(0, 0, false);
  CHECK(q.empty());
  CHECK_FALSE(q.ended());
  CHECK(q.last_id() == 0);
  q.extend_to(3);
  model.clear();
  for (TupleId i = 1; i <= 3; ++i) model.push_back(tuple_of(i));
  require_same(q, model);
  q.reset(40, 50, false);
  q.extend_to(52);
  CHECK(q.at(0) == tuple_of(51));
  CHECK(q.size() == 2);
}

TEST_CASE("a stored output queue spans many chunks and gives them back as it is trimmed", "[output_queue]") {
  OutputQueue q(100'000);
  std::deque<Tuple> model;
  for (TupleId id = 1; id <= 20'000; ++id) {
    q.append(tuple_of(id * 2));
    model.push_back(tuple_of(id * 2));
  }
  require_same(q, model);
  // Ranges that start and end inside different chunks (4096 tuples each).
  Tuples part;
  q.copy_to(4000, 12'500, part);
  REQUIRE(part.size() == 8'500);
  for (std::size_t i = 0; i < part.size(); ++i) REQUIRE(part[i] == model[4000 + i]);
  CHECK(q.index_after(2 * 9000) == 9000);
  CHECK(q.trim_up_to(2 * 9000) == 9000);
  model.erase(model.begin(), model.begin() + 9000);
  require_same(q, model);
  for (TupleId id = 20'001; id <= 30'000; ++id) {
    q.append(tuple_of(id * 2));
    model.push_back(tuple_of(id * 2));
  }
  require_same(q, model);
  CHECK(q.trim_up_to(2 * 30'000) == model.size());
  CHECK(q.empty());
  q.append(tuple_of(60'002));
  CHECK(q.at(0) == tuple_of(60'002));
  CHECK(q.index_after(60'001) == 0);
}

TEST_CASE("a stored output queue finds positions in runs of consecutive ids and across their gaps", "[output_queue]") {
  OutputQueue q(100'000);
  std::deque<Tuple> model;
  for (TupleId id = 1; id <= 9000; ++id) {
    if (id > 5000 && id < 5010) continue;  // one gap
    q.append(tuple_of(id));
    model.push_back(tuple_of(id));
  }
  q.trim_up_to(3000);
  while (model.front().id <= 3000) model.pop_front();
  for (TupleId after = 2990; after <= 9010; ++after) {
    const auto expected = std::upper_bound(model.begin(), model.end(), after,
                                           [](TupleId a, const Tuple& t) { return a < t.id; }) - model.begin();
    REQUIRE(q.index_after(after) == static_cast<std::size_t>(expected));
  }
  CHECK(q.index_after(5005) == 2000);  // in the gap: the first retained id after it is 5010
  CHECK(q.count_between(4000, 6000) == 1991);
}

TEST_CASE("a stored output queue finds positions among a Filter's sampled ids, near its end and far from it", "[output_queue]") {
  // About 80 % of 60,000 ids kept at random: the interpolated slot is often hundreds of slots
  // off, and a search near the newest tuple goes back from the end.
  OutputQueue q(100'000);
  std::deque<Tuple> model;
  std::uint64_t state = 7;
  for (TupleId id = 1; id <= 60'000; ++id) {
    state = mix64(state);
    if (state % 5 == 0) continue;
    q.append(tuple_of(id));
    model.push_back(tuple_of(id));
  }
  for (const TupleId trim : {TupleId{0}, TupleId{12'345}, TupleId{55'000}}) {
    q.trim_up_to(trim);
    while (!model.empty() && model.front().id <= trim) model.pop_front();
    for (TupleId after = trim; after <= 60'002; ++after) {
      const auto expected = std::upper_bound(model.begin(), model.end(), after,
                                             [](TupleId a, const Tuple& t) { return a < t.id; }) - model.begin();
      REQUIRE(q.index_after(after) == static_cast<std::size_t>(expected));
    }
  }
}

TEST_CASE("a stored output queue's remembered positions stay right as it grows, is trimmed and is reset", "[output_queue]") {
  // A pump's pattern: the same ids (a consumer's level-0 ack and its cursor) asked again and
  // again while tuples are appended and the front trimmed.
  OutputQueue q(1'000'000);
  std::deque<Tuple> model;
  const auto expected = [&model](TupleId after) {
    return static_cast<std::size_t>(std::upper_bound(model.begin(), model.end(), after,
                                                     [](TupleId a, const Tuple& t) { return a < t.id; }) -
                                    model.begin());
  };
  std::uint64_t state = 11;
  TupleId next = 1;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 3000; ++i, ++next) {
      state = mix64(state);
      if (state % 5 == 0) continue;
      q.append(tuple_of(next));
      model.push_back(tuple_of(next));
    }
    const TupleId asked[] = {next / 3, next / 2, next - 100, next / 2 + 1, next / 3};
    for (int again = 0; again < 3; ++again)
      for (const TupleId after : asked) REQUIRE(q.index_after(after) == expected(after));
    if (round % 3 == 2) {
      const TupleId trim = next / 3 + 7;  // below some asked ids, above others
      q.trim_up_to(trim);
      while (!model.empty() && model.front().id <= trim) model.pop_front();
      for (const TupleId after : asked) REQUIRE(q.index_after(after) == expected(after));
    }
    if (round == 30) {
      q.reset(next - 1, next - 1, false);
      model.clear();
      for (const TupleId after : asked) REQUIRE(q.index_after(after) == 0);
    }
  }
}

TEST_CASE("a stored output queue appends a run across chunks with an id offset as append does tuple by tuple", "[output_queue]") {
  // append_run is the operators' path (OutputChannel::append_run); append the reference.
  OutputQueue run_queue(100'000), one_by_one(100'000);
  std::deque<Tuple> model;
  const TupleId offset = 1'000;
  Tuples input;
  for (TupleId id = 1; id <= 9'000; ++id) input.push_back(tuple_of(id * 3));
  // Lengths that start and end inside chunks and one that spans two chunk boundaries (4096 each).
  std::size_t at = 0;
  for (const std::size_t length : {std::size_t{1}, std::size_t{99}, std::size_t{0}, std::size_t{4'500}, std::size_t{4'400}}) {
    run_queue.append_run(input.data() + at, length, offset);
    for (std::size_t i = at; i < at + length; ++i) {
      Tuple t = input[i];
      t.id += offset;
      one_by_one.append(t);
      model.push_back(t);
    }
    at += length;
    require_same(run_queue, model);
    CHECK(run_queue.last_id() == one_by_one.last_id());
  }
  REQUIRE(at == input.size());
  // Trimmed to empty, a run starts the queue again at its first id.
  CHECK(run_queue.trim_up_to(run_queue.last_id()) == input.size());
  const Tuple next{40'000, 1, 2, 3.0, 4};
  run_queue.append_run(&next, 1, 0);
  CHECK(run_queue.at(0) == next);
  CHECK(run_queue.index_after(39'999) == 0);
  CHECK(run_queue.last_id() == 40'000);
}
