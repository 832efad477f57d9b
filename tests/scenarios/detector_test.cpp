// The two failure detectors (docs/DETECTION.md) in the simulator, each run
// checked against its failure-free reference: with detector = connection+heartbeat a crash is
// found from the closed connection (one link latency after it, far inside the heartbeat
// timeout) and named so; a pause closes nothing and is found by heartbeats; with the paper's
// heartbeat detector a crash waits for the timeout. Every recovery stays precise.
#include <catch2/catch.hpp>

#include <string>

#include "judge/checker.h"
#include "judge/reference.h"
#include "sim/simulator.h"

using namespace hapair;

namespace {

Topology network(HaMode ha, DetectorKind detector) {
  Topology t = default_topology();
  t.settings.ha = ha;
  t.settings.detector = detector;
  t.settings.duration_s = 3.0;
  return t;
}

struct Outcome {
  RunResult result;
  SemanticsReport report;
  const TraceEvent* first(const std::string& event) const {
    for (const auto& e : result.events)
      if (to_string(e.kind) == event) return &e;
    return nullptr;
  }
};

Outcome run(const Topology& t, FaultSpec fault) {
  auto plan = std::make_shared<const Plan>(make_plan(t));
  SimOptions o;
  o.faults = {std::move(fault)};
  Outcome out;
  out.result = run_simulation(plan, o);
  out.report = check_semantics(reference_output(*plan), out.result.deliveries, arbitrary_operators(*plan));
  return out;
}

constexpr TimeUs kFailUs = 1'500'000;

}  // namespace

TEST_CASE("a crashed primary is detected from its closed connection, well inside the heartbeat timeout") {
  for (const HaMode ha : {HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO("ha " << to_string(ha));
    const Topology t = network(ha, DetectorKind::connection_heartbeat);
    const Outcome o = run(t, FaultSpec{FaultKind::crash, "aggregate", "", 1.5, 0});
    REQUIRE(o.result.completed);
    CHECK(o.report.verdict == "precise");
    const TraceEvent* detection = o.first("detection");
    REQUIRE(detection != nullptr);
    CHECK(detection->node_of(TraceKey::failed) == make_plan(t).node_id("aggregate"));
    CHECK(detection->enum_of<Detector>(TraceKey::detector) == Detector::connection);
    // One link latency (0.1 ms) plus the standby's turn, against a 30 ms heartbeat timeout.
    CHECK(detection->at_us - kFailUs < us_from_ms(static_cast<double>(t.settings.failure_timeout_ms)) / 2);
  }
}

TEST_CASE("with the paper's heartbeat detector a crash is detected only after the failure timeout") {
  const Topology t = network(HaMode::active, DetectorKind::heartbeat);
  const Outcome o = run(t, FaultSpec{FaultKind::crash, "aggregate", "", 1.5, 0});
  REQUIRE(o.result.completed);
  CHECK(o.report.verdict == "precise");
  const TraceEvent* detection = o.first("detection");
  REQUIRE(detection != nullptr);
  CHECK(detection->enum_of<Detector>(TraceKey::detector) == Detector::heartbeat);
  CHECK(detection->at_us - kFailUs >= us_from_ms(static_cast<double>(t.settings.failure_timeout_ms - t.settings.heartbeat_interval_ms)));
}

TEST_CASE("a paused primary closes no connection: heartbeats find it, and the recovery is precise") {
  const Topology t = network(HaMode::passive, DetectorKind::connection_heartbeat);
  const Outcome o = run(t, FaultSpec{FaultKind::pause, "aggregate", "", 1.5, 0.2});
  REQUIRE(o.result.completed);
  CHECK(o.report.verdict == "precise");
  const TraceEvent* detection = o.first("detection");
  REQUIRE(detection != nullptr);
  CHECK(detection->enum_of<Detector>(TraceKey::detector) == Detector::heartbeat);
  CHECK(o.first("fenced") != nullptr);
}

TEST_CASE("a crashed standby is reported to its primary by the connection detector") {
  const Topology t = network(HaMode::active, DetectorKind::connection_heartbeat);
  const Outcome o = run(t, FaultSpec{FaultKind::crash, "aggregate.backup", "", 1.5, 0});
  const TraceEvent* suspected = o.first("standby_suspected");
  REQUIRE(suspected != nullptr);
  CHECK(suspected->enum_of<Detector>(TraceKey::detector) == Detector::connection);
  CHECK(o.first("detection") == nullptr);
}
