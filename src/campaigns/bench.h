// `hapair bench`: one-hop throughput of hapair against raw ZeroMQ on the same machine.
//
// Paper: not a paper concept. It checks the premise of every overhead figure (section 6):
// hapair's own cost of moving a tuple (Cap'n Proto envelopes, flow control, level-0 acks,
// duplicate elimination) stays within a small factor of the transport it uses, so what an
// experiment measures is the HA approach, not the framework. Target: ratio >= 0.8.
//
// How it measures (runtime/throughput.h): one process, two threads, tcp loopback, the same
// tuple count and batch size. (a) raw PUSH/PULL of 40-byte records; (b) a real source core and
// a real sink core of the two-fragment plan `source -> sink` (HA mode none), each on its own
// Transport and CoreRunner, exactly as two node processes would run them but without the
// launcher's control plane. The source's rate is set to 10^9 tuples/s (above the bound
// validate() puts on user topologies), so every tuple is due at once and only flow control
// paces the source, never its schedule. The two are measured in turn, `repetitions` times
// (raw, hapair, raw, hapair, ...), and each repetition gives a ratio: the report is the median
// ratio with its spread, so a neighbour's load slows both sides of a ratio alike, and the target
// is judged on the median's 95 % interval (verdict_on_interval, campaigns/experiment_runs.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hapair {

inline constexpr double kOneHopTarget = 0.8;  // hapair / raw ZeroMQ (issue 17)

struct BenchOptions {
  std::int64_t tuples = 1'000'000;
  std::int64_t batch_tuples = 100;  // tuples per message, both measurements
  double timeout_s = 120.0;         // per measurement
  // Interleaved repetitions of both measurements (at least 1).
  int repetitions = 5;
  // CURVE on both measurements' sockets (runtime/curve.h): what a secure run's transport costs.
  bool secure = false;
};

struct BenchReport {
  std::int64_t tuples = 0;
  std::int64_t batch_tuples = 0;
  int repetitions = 0;
  bool secure = false;
  // One entry per completed repetition, in order.
  std::vector<double> raw_tuples_per_s;
  std::vector<double> hapair_tuples_per_s;
  std::vector<double> ratios;               // hapair / raw of the same repetition
  std::int64_t hapair_bytes_per_tuple = 0;  // encoded tuple-batch bytes / tuples
  // CPU nanoseconds per tuple of each completed repetition: the sending thread, the receiving
  // thread and ZeroMQ's I/O thread (the process's CPU minus the two), raw and hapair.
  struct CpuPerTuple {
    std::vector<double> sender_ns, receiver_ns, io_ns;
  };
  CpuPerTuple raw_cpu, hapair_cpu;
  double ratio = 0.0;                       // the median of `ratios` (0: none completed)
  std::vector<std::string> errors;          // a measurement that did not complete says why
};

BenchReport run_one_hop_bench(const BenchOptions& options);

// The report as the lines `hapair bench` prints.
std::string format_bench_report(const BenchReport& report);

}  // namespace hapair
