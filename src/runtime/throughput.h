// Throughput measurements behind `hapair bench`: the same number of tuples over one tcp hop,
// once as raw ZeroMQ and once through hapair's runtime (cores, codec, transport).
//
// Paper: not a paper concept. It bounds the runtime overhead every approach starts from: a
// figure of recovery time against overhead (section 6) is only meaningful when the framework
// itself does not dominate the cost of moving tuples.
//
// Both measurements run in ONE process with TWO threads (a sender and a receiver) that share
// one zmq::context and talk over tcp://127.0.0.1, so they differ only in what is sent: raw
// 40-byte records versus Cap'n Proto envelopes produced and consumed by real node cores (with
// flow control, level-0 acks and everything else the cores do).
//
// Invariant: a measurement reports completed = false (and no rate) unless every tuple arrived.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "protocols/plan.h"
#include "runtime/core_runner.h"
#include "runtime/curve.h"

namespace hapair {

struct ThroughputMeasurement {
  std::int64_t tuples = 0;      // tuples that arrived
  std::int64_t messages = 0;    // data messages the receiver got
  std::int64_t bytes = 0;       // their bytes
  double seconds = 0.0;         // from the sender's start to the last tuple's arrival
  double tuples_per_s = 0.0;
  // CPU seconds of the measurement: the sending thread, the receiving thread and the whole
  // process (the rest is ZeroMQ's I/O thread, which moves the bytes for both sides).
  double sender_cpu_s = 0.0;
  double receiver_cpu_s = 0.0;
  double process_cpu_s = 0.0;
  bool completed = false;
  std::string error;            // why not completed
};

// Raw ZeroMQ PUSH/PULL: `tuples` tuples as 40-byte records (id, ts, key, value, lineage),
// `batch_tuples` per message. Both measurements take `curve` (runtime/curve.h): with keys, the
// receiving socket is a CURVE server behind a CurveGate and the sending one a client, as in a
// secure run.
ThroughputMeasurement measure_raw_push_pull(std::int64_t tuples, std::int64_t batch_tuples, double timeout_s,
                                            const CurveKeys& curve = {});

// One hop of hapair: the cores of `producer` and `consumer` (e.g. a source and a sink of a
// two-fragment plan), each with its own Transport and CoreRunner, in two threads. Ends when the
// consumer's core reports finished. The plan must consist of exactly these two nodes.
ThroughputMeasurement measure_one_hop(std::shared_ptr<const Plan> plan, NodeId producer, NodeId consumer,
                                      const CoreFactory& factory, double timeout_s, const CurveKeys& curve = {});

}  // namespace hapair
