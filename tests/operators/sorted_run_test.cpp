#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "operators/sorted_run.h"

using namespace hapair;

namespace {

using Run = SortedRun<int, std::less<int>>;

std::vector<int> items(const Run& r) { return {r.begin(), r.end()}; }

}  // namespace

TEST_CASE("a sorted run appends in-order items and inserts a late one in its place", "[operators][sorted_run]") {
  Run r;
  CHECK(r.empty());
  for (int x : {1, 3, 5, 9}) CHECK(r.insert(x));
  CHECK(r.insert(4));  // out of order: a binary-searched insert
  CHECK(r.insert(0));
  CHECK_FALSE(r.insert(5));  // equal to a held item: nothing changes
  CHECK(items(r) == std::vector<int>{0, 1, 3, 4, 5, 9});
  CHECK(r.front() == 0);
  CHECK(r.size() == 6);
}

TEST_CASE("a sorted run drops its front and any held item, and stays sorted through compaction", "[operators][sorted_run]") {
  Run r;
  for (int x = 0; x < 1000; ++x) r.insert(2 * x);
  CHECK(r.erase(0));        // the front
  CHECK(r.erase(500));      // inside
  CHECK_FALSE(r.erase(501));  // not held
  for (int k = 0; k < 700; ++k) r.pop_front();  // past the compaction point several times
  std::vector<int> expected;
  for (int x = 1; x < 1000; ++x)
    if (2 * x != 500) expected.push_back(2 * x);
  expected.erase(expected.begin(), expected.begin() + 700);
  CHECK(items(r) == expected);
  CHECK(r.insert(1));  // before the front
  CHECK(r.front() == 1);
  while (!r.empty()) r.pop_front();
  CHECK(r.size() == 0);
  CHECK(r.insert(7));
  CHECK(items(r) == std::vector<int>{7});
}
