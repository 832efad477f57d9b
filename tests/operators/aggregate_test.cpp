#include <catch2/catch.hpp>

#include "operators/aggregate.h"
#include "operators/support.h"
#include "support/time_units.h"

using namespace hapair;
using namespace hapair::test;

namespace {

using hapair::testing::kMs;

std::uint64_t agg_lineage(TimeUs end_us, std::int64_t key) {
  return mix64(hash_name("agg"), mix64(static_cast<std::uint64_t>(end_us), static_cast<std::uint64_t>(key)));
}

struct Out {
  TimeUs end_ms;
  std::int64_t key;
  double value;
};

std::vector<Out> summary(const Tuples& ts) {
  std::vector<Out> v;
  for (const Tuple& t : ts) v.push_back(Out{t.ts_us / kMs, t.key, t.value});
  return v;
}

std::string show(const std::vector<Out>& v) {
  std::ostringstream os;
  for (const Out& o : v) os << "(" << o.end_ms << "," << o.key << "," << o.value << ")";
  return os.str();
}

// Compares (window end, key, value) sequences and says what differed.
bool same(const std::vector<Out>& got, const std::vector<Out>& want) {
  UNSCOPED_INFO("got " << show(got) << " want " << show(want));
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].end_ms != want[i].end_ms || got[i].key != want[i].key || got[i].value != want[i].value) return false;
  return true;
}

}  // namespace

TEST_CASE("a tumbling aggregate emits one output per group when a later tuple closes the window", "[aggregate]") {
  Aggregate agg(aggregate_spec(AggregateFunction::sum, 100, 100));
  Tuples out;
  agg.process(0, tup(1, 10 * kMs, 1, 1.0), out);
  agg.process(0, tup(2, 20 * kMs, 2, 2.0), out);
  agg.process(0, tup(3, 50 * kMs, 1, 3.0), out);
  agg.process(0, tup(4, 100 * kMs - 1, 2, 10.0), out);
  CHECK(out.empty());  // ts < window end: still open
  agg.process(0, tup(5, 100 * kMs, 1, 4.0), out);  // ts == end closes [0, 100)
  REQUIRE(out.size() == 2);
  CHECK(same(summary(out), {{100, 1, 4.0}, {100, 2, 12.0}}));
  CHECK(out[0].id == 1);
  CHECK(out[1].id == 2);
  CHECK(out[0].lineage == agg_lineage(100 * kMs, 1));
  CHECK(out[1].lineage == agg_lineage(100 * kMs, 2));
  agg.process(0, tup(6, 350 * kMs, 2, 5.0), out);  // closes [100, 200); [200, 300) is empty
  CHECK(same(summary(out), {{100, 1, 4.0}, {100, 2, 12.0}, {200, 1, 4.0}}));
  agg.end_of_stream(0, out);  // closes [300, 400)
  CHECK(same(summary(out), {{100, 1, 4.0}, {100, 2, 12.0}, {200, 1, 4.0}, {400, 2, 5.0}}));
  CHECK(out.back().id == 4);
  CHECK(agg.has_finished());
  CHECK(agg.open_windows() == 0);
}

TEST_CASE("a sliding aggregate counts a tuple in every window containing its ts, closing in start order", "[aggregate]") {
  Aggregate agg(aggregate_spec(AggregateFunction::count, 100, 50));
  Tuples out;
  agg.process(0, tup(1, 10 * kMs, 0, 1.0), out);  // windows [-50, 50) and [0, 100)
  agg.process(0, tup(2, 60 * kMs, 0, 1.0), out);  // closes [-50, 50); joins [0, 100) and [50, 150)
  CHECK(same(summary(out), {{50, 0, 1.0}}));
  agg.process(0, tup(3, 70 * kMs, 0, 1.0), out);
  agg.process(0, tup(4, 160 * kMs, 0, 1.0), out);  // closes [0, 100) then [50, 150)
  CHECK(same(summary(out), {{50, 0, 1.0}, {100, 0, 3.0}, {150, 0, 2.0}}));
  agg.end_of_stream(0, out);  // [100, 200) and [150, 250)
  CHECK(same(summary(out), {{50, 0, 1.0}, {100, 0, 3.0}, {150, 0, 2.0}, {200, 0, 1.0}, {250, 0, 1.0}}));
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i].id == i + 1);
}

