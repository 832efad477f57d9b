// Helpers for the operator tests: operator specs, seeded inputs, arrival interleavings, and the
// restart-point property check that upstream backup relies on (restart a fresh operator from
// restart_point(acked), replay the input after replay_after, and get every output after acked).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "operators/operator.h"
#include "operators/source_generator.h"
#include "protocols/rng.h"

namespace hapair::test {

inline OperatorSpec op_spec(OperatorKind kind, std::vector<std::string> inputs, std::string output = "out",
                            std::string name = "op") {
  OperatorSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.inputs = std::move(inputs);
  s.output = std::move(output);
  return s;
}

inline OperatorSpec aggregate_spec(AggregateFunction f, std::int64_t window_ms, std::int64_t slide_ms,
                                   bool group_by_key = true) {
  OperatorSpec s = op_spec(OperatorKind::aggregate, {"in"}, "out", "agg");
  s.function = f;
  s.window_ms = window_ms;
  s.slide_ms = slide_ms;
  s.group_by_key = group_by_key;
  return s;
}

inline OperatorSpec join_spec(std::int64_t window_ms, JoinCombine combine = JoinCombine::sum) {
  OperatorSpec s = op_spec(OperatorKind::join, {"left", "right"}, "out", "join");
  s.join_window_ms = window_ms;
  s.combine = combine;
  return s;
}

inline Tuple tup(TupleId id, TimeUs ts_us, std::int64_t key, double value, std::uint64_t lineage = 0) {
  Tuple t;
  t.id = id;
  t.ts_us = ts_us;
  t.key = key;
  t.value = value;
  t.lineage = lineage == 0 ? mix64(id, static_cast<std::uint64_t>(ts_us)) : lineage;
  return t;
}

inline Tuples source(const std::string& stream, TupleId count, double rate_tps, std::int64_t key_count,
                     std::uint64_t seed = 7) {
  SourceSpec spec;
  spec.stream = stream;
  spec.rate_tps = rate_tps;
  spec.key_count = key_count;
  Tuples ts;
  for (TupleId i = 1; i <= count; ++i) ts.push_back(source_tuple(spec, seed, i));
  return ts;
}

struct Arrival {
  std::size_t port = 0;
  Tuple tuple;
  friend bool operator==(const Arrival&, const Arrival&) = default;
};
using Arrivals = std::vector<Arrival>;

inline Arrivals on_port(const Tuples& ts, std::size_t port = 0) {
  Arrivals a;
  for (const Tuple& t : ts) a.push_back(Arrival{port, t});
  return a;
}

// Interleaves per-port sequences by (ts, port): the order a time-driven network would deliver.
inline Arrivals merge_by_time(const std::vector<Tuples>& ports) {
  Arrivals a;
  for (std::size_t p = 0; p < ports.size(); ++p)
    for (const Tuple& t : ports[p]) a.push_back(Arrival{p, t});
  std::stable_sort(a.begin(), a.end(), [](const Arrival& x, const Arrival& y) {
    return std::tie(x.tuple.ts_us, x.port) < std::tie(y.tuple.ts_us, y.port);
  });
  return a;
}

// A seeded random interleaving that keeps each port's order.
inline Arrivals interleave(const std::vector<Tuples>& ports, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::size_t> next(ports.size(), 0);
  Arrivals a;
  for (;;) {
    std::vector<std::size_t> open;
    for (std::size_t p = 0; p < ports.size(); ++p)
      if (next[p] < ports[p].size()) open.push_back(p);
    if (open.empty()) return a;
    const std::size_t p = open[rng.below(open.size())];
    a.push_back(Arrival{p, ports[p][next[p]++]});
  }
}

inline std::vector<Tuples> split_by_port(const Arrivals& arrivals, std::size_t ports) {
  std::vector<Tuples> out(ports);
  for (const Arrival& a : arrivals) out.at(a.port).push_back(a.tuple);
  return out;
}

inline Tuples feed(Operator& op, const Arrivals& arrivals, std::size_t from, std::size_t to) {
  Tuples out;
  for (std::size_t i = from; i < to && i < arrivals.size(); ++i) op.process(arrivals[i].port, arrivals[i].tuple, out);
  return out;
}

inline Tuples finish(Operator& op) {
  Tuples out;
  for (std::size_t p = 0; p < op.input_count(); ++p) op.end_of_stream(p, out);
  return out;
}

inline Tuples run_all(Operator& op, const Arrivals& arrivals) {
  Tuples out = feed(op, arrivals, 0, arrivals.size());
  const Tuples last = finish(op);
  out.insert(out.end(), last.begin(), last.end());
  return out;
}

// Replays, in their original order, the arrivals a restart point still needs, then ends every port.
inline Tuples replay(Operator& op, const Arrivals& arrivals, const RestartPoint& point) {
  Arrivals needed;
  for (const Arrival& a : arrivals)
    if (a.tuple.id > point.replay_after.at(a.port)) needed.push_back(a);
  return run_all(op, needed);
}

inline Tuples after(const Tuples& ts, TupleId acked) {
  Tuples out;
  for (const Tuple& t : ts)
    if (t.id > acked) out.push_back(t);
  return out;
}

// The content of a tuple without its id, for multiset comparisons.
using Content = std::tuple<TimeUs, std::int64_t, double, std::uint64_t>;
inline std::vector<Content> contents(const Tuples& ts) {
  std::vector<Content> c;
  for (const Tuple& t : ts) c.emplace_back(t.ts_us, t.key, t.value, t.lineage);
  std::sort(c.begin(), c.end());
  return c;
}

inline std::string describe(const Tuple& t) {
  std::ostringstream os;
  os << "{id=" << t.id << " ts=" << t.ts_us << " key=" << t.key << " value=" << t.value << " lineage=" << t.lineage << "}";
  return os.str();
}

// The acked values to try at one cut: none, a spread of partial acks, and everything.
inline std::vector<TupleId> acked_values(TupleId emitted) {
  std::vector<TupleId> v{0, emitted / 4, emitted / 3, emitted / 2, (3 * emitted) / 4, emitted};
  if (emitted > 0) v.push_back(emitted - 1);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

inline bool not_less(const std::vector<TupleId>& a, const std::vector<TupleId>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] < b.at(i)) return false;
  return true;
}

