// A Server built directly, without a role or a driver: the composition of its input side,
// output side, pair side and workload (paper sections 2, 4: output queues are logs, duplicates are
// dropped by tuple id, upstream servers re-route and replay after a takeover).
#include <catch2/catch.hpp>

#include <limits>

#include "primary/server.h"
#include "roles/role_test_support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

struct Fixture {
  std::shared_ptr<const Plan> plan;
  NodeId source, filter, aggregate, spare;
  StreamId raw, small;

  explicit Fixture(HaMode ha) {
    Topology t = default_topology();
    t.settings.ha = ha;
    plan = std::make_shared<Plan>(make_plan(t));
    source = plan->node_id("source");
    filter = plan->node_id("filter");
    aggregate = plan->node_id("aggregate");
    spare = plan->node_id(ha == HaMode::passive || ha == HaMode::active ? "aggregate.backup" : "aggregate.spare");
    raw = plan->stream_id("raw");
    small = plan->stream_id("small");
  }
};

TupleBatch batch_of(StreamId s, TupleId prev, std::vector<double> values) {
  TupleBatch b;
  b.stream = s;
  b.prev_id = prev;
  for (double v : values) {
    ++prev;
    b.tuples.push_back(Tuple{prev, static_cast<TimeUs>(prev) * 500, 1, v, prev});
  }
  return b;
}

std::vector<TupleBatch> batches_to(const Effects& eff, NodeId to) { return messages_to<TupleBatch>(eff, to); }
std::vector<TupleId> ids(const std::vector<TupleBatch>& batches) { return ids_in(batches); }

}  // namespace

TEST_CASE("a primary server filters its input and sends the result to its consumer", "[roles][server]") {
  Fixture f(HaMode::amnesia);
  Server server(f.plan, f.filter);
  CHECK(server.role() == Role::primary);
  Effects eff;
  // The filter keeps values below 80.
  CHECK(server.inputs().accept_batch(0, f.source, batch_of(f.raw, 0, {10, 90, 20, 30}), eff) == 4);
  server.workload().run(1, eff);
  server.outputs().pump(1, eff);
  const auto sent = batches_to(eff, f.aggregate);
  CHECK(ids(sent) == std::vector<TupleId>{1, 3, 4});  // Filter keeps its input's ids
  CHECK(server.metrics().at("tuples_processed") == 4);
  CHECK(server.metrics().at("output_queue_tuples") == 3);
  // The level-0 ack goes to the producer once forced.
  server.inputs().send_level0_acks(2, eff, true);
  const auto acks = messages_to<Level0Ack>(eff, f.source);
  REQUIRE(acks.size() == 1);
  CHECK(acks[0].up_to == 4);
}

TEST_CASE("a server drops re-sent tuples by id and input from a node that is not the producer's primary", "[roles][server]") {
  Fixture f(HaMode::amnesia);
  Server server(f.plan, f.filter);
  Effects eff;
  server.inputs().accept_batch(0, f.source, batch_of(f.raw, 0, {1, 2}), eff);
  CHECK(server.inputs().accept_batch(1, f.source, batch_of(f.raw, 0, {1, 2, 3}), eff) == 1);
  CHECK(server.metrics().at("duplicates_dropped") == 2);
  CHECK(server.inputs().accept_batch(2, f.aggregate, batch_of(f.raw, 3, {4}), eff) == 0);
  CHECK(server.metrics().at("not_from_primary_dropped") == 1);
}

TEST_CASE("a level-0 ack trims the output queue of a consumer that needs no replay", "[roles][server]") {
  Fixture f(HaMode::active);  // active standby consumers: their level-0 ack implies level-1
  Server server(f.plan, f.filter);
  Effects eff;
  server.inputs().accept_batch(0, f.source, batch_of(f.raw, 0, {1, 2, 3, 4}), eff);
  server.workload().run(0, eff);
  server.outputs().pump(0, eff);
  CHECK(ids(batches_to(eff, f.spare)) == std::vector<TupleId>{1, 2, 3, 4});  // the active backup gets input too
  server.outputs().on_level0_ack(1, f.aggregate, Level0Ack{f.small, 3, false});
  CHECK(server.metrics().at("output_queue_tuples") == 4);  // the backup has not acked
  server.outputs().on_level0_ack(1, f.spare, Level0Ack{f.small, 2, false});
  CHECK(server.outputs().at(f.small).queue().trimmed_up_to() == 2);
  CHECK(server.metrics().at("tuples_trimmed") == 2);
}

