// Disturbances of a run: what happened in it that its fault schedule did not ask for. A false
// detection on a loaded machine swaps a pair before the planned SIGKILL, which then hits a
// standby or a fenced node; the run's recovery figures then measure some other event, and its
// overhead includes a takeover nobody asked for. Such a run must never be shown as clean.
//
// Paper: Hwang et al. (section 6) measure recovery from one fail-stop crash of a primary; a run
// whose pair was already swapped does not measure that. docs/EXPERIMENTS.md, "How we measure" ("the numbers are
// honest") and issue 13 item 4.
//
// From the run's own trace (its RunResult: events, planned faults, plan), a disturbance is:
// - a takeover before the planned failure (in a failure-free run: any takeover);
// - a detection before the planned failure;
// - a false detection: after the failure, a detection of a node that no fault had touched by
//   then, by a node no fault had touched either (a paused node hears nothing while stopped);
// - a false takeover: after the failure, a takeover in a fragment no fault had touched by then;
// - a victim out of role: a crashed or paused node that was not in its planned role when its
//   fault came (a planned primary that was a standby or fenced, a planned standby that had taken
//   over) although no earlier fault had touched its fragment: its recovery figures are
//   meaningless.
// Nothing after the end of the output (every sink traced "end_of_output") counts: the launcher is
// stopping the processes, and their closing connections are the shutdown.
// "Detection" events are a standby's detection of its primary (details `failed=NAME ...`);
// "standby_suspected" events are a primary's detection of its standby (`standby=NAME ...`).
// Either may carry `detector=heartbeat|connection`; without the field the detector is the
// heartbeat one (the only one before it was named).
//
// Invariant: a pure function of the RunResult (time order of its events; ties keep their order).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "protocols/run_result.h"

namespace hapair {

// The detector a detection event names: its `detector` detail, "heartbeat" when absent.
std::string detector_of(const TraceEvent& e);

// Whether `e` is a failure event (a crash, pause or partition injected by a driver) of node_id.
bool failure_event_names(const TraceEvent& e, NodeId node_id);

// The instant a fault happened: the first "failure" trace event naming its node and kind (the
// launcher's or the simulator's record of the injection) at or after its configured at_s, else
// at_s. `from_event` (may be null) says which.
TimeUs fault_instant_us(const RunResult& result, const FaultSpec& fault, bool* from_event = nullptr);

// One detection in a run, with the detector that fired.
struct DetectionSeen {
  TimeUs at_us = 0;
  std::string by;        // the node that detected
  std::string failed;    // the node it declared failed
  std::string detector;  // "heartbeat" or "connection"
  bool of_standby = false;  // a primary's detection of its standby ("standby_suspected")
};

enum class DisturbanceKind {
  takeover_before_failure,
  detection_before_failure,
  false_detection,
  false_takeover,
  victim_out_of_role,
};
const char* to_string(DisturbanceKind);

struct Disturbance {
  DisturbanceKind kind = DisturbanceKind::takeover_before_failure;
  TimeUs at_us = 0;
  std::string node;    // who took over or detected; the victim for victim_out_of_role
  std::string detail;  // e.g. "detection of filter by filter.backup (heartbeat)"
};

struct DisturbanceReport {
  TimeUs first_failure_us = kNever;        // the earliest planned fault (kNever: failure-free)
  std::vector<DetectionSeen> detections;   // every detection, in time order
  std::vector<Disturbance> disturbances;   // in time order
  bool disturbed() const { return !disturbances.empty(); }
  std::size_t count(DisturbanceKind kind) const;
};

DisturbanceReport find_disturbances(const RunResult& result);

// One line: "2 takeovers before the failure (aggregate.backup at 1.47 s, aggregate at 1.66 s);
// 1 false detection (filter by filter.backup at 2.37 s, heartbeat)"; at most `examples_max`
// examples per kind. "" when undisturbed.
std::string describe_disturbances(const DisturbanceReport& report, std::size_t examples_max = 3);

}  // namespace hapair
