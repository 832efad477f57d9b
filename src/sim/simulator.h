// The deterministic discrete-event simulator: every node of a plan in one process, in virtual
// time, over a simulated network with latency, bandwidth, loss, partitions, crashes and pauses.
//
// docs/ARCHITECTURE.md: the simulator hosts the SAME pure cores as the ZeroMQ runtime, created
// through make_node_core() and driven only through NodeCore::handle(now, event), and produces
// the same RunResult as the real launcher, so every experiment and checker runs on either.
// The paper's fail-stop crash (Hwang et al., section 2) is a crash fault here; docs/FAULTS.md
// adds pauses (SIGSTOP/SIGCONT), partitions and restarts.
//
// Machines: after a handle() call a node is busy for (cpu_us_per_message + cpu_us_per_tuple *
// the call's Effects::tuples_processed + the operator cost, driver/operator_cost.h) /
// node_capacity microseconds; the call's effects leave at the end of that time (applied by the
// driver kit, driver/effects.h) and events arriving meanwhile wait in the node's FIFO.
//
// Invariants: virtual time starts at 0 and never goes back; a core sees non-decreasing `now`;
// at most one Tick is pending per node (the wake rule of driver/effects.h: the earliest wish,
// cleared when its Tick comes up); the one source of randomness is an Rng
// derived from (seed, "sim.network"); only ordered containers are iterated, so the same plan,
// options and seed give identical RunResults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/core_factory.h"
#include "protocols/core.h"
#include "protocols/plan.h"
#include "protocols/run_result.h"
#include "sim/network.h"

namespace hapair {

// One message a core sent, as a send observer sees it (scenario tests use this to assert that
// the branch they target really ran). `dropped` says what the network did to it at send time;
// a message may still be lost later (a crash of its sender before it left, a partition).
struct SentMessage {
  TimeUs at_us = 0;
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  const Envelope* envelope = nullptr;
  std::size_t bytes = 0;
  sim::DropReason dropped = sim::DropReason::none;
  TimeUs arrival_us = 0;  // when it reaches the receiver (if it is not lost on the way)
};
using SendObserver = std::function<void(const SentMessage&)>;

// Drop every message of `kind` (a kMessageKindNames entry) sent from `from` to `to` (node
// names; empty: any node) while from_s <= send time < until_s.
struct KindDrop {
  std::string kind;
  std::string from;
  std::string to;
  double from_s = 0.0;
  double until_s = 0.0;
};

struct SimOptions {
  std::vector<FaultSpec> faults;
  // Replaces the topology's seed (for the sources as well as the network) when set.
  std::optional<std::uint64_t> seed;
  // Unset: duration_s + drain_timeout_s of the plan's settings.
  std::optional<double> max_virtual_time_s;
  // Receives the simulator's log lines; the first one names the seed. Unset: silent.
  std::function<void(const std::string& line)> log;
  // A progress line every this many seconds of virtual time; 0: none.
  double progress_interval_s = 0.0;
  // Time series sampling period (RunResult::samples), like the runtime's NodeStats period.
  std::int64_t sample_interval_ms = 100;
  // Events one node may have waiting while it is busy or paused. Core flow control keeps the
  // FIFO far below this; an overflow drops the event and is reported as an error.
  std::size_t node_fifo_events_max = 100'000;
  // Scripted-scenario hooks (sim/scenario.h).
  std::vector<KindDrop> kind_drops;
  SendObserver on_send;
};

class Simulator {
 public:
  // The faults must pass validate_faults (sim/faults.h) and the kind drops must name known
  // kinds and nodes: a violation is a bug of the caller and aborts with the list of problems.
  Simulator(std::shared_ptr<const Plan> plan, SimOptions options, CoreFactory factory);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Runs until every sink finished and nothing is in flight, the output went quiet after
  // duration_s (protocols/quiet_drain.h: the run cannot complete), the time limit, or a fatal
  // error.
  void run_until_quiet();
  // Handles every event at or before `t_us` (fewer when the run ends first); then now_us() is t_us.
  void run_until(TimeUs t_us);

  // Adds a fault while the run goes on (the teaching demo's buttons): it must start at or after
  // now_us() and pass validate_faults together with the faults given so far. Returns the
  // problems; empty when the fault was added.
  std::vector<std::string> add_fault(const FaultSpec& fault);
  // When the next event is due (kNever when none is queued): what a single step runs to.
  TimeUs next_event_us() const;

  // What the run recorded so far, read while it grows (the teaching demo shows it live); the
  // references stay valid until the simulator is destroyed or take_result() is called.
  const std::vector<TraceEvent>& events() const;
  const std::vector<Delivery>& deliveries() const;
  // Whether a node's process is crashed, or paused, now.
  bool crashed(NodeId node) const;
  bool paused(NodeId node) const;
  // Every trace event recorded from now on has at_us >= settled_us() (a node's effects, its
  // trace events among them, are recorded when its computation ends, with the time it began):
  // a live view shows the events before it in time order.
  TimeUs settled_us() const;

  bool ended() const;
  // Whether run_until_quiet() would end the run now, without running anything more: every sink
  // finished and nothing is in flight, the output went quiet, a fatal error, or the time limit.
  bool can_end() const;
  TimeUs now_us() const;
  std::uint64_t seed() const;
  const std::shared_ptr<const Plan>& plan() const;

  // The run so far, as a RunResult (events in time order).
  RunResult result() const;
  // Moves the result out; the simulator must not be used afterwards.
  RunResult take_result();
  // A node's counters now: its core's metrics merged with the simulator's own.
  Metrics node_metrics(const std::string& node_name) const;
  // The node's live core (nullptr while crashed), for tests that inspect their own cores.
  NodeCore* core(const std::string& node_name);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Validates the faults (problems become RunResult::errors, nothing runs), then runs to the end.
RunResult run_simulation(std::shared_ptr<const Plan> plan, const SimOptions& options, const CoreFactory& factory);
// The same with the production cores (make_node_core).
RunResult run_simulation(std::shared_ptr<const Plan> plan, const SimOptions& options);

// The command line that repeats a simulated run exactly, printed when a run fails: the seed, the
// topology file (none: the built-in default), the settings `hapair run` can override (--ha,
// --duration-s, --rate-tps, --operator-cost-us) and the faults.
std::string reproduce_command(const Plan& plan, std::uint64_t seed, const std::vector<FaultSpec>& faults = {});

}  // namespace hapair
