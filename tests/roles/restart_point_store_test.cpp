// RestartPointStore and the recovery node's choice of a generation (upstream backup, paper
// section 4.3: level-1 acks let an upstream trim; hapair keeps the last two restart points so a
// recovery node always finds a generation every upstream holds).
#include <catch2/catch.hpp>

#include "retention/restart_point_store.h"

using namespace hapair;

namespace {

Level1Ack ack(std::uint64_t generation, TupleId up_to) {
  return Level1Ack{0, up_to, generation, Bytes{static_cast<std::uint8_t>(generation)}, {}};
}

RestartPoints offer(std::vector<std::uint64_t> generations) {
  RestartPoints o;
  for (auto g : generations) o.points.push_back(StoredRestartPoint{g, g * 10, Bytes{static_cast<std::uint8_t>(g)}, {}});
  return o;
}

}  // namespace

TEST_CASE("an upstream keeps the last two restart points and trims to the older one", "[roles][restart_points]") {
  RestartPointStore store;
  CHECK(store.empty());
  store.add(ack(1, 10));
  CHECK(store.newest_generation() == 1);
  CHECK(store.trim_position() == 0);  // one point: the downstream may still restart from before it
  store.add(ack(2, 20));
  CHECK(store.trim_position() == 10);
  store.add(ack(3, 30));
  CHECK(store.trim_position() == 20);
  const auto points = store.points();
  REQUIRE(points.size() == 2);
  CHECK(points[0].generation == 2);
  CHECK(points[1].generation == 3);
}

TEST_CASE("a stale or repeated generation changes nothing", "[roles][restart_points]") {
  RestartPointStore store;
  store.add(ack(5, 50));
  store.add(ack(6, 60));
  store.add(ack(4, 70));
  store.add(ack(6, 80));
  CHECK(store.newest_generation() == 6);
  CHECK(store.trim_position() == 50);
  CHECK(store.points().back().up_to == 60);
}

TEST_CASE("a passive standby's level-1 ack trims at once and carries no restart point", "[roles][restart_points]") {
  RestartPointStore store;
  store.add(Level1Ack{0, 40, 1, {}, {}});
  CHECK_FALSE(store.empty());
  CHECK(store.trim_position() == 40);
  CHECK(store.points().empty());
  store.add(Level1Ack{0, 30, 2, {}, {}});
  CHECK(store.trim_position() == 40);  // never backwards
}

TEST_CASE("forwarded points travel one hop, and only the newest for a single-producer consumer", "[roles][restart_points]") {
  RestartPointStore store;
  Level1Ack a = ack(1, 10);
  a.forwarded = {DownstreamRestartPoints{3, 2, 7, {StoredRestartPoint{9, 5, Bytes{9}, {}}}}};
  store.add(a);
  store.add(ack(2, 20));
  const auto both = store.points_to_forward(false);
  REQUIRE(both.size() == 2);
  REQUIRE(both[0].forwarded.size() == 1);
  CHECK(both[0].forwarded[0].trimmed_up_to == 7);
  CHECK(both[0].forwarded[0].points.empty());  // not forwarded a second hop
  const auto newest = store.points_to_forward(true);
  REQUIRE(newest.size() == 1);
  CHECK(newest[0].generation == 2);
}

TEST_CASE("the recovery node picks the newest generation every upstream holds", "[roles][restart_points]") {
  CHECK(choose_generation({offer({3, 4}), offer({4, 5}), offer({2, 4})}) == std::optional<std::uint64_t>{4});
  CHECK(choose_generation({offer({3, 4}), offer({3, 4})}) == std::optional<std::uint64_t>{4});
  CHECK(choose_generation({offer({3, 4}), offer({5, 6})}) == std::nullopt);
  CHECK(choose_generation({}) == std::nullopt);
  CHECK(choose_generation({offer({})}) == std::nullopt);
  const auto offers = std::vector<RestartPoints>{offer({3, 4}), offer({4, 5})};
  auto p = find_generation(offers, 4);
  REQUIRE(p);
  CHECK(p->up_to == 40);
  CHECK_FALSE(find_generation(offers, 6));
}