using MakeOperator = std::function<std::unique_ptr<Operator>()>;

// The central property of cause functions (docs/FAULTS.md, upstream backup). A reference runs over
// the whole input; at `cuts` cut points and several acked values, a fresh operator restarted
// from restart_point(acked) and fed the input after replay_after produces every output after
// acked exactly (id, ts, key, value, lineage), and whatever it regenerates at or below acked
// equals the reference too. Returns how many restarts were checked.
inline std::size_t check_restart_points(const MakeOperator& make, const Arrivals& input, std::size_t cuts = 24) {
  std::unique_ptr<Operator> ref = make();
  const Tuples reference = run_all(*ref, input);
  REQUIRE(!reference.empty());
  std::map<TupleId, Tuple> by_id;
  for (const Tuple& t : reference) by_id[t.id] = t;
  std::size_t checked = 0;
  for (std::size_t c = 0; c <= cuts; ++c) {
    const std::size_t cut = input.size() * c / cuts;
    std::unique_ptr<Operator> live = make();
    const Tuples emitted = feed(*live, input, 0, cut);
    const TupleId last = emitted.empty() ? 0 : emitted.back().id;
    std::vector<TupleId> previous(live->input_count(), 0);
    for (TupleId acked : acked_values(last)) {
      INFO("cut=" << cut << " acked=" << acked);
      const RestartPoint point = live->restart_point(acked);
      REQUIRE(point.replay_after.size() == live->input_count());
      CHECK(not_less(point.replay_after, previous));
      previous = point.replay_after;
      std::unique_ptr<Operator> restarted = make();
      REQUIRE(restarted->restart_from(point));
      const Tuples regenerated = replay(*restarted, input, point);
      const Tuples got = after(regenerated, acked);
      const Tuples want = after(reference, acked);
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("output " << i << " got " << describe(got[i]) << " want " << describe(want[i]));
        REQUIRE(got[i] == want[i]);
      }
      for (const Tuple& t : regenerated) {
        INFO("regenerated " << describe(t));
        REQUIRE(by_id.count(t.id) == 1);
        REQUIRE(by_id[t.id] == t);
      }
      ++checked;
    }
  }
  return checked;
}

// Snapshot/restore round trip: run `split` arrivals, snapshot, restore into a fresh operator,
// feed the rest to both, and compare outputs and final snapshots.
inline void check_snapshot_round_trip(const MakeOperator& make, const Arrivals& input, std::size_t split) {
  std::unique_ptr<Operator> live = make();
  feed(*live, input, 0, split);
  const Bytes snap = live->snapshot();
  std::unique_ptr<Operator> restored = make();
  REQUIRE(restored->restore(snap));
  REQUIRE(restored->snapshot() == snap);
  Tuples a = feed(*live, input, split, input.size());
  Tuples b = feed(*restored, input, split, input.size());
  const Tuples a_end = finish(*live);
  const Tuples b_end = finish(*restored);
  a.insert(a.end(), a_end.begin(), a_end.end());
  b.insert(b.end(), b_end.begin(), b_end.end());
  REQUIRE(!a.empty());
  REQUIRE(a == b);
  REQUIRE(live->snapshot() == restored->snapshot());
  REQUIRE(restored->has_finished());
}

}  // namespace hapair::test
