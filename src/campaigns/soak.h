// The soak: many repetitions of one configuration per approach, counting what must never
// happen (a takeover, a detection or a standby suspicion that no planned fault explains) and,
// with a planned SIGKILL, the distribution of the failure detection and recovery times.
//
// Paper: the failure model is a fail-stop crash detected by missed heartbeats (section 2); an
// approach's recovery-time figures only mean something when the detector fired for the planned
// crash and only for it. docs/FAULTS.md ("two detectors, two questions"): a crash is seen
// from the connection loss, a hang from heartbeats, and a busy node is never mistaken for a
// dead one; `hapair soak` is the measurement behind that claim (docs/DETECTION.md).
//
// Definitions, per run (from its trace events only; events after every sink finished, while
// the launcher stops the nodes, are not counted):
// - a false detection: a "detection" or "takeover" event before the planned failure instant,
//   or one naming (failed=NAME) a node that was not killed; a false standby suspicion: a
//   "standby_suspected" event before the planned failure instant, or naming a node that was not
//   killed;
// - detection_ms: the planned victim's standby's detection of the victim (the first detection
//   event with failed=<victim> at or after the failure instant) minus the failure instant,
//   and which detector fired (its detector=... field);
// - recovery_ms: RunMetrics' recovery time (docs/EXPERIMENTS.md, "How we measure").
//
// Invariant: pure in its inputs except for the runs it starts; rows are in run order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "run/run_once.h"

namespace hapair {

struct SoakOptions {
  std::string driver = "real";
  // Every approach precise on a deterministic network (upstream, passive, active).
  std::vector<HaMode> approaches = ApproachCatalog::builtin().precise_modes();
  std::size_t runs = 20;  // per approach and network
  // Empty: failure-free runs. Otherwise the node SIGKILLed in every run, at fail_at_s.
  std::string victim;
  double fail_at_s = 0;
  // Several hosts (launch/launcher.h HostsLaunch): every run's nodes placed on them over ssh;
  // with lose_victim_host, the victim's whole host is lost at fail_at_s instead of its SIGKILL
  // (its links dropped, then every node there killed: found only by silence).
  HostsLaunch hosts;
  bool lose_victim_host = false;
  std::string out_dir;  // soak.csv (one line per run); empty: no files
  std::string hapair_binary = "/proc/self/exe";
  // Called before each run (index from 0, total, label).
  std::function<void(std::size_t, std::size_t, const std::string&)> on_run;
};

// What one run's trace says about its detectors (see the definitions above).
struct DetectionFindings {
  std::vector<std::string> false_detections;  // "aggregate.backup at 1.47 s (failed=aggregate detector=heartbeat)"
  std::vector<std::string> false_suspicions;  // standby_suspected events, described the same way
  std::optional<double> detection_ms;         // of the planned victim
  std::string detector;                       // which one fired for it; empty: none
};
// `victim` empty: a failure-free run; `planned_us`: the planned failure instant, used when the
// run records no `failure` event of the victim (detection_ms is timed from that event).
DetectionFindings find_detections(const RunResult& result, const std::string& victim, TimeUs planned_us);

struct SoakRun {
  std::string network;
  std::string approach;
  std::size_t index = 0;
  std::uint64_t seed = 0;
  std::string verdict;
  bool completed = false;
  std::vector<std::string> errors;
  DetectionFindings findings;
  std::optional<double> recovery_ms;
};

struct SoakReport {
  std::string driver;
  std::string victim;
  double fail_at_s = 0;
  bool host_loss = false;  // the victim's host was lost (SoakOptions::lose_victim_host)
  std::vector<SoakRun> runs;
  double wall_s = 0;
};

// Runs every (network, approach) `runs` times, interleaved (run i of every approach before run
// i+1 of any), each with its own seed (the topology's seed + i).
SoakReport run_soak(const std::vector<Topology>& networks, const SoakOptions& options);

std::string soak_table(const SoakReport& report);
std::string soak_csv(const SoakReport& report);
std::string soak_csv_row(const SoakRun& run);  // one line of soak_csv

// 1 when the soak found something that must not happen: a false detection or suspicion, a
// precise approach that was not precise, a run that did not complete or reported errors; else 0.
int soak_status(const SoakReport& report);

}  // namespace hapair