TEST_CASE("aggregate computes count, sum, avg, min and max over a window's values", "[aggregate]") {
  const std::vector<std::pair<AggregateFunction, double>> expected{{AggregateFunction::count, 3.0},
                                                                   {AggregateFunction::sum, 12.0},
                                                                   {AggregateFunction::avg, 4.0},
                                                                   {AggregateFunction::min, 1.0},
                                                                   {AggregateFunction::max, 7.0}};
  for (const auto& [function, value] : expected) {
    Aggregate agg(aggregate_spec(function, 20, 20));
    const Tuples out = run_all(agg, on_port({tup(1, 1 * kMs, 3, 4.0), tup(2, 2 * kMs, 3, 1.0), tup(3, 3 * kMs, 3, 7.0)}));
    INFO(to_string(function));
    REQUIRE(out.size() == 1);
    CHECK(out[0].value == value);
    CHECK(out[0].ts_us == 20 * kMs);
    CHECK(out[0].key == 3);
  }
}

TEST_CASE("aggregate groups by key in ascending order, or into one group with key 0", "[aggregate]") {
  const Tuples in{tup(1, 1 * kMs, 9, 1.0), tup(2, 2 * kMs, -4, 2.0), tup(3, 3 * kMs, 5, 3.0), tup(4, 4 * kMs, 9, 4.0)};
  Aggregate grouped(aggregate_spec(AggregateFunction::sum, 10, 10, true));
  CHECK(same(summary(run_all(grouped, on_port(in))), {{10, -4, 2.0}, {10, 5, 3.0}, {10, 9, 5.0}}));
  Aggregate single(aggregate_spec(AggregateFunction::sum, 10, 10, false));
  const Tuples out = run_all(single, on_port(in));
  CHECK(same(summary(out), {{10, 0, 10.0}}));
  CHECK(out[0].lineage == agg_lineage(10 * kMs, 0));
}

TEST_CASE("a late tuple counts only for windows that are still open", "[aggregate]") {
  Aggregate agg(aggregate_spec(AggregateFunction::count, 100, 50));
  Tuples out;
  agg.process(0, tup(1, 10 * kMs, 0, 1.0), out);
  agg.process(0, tup(2, 120 * kMs, 0, 1.0), out);  // closes [-50, 50) and [0, 100)
  agg.process(0, tup(3, 90 * kMs, 0, 1.0), out);   // late: [0, 100) closed, [50, 150) open
  CHECK(agg.late_tuples() == 1);
  agg.end_of_stream(0, out);
  CHECK(same(summary(out), {{50, 0, 1.0}, {100, 0, 1.0}, {150, 0, 2.0}, {200, 0, 1.0}}));
}

TEST_CASE("a restarted aggregate never creates windows before its restart bound", "[aggregate][restart]") {
  Aggregate live(aggregate_spec(AggregateFunction::count, 100, 50));
  Tuples out;
  live.process(0, tup(1, 10 * kMs, 0, 1.0), out);
  live.process(0, tup(2, 60 * kMs, 0, 1.0), out);  // closes [-50, 50) as output 1
  // Output 1 acked: the earliest needed window is [0, 100), created by tuple 1.
  const RestartPoint point = live.restart_point(1);
  CHECK(point.replay_after == std::vector<TupleId>{0});
  Aggregate restarted(aggregate_spec(AggregateFunction::count, 100, 50));
  REQUIRE(restarted.restart_from(point));
  Tuples again;
  restarted.process(0, tup(1, 10 * kMs, 0, 1.0), again);
  restarted.process(0, tup(2, 60 * kMs, 0, 1.0), again);
  restarted.end_of_stream(0, again);
  // [-50, 50) is before the bound and stays uncreated; the rest numbers on from output 1.
  CHECK(same(summary(again), {{100, 0, 2.0}, {150, 0, 1.0}}));
  CHECK(again[0].id == 2);
}

TEST_CASE("an aggregate restarted after all its windows closed never reopens one that started before", "[aggregate][restart]") {
  Aggregate live(aggregate_spec(AggregateFunction::count, 100, 50));
  const Tuples out = run_all(live, on_port({tup(1, 10 * kMs, 0, 1.0), tup(2, 120 * kMs, 0, 1.0)}));
  REQUIRE(out.size() == 4);
  const RestartPoint point = live.restart_point(out.back().id);
  CHECK(point.replay_after == std::vector<TupleId>{2});
  Aggregate restarted(aggregate_spec(AggregateFunction::count, 100, 50));
  REQUIRE(restarted.restart_from(point));
  // Every window starting at or before 120 ms was emitted already, with tuple 2 in it, which a
  // restart from here never replays: only windows from 150 ms on may be created.
  const Tuples again = run_all(restarted, on_port({tup(3, 110 * kMs, 0, 1.0), tup(4, 180 * kMs, 0, 1.0)}));
  CHECK(same(summary(again), {{250, 0, 1.0}}));
  CHECK(again.front().id == 5);
}

