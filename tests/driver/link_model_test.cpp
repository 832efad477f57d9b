// Link emulation's pure model (driver/link_model.h, docs/LINKS.md): the delay queue releases a
// message no earlier than latency_ms and within latency_ms + jitter_ms unless its predecessor
// holds it back (FIFO), loss and duplication happen as often as their ratios say (within binomial
// bounds computed here), the bandwidth serialises bytes, the queue is bounded, a seed fixes every
// fate, and a topology's [links] and [[link]] resolve per pair of nodes.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "driver/link_model.h"

using namespace hapair;

namespace {

LinkSettings delay(double latency_ms, double jitter_ms) {
  LinkSettings s;
  s.latency_ms = latency_ms;
  s.jitter_ms = jitter_ms;
  return s;
}

int identity(const int& v) { return v; }

// The bounds a count of successes in n trials of probability p stays within but for a chance of
// about 2e-9 (six standard deviations of the binomial, normal approximation: n p (1 - p) >= 100).
struct BinomialBounds {
  double low, high;
};
BinomialBounds binomial_bounds(std::int64_t n, double p) {
  const double mean = static_cast<double>(n) * p;
  const double sd = std::sqrt(mean * (1.0 - p));
  REQUIRE(mean * (1.0 - p) >= 100.0);
  return {mean - 6.0 * sd, mean + 6.0 * sd};
}

}  // namespace

