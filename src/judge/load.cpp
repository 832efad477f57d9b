#include "judge/load.h"

#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

namespace hapair {

PlannedLoad planned_load(const Plan& plan, const ReferenceRun& reference, unsigned cores) {
  PlannedLoad load;
  load.operator_cost_us = plan.settings().operator_cost_us_per_tuple;
  load.cores = cores == 0 ? 1 : cores;
  const double duration_s = plan.settings().duration_s;
  for (const PlanFragment& f : plan.fragments) {
    if (f.kind != FragmentKind::operators) continue;
    FragmentLoad fl;
    fl.fragment = f.name;
    const std::uint64_t tuples = f.id < reference.fragment_tuples.size() ? reference.fragment_tuples[f.id] : 0;
    fl.tuples_per_s = duration_s > 0 ? static_cast<double>(tuples) / duration_s : 0.0;
    fl.processes = static_cast<int>(plan.traits(f.id).processes_busy());
    fl.cores_busy = fl.tuples_per_s * load.operator_cost_us * 1e-6 * fl.processes;
    load.cores_busy += fl.cores_busy;
    load.fragments.push_back(fl);
  }
  load.utilisation_pct = 100.0 * load.cores_busy / load.cores;
  return load;
}

std::string describe_load(const PlannedLoad& load) {
  std::string out = "planned CPU load " + fmt::format("{:.0f}", load.utilisation_pct) + " % of " + std::to_string(load.cores) +
                    (load.cores == 1 ? " core" : " cores") + " (operators at " + fmt::format("{:g}", load.operator_cost_us) +
                    " us/tuple";
  for (std::size_t i = 0; i < load.fragments.size(); ++i) {
    const FragmentLoad& f = load.fragments[i];
    out += (i ? ", " : ": ") + f.fragment + " " + fmt::format("{:.0f}", f.tuples_per_s) + " tuples/s" +
           (f.processes > 1 ? " x " + std::to_string(f.processes) : "");
  }
  return out + ")";
}

std::string load_warning(const PlannedLoad& load) {
  if (!load.over_limit()) return "";
  return "warning: planned CPU load " + fmt::format("{:.0f}", load.utilisation_pct) + " % is above " +
         fmt::format("{:.0f}", kPlannedLoadWarnPct) +
         " %: heartbeats may be served late, a standby may take over from a live primary and latency measures "
         "queueing; lower rate_tps or operator_cost_us_per_tuple";
}

double measured_load_pct(double cpu_s, TimeUs span_us, unsigned cores) {
  if (span_us <= 0 || cores == 0) return 0.0;
  return 100.0 * cpu_s / (static_cast<double>(span_us) / 1e6) / cores;
}

unsigned machine_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

}  // namespace hapair
