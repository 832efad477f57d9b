// The one place that says what a core's Effects mean to the driver hosting it (protocols/core.h).
// The runtime (runtime/core_runner.h), the simulator (sim/simulator.h) and the role tests' small
// network (tests/roles/loop_network.h) all call EffectsApplier::apply after every handle(), each
// with its own EffectsDriver: the few things that differ between a socket, virtual time and a test.
//
// What the effects of one handle() call mean, applied in this order:
//   1. deliveries: the client application receives them (sinks only);
//   2. traces: recorded for the run, each stamped with the node when the core left it kNoNode;
//   3. merge orders: recorded for the checker (never sent to peers);
//   4. sends: each message goes to its peer, in the order the core listed them;
//   5. wake_at_us: the wake rule below;
//   6. finished: reported once per incarnation of the node;
//   7. fatal_error: reported as it comes (the driver stops the run).
// The cost of the call (tuples_processed, operator_tuples; driver/operator_cost.h) is charged by
// the driver before it applies the effects: the runtime works on the CPU, the simulator keeps the
// node busy and applies the effects when that time is over.
//
// The wake rule (one rule for every driver). A core states in the effects of every call the
// earliest time it wants a Tick (kNever: no wish). The driver keeps one outstanding wake-up per
// node: the earliest wish not yet served. A wish earlier than the outstanding one replaces it; a
// later or equal one is covered by it (the Tick comes early, which the core contract allows, and
// the core restates its wish in that Tick's effects). A wish in the past is due at once (at the
// `now` of the call that made it). The driver feeds Tick at or after the outstanding time, and
// serving it clears the outstanding wake-up.
#pragma once

#include <string>
#include <vector>

#include "protocols/core.h"

namespace hapair {

// The one outstanding wake-up of a node (the wake rule above).
class WakeTimer {
 public:
  // Records a wish made by a call at `now`. True when it became the outstanding wake-up (a driver
  // with an event queue schedules a Tick at at_us()); false when the outstanding one covers it.
  bool wish(TimeUs wake_at_us, TimeUs now);
  // The outstanding wake-up time; kNever when there is none.
  TimeUs at_us() const { return at_us_; }
  // A polling driver (the runtime): the wake-up time has come.
  bool due(TimeUs now) const { return at_us_ <= now; }
  // An event-queue driver (the simulator, the role tests): a Tick scheduled for `scheduled_us`
  // comes up. True when it is still the outstanding wake-up, which it clears (feed Tick now);
  // false when an earlier wish superseded it after it was scheduled (ignore it).
  bool take(TimeUs scheduled_us);
  // Forgets the outstanding wake-up (it is being served, or the node crashed).
  void clear() { at_us_ = kNever; }

 private:
  TimeUs at_us_ = kNever;
};

// What a driver does with the parts of the effects that leave the core.
class EffectsDriver {
 public:
  virtual void send(Outgoing&& outgoing) = 0;
  // Not empty; the driver may take the vector's contents (or swap it for its own buffer).
  virtual void deliver(std::vector<Delivery>& deliveries) = 0;
  virtual void record_trace(TraceEvent&& trace) = 0;
  virtual void record_merge_order(MergeOrder&& order) = 0;
  // A new outstanding wake-up at `at_us` (WakeTimer::wish returned true). A polling driver reads
  // WakeTimer::at_us() instead and does nothing here.
  virtual void schedule_wake(TimeUs at_us) = 0;
  // The node has done all its work (first time in this incarnation only).
  virtual void finished() = 0;
  virtual void fatal_error(std::string&& message) = 0;

 protected:
  ~EffectsDriver() = default;
};

// Applies a node's effects, keeping its wake-up and whether it finished.
class EffectsApplier {
 public:
  explicit EffectsApplier(NodeId self) : self_(self) {}

  // The effects of a handle() call, applied at `now` (the simulator: when the node's work ends).
  void apply(TimeUs now, Effects&& effects, EffectsDriver& driver);

  WakeTimer& wake() { return wake_; }
  const WakeTimer& wake() const { return wake_; }
  bool finished() const { return finished_; }
  // A new incarnation of the node (a restart after a crash): no wake-up, not finished.
  void reset() {
    wake_.clear();
    finished_ = false;
  }

 private:
  NodeId self_;
  WakeTimer wake_;
  bool finished_ = false;
};

}  // namespace hapair
