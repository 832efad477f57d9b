// StandbyRole (primary/standby_role.h): what every approach's standby shares. Paper: the backup
// of a process pair detects its primary's fail-stop crash by missed heartbeats (section 2) and
// takes over (sections 4.1-4.3).
#include <catch2/catch.hpp>

#include "primary/server.h"
#include "primary/standby_role.h"
#include "roles/role_test_support.h"

using namespace hapair;
using namespace hapair::test;

namespace {

// A standby that only records what it was told, and hands over when asked to.
class RecordingStandby : public StandbyRole {
 public:
  explicit RecordingStandby(Server& server, bool hand_over) : StandbyRole(server), hand_over_(hand_over) {}
  void on_start(TimeUs now, Effects&) override { watch_.start(now); }
  void on_tick(TimeUs now, Effects& eff) override { found_on_tick = watch_primary(now, eff, detect); }
  void on_message(TimeUs, const Envelope&, Effects&) override {}
  TimeUs next_wakeup_us() const override { return watch_.next_wakeup_us(); }

  std::vector<Detector> failures;
  bool detect = true;
  bool found_on_tick = false;

 private:
  void primary_failed(TimeUs, Effects&, Detector detector) override {
    failures.push_back(detector);
    if (hand_over_) successor_ = std::make_unique<RecordingStandby>(server_, false);
  }
  bool hand_over_;
};

std::shared_ptr<const Plan> standby_passive_plan() {
  return default_plan(HaMode::passive, [](Settings& s) {
    s.heartbeat_interval_ms = 10;
    s.failure_timeout_ms = 30;
  });
}

}  // namespace

TEST_CASE("a standby hears of its primary's failure from its own detector, once", "[roles][standby_role]") {
  const auto plan = standby_passive_plan();
  Server server(plan, plan->node_id("aggregate.backup"));
  RecordingStandby standby(server, false);
  Effects eff;
  standby.on_start(0, eff);
  standby.on_tick(0, eff);
  CHECK(messages_to<Heartbeat>(eff, plan->node_id("aggregate")).size() == 1);
  standby.on_tick(29'999, eff);
  CHECK(standby.failures.empty());
  standby.on_tick(30'000, eff);
  CHECK(standby.found_on_tick);
  CHECK(standby.failures == std::vector<Detector>{Detector::heartbeat});
  standby.on_tick(60'000, eff);
  CHECK(standby.failures.size() == 1);
}

TEST_CASE("a standby that is taking over already does not check its primary", "[roles][standby_role]") {
  const auto plan = standby_passive_plan();
  Server server(plan, plan->node_id("aggregate.backup"));
  RecordingStandby standby(server, false);
  Effects eff;
  standby.on_start(0, eff);
  standby.detect = false;
  standby.on_tick(100'000, eff);
  CHECK(standby.failures.empty());
  CHECK_FALSE(messages_to<Heartbeat>(eff).empty());  // it still heartbeats
}

TEST_CASE("the driver's PeerLost counts only for the current primary, and only until the standby handed over",
          "[roles][standby_role]") {
  const auto plan = standby_passive_plan();
  Server server(plan, plan->node_id("aggregate.backup"));
  RecordingStandby standby(server, true);
  Effects eff;
  standby.on_start(0, eff);
  standby.on_peer_lost(1, PeerLost{plan->node_id("filter"), Detector::connection}, eff);
  CHECK(standby.failures.empty());
  standby.on_peer_lost(2, PeerLost{plan->node_id("aggregate"), Detector::connection}, eff);
  CHECK(standby.failures == std::vector<Detector>{Detector::connection});
  standby.on_peer_lost(3, PeerLost{plan->node_id("aggregate"), Detector::heartbeat}, eff);
  CHECK(standby.failures.size() == 1);  // handed over: nothing more to report
  CHECK(standby.take_successor() != nullptr);
  CHECK(standby.take_successor() == nullptr);  // once
}

TEST_CASE("a standby that is the primary itself does not report its own loss", "[roles][standby_role]") {
  const auto plan = standby_passive_plan();
  Server server(plan, plan->node_id("aggregate.backup"));
  RecordingStandby standby(server, false);
  server.pair().claim_own_fragment();
  Effects eff;
  standby.on_peer_lost(1, PeerLost{plan->node_id("aggregate"), Detector::connection}, eff);
  CHECK(standby.failures.empty());
}