TEST_CASE("an emulated link releases every message between latency_ms and latency_ms + jitter_ms after it was handed over", "[driver][links]") {
  LinkQueue<int> link(delay(5.0, 2.0), Rng(7));
  TimeUs low = kNever, high = 0;
  // 10 ms apart, more than the jitter: no message is held back by its predecessor.
  for (int i = 0; i < 5'000; ++i) {
    const TimeUs now = i * 10'000;
    REQUIRE(link.push(now, 100, i, identity) == LinkFate::queued);
    const TimeUs delay_us = link.last_release_us() - now;
    REQUIRE(delay_us >= 5'000);
    REQUIRE(delay_us < 7'000);
    low = std::min(low, delay_us);
    high = std::max(high, delay_us);
    CHECK_FALSE(link.pop_due(now + 4'999).has_value());
    const auto released = link.pop_due(now + 7'000);
    REQUIRE(released.has_value());
    CHECK(*released == i);
  }
  // The draws cover the interval: 5000 uniform draws miss its first or last 5 % with chance 1e-111.
  CHECK(low < 5'100);
  CHECK(high > 6'900);
  CHECK(link.counters().released == 5'000);
  CHECK(link.counters().delay_us_total >= 5'000 * 5'000);
}

TEST_CASE("jitter never reorders a link: a message is released no earlier than the one handed over before it", "[driver][links]") {
  LinkQueue<int> link(delay(1.0, 5.0), Rng(11));
  int held_back = 0;
  TimeUs previous = 0;
  for (int i = 0; i < 2'000; ++i) {
    const TimeUs now = i * 100;  // 0.1 ms apart, far less than the jitter
    REQUIRE(link.push(now, 10, i, identity) == LinkFate::queued);
    const TimeUs release = link.last_release_us();
    REQUIRE(release >= previous);
    REQUIRE(release >= now + 1'000);
    held_back += release == previous;
    previous = release;
  }
  // The branch under test ran: many messages waited for their predecessor.
  CHECK(held_back > 100);
  int expected = 0;
  TimeUs last_due = 0;
  while (link.messages() > 0) {
    const TimeUs due = link.next_release_us();
    REQUIRE(due >= last_due);
    last_due = due;
    const auto m = link.pop_due(due);
    REQUIRE(m.has_value());
    REQUIRE(*m == expected++);
  }
  CHECK(expected == 2'000);
}

TEST_CASE("loss and duplication happen as often as their ratios say, within binomial bounds", "[driver][links]") {
  LinkSettings s;
  s.loss_ratio = 0.01;
  s.duplication_ratio = 0.05;
  s.queue_messages_max = 1'000'000;
  LinkQueue<int> link(s, Rng(3));
  constexpr std::int64_t kMessages = 200'000;
  for (std::int64_t i = 0; i < kMessages; ++i) {
    link.push(i, 10, static_cast<int>(i), identity);
    while (link.pop_due(i)) {
    }
  }
  const LinkCounters& c = link.counters();
  const BinomialBounds lost = binomial_bounds(kMessages, s.loss_ratio);
  INFO("lost " << c.lost << " duplicated " << c.duplicated);
  CHECK(static_cast<double>(c.lost) >= lost.low);
  CHECK(static_cast<double>(c.lost) <= lost.high);
  // Duplication is drawn for the messages that were not lost.
  const BinomialBounds dup = binomial_bounds(kMessages - c.lost, s.duplication_ratio);
  CHECK(static_cast<double>(c.duplicated) >= dup.low);
  CHECK(static_cast<double>(c.duplicated) <= dup.high);
  CHECK(c.queued == kMessages - c.lost);
  CHECK(c.released == c.queued + c.duplicated);
  CHECK(c.overflow == 0);
}

TEST_CASE("a duplicated message leaves twice, the copy right behind the original", "[driver][links]") {
  LinkSettings s = delay(2.0, 0.0);
  s.duplication_ratio = 1.0;
  LinkQueue<int> link(s, Rng(1));
  REQUIRE(link.push(0, 10, 42, identity) == LinkFate::queued);
  CHECK(link.messages() == 2);
  CHECK(link.pop_due(2'000) == 42);
  CHECK(link.pop_due(2'000) == 42);
  CHECK(link.counters().duplicated == 1);
}

TEST_CASE("the same seed gives every message the same fate, and another link's seed does not", "[driver][links]") {
  LinkSettings s = delay(3.0, 4.0);
  s.loss_ratio = 0.1;
  s.duplication_ratio = 0.1;
  auto fates = [&](Rng rng) {
    LinkModel m(s, rng);
    std::vector<TimeUs> out;
    for (int i = 0; i < 1'000; ++i) {
      const LinkDecision d = m.decide(i * 1'000, 50, 0, 0);
      out.push_back(d.fate == LinkFate::lost ? -1 : d.release_us * 2 + (d.duplicated ? 1 : 0));
    }
    return out;
  };
  CHECK(fates(Rng(99)) == fates(Rng(99)));
  CHECK(fates(Rng(99)) != fates(Rng(100)));
}

TEST_CASE("bandwidth serialises the bytes of a link at its rate, a token bucket one message deep", "[driver][links]") {
  LinkSettings s;
  s.latency_ms = 1.0;
  s.bandwidth_bytes_per_s = 1e6;  // a byte a microsecond
  LinkQueue<int> link(s, Rng(5));
  // 100 messages of 1000 bytes handed over at once: the k-th is on the wire from k ms to k+1 ms.
  for (int k = 0; k < 100; ++k) {
    REQUIRE(link.push(0, 1'000, k, identity) == LinkFate::queued);
    CHECK(link.last_release_us() == (k + 1) * 1'000 + 1'000);
  }
  // The rate the releases show: 100 kB over the 100 ms between the first byte and the last.
  const double rate = 100.0 * 1'000.0 / (static_cast<double>(link.last_release_us() - 1'000) / 1e6);
  CHECK(rate == Approx(1e6));
  // An idle link starts a new message at once.
  // Drained at the last release time, as a driver would (a far-off "now" would add up lateness
  // no run can have).
  const TimeUs drained_at = link.last_release_us();
  while (link.pop_due(drained_at)) {
  }
  REQUIRE(link.messages() == 0);
  REQUIRE(link.push(1'000'000, 500, 0, identity) == LinkFate::queued);
  CHECK(link.last_release_us() == 1'000'000 + 500 + 1'000);
}

TEST_CASE("a full delay queue drops what comes (counted), and a crash drops what waits", "[driver][links]") {
  LinkSettings s = delay(10.0, 0.0);
  s.queue_messages_max = 3;
  s.queue_bytes_max = 1'000'000;
  LinkQueue<int> link(s, Rng(2));
  for (int i = 0; i < 3; ++i) CHECK(link.push(0, 10, i, identity) == LinkFate::queued);
  CHECK(link.push(0, 10, 3, identity) == LinkFate::overflow);
  CHECK(link.counters().overflow == 1);
  CHECK(link.messages() == 3);
  CHECK(link.pop_due(10'000) == 0);
  CHECK(link.push(1, 10, 4, identity) == LinkFate::queued);
  SECTION("the byte bound too") {
    LinkSettings b = delay(10.0, 0.0);
    b.queue_bytes_max = 2'048;
    LinkQueue<int> small(b, Rng(2));
    CHECK(small.push(0, 2'000, 0, identity) == LinkFate::queued);
    CHECK(small.push(0, 100, 1, identity) == LinkFate::overflow);
  }
  CHECK(link.clear() == 3);
  CHECK(link.counters().unsent == 3);
  CHECK(link.next_release_us() == kNever);
}

namespace {

Plan passive_plan(const LinkTable& links) {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  t.links = links;
  REQUIRE(validate(t).empty());
  return make_plan(t);
}

}  // namespace

TEST_CASE("the links table sets every link, and each matching link table overrides the keys it gives, in file order", "[driver][links]") {
  LinkTable table;
  table.defaults.latency_ms = 1.0;
  LinkSpec fragments;  // every replica of the aggregate, both ways
  fragments.from = "filter";
  fragments.to = "aggregate";
  fragments.settings.latency_ms = 20.0;
  fragments.settings.loss_ratio = 0.01;
  LinkSpec node;  // one node, one way, later in the file
  node.from = "filter";
  node.to = "aggregate.backup";
  node.both_ways = false;
  node.settings.latency_ms = 30.0;
  table.links = {fragments, node};
  const Plan plan = passive_plan(table);
  const NodeId filter = plan.node_id("filter"), aggregate = plan.node_id("aggregate"),
               backup = plan.node_id("aggregate.backup"), source = plan.node_id("source");
  CHECK(link_settings(plan, source, filter).latency_ms == 1.0);
  CHECK(link_settings(plan, filter, aggregate).latency_ms == 20.0);
  CHECK(link_settings(plan, aggregate, filter).latency_ms == 20.0);
  CHECK(link_settings(plan, aggregate, filter).loss_ratio == 0.01);
  CHECK(link_settings(plan, filter, backup).latency_ms == 30.0);
  CHECK(link_settings(plan, filter, backup).loss_ratio == 0.01);  // kept from the earlier table
  CHECK(link_settings(plan, backup, filter).latency_ms == 20.0);  // one way only
  CHECK(has_emulated_links(plan));
  OutgoingLinks<int> from_filter(plan, filter);
  CHECK(from_filter.links().size() == plan.nodes.size() - 1);
}

TEST_CASE("a link table between hosts matches the nodes pinned to them", "[driver][links]") {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  for (FragmentSpec& f : t.fragments) {
    f.host = f.name == "source" || f.name == "filter" ? "east" : "west";
    if (f.name == "aggregate") f.standby_host = "east";
  }
  LinkSpec wan;
  wan.from_host = "east";
  wan.to_host = "west";
  wan.settings.latency_ms = 40.0;
  t.links.links = {wan};
  REQUIRE(validate(t).empty());
  const Plan plan = make_plan(t);
  CHECK(link_settings(plan, plan.node_id("filter"), plan.node_id("aggregate")).latency_ms == 40.0);
  CHECK(link_settings(plan, plan.node_id("sink"), plan.node_id("aggregate.backup")).latency_ms == 40.0);
  CHECK(link_settings(plan, plan.node_id("filter"), plan.node_id("aggregate.backup")).latency_ms == 0.0);
  CHECK_FALSE(link_settings(plan, plan.node_id("source"), plan.node_id("filter")).emulated());
}

TEST_CASE("without links tables no link is emulated: no queue, no draw, no cost", "[driver][links]") {
  const Plan plan = passive_plan(LinkTable{});
  CHECK_FALSE(has_emulated_links(plan));
  for (const PlanNode& n : plan.nodes) CHECK(OutgoingLinks<int>(plan, n.id).empty());
  CHECK(link_warnings(plan).empty());
}

TEST_CASE("a link whose delay reaches failure_timeout_ms between a pair is warned about", "[driver][links]") {
  LinkTable table;
  table.defaults.latency_ms = 25.0;
  table.defaults.jitter_ms = 5.0;  // 30 ms at most: the default failure_timeout_ms
  const std::vector<std::string> warnings = link_warnings(passive_plan(table));
  REQUIRE(warnings.size() == 4);  // filter and aggregate, each primary -> backup and back
  CHECK(warnings[0].find("failure_timeout_ms (30 ms)") != std::string::npos);
  table.defaults.latency_ms = 5.0;
  table.defaults.jitter_ms = 1.0;
  CHECK(link_warnings(passive_plan(table)).empty());
}

TEST_CASE("the commands' line says what is emulated, and nothing when nothing is", "[driver][links]") {
  CHECK(describe_links(passive_plan(LinkTable{})).empty());
  LinkTable table;
  table.defaults.latency_ms = 15.0;
  table.defaults.jitter_ms = 10.0;
  CHECK(describe_links(passive_plan(table)) == "links: latency_ms=15 jitter_ms=10 on every link");
  LinkSpec one;
  one.from = "filter";
  one.to = "aggregate";
  one.settings.loss_ratio = 0.01;
  table.links = {one};
  table.defaults = LinkSettings{};
  CHECK(describe_links(passive_plan(table)) == "links: none emulated by default, 1 link table over it (docs/LINKS.md)");
}
