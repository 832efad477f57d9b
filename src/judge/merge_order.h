// The merge order a run's Unions really chose, composed from what their nodes reported, and the
// sink streams whose content depends on it.
//
// docs/FAULTS.md: "precise" for a network with a Union means equal to a failure-free
// execution with the interleaving the primary actually chose; the checker recomputes the
// reference from the recorded choices rather than from one fixed order. An order-sensitive
// operator after a Union (a windowed Aggregate or Join closes windows by the largest timestamp
// seen, so a late tuple misses its window) makes the *content* of its output depend on that
// interleaving, in a failure-free run too; Filter and Map after a Union only reorder.
//
// Every node running a fragment with a Union reports what its Union emitted (MergeOrder records
// in RunResult::merge_orders, tagged with the node's epoch, whether it acted as primary, and
// whether it followed determinants). The interleaving that produced the output is composed epoch
// by epoch:
//   - within an epoch, the acting primary's records are authoritative; a following active
//     standby's records (the primary's own choices, applied from its determinants) fill in what
//     the primary's reports lack, e.g. what a SIGKILL took with it;
//   - each later epoch's choices replace, input by input, what earlier epochs chose for the same
//     inputs (passive standby re-chooses after its checkpoint, upstream backup after its restart
//     point, active standby after the last determinant it applied) and are appended after the
//     rest; inputs nobody recorded (an amnesia gap) stay where their port puts them.
// The order is unknown, and the streams depending on it are "not judged", when no record exists,
// when output ids are missing from the records (lost with a crashed node, and not covered by a
// follower), when two nodes acted as primary in one epoch, or when two interleavings reached the
// output so that no single failure-free execution explains it: an active standby without
// determinants chose its own interleaving and then took over, or a successor whose predecessor
// did not hold its output (upstream backup, amnesia) merged inputs the predecessor had merged
// already in another order (upstream backup's replay re-merges everything after the restart
// point, while the windows the old primary emitted from them were delivered).
//
// Invariant: the composed order names every recorded input at most once, and is a pure function
// of the plan and the records (same records, same order).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "judge/reference.h"
#include "protocols/messages.h"
#include "protocols/plan.h"

namespace hapair {

// A non-deterministic operator of the plan and the sink streams whose content depends on its
// interleaving (ascending stream ids; empty when only Filter/Map/Union follow it).
struct OrderDependence {
  MergeOrderKey key;
  std::string name;  // the operator's name
  std::vector<StreamId> streams;
};

// Every arbitrary operator of the plan, in plan order.
std::vector<OrderDependence> order_dependences(const Plan& plan);

// The sink streams whose content depends on an interleaving no node records, with the reason: an
// operator with several inputs (a Join) that reads a stream whose timestamps go back (after a
// Union in arrival order) processes its inputs in an order that depends on how they arrived.
// They are never judged (run/run_once.h judge_against says why); a Union in timestamp order
// removes the cause.
std::map<StreamId, std::string> unrecorded_interleavings(const Plan& plan);

// The sink streams that need a recorded merge order to be judged, and those no recorded order
// can judge (unrecorded_interleavings), ascending.
std::vector<StreamId> order_dependent_streams(const Plan& plan);

struct ComposedMergeOrder {
  bool known = false;
  std::vector<MergeRun> runs;  // when known: the interleaving, for reference_run()
  std::string unknown_reason;  // when not known
  std::uint64_t records = 0;   // records (MergeOrder) that named this operator
  // Output ids on which a following standby's record disagreed with the acting primary's (the
  // primary's wins; a standby that diverged shows in the verdict if it mattered).
  std::uint64_t follower_conflicts = 0;
};

// Composes the records of every non-deterministic operator of the plan (each key of
// order_dependences(plan) gets an entry). Records naming a node or operator the plan does not
// have are ignored.
std::map<MergeOrderKey, ComposedMergeOrder> compose_merge_orders(const Plan& plan,
                                                                 const std::vector<MergeOrder>& records);

}  // namespace hapair
