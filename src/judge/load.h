// The planned CPU load of a run: how much of the machine its operators are asked to use, so that
// a run that overloads the machine (and then sees late heartbeats, false takeovers and latency
// that measures the queueing, not the approach) says so before anyone reads its numbers.
//
// Paper: Hwang et al. model processing as a cost per tuple per operator (section 6); hapair
// charges Settings::operator_cost_us_per_tuple for every tuple an operator fragment processes
// (README glossary). Issue 13 item 7.
//
// The estimate: for each operator fragment, the tuples it processes per second (counted by the
// reference run, so a Filter's selectivity and a Join's fan-out are measured, not guessed: the
// reference's count over duration_s) x the cost per tuple x the processes that do that work
// (2 under active standby, whose standby processes everything too; 1 otherwise), summed and
// divided by the machine's cores. It covers the operators' charged cost only; message handling,
// heartbeats, sources and sinks come on top, which is why the warning starts well below 100 %.
//
// Invariant: planned_load() is a pure function of its arguments.
#pragma once

#include <string>
#include <vector>

#include "judge/reference.h"
#include "protocols/plan.h"

namespace hapair {

// Above this planned utilisation a run warns: heartbeats may be served late and a standby may
// take over from a live primary.
inline constexpr double kPlannedLoadWarnPct = 70.0;

struct FragmentLoad {
  std::string fragment;
  double tuples_per_s = 0;
  int processes = 1;       // that process every tuple (2 under active standby)
  double cores_busy = 0;   // tuples_per_s x cost x processes
};

struct PlannedLoad {
  double operator_cost_us = 0;
  unsigned cores = 1;
  std::vector<FragmentLoad> fragments;  // operator fragments, in plan order
  double cores_busy = 0;
  double utilisation_pct = 0;  // cores_busy / cores, in percent
  bool over_limit() const { return utilisation_pct > kPlannedLoadWarnPct; }
};

PlannedLoad planned_load(const Plan& plan, const ReferenceRun& reference, unsigned cores);

// "planned CPU load 36 % of 2 cores (operators at 100 us/tuple: filter 2000 tuples/s x 2, ...)".
std::string describe_load(const PlannedLoad& load);
// A warning line when over the limit, with what to lower; "" otherwise.
std::string load_warning(const PlannedLoad& load);

// CPU seconds of all processes over the run's span and the cores, in percent; 0 without a span.
double measured_load_pct(double cpu_s, TimeUs span_us, unsigned cores);

// The cores this process may run on (the machine's, or its affinity mask's); at least 1.
unsigned machine_cores();

}  // namespace hapair
