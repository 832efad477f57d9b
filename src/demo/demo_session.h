// One simulated run of the teaching demo, advanced by the page a slice of virtual time at a time
// (docs/DEMO.md): the same simulator and protocol cores as `hapair run --driver sim`, with every
// batch, ack and trim traced, faults injected while it runs, and after every slice what is new
// (trace events, deliveries with their status against the reference, tuples now known missing)
// and what the network holds right now (messages in flight, each node's role and queues).
//
// A second, failure-free simulation of the same plan and seed runs alongside: the time it
// delivers each reference tuple is when that tuple is due; a tuple the run has not delivered
// kMissingGraceUs after it was due is reported missing (all of them once the run ended).
//
// Pure and single-threaded (no clock, no I/O): the server (demo/demo_server.h) and the
// WebAssembly build drive the same code. Invariants: events come out in time order, each once;
// deliveries each once, with the status classify_output would give them; a reference tuple is
// reported missing at most once, and only when it was never delivered.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "judge/checker.h"
#include "report/run_json.h"
#include "protocols/run_result.h"
#include "sim/simulator.h"

namespace hapair {

struct DemoRunSpec {
  std::string network = "default";
  HaMode ha = *parse_ha_mode("passive");  // the approach the demo opens with
  std::uint64_t seed = 1;
  double duration_s = 8.0;
  std::vector<FaultSpec> faults;  // to replay (a rewind), in time order
  // Live switches of a fragment's approach (docs/ARCHITECTURE.md "Live switching"), to replay
  // (a rewind) like the faults; at_s of each is when it was made.
  std::vector<SwitchSpec> switches;
};

inline constexpr TimeUs kMissingGraceUs = 300'000;

class DemoSession {
 public:
  // nullptr with `error` set (an unknown network, an invalid fault schedule).
  static std::unique_ptr<DemoSession> create(const DemoRunSpec& spec, std::string& error);
  ~DemoSession();

  // The run's description: title, run facts, fragments, nodes, streams (docs/TIMELINE.md).
  OrderedJson meta() const;
  // Runs to `to_us` (not past the end) and answers what is new and the state now.
  OrderedJson advance(TimeUs to_us);
  // Runs to the next event.
  OrderedJson step();
  // Injects `fault` at the current time (its at_s is set here). Empty, or the problems.
  std::vector<std::string> inject(FaultSpec fault);
  // Switches fragment `fragment` to approach `to` live, at the next microsecond (its at_s is set
  // here). The plan's switch schedule is fixed when its nodes start, so the session runs a new
  // simulator whose plan has the switch, with the same faults, up to now: the simulator is
  // deterministic and the switch not yet due, so it is the same run so far (checked: the same
  // trace events and deliveries), and from now on it switches. Empty, or the problems (an
  // approach that cannot switch live, a fragment without standby: what [[switch]] refuses, with
  // the valid choices).
  std::vector<std::string> switch_approach(SwitchSpec change);
  // The approaches a fragment may be switched to live (switchable_mode_names).
  static std::string switchable_names();
  TimeUs now_us() const;
  const Plan& plan() const { return *plan_; }

 private:
  DemoSession() = default;
  struct InFlight;
  OrderedJson answer();
  OrderedJson state_json();
  // A simulator of `plan` with `faults`, its sends noted (note_sent); the plan of spec_ and the
  // faults the session replays, or one with a new switch.
  std::unique_ptr<Simulator> make_sim(std::shared_ptr<const Plan> plan, const std::vector<FaultSpec>& faults);
  void note_sent(const SentMessage& m);

  std::shared_ptr<const Plan> plan_;
  DemoRunSpec spec_;  // with every fault injected and switch made since (what a rebuild replays)
  std::unique_ptr<Simulator> sim_;
  std::unique_ptr<Simulator> twin_;
  std::vector<Delivery> reference_;
  std::unique_ptr<OutputClassifier> classifier_;
  std::vector<InFlight> in_flight_;
  std::vector<TraceEvent> pending_events_;  // recorded, not yet settled (Simulator::settled_us)
  std::size_t events_seen_ = 0;
  std::size_t deliveries_seen_ = 0;
  std::size_t twin_seen_ = 0;
  // Reference tuples due (the twin delivered them), with the copy number and when, not yet
  // known delivered or missing.
  struct Due {
    TimeUs due_us = 0;
    std::uint64_t copy = 0;
    Delivery tuple;
  };
  std::vector<Due> due_;
  std::map<EntryKey, std::uint64_t> twin_copies_;       // copies of each entry the twin delivered
  std::map<EntryKey, std::uint64_t> reported_missing_;  // copies of each entry reported missing
  bool final_missing_done_ = false;
  std::map<std::pair<NodeId, StreamId>, TupleId> last_sent_, trimmed_;
};

}  // namespace hapair
