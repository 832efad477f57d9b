// The reference run: the failure-free output of a plan, computed in-process from the operators
// themselves (no processes, no sockets, no HA), against which every run is checked.
//
// Paper/DESIGN.md section 5: "every run's sink output is compared with a failure-free reference
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
// Invariant: the result depends on the plan alone (same plan, same output, byte for byte), and
// every operator fragment has finished when the function returns.
#pragma once

#include <cstdint>
#include <string>
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
};

ReferenceRun reference_run(const Plan& plan);

// reference_run(plan).deliveries.
std::vector<Delivery> reference_output(const Plan& plan);

// The names of the plan's operators whose class is arbitrary, in plan order, as each operator
// declares its own class through make_operator(). Such a network has no single correct output
// order, so the checker compares it as a multiset.
std::vector<std::string> arbitrary_operators(const Plan& plan);

}  // namespace hapair
