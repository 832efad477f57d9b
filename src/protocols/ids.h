// Identifiers and time shared by every layer.
//
// Paper: each tuple carries a per-stream tuple id, a monotonic sequence number assigned by the
// stream's producer (Hwang et al., section 2). Invariant: on one stream, ids only grow, across
// takeovers too; a consumer drops any id at or below the last one it accepted (duplicate
// elimination by tuple id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace hapair {

// Microseconds since the run epoch. Real time in the runtime, virtual time in the simulator.
using TimeUs = std::int64_t;
// Index of a node (an OS process, the paper's "server") in the deployment plan.
using NodeId = std::uint16_t;
// Index of a fragment (the part of the query network one server runs) in the plan.
using FragmentId = std::uint16_t;
// Index of a stream in the plan.
using StreamId = std::uint16_t;
// Per-stream tuple sequence number; the first tuple of a stream has id 1, 0 means "none yet".
using TupleId = std::uint64_t;
// Every takeover of a fragment starts a new epoch; messages carry their sender's epoch.
using Epoch = std::uint64_t;
// The largest epoch a peer may announce. Epochs grow by one per takeover or pair change, so no
// run comes near it; the codec refuses anything above it, which leaves 2^64 - 2^48 advances
// before a node that followed the highest accepted epoch could overflow its own.
inline constexpr Epoch kEpochMax = Epoch{1} << 48;
// The largest epoch a node follows (RouteTable::classify: a higher one is malformed). Below the
// codec's bound by 2^47, so the claims a node makes above what it followed still encode (an
// announced epoch of exactly kEpochMax, followed and then claimed above, made a node send
// what no receiver decodes: found by envelope_fuzz).
inline constexpr Epoch kEpochFollowMax = kEpochMax / 2;

inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();

// The most standbys a fragment may have (the `standbys` setting, docs/TOPOLOGY.md): k + 1
// replicas survive k crashes of one fragment; beyond three the checkpoint and heartbeat traffic
// grows with k while a fourth crash of one fragment's replicas is outside the faults we test.
inline constexpr std::size_t kStandbysMax = 3;
inline constexpr FragmentId kNoFragment = std::numeric_limits<FragmentId>::max();
inline constexpr StreamId kNoStream = std::numeric_limits<StreamId>::max();
inline constexpr TimeUs kNever = std::numeric_limits<TimeUs>::max();

inline constexpr TimeUs us_from_ms(double ms) { return static_cast<TimeUs>(ms * 1000.0); }
inline constexpr double ms_from_us(TimeUs us) { return static_cast<double>(us) / 1000.0; }

}  // namespace hapair