TEST_CASE("after a downstream takeover the server replays its log to the new primary", "[roles][server]") {
  Fixture f(HaMode::upstream);
  Server server(f.plan, f.filter);
  Effects eff;
  server.inputs().accept_batch(0, f.source, batch_of(f.raw, 0, {1, 2, 3}), eff);
  server.workload().run(0, eff);
  server.outputs().pump(0, eff);
  const FragmentId agg = f.plan->fragment_id("aggregate");
  Effects takeover;
  CHECK_FALSE(server.on_takeover(10, Takeover{agg, f.spare, 1, {}}, takeover));
  CHECK(server.routes().route(agg).primary == f.spare);
  // An upstream of an upstream-backup fragment offers its restart points.
  CHECK(messages_to<RestartPoints>(takeover, f.spare).size() == 1);
  // Nothing goes to the new primary until it says where to resume.
  Effects pumped;
  server.outputs().pump(11, pumped);
  CHECK(batches_to(pumped, f.spare).empty());
  Effects replay;
  server.outputs().on_replay_request(12, f.spare, ReplayRequest{f.small, 1, 1, 0}, replay);
  server.outputs().pump(12, replay);
  const auto sent = batches_to(replay, f.spare);
  CHECK(ids(sent) == std::vector<TupleId>{2, 3});
  REQUIRE_FALSE(sent.empty());
  CHECK(sent[0].replay);
  // The route is echoed to the requester (proof that I follow its epoch).
  CHECK(messages_to<Takeover>(replay, f.spare).size() == 1);
  // The same Takeover again is a repeat, answered again.
  Effects again;
  server.on_takeover(13, Takeover{agg, f.spare, 1, {}}, again);
  CHECK(server.metrics().at("repeated_takeovers") == 1);
}

TEST_CASE("a message from an older epoch is dropped and its sender told the route", "[roles][server]") {
  Fixture f(HaMode::passive);
  Server server(f.plan, f.filter);
  const FragmentId agg = f.plan->fragment_id("aggregate");
  Effects eff;
  server.on_takeover(0, Takeover{agg, f.spare, 1, {}}, eff);
  Envelope old;
  old.header.sender = f.aggregate;
  old.header.epoch = 0;
  old.body = Level0Ack{f.small, 1, false};
  Effects answer;
  CHECK_FALSE(server.pair().is_current(1, old, answer));
  CHECK(server.metrics().at("stale_dropped") == 1);
  const auto notices = messages_to<Takeover>(answer, f.aggregate);
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].new_primary == f.spare);
  CHECK(notices[0].epoch == 1);
}

TEST_CASE("a standby server tracks its fragment's consumers and sends them nothing", "[roles][server]") {
  Fixture f(HaMode::passive);
  Server server(f.plan, f.spare);
  CHECK(server.role() == Role::passive_backup);
  for (const auto& [s, o] : server.outputs())
    for (const auto& c : o.consumers()) CHECK_FALSE(c.sends);
  // A standby takes over: it claims a new epoch and waits for its consumers.
  server.pair().claim_own_fragment();
  server.set_role(Role::primary);
  server.outputs().reset_consumers_awaiting_replay_request();
  CHECK(server.routes().epoch() == 1);
  CHECK(server.routes().route(server.node().fragment_id()).primary == f.spare);
  for (const auto& [s, o] : server.outputs()) CHECK_FALSE(o.all_ready());
}

TEST_CASE("held output goes out only as the release gate moves forward", "[roles][server]") {
  Fixture f(HaMode::amnesia);
  Server server(f.plan, f.filter);
  server.outputs().hold_all();
  Effects eff;
  server.inputs().accept_batch(0, f.source, batch_of(f.raw, 0, {1, 2, 3}), eff);
  server.workload().run(0, eff);
  server.outputs().pump(0, eff);
  CHECK(batches_to(eff, f.aggregate).empty());
  server.outputs().release(f.small, 2);
  Effects released;
  server.outputs().pump(1, released);
  CHECK(ids(batches_to(released, f.aggregate)) == std::vector<TupleId>{1, 2});
  CHECK(server.outputs().release_all_held() == 1);
  Effects rest;
  server.outputs().pump(2, rest);
  CHECK(ids(batches_to(rest, f.aggregate)) == std::vector<TupleId>{3});
}

TEST_CASE("counters saturate instead of overflowing, whatever ids a peer names (found by envelope_fuzz)", "[roles][server]") {
  const Fixture f(HaMode::upstream);
  Server s(f.plan, f.filter);
  const auto max = std::numeric_limits<std::int64_t>::max();
  s.count("replay_gap_tuples", max - 5);
  s.count("replay_gap_tuples", max - 5);
  CHECK(s.metrics().at("replay_gap_tuples") == max);
  s.count("replay_gap_tuples", 1);
  CHECK(s.metrics().at("replay_gap_tuples") == max);
  CHECK(Outbox::tuples_between(3, 3) == 0);
  CHECK(Outbox::tuples_between(9, 3) == 0);
  CHECK(Outbox::tuples_between(3, 9) == 6);
  CHECK(Outbox::tuples_between(0, std::numeric_limits<TupleId>::max()) == max);
}
