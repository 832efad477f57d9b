// The rejoining role when nobody can answer its Rejoin (src/primary/rejoin_role.h, "Orphaned"),
// with the driver watching the partner as the runtime does (Start::driver_watches_partner: the
// core's own heartbeat detector never fires, so a loss the driver reported once must not be
// forgotten on the way from the rejoining role to the standby role).
#include <catch2/catch.hpp>

#include <memory>

#include "node/node_factory.h"
#include "operators/source_generator.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {
namespace {

struct Restarted {
  std::shared_ptr<const Plan> plan;
  std::unique_ptr<NodeCore> core;
  NodeId self = kNoNode;
  NodeId partner = kNoNode;
  FragmentId fragment = kNoFragment;
};

// The aggregate's original primary, restarted at 1 s while aggregate.spare is primary (epoch 2).
Restarted restarted(HaMode ha) {
  Topology t = default_topology();
  t.settings.ha = ha;
  Restarted r;
  r.plan = std::make_shared<const Plan>(make_plan(t));
  r.self = r.plan->node_id("aggregate");
  r.partner = r.plan->node_id("aggregate.spare");
  r.fragment = r.plan->fragment_id("aggregate");
  r.core = make_node_core(r.plan, r.self);
  Start start;
  start.restarted = true;
  start.driver_watches_partner = true;
  const Effects eff = r.core->handle(1'000'000, start);
  REQUIRE(eff.sends.size() == 1);
  REQUIRE(std::holds_alternative<Rejoin>(eff.sends[0].envelope.body));
  return r;
}

// The Takeover this core announced, if any (its claim of the fragment).
const Takeover* claim(const Effects& eff, FragmentId fragment, NodeId self) {
  for (const Outgoing& o : eff.sends)
    if (const auto* t = std::get_if<Takeover>(&o.envelope.body))
      if (t->fragment == fragment && t->new_primary == self) return t;
  return nullptr;
}

TEST_CASE("an orphaned rejoining node asks its neighbours for its route, then takes over above the epoch they told it", "[roles][rejoin]") {
  for (HaMode ha : {HaMode::amnesia, HaMode::upstream}) {
    INFO("ha=" << to_string(ha));
    Restarted r = restarted(ha);
    const NodeId filter = r.plan->node_id("filter");
    const Effects lost = r.core->handle(1'001'000, PeerLost{r.partner, Detector::connection});
    // Asked every neighbour (a Heartbeat in its old epoch), claimed nothing yet.
    std::size_t asked = 0;
    for (const Outgoing& o : lost.sends) asked += std::holds_alternative<Heartbeat>(o.envelope.body);
    std::size_t neighbours = 0;
    for (const auto* list : {&r.plan->fragments[r.fragment].upstream, &r.plan->fragments[r.fragment].downstream})
      for (FragmentId f : *list) neighbours += 1 + r.plan->fragments[f].standbys.size();
    CHECK(asked == neighbours);
    CHECK(claim(lost, r.fragment, r.self) == nullptr);
    // A neighbour's fencing notice: the partner is primary in epoch 2, with an old standby.
    r.core->handle(1'001'500, Received{Envelope{Header{filter, 0, 1'001'500}, Takeover{r.fragment, r.partner, 2, {{r.self, 17}}}}});
    // One retransmit timeout later it takes over at once (the driver's loss is handed on; no
    // heartbeat timeout to wait for), in epoch 3.
    const TimeUs later = 1'001'000 + static_cast<TimeUs>(r.plan->settings().retransmit_timeout_ms * 1000);
    const Effects tick = r.core->handle(later, Tick{});
    const Takeover* t = claim(tick, r.fragment, r.self);
    REQUIRE(t != nullptr);
    CHECK(t->epoch == 3);
    CHECK(r.core->metrics().at("rejoins_orphaned") == 1);
  }
}

TEST_CASE("a rejoining node named standby by a neighbour's route after its partner was lost takes over at once", "[roles][rejoin]") {
  // Its partner accepted the Rejoin (epoch 2, this incarnation) and was killed before the answer
  // came: a neighbour's route says so.
  Restarted r = restarted(HaMode::amnesia);
  const NodeId filter = r.plan->node_id("filter");
  r.core->handle(1'001'000, PeerLost{r.partner, Detector::connection});
  const Effects named = r.core->handle(
      1'001'500, Received{Envelope{Header{filter, 0, 1'001'500}, Takeover{r.fragment, r.partner, 2, {{r.self, 1'000'001}}}}});
  const Takeover* t = claim(named, r.fragment, r.self);
  REQUIRE(t != nullptr);
  CHECK(t->epoch == 3);
}

TEST_CASE("two rejoining nodes of a pair: the plan's primary takes over and the other keeps asking, state-holding standbys wait", "[roles][rejoin]") {
  {
    Restarted r = restarted(HaMode::upstream);
    r.core->handle(1'002'000, Received{Envelope{Header{r.partner, 0, 1'002'000}, Rejoin{r.fragment, r.partner, 1'001'000}}});
    // The neighbours still follow the partner, from before it crashed and restarted.
    r.core->handle(1'002'500, Received{Envelope{Header{r.plan->node_id("sink"), 0, 1'002'500}, Takeover{r.fragment, r.partner, 4, {}}}});
    const TimeUs later = 1'002'000 + static_cast<TimeUs>(r.plan->settings().retransmit_timeout_ms * 1000);
    const Effects tick = r.core->handle(later, Tick{});
    const Takeover* t = claim(tick, r.fragment, r.self);
    REQUIRE(t != nullptr);
    CHECK(t->epoch == 5);
  }
  {
    // The spare is not the plan's primary of the pair: it waits for the primary's answer.
    Topology t = default_topology();
    t.settings.ha = HaMode::upstream;
    auto plan = std::make_shared<const Plan>(make_plan(t));
    const NodeId spare = plan->node_id("aggregate.spare");
    const NodeId primary = plan->node_id("aggregate");
    auto core = make_node_core(plan, spare);
    core->handle(1'000'000, Start{true, true});
    core->handle(1'002'000, Received{Envelope{Header{primary, 0, 1'002'000}, Rejoin{plan->fragment_id("aggregate"), primary, 9}}});
    const Effects tick = core->handle(3'000'000, Tick{});
    CHECK(claim(tick, plan->fragment_id("aggregate"), spare) == nullptr);
    CHECK(core->metrics().count("rejoins_orphaned") == 0);
  }
  {
    // Passive standby: both copies of the state are gone, so nobody takes over (counted).
    Restarted r = restarted(HaMode::passive);
    r.partner = r.plan->node_id("aggregate.backup");
    r.core->handle(1'001'000, PeerLost{r.partner, Detector::connection});
    const Effects tick = r.core->handle(3'000'000, Tick{});
    CHECK(claim(tick, r.fragment, r.self) == nullptr);
    CHECK(r.core->metrics().at("partner_lost_while_rejoining") == 1);
  }
}

}  // namespace
}  // namespace hapair

