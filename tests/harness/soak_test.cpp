// The soak's reading of a run's trace (campaigns/soak.h) on hand-made runs: detections no fault
// explains are false, the planned victim's detection gives detection_ms and its detector, and
// the launcher's stop after the run is not a failure.
#include <catch2/catch.hpp>

#include "campaigns/soak.h"
#include "support/trace_read.h"

using namespace hapair;

namespace {

RunResult soak_run_of(std::vector<TraceEvent> events, TimeUs end_us = 5'000'000) {
  RunResult r;
  r.plan = std::make_shared<const Plan>(make_plan([] {
    Topology t = default_topology();
    t.settings.ha = HaMode::active;
    return t;
  }()));
  r.events = std::move(events);
  r.completed = true;
  r.end_us = end_us;
  return r;
}

TraceEvent ev(const RunResult& r, TimeUs at_us, const std::string& node, const std::string& event, const std::string& details) {
  return trace_event(*r.plan, at_us, node, event, details);
}

}  // namespace

TEST_CASE("soak: a takeover in a failure-free run is a false detection, with its detector") {
  RunResult r = soak_run_of({});
  r.events = {ev(r, 1'470'000, "aggregate.backup", "detection", "failed=aggregate silent_us=34600 detector=heartbeat"),
              ev(r, 1'470'100, "aggregate.backup", "takeover", "ha=active exact_ids=true")};
  const DetectionFindings f = find_detections(r, "", 0);
  REQUIRE(f.false_detections.size() == 2);
  CHECK(f.false_detections[0].find("aggregate.backup detection at 1.470 s") != std::string::npos);
  CHECK(f.false_detections[0].find("detector=heartbeat") != std::string::npos);
  CHECK_FALSE(f.detection_ms.has_value());
}

TEST_CASE("soak: the victim's detection after the kill gives detection_ms, another node's is false") {
  RunResult r = soak_run_of({});
  r.events = {ev(r, 1'500'000, "aggregate", "failure", "fault=crash"),
              ev(r, 1'501'200, "aggregate.backup", "detection", "failed=aggregate silent_us=3000 detector=connection"),
              ev(r, 1'501'300, "aggregate.backup", "takeover", "ha=active exact_ids=true"),
              ev(r, 1'700'000, "filter.backup", "detection", "failed=filter silent_us=31000 detector=heartbeat"),
              ev(r, 1'800'000, "filter", "standby_suspected", "standby=filter.backup detector=heartbeat")};
  const DetectionFindings f = find_detections(r, "aggregate", 1'500'000);
  REQUIRE(f.detection_ms.has_value());
  CHECK(*f.detection_ms == Approx(1.2));
  CHECK(f.detector == "connection");
  REQUIRE(f.false_detections.size() == 1);
  CHECK(f.false_detections[0].find("failed=filter") != std::string::npos);
  REQUIRE(f.false_suspicions.size() == 1);
  CHECK(f.false_suspicions[0].find("filter standby_suspected") != std::string::npos);
}

TEST_CASE("soak: detection is timed from the launcher's SIGKILL, not from the planned instant") {
  RunResult r = soak_run_of({});
  // The launcher's loop reached the planned 1.5 s 400 us late.
  r.events = {ev(r, 1'500'400, "aggregate", "failure", "fault=crash"),
              ev(r, 1'501'000, "aggregate.backup", "detection", "failed=aggregate silent_us=3000 detector=connection")};
  const DetectionFindings f = find_detections(r, "aggregate", 1'500'000);
  REQUIRE(f.detection_ms.has_value());
  CHECK(*f.detection_ms == Approx(0.6));
  CHECK(f.false_detections.empty());
}

TEST_CASE("soak: detections while the launcher stops the nodes after the run are not failures") {
  RunResult r = soak_run_of({}, 3'000'000);
  r.events = {ev(r, 3'003'000, "filter.backup", "detection", "failed=filter silent_us=85000 detector=connection")};
  const DetectionFindings f = find_detections(r, "", 0);
  CHECK(f.false_detections.empty());
  SoakReport report;
  SoakRun run;
  run.approach = "active";
  run.verdict = "precise";
  run.completed = true;
  run.findings = f;
  report.runs.push_back(run);
  CHECK(soak_status(report) == 0);
  report.runs[0].findings.false_detections.push_back("x");
  CHECK(soak_status(report) == 1);
}
