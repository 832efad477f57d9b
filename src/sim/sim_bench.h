// `hapair bench --sim`: how fast the simulator itself runs a large network.
//
// Paper: not a paper concept. Many-seed swarm tests and simulated experiments are only useful
// if the simulator is fast, so this measures it on a long chain: a source, nodes-2 Filter
// fragments that keep every tuple, and a sink (HA mode none by default), with the production
// cores and the default simulated network. It reports virtual time against wall-clock time.
//
// Invariant: the benchmark's run is an ordinary simulated run (same seed, same result); only
// the wall-clock reading around it is not deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocols/topology.h"

namespace hapair {

struct SimBenchOptions {
  std::int64_t nodes = 100;          // source + (nodes - 2) filters + sink; at least 3
  std::int64_t tuples = 1'000'000;   // source tuples
  double rate_tps = 100'000.0;       // source rate; the run's duration is tuples / rate
  HaMode ha = kNoHa;
  std::uint64_t seed = 1;
};

struct SimBenchReport {
  std::int64_t nodes = 0;
  std::int64_t tuples = 0;            // emitted by the source
  std::int64_t tuples_delivered = 0;  // at the sink
  std::int64_t messages = 0;          // data-plane messages sent by all nodes
  double simulated_s = 0.0;           // virtual time of the run
  double wall_s = 0.0;
  double simulated_per_wall = 0.0;    // > 1: faster than real time
  double tuple_hops_per_wall_s = 0.0; // tuples processed by all nodes per wall second
  bool completed = false;
  // Digests of what the run produced, so two builds can be compared byte for byte without
  // writing a million deliveries: every delivery (time, stream, tuple, sender, replay flag) in
  // order, every node's counters, and every trace event's time, node and kind, each folded with
  // mix64. Deterministic for a seed, like the run.
  std::uint64_t deliveries_digest = 0;
  std::uint64_t counters_digest = 0;
  std::uint64_t events_digest = 0;
  std::int64_t events = 0;
  std::vector<std::string> errors;
};

// The chain topology the benchmark runs (exposed for tests and for writing it to a file).
Topology sim_bench_topology(const SimBenchOptions& options);
SimBenchReport run_sim_scale_bench(const SimBenchOptions& options);
// The report as the lines `hapair bench --sim` prints.
std::string format_sim_bench_report(const SimBenchReport& report);

}  // namespace hapair
