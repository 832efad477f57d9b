// PrimaryWatch (primary/primary_watch.h): the heartbeats and failure detector every standby role
// shares. Paper: partners detect fail-stop crashes by missed heartbeats (Hwang et al., section 2).
#include <catch2/catch.hpp>

#include "primary/primary_watch.h"

using namespace hapair;

namespace {

std::shared_ptr<const Plan> passive_plan() {
  Topology t = default_topology();
  t.settings.ha = HaMode::passive;
  t.settings.heartbeat_interval_ms = 10;
  t.settings.failure_timeout_ms = 30;
  return std::make_shared<Plan>(make_plan(t));
}

int heartbeats_to(const Effects& eff, NodeId to) {
  int n = 0;
  for (const Outgoing& o : eff.sends) n += o.to == to && std::holds_alternative<Heartbeat>(o.envelope.body);
  return n;
}

}  // namespace

TEST_CASE("primary watch sends the primary a heartbeat every heartbeat_interval_ms", "[roles]") {
  const auto plan = passive_plan();
  const NodeId standby = plan->node_id("aggregate.backup");
  const NodeId primary = plan->node_id("aggregate");
  Server server(plan, standby);
  PrimaryWatch watch(server);
  watch.start(0);
  Effects eff;
  watch.send_heartbeat(0, eff);
  watch.send_heartbeat(9'999, eff);
  CHECK(heartbeats_to(eff, primary) == 1);
  CHECK(watch.next_heartbeat_us() == 10'000);
  watch.send_heartbeat(10'000, eff);
  CHECK(heartbeats_to(eff, primary) == 2);
  CHECK(eff.sends.size() == 2);
}

TEST_CASE("primary watch suspects a primary not heard from for failure_timeout_ms, once", "[roles]") {
  const auto plan = passive_plan();
  Server server(plan, plan->node_id("aggregate.backup"));
  PrimaryWatch watch(server);
  watch.start(0);
  CHECK(watch.next_wakeup_us() == 0);  // the first heartbeat is due at once
  Effects eff;
  watch.send_heartbeat(0, eff);
  CHECK(watch.next_wakeup_us() == 10'000);
  watch.heard(20'000);
  CHECK_FALSE(watch.check(49'999, eff));
  CHECK(watch.check(50'000, eff));
  CHECK_FALSE(watch.check(60'000, eff));  // true once per suspicion
  CHECK(watch.last_heard_us() == 20'000);
  watch.heard(70'000);
  CHECK(watch.check(100'000, eff));
}

TEST_CASE("primary watch neither sends heartbeats nor suspects when the driver watches the partner", "[roles]") {
  const auto plan = passive_plan();
  Server server(plan, plan->node_id("aggregate.backup"));
  server.pair().set_driver_watches_partner(true);
  PrimaryWatch watch(server);
  watch.start(0);
  Effects eff;
  watch.send_heartbeat(1'000'000, eff);
  CHECK(eff.sends.empty());
  CHECK_FALSE(watch.check(10'000'000, eff));
  CHECK(watch.next_wakeup_us() == kNever);
  watch.heard(5'000);
  CHECK(watch.last_heard_us() == 5'000);
}

TEST_CASE("primary watch counts only messages from the current primary as heard", "[roles]") {
  const auto plan = passive_plan();
  Server server(plan, plan->node_id("aggregate.backup"));
  PrimaryWatch watch(server);
  watch.start(0);
  CHECK_FALSE(watch.heard_from(plan->node_id("filter"), 20'000));
  CHECK(watch.last_heard_us() == 0);
  CHECK(watch.heard_from(plan->node_id("aggregate"), 25'000));
  CHECK(watch.last_heard_us() == 25'000);
}
