// The launcher's end of the control plane: one ZeroMQ ROUTER socket that every node process's
// DEALER connects to (ARCHITECTURE.md "Control plane").
//
// Paper: not a paper concept. It carries the experiment's own traffic (Hello, Directory,
// StopRun, Kill, NodeStats, TraceBatch, DeliveryBatch), which is never counted as HA overhead.
//
// The header hides ZeroMQ (pimpl) so that the harness, which sits above the runtime, sees only
// plain messages. Invariants: a message is addressed by the peer id it came from (the node's
// routing id); sending to a peer that is gone fails visibly (ZMQ_ROUTER_MANDATORY) instead of
// vanishing; malformed input is counted and dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "protocols/ids.h"
#include "protocols/messages.h"
#include "runtime/curve.h"

namespace hapair {

class ControlServer {
 public:
  // Binds the ROUTER (e.g. "tcp://127.0.0.1:*"); throws std::runtime_error naming the endpoint
  // when it cannot. With `curve` on (runtime/curve.h) the ROUTER is a CURVE server that lets in
  // only the run's client key.
  explicit ControlServer(const std::string& bind_endpoint, const CurveKeys& curve = {});
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // The bound endpoint with its real port (ZMQ_LAST_ENDPOINT).
  const std::string& endpoint() const;

  struct Incoming {
    std::string peer;  // routing id of the sender, the address for send()
    Envelope envelope;
  };
  // Waits up to wait_us for one well-formed message; nullopt when none arrived in time or the
  // wait was interrupted by a signal.
  std::optional<Incoming> receive(TimeUs wait_us);
  // false when the peer is not (or no longer) connected.
  bool send(const std::string& peer, const Envelope& envelope);

  std::int64_t decode_dropped() const;
  // Connections refused (runtime/curve.h); all zero when CURVE is off.
  CurveCounts curve_counts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hapair