namespace hapair {
namespace {

TEST_CASE("a restarted source starts afresh: its recomputed output queue is reset, anything it sends is the seed's",
          "[roles][rejoin][fuzz]") {
  // Found by envelope_fuzz: a source started as restarted resets its output queue through the
  // rejoining role (Server::become_standby), and a recomputed queue refused the reset.
  const Topology t = default_topology();
  auto plan = std::make_shared<const Plan>(make_plan(t));
  const NodeId source = plan->node_id("source");
  auto core = make_node_core(plan, source);
  Start start;
  start.restarted = true;
  core->handle(1'000'000, start);
  CHECK(core->metrics().at("output_queue_tuples") == 0);
  std::size_t checked = 0;
  for (TimeUs now = 1'000'000; now <= 4'000'000; now += 5'000) {
    const Effects eff = core->handle(now, Tick{});
    for (const Outgoing& o : eff.sends)
      if (const auto* b = std::get_if<TupleBatch>(&o.envelope.body))
        for (const Tuple& tuple : b->tuples) {
          REQUIRE(tuple == source_tuple(plan->spec(plan->nodes[source].fragment).source, t.settings.seed, tuple.id));
          ++checked;
        }
  }
  // Nobody answers a source's Rejoin here, so it stays rejoining and sends no tuples.
  CHECK(checked == 0);
  CHECK(core->metrics().at("output_queue_tuples") == 0);
}

}  // namespace
}  // namespace hapair
