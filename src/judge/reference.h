// The reference run: the failure-free output of a plan, computed in-process from the operators
// themselves (no processes, no sockets, no HA), against which every run is checked.
//
// Paper, and docs/EXPERIMENTS.md ("How we measure"): "every run's sink output is compared with a failure-free reference
// run of the same seed and input". Sources are pure functions of (seed, spec, i)
// (operators/source_generator.h), so the reference recomputes exactly the input a run saw.
//
// The canonical order, which is the order "the reference order" means for deterministic
// networks: every source's tuples 1..source_tuple_count(spec, duration_s) merged by
// (ts, source fragment index, id); each tuple pushed depth-first through the downstream
// fragments (each output handed to the consumers of its stream in plan order before the next
// output) to the sinks; then end-of-stream from every source in fragment order, propagated the
// same way, so every window closes. Each delivery carries at_us = the tuple's ts (virtual time;
// the checker never compares delivery times).
//
// With recorded merge orders (merge_order.h), each Union named in them emits in that order
// instead of in arrival order (Operator::replay_merge_order): the failure-free execution with
// the interleaving the run's primaries really chose (docs/FAULTS.md).
//
// Invariant: the result depends on the plan (and the merge orders) alone (same input, same
// output, byte for byte), and every operator fragment has finished when the function returns.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "protocols/messages.h"
#include "protocols/plan.h"

namespace hapair {

struct ReferenceRun {
  std::vector<Delivery> deliveries;  // in the canonical order
  std::uint64_t input_tuples = 0;    // source tuples pushed in, over all sources
  // By fragment id: the tuples each operator fragment processed (what a node is charged
  // operator_cost_us_per_tuple for); 0 for sources and sinks.
  std::vector<std::uint64_t> fragment_tuples;
  // Replayed merge-order runs that named inputs the reference does not have (a recorded order
  // that does not fit this input: a corrupt record, or ids a takeover renumbered).
  std::uint64_t unmatched_merge_runs = 0;
};

// A non-deterministic operator: its fragment and its index in the fragment (Determinants'
// op_index).
using MergeOrderKey = std::pair<FragmentId, std::uint16_t>;
// The interleaving to replay, per operator.
using MergeOrders = std::map<MergeOrderKey, std::vector<MergeRun>>;

ReferenceRun reference_run(const Plan& plan);
ReferenceRun reference_run(const Plan& plan, const MergeOrders& merge_orders);

// reference_run(plan).deliveries.
std::vector<Delivery> reference_output(const Plan& plan);

// The names of the plan's operators whose class is arbitrary, in plan order, as each operator
// declares its own class through make_operator(). Such a network has no single correct output
// order, so the checker compares it as a multiset.
std::vector<std::string> arbitrary_operators(const Plan& plan);

}  // namespace hapair