TEST_CASE("a convergent-capable aggregate restarted from empty state produces the failure-free output after one window",
          "[aggregate][convergent]") {
  const OperatorSpec spec = aggregate_spec(AggregateFunction::avg, 200, 50);
  const Tuples input = source("in", 600, 200.0, 4);
  Aggregate reference(spec);
  const Tuples ref_out = run_all(reference, on_port(input));
  for (std::size_t start : {137u, 251u, 400u}) {
    // Started cold in the middle of the input, with no restart point at all.
    Aggregate cold(spec);
    const Tuples cold_out = run_all(cold, on_port(Tuples(input.begin() + static_cast<std::ptrdiff_t>(start), input.end())));
    const TimeUs restart_ts = input[start].ts_us;
    auto complete = [&](const Tuples& ts) {
      std::vector<Content> c;
      for (const Tuple& t : ts)
        if (t.ts_us - 200 * kMs >= restart_ts) c.emplace_back(t.ts_us, t.key, t.value, t.lineage);
      return c;
    };
    INFO("restart at tuple " << start);
    const std::vector<Content> want = complete(ref_out);
    REQUIRE(want.size() > 50);
    CHECK(complete(cold_out) == want);  // same windows, groups, order and bit-identical doubles
    // Windows that began before the restart saw only part of their input and differ.
    CHECK(contents(cold_out) != contents(after(ref_out, 0)));
  }
}

TEST_CASE("aggregate delta checkpoints are small and rebuild the exact state", "[aggregate][delta]") {
  const OperatorSpec spec = aggregate_spec(AggregateFunction::sum, 200, 100);
  const Tuples input = source("in", 8000, 20000.0, 10000);
  Aggregate live(spec);
  Tuples out;
  const Arrivals arrivals = on_port(input);
  feed(live, arrivals, 0, 3000);
  CHECK(live.supports_delta());
  const std::uint64_t base_version = live.state_version();
  const Bytes full = live.snapshot();

  SECTION("a short interval gives a delta much smaller than the full snapshot") {
    feed(live, arrivals, 3000, 3020);
    CHECK(live.state_version() > base_version);
    const Bytes delta = live.snapshot_delta(base_version);
    INFO("full=" << full.size() << " delta=" << delta.size());
    CHECK(delta.size() * 50 < full.size());
    Aggregate standby(spec);
    REQUIRE(standby.restore(full));
    REQUIRE(standby.apply_delta(delta));
    CHECK(standby.snapshot() == live.snapshot());
  }

  SECTION("deltas across window closings chain and continue identically") {
    Aggregate standby(spec);
    REQUIRE(standby.restore(full));
    std::uint64_t version = base_version;
    for (std::size_t from = 3000; from < 7000; from += 1000) {
      feed(live, arrivals, from, from + 1000);  // 50 ms each: windows close in between
      REQUIRE(standby.apply_delta(live.snapshot_delta(version)));
      version = live.state_version();
      REQUIRE(standby.snapshot() == live.snapshot());
    }
    live.forget_up_to(5000);  // trims closed-window bookkeeping, which the delta must carry too
    REQUIRE(standby.apply_delta(live.snapshot_delta(version)));
    REQUIRE(standby.snapshot() == live.snapshot());
    const Tuples a = feed(live, arrivals, 7000, 8000);
    const Tuples b = feed(standby, arrivals, 7000, 8000);
    CHECK(!a.empty());
    CHECK(a == b);
  }

  SECTION("a delta applied to another base is refused and changes nothing") {
    feed(live, arrivals, 3000, 3100);
    const Bytes delta = live.snapshot_delta(base_version + 10);
    Aggregate standby(spec);
    REQUIRE(standby.restore(full));
    CHECK_FALSE(standby.apply_delta(delta));
    CHECK(standby.snapshot() == full);
    Bytes truncated = live.snapshot_delta(base_version);
    truncated.resize(truncated.size() - 3);
    CHECK_FALSE(standby.apply_delta(truncated));
    CHECK(standby.snapshot() == full);
  }
}

TEST_CASE("a tuple stamped at the smallest time does not overflow the window arithmetic (found by envelope_fuzz)", "[aggregate]") {
  // A forged batch carried ts = INT64_MIN; the window start (ts - window) overflowed (UBSan, in
  // the sanitizer build of the suite). The aggregate goes on counting the tuples after it.
  Aggregate agg(aggregate_spec(AggregateFunction::count, 100, 100));
  Tuples out;
  agg.process(0, tup(1, std::numeric_limits<TimeUs>::min(), 0, 1.0), out);
  agg.process(0, tup(2, 10 * kMs, 0, 1.0), out);
  agg.process(0, tup(3, 20 * kMs, 0, 1.0), out);
  agg.end_of_stream(0, out);
  CHECK(agg.has_finished());
  REQUIRE_FALSE(out.empty());
  CHECK(out.back().ts_us == 100 * kMs);
  CHECK(out.back().value >= 2.0);
}
