// The built-in workload networks (experiments/networks/nexmark_q*.toml, ysb.toml; docs/WORKLOADS.md):
// - each computes its benchmark's answer: the failure-free reference of ysb and nexmark:q5 equals
//   the query computed here by hand from the generators' events (the YSB campaign table the
//   Lookup reads is the one the generator draws from);
// - every approach runs on each, judged: failure free every approach is precise; after a crash of
//   the fragment with state, upstream backup, passive and active standby are precise and amnesia
//   stays within its gap.
// Every approach on every workload network: a sweep, in the Release build (label sweeps).
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "config/builtin_networks.h"
#include "config/topology_file.h"
#include "operators/source_generator.h"
#include "operators/ysb.h"
#include "scenarios/judged_run.h"

using namespace hapair;

namespace {

Topology builtin(const std::string& name) {
  auto load = load_topology_file(name);
  INFO(name);
  REQUIRE(load.topology.has_value());
  return *load.topology;
}

using Row = std::tuple<std::int64_t, TimeUs, double>;  // key, ts, value

std::multiset<Row> rows(const std::vector<Delivery>& deliveries) {
  std::multiset<Row> out;
  for (const auto& d : deliveries) out.insert({d.tuple.key, d.tuple.ts_us, d.tuple.value});
  return out;
}

const SourceSpec& first_source(const Topology& t) {
  for (const auto& f : t.fragments)
    if (f.kind == FragmentKind::source) return f.source;
  FAIL("no source");
  return t.fragments.front().source;
}

std::vector<Tuple> source_tuples(const Topology& t) {
  const SourceSpec& s = first_source(t);
  std::vector<Tuple> out;
  const TupleId n = source_tuple_count(s, t.settings.duration_s);
  for (TupleId i = 1; i <= n; ++i) out.push_back(source_tuple(s, t.settings.seed, i));
  return out;
}

using Judged = test::JudgedRun;

Judged run_sim(const Topology& t, std::vector<FaultSpec> faults) { return test::judged_sim_run(t, std::move(faults)); }

}  // namespace

TEST_CASE("ysb computes the Yahoo benchmark's answer: views per campaign per window, through the campaign table",
          "[scenarios][workloads]") {
  const Topology t = builtin("ysb");
  const Plan plan = make_plan(t);
  const Reference reference = compute_reference(plan);
  // By hand: the events (every field, not the two the source projects), views only, counted by
  // the campaign the generator itself assigned each ad, in 1 s tumbling windows stamped with
  // their end.
  const YsbSpec& spec = first_source(t).ysb;
  std::map<std::pair<TimeUs, std::int64_t>, double> counts;
  const TupleId n = source_tuple_count(first_source(t), t.settings.duration_s);
  REQUIRE(n > 1000);
  for (TupleId i = 1; i <= n; ++i) {
    const YsbEvent e = ysb_event(spec, t.settings.seed, i);
    if (e.event_type != kYsbViewEventType) continue;
    REQUIRE(ysb_campaign_of(e.ad, spec) == e.campaign);
    const TimeUs ts = source_tuple(first_source(t), t.settings.seed, i).ts_us;
    counts[{(ts / 1'000'000 + 1) * 1'000'000, e.campaign}] += 1;
  }
  std::multiset<Row> expected;
  for (const auto& [w, c] : counts) expected.insert({w.second, w.first, c});
  CHECK(rows(reference.run.deliveries) == expected);
  CHECK(expected.size() > 500);  // about 100 campaigns in each of 6 windows
}

TEST_CASE("nexmark:q5 computes the hot items: per sliding window, the auction with the most bids", "[scenarios][workloads]") {
  const Topology t = builtin("nexmark:q5");
  const Plan plan = make_plan(t);
  const Reference reference = compute_reference(plan);
  // Windows [k * 500 ms, k * 500 ms + 1 s) that hold a bid, stamped with their end.
  std::map<TimeUs, std::map<std::int64_t, double>> bids_per_auction;
  for (const Tuple& b : source_tuples(t))
    for (TimeUs start = (b.ts_us / 500'000) * 500'000; start > b.ts_us - 1'000'000; start -= 500'000)
      bids_per_auction[start + 1'000'000][b.key] += 1;
  std::multiset<Row> expected;
  for (const auto& [end, counts] : bids_per_auction) {
    std::int64_t best = 0;
    double most = -1;
    for (const auto& [auction, c] : counts)
      if (c > most) most = c, best = auction;  // ascending keys: ties keep the smallest
    expected.insert({best, end, most});
  }
  CHECK(rows(reference.run.deliveries) == expected);
  CHECK(expected.size() >= 10);
}

TEST_CASE("every approach runs on every workload network, judged: precise where it promises it", "[scenarios][workloads]") {
  // The fragment with state of each (the last operator fragment when none holds state).
  const std::vector<std::pair<std::string, std::string>> networks = {
      {"nexmark:q0", "copy"},      {"nexmark:q1", "convert"}, {"nexmark:q2", "select"}, {"nexmark:q5", "aggregate"},
      {"nexmark:q7", "aggregate"}, {"nexmark:q8", "join"},    {"ysb", "aggregate"}};
  for (const auto& [name, victim] : networks) {
    Topology t = builtin(name);
    t.settings.duration_s = 4.0;
    for (HaMode ha : ApproachCatalog::builtin().modes()) {
      INFO(name << ", ha " << to_string(ha));
      t.settings.ha = ha;
      const Judged free = run_sim(t, {});
      CHECK(free.outcome.semantics.verdict == "precise");
      CHECK(free.outcome.semantics.reference_tuples > 0);
      if (ha == HaMode::none) continue;
      INFO("crash of " << victim << " at 2 s");
      const Judged crashed = run_sim(t, {FaultSpec{FaultKind::crash, victim, "", 2.0, 0.0}});
      bool crashed_victim = false, took_over = false;
      for (const TraceEvent& e : crashed.outcome.result.events) {
        crashed_victim |= e.kind == TraceKind::failure;
        took_over |= e.kind == TraceKind::takeover;
      }
      CHECK(crashed_victim);
      CHECK(took_over);
      CHECK(crashed.check.status == RunStatus::result);
      CHECK_FALSE(crashed.check.beyond);
      if (ApproachCatalog::builtin().of(ha).promise.deterministic_network == RecoveryType::precise)
        CHECK(crashed.outcome.semantics.verdict == "precise");
      else
        CHECK(crashed.outcome.semantics.duplicates == 0);  // amnesia: a gap, never a duplicate
    }
  }
}
