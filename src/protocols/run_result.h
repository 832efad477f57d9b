// A record of one run (plain values, shared by both drivers and the harness).
// What one run produced, whichever driver ran it (real processes or the simulator): the sink
// deliveries, the event timeline, counters per node and sampled time series. The checker,
// metrics and result writers consume only this.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocols/core.h"
#include "protocols/messages.h"
#include "protocols/plan.h"

namespace hapair {

enum class FaultKind { crash, pause, partition, restart };

// One injected fault. crash: SIGKILL `node` at `at_s`. pause: SIGSTOP it for `duration_s`, then
// SIGCONT. partition: cut the link between `node` and `peer` for `duration_s`. restart: start a
// crashed node again at `at_s`.
struct FaultSpec {
  FaultKind kind = FaultKind::crash;
  std::string node;
  std::string peer;
  double at_s = 0.0;
  double duration_s = 0.0;
};

const char* to_string(FaultKind);

struct MetricSample {
  TimeUs at_us = 0;
  std::string node;
  std::string name;
  std::int64_t value = 0;
};

// Counter names every driver fills per node (cumulative):
//   bytes_sent.<kind>, messages_sent.<kind>  (kinds: kMessageKindNames; data plane only)
//   cpu_us            CPU time of the node (real: process CPU time; sim: cost model)
//   decode_dropped    malformed messages counted and dropped
// plus whatever the node's core reports in NodeCore::metrics().
struct RunResult {
  std::shared_ptr<const Plan> plan;
  std::string driver;  // "real" or "sim"
  std::vector<FaultSpec> faults;
  std::vector<Delivery> deliveries;  // in delivery order
  std::vector<TraceEvent> events;    // in time order (failure injections included)
  // What every Union chose, as its nodes reported it (per node in emission order): the checker
  // recomputes the reference of order-sensitive streams after a Union from it.
  std::vector<MergeOrder> merge_orders;
  std::map<std::string, Metrics> counters;  // node name -> last cumulative counters
  std::vector<MetricSample> samples;        // time series, e.g. output_queue_tuples
  TimeUs end_us = 0;                        // when the run ended
  bool completed = false;                   // the sink saw end of stream on every input
  bool interrupted = false;                 // real runs: SIGINT or SIGTERM stopped it
  std::vector<std::string> errors;          // fatal errors, unexpected crashes, timeouts
  // Set when the run ended before every sink finished because its output stopped (it went quiet
  // after the sources stopped, or the time limit came first); the same line is also in `errors`.
  // A stop is the expected end of a run beyond its approach's guarantee (a crash of a fragment
  // without standby); every other error is a failure of a node, of a driver or of the harness.
  std::string stall;
  // Real runs on several hosts: how far a difference of two times taken on different hosts may
  // be off after the clock correction (the clock probes' remaining bounds of the two worst hosts,
  // hosts/clock_probes.h); nullopt on one host, in the simulator, or when a host had no estimate.
  std::optional<TimeUs> clock_error_bound_us;
};

}  // namespace hapair
