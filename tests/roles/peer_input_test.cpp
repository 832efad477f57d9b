// Regression tests for peer input the fuzz targets (fuzz/) found mishandled: a role core must
// count and drop a well-formed message with absurd fields, never index a table with them or
// assert (STYLE.md rule 3).
#include <catch2/catch.hpp>

#include <memory>

#include "node/node_factory.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {
namespace {

TEST_CASE("a primary without a standby drops a Rejoin that claims to come from no node", "[roles][fuzz]") {
  // fuzz/envelope_fuzz: under ha none the fragment has no partner (its standby is kNoNode), and a
  // Rejoin from sender kNoNode naming node kNoNode passed for one from the partner; the primary
  // then looked up node 0xffff's name and threw std::length_error. (Now every envelope from no
  // node of the plan is dropped before any role sees it.)
  Topology t = default_topology();
  t.settings.ha = HaMode::none;
  const auto plan = std::make_shared<const Plan>(make_plan(t));
  const NodeId filter = plan->node_id("filter");
  const FragmentId fragment = plan->fragment_id("filter");
  REQUIRE_FALSE(plan->fragments[fragment].has_standby());
  auto core = make_node_core(plan, filter);
  core->handle(0, Start{});
  for (std::uint64_t incarnation : {0u, 7u}) {
    const Effects eff =
        core->handle(1000, Received{Envelope{Header{kNoNode, 0, 1000}, Rejoin{fragment, kNoNode, incarnation}}});
    for (const Outgoing& out : eff.sends) CHECK(out.to != kNoNode);
  }
  CHECK(core->metrics().at("unknown_sender_dropped") == 2);
}


TEST_CASE("a spare collecting restart points drops a takeover of a fragment outside the plan (found by envelope_fuzz)", "[roles][fuzz]") {
  // fuzz/envelope_fuzz: while an upstream-backup spare collected its producers' restart points,
  // a Takeover naming fragment 34872 (of 4) was counted as malformed by the route table, and then
  // the spare read that fragment's route anyway, which fired RouteTable's range check.
  Topology t = default_topology();
  t.settings.ha = HaMode::upstream;
  const auto plan = std::make_shared<const Plan>(make_plan(t));
  const FragmentId fragment = plan->fragment_id("filter");
  REQUIRE(plan->fragments[fragment].has_standby());
  const NodeId spare = plan->fragments[fragment].standbys.front();
  auto core = make_node_core(plan, spare);
  core->handle(0, Start{});
  // The primary's connection closes: the spare takes over and asks its producer for restart points.
  core->handle(1000, PeerLost{plan->fragments[fragment].primary, Detector::connection});
  const NodeId source = plan->node_id("source");
  const Effects eff = core->handle(2000, Received{Envelope{Header{source, 1, 2000}, Takeover{34872, source, 2, {}}}});
  for (const Outgoing& out : eff.sends) CHECK(out.to != kNoNode);
  CHECK(core->metrics().at("bad_takeover_dropped") == 1);
}

// A running passive-standby network's filter primary, its plan, and what it has sent so far.
struct RunningFilter {
  std::shared_ptr<const Plan> plan;
  std::unique_ptr<NodeCore> core;
  NodeId self = kNoNode;
  StreamId small = kNoStream;
};

RunningFilter running_filter() {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  RunningFilter f;
  f.plan = std::make_shared<const Plan>(make_plan(t));
  f.self = f.plan->node_id("filter");
  f.small = f.plan->stream_id("small");
  f.core = make_node_core(f.plan, f.self);
  f.core->handle(0, Start{});
  // Some input, so the filter has output queued for whoever is (wrongly) made its consumer.
  TupleBatch b;
  b.stream = f.plan->stream_id("raw");
  for (TupleId id = 1; id <= 50; ++id) b.tuples.push_back(Tuple{id, 1000, 1, 1.0});
  f.core->handle(1000, Received{Envelope{Header{f.plan->node_id("source"), 0, 1000}, b}});
  return f;
}

TEST_CASE("an envelope in the receiver's own name is dropped, never answered to itself (found by envelope_fuzz)", "[roles][fuzz]") {
  // fuzz/envelope_fuzz (CI, seed 1): a ReplayRequest whose header named the receiving primary as
  // its sender made it its own consumer (it is a node of its own fragment's input list), and the
  // next pump sent a batch to itself: Outbox's invariant fired.
  RunningFilter f = running_filter();
  for (const Message& body : {Message{ReplayRequest{f.small, 0, 0, 0}}, Message{Heartbeat{}},
                              Message{Redirect{f.small, f.self, true, 0}}}) {
    const Effects eff = f.core->handle(2000, Received{Envelope{Header{f.self, 0, 2000}, body}});
    for (const Outgoing& out : eff.sends) CHECK(out.to != f.self);
    const Effects later = f.core->handle(3000, Tick{});
    for (const Outgoing& out : later.sends) CHECK(out.to != f.self);
  }
  CHECK(f.core->metrics().at("unknown_sender_dropped") == 3);
}

TEST_CASE("a replay request or redirect for a stream the requester's fragment does not read is dropped (found by envelope_fuzz)", "[roles][fuzz]") {
  // The source node is the primary of its fragment and a node of its own input list; asking the
  // filter for the filter's output made it a consumer of a stream it does not read.
  RunningFilter f = running_filter();
  const NodeId source = f.plan->node_id("source");
  const NodeId sink = f.plan->node_id("sink");
  const Effects a = f.core->handle(2000, Received{Envelope{Header{source, 0, 2000}, ReplayRequest{f.small, 0, 0, 0}}});
  const Effects b = f.core->handle(2100, Received{Envelope{Header{source, 0, 2100}, Redirect{f.small, source, true, 0}}});
  const Effects c = f.core->handle(2200, Received{Envelope{Header{sink, 0, 2200}, Redirect{f.small, sink, true, 0}}});
  const Effects later = f.core->handle(3000, Tick{});
  for (const Effects* eff : {&a, &b, &c, &later})
    for (const Outgoing& out : eff->sends) {
      const bool batch_to_wrong_node = std::holds_alternative<TupleBatch>(out.envelope.body) && (out.to == source || out.to == sink);
      CHECK_FALSE(batch_to_wrong_node);
    }
  CHECK(f.core->metrics().at("unexpected_replay_request_dropped") == 1);
  CHECK(f.core->metrics().at("unexpected_redirect_dropped") == 2);
}

TEST_CASE("a passive standby installs its primary's checkpoint, and drops one whose chunks and payload disagree on being a delta", "[roles][fuzz]") {
  // The standby checks a full checkpoint's tuples without unpacking them and unpacks a delta's
  // (primary/checkpoint_state.h): which of the two a checkpoint is must not be taken from one
  // part while the other says otherwise.
  RunningFilter f = running_filter();
  const NodeId standby = f.plan->fragments[f.plan->fragment_id("filter")].standbys.at(0);
  REQUIRE(standby != kNoNode);
  // The pair runs on its own (heartbeats both ways) until the primary's first checkpoint.
  auto paired = make_node_core(f.plan, standby);
  paired->handle(0, Start{});
  std::vector<Checkpoint> chunks;
  for (TimeUs now = 10'000; now <= 300'000 && chunks.empty(); now += 10'000) {
    std::vector<Outgoing> to_standby;
    for (Outgoing& out : f.core->handle(now, Tick{}).sends)
      if (out.to == standby) to_standby.push_back(std::move(out));
    for (const Outgoing& out : paired->handle(now, Tick{}).sends)
      if (out.to == f.self) f.core->handle(now, Received{out.envelope});
    for (const Outgoing& out : to_standby) {
      if (const auto* c = std::get_if<Checkpoint>(&out.envelope.body)) chunks.push_back(*c);
      else paired->handle(now, Received{out.envelope});
    }
  }
  REQUIRE_FALSE(chunks.empty());
  REQUIRE_FALSE(chunks.front().delta);  // the networks' default: full checkpoints

  const auto feed = [&](bool flip_delta) {
    auto core = make_node_core(f.plan, standby);
    core->handle(0, Start{});
    std::size_t acks = 0;
    for (Checkpoint c : chunks) {
      c.delta = c.delta != flip_delta;
      for (const Outgoing& out : core->handle(400'000, Received{Envelope{Header{f.self, 0, 400'000}, c}}).sends)
        acks += std::holds_alternative<CheckpointAck>(out.envelope.body) ? 1 : 0;
    }
    return std::make_pair(acks, core->metrics());
  };
  const auto [acks, metrics] = feed(false);
  CHECK(acks == 1);
  CHECK(metrics.at("checkpoints_installed") == 1);
  const auto [flipped_acks, flipped_metrics] = feed(true);
  CHECK(flipped_acks == 0);
  CHECK(flipped_metrics.at("corrupt_checkpoint_dropped") == 1);
  CHECK(flipped_metrics.count("checkpoints_installed") == 0);
}

}  // namespace
}  // namespace hapair
