// The interface between a pure protocol core and its driver (docs/ARCHITECTURE.md).
//
//     effects = core.handle(now, event)
//
// `now` is passed in; events are a start signal, a wake-up (the core asked for it through
// Effects::wake_at_us) and received messages; effects are messages to send, tuples delivered
// to the client application (sinks only), trace events and the next wake-up time. A core never
// touches a socket, a clock, a thread, a random device or stdout. The ZeroMQ runtime and the
// simulator both drive cores only through this interface, so no role code knows which one
// hosts it.
//
// Invariant: a driver calls handle() with non-decreasing `now`, and calls it with Tick at or
// after the wake_at_us it was given (earlier calls are harmless). Every driver applies effects
// through the driver kit (driver/effects.h), which states what each field means and the wake rule.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "protocols/ids.h"
#include "protocols/messages.h"

namespace hapair {

struct Start {
  // The node's process was restarted after a crash (its state is gone, and the fragment has
  // moved on without it): it rejoins as the standby of whoever is primary now.
  bool restarted = false;
  // The driver watches the node's pair partner itself (heartbeats outside the node's loop, and
  // the partner's connection) and reports a failure as PeerLost: the core then sends no
  // heartbeats of its own and its heartbeat detectors never fire. False: the core's own
  // heartbeats (the paper's detector, served by the node's loop) decide, and the driver may
  // still report a lost connection.
  bool driver_watches_partner = false;
};
struct Tick {};
struct Received {
  Envelope envelope;
};
// Which detector found a failure: a heartbeat timeout (a crash, a hang or a partition), or the
// loss of the partner's connection (only a crash: a dead process's kernel closes its sockets).
enum class Detector { heartbeat, connection };
inline const char* to_string(Detector d) { return d == Detector::connection ? "connection" : "heartbeat"; }

// The driver's detector reports that `peer` (the node's pair partner) failed. Sent at most once
// per loss; a peer that comes back (a restarted process) is heard from again through messages.
struct PeerLost {
  NodeId peer = kNoNode;
  Detector detector = Detector::connection;
};
using Event = std::variant<Start, Tick, Received, PeerLost>;

struct Outgoing {
  NodeId to = kNoNode;
  Envelope envelope;
};

struct Effects {
  std::vector<Outgoing> sends;
  std::vector<Delivery> deliveries;
  std::vector<TraceEvent> traces;
  // The merge order the node's Unions chose during this call, for the checker (the driver
  // records it with the run's result; never sent to peers).
  std::vector<MergeOrder> merge_orders;
  // The earliest time the core wants to be called again with Tick (kNever: no wish).
  TimeUs wake_at_us = kNever;
  // The node has done all its work (end of stream processed and acknowledged); the driver may
  // stop it when the run ends.
  bool finished = false;
  // A fatal, configured error (e.g. a full queue under policy "error"): the driver reports it
  // and stops the run with a non-zero status.
  std::string fatal_error;
  // How many tuples this call processed (handed to operators or delivered); drivers with a cost
  // model (the simulator) charge CPU time for them.
  std::uint64_t tuples_processed = 0;
  // How many of them an operator fragment processed (not a source emitting, not a sink
  // delivering): the tuples Settings::operator_cost_us_per_tuple is charged for.
  std::uint64_t operator_tuples = 0;

  void wake_at(TimeUs t) {
    if (t < wake_at_us) wake_at_us = t;
  }
};

// Counters and gauges a core exposes for metrics (ordered, so output files are deterministic).
using Metrics = std::map<std::string, std::int64_t>;

class NodeCore {
 public:
  virtual ~NodeCore() = default;
  virtual Effects handle(TimeUs now, const Event& event) = 0;
  virtual Metrics metrics() const = 0;
};

}  // namespace hapair
