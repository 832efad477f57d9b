// A node's way out: every message it sends, every trace event it records, and its counters.
// Every part of the node (the pair side, the input side, the output side, the workload) and every
// role and approach send, trace and count through it (Server::send, Server::trace,
// Server::count), so what a node says always carries who it is and which epoch it speaks from.
//
// Paper: messages carry the sender's identity; hapair adds the sender's fragment epoch to every
// one (docs/FAULTS.md, "Who may act as primary"), so a receiver can drop what a fenced primary
// still sends.
//
// Invariants: a message goes only to another node of the plan, never to the node itself; every
// envelope carries my node as its sender and my fragment's epoch as it is when the message is
// sent; a data-plane trace kind (batches, acks, trims) is recorded only at trace_level = data.
#pragma once

#include <cstdint>
#include <string>

#include "primary/node_identity.h"
#include "primary/route_table.h"
#include "protocols/core.h"

namespace hapair {

class Outbox {
 public:
  // `node` and `routes` outlive the outbox (both are the Server's).
  Outbox(const NodeIdentity& node, const RouteTable& routes);

  // Sends `body` to node `to`, stamped with my node and epoch; traced at trace_level data when
  // it is a batch, an ack or a replay request.
  void send(Effects& eff, TimeUs now, NodeId to, Message body);
  // Records a typed trace event (protocols/trace.h) and returns it for its details:
  //   trace(eff, now, TraceKind::detection).with(TraceKey::failed, p);
  // A data-plane kind is recorded only at trace_level data (the returned event is then dropped).
  TraceEvent& trace(Effects& eff, TimeUs now, TraceKind kind);
  // Adds to a counter, saturating at the int64 range: a peer's absurd ids (a ReplayRequest after
  // id 3 when 2^62 were sent) must not overflow a count (found by fuzz/envelope_fuzz).
  void count(const std::string& name, std::int64_t n = 1);
  // A count of tuples between two ids (b above a), for count(): at most INT64_MAX.
  static std::int64_t tuples_between(TupleId a, TupleId b);

  // Whether data-plane trace kinds are recorded (trace_level = data).
  bool traces_data_plane() const { return trace_data_plane_; }
  // Whether trace(kind) records: callers on the data path skip building an event that would be
  // dropped (a batch's and an ack's details, at every message).
  bool records(TraceKind kind) const { return trace_data_plane_ || !is_data_plane(kind); }
  const Metrics& counters() const { return counters_; }

 private:
  // The data-plane trace of a message I send (batches, acks) and my replay requests.
  void trace_sent(Effects& eff, TimeUs now, NodeId to, const Message& body);

  const NodeIdentity& node_;
  const RouteTable& routes_;
  bool trace_data_plane_;
  Metrics counters_;
  TraceEvent not_recorded_;  // where data-plane details go at trace_level control
};

}  // namespace hapair
