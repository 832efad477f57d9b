// Typed trace events: what a node's protocol core (or the driver that injects a fault) records
// about a run, as fields, never as free text to be parsed back.
//
// Every role core records its events through Effects::traces, and both drivers (the ZeroMQ
// runtime and the simulator) stamp them with the node and pass them on unchanged, so the same
// run gives the same events in either (tests/sim/trace_parity_test.cpp). They are the single
// source of the metrics (detection, takeover, replay, restore), the disturbance and chaos
// classification, the result files (trace.jsonl, events.csv) and the teaching views
// (timeline.html, hapair demo). docs/TRACE.md lists every kind with its details.
//
// Shape (FoundationDB's TraceEvent(...).detail(key, value), with the keys an enum): a kind, the
// time, the node, up to kTraceDetailsMax typed details and, for a human only, an optional text.
// A detail's value is an integer whose meaning the key fixes once (trace_key_type): a node id,
// a stream id, a tuple id, a count, bytes, microseconds, or one of a few small enums.
//
// Paper vocabulary: level-0 / level-1 ack, queue trimming, checkpoint, takeover, replay,
// duplicate elimination (Hwang et al., sections 2 and 4).
//
// Invariants: a key appears at most once per event; an event holds at most kTraceDetailsMax
// details (both checked when a detail is added: recording is our own code, not a peer's input).
// The wire codec refuses unknown kinds and keys from a peer (a count and a drop, not a crash).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "protocols/ids.h"

namespace hapair {

// Which role a node runs (a node's lane in the timeline).
// `coordinator`: the node of no fragment that coordinates global checkpoints (docs/CHECKPOINT.md).
enum class Role : std::uint8_t { primary, spare, passive_backup, active_backup, fenced, rejoining, coordinator };
inline constexpr Role kLastRole = Role::coordinator;
const char* to_string(Role);

enum class TraceKind : std::uint8_t {
  // ---- a node's life ----
  start,                 // role, ha (a node's first role; later changes are `role` events)
  role,                  // role: the node's role changed
  end_of_output,         // a sink delivered the end of every input stream
  fatal,                 // a configured error stopped the node (text: the error)
  exited,                // driver: a node process ended on its own (text: how)
  // ---- faults, recorded by the driver that injects them ----
  failure,               // fault (crash, pause, partition), duration_us (pause), peer (partition)
  resume,                // fault = pause: the paused node runs again
  restart,               // fault = restart: a crashed node's process is started again
  heal,                  // fault = partition: the link to peer works again
  // ---- data plane (recorded when Settings::trace_level is data) ----
  batch_sent,            // peer, stream, first_id, last_id, count, replay (0/1)
  batch_received,        // peer, stream, first_id, last_id, count (accepted), duplicates
  duplicates_dropped,    // peer, stream, first_id, last_id, count: ids at or below the last accepted
  level0_ack,            // peer (the producer), stream, position: "received up to position"
  level1_ack,            // peer, stream, position, generation: "input up to position no longer needed"
  trimmed,               // stream, position (the queue now starts after it), count
  // ---- checkpoints (passive standby; an active standby's bootstrap) ----
  checkpoint,            // checkpoint, mode (full, delta), bytes, chunks: sent to the standby
  checkpoint_covers,     // checkpoint, stream, position: the input it covers, one per input stream
  checkpoint_acked,      // checkpoint: the standby installed it (the primary may trim up to it)
  checkpoint_installed,  // checkpoint: (standby) every chunk arrived and the state was installed
  checkpoint_rejected,   // checkpoint, reason
  checkpoint_retry,      // checkpoint: re-sent, no ack came
  bootstrap_installed,   // checkpoint: a rejoined active standby installed its primary's state
  // ---- failure detection, takeover, recovery ----
  heartbeat_missed,      // peer, silent_us: no heartbeat for half the failure timeout
  standby_suspected,     // standby, silent_us: the primary hears nothing from its standby
  standby_heard,         // standby: heard again
  standby_lost,          // standby, silent_us, detector: the primary runs unprotected
  standby_restarted,     // standby: a restarted process of my standby asked to rejoin
  detection,             // failed, detector, silent_us (heartbeat): my partner failed
  takeover,              // ha, exact_ids (0/1), checkpoint (passive: the one installed)
  route_change,          // fragment_primary, epoch: a neighbouring fragment has a new primary
  fenced,                // fragment_primary, epoch, claim_lost (0/1): my fragment moved on without me
  claim_renewed,         // epoch, over: my claim of my fragment won an epoch tie
  claim_deferred,        // epoch, over: another node's own claim of my unconfirmed epoch waits for my neighbours' answers
  rebased,               // my output ids continue above what consumers accepted
  replay_request,        // peer, stream, after_id: asked a producer to re-send after after_id
  replay_start,          // stream, peer (the producer), first_id: replayed batches begin to arrive
  replay_end,            // stream, peer, count: the replay ended (count: replayed tuples it brought)
  replay_gap,            // stream, after_id, position (trimmed up to): cannot re-send from after_id
  held_output_released,  // count: output held for a lost standby went out unprotected
  backpressure,          // stream: an output queue is full, input stops
  rejoin_requested,      // partner: a restarted node asks to become a standby again
  rejoin_accepted,       // standby, incarnation: the primary takes it as its standby
  rejoined,              // fragment_primary, epoch: the restarted node is a standby again
  pair_restored,         // standby, checkpoint (when state was sent): the pair is whole again
  // ---- hybrid standby (src/hybrid) ----
  hybrid_switch,         // role (active_backup, passive_backup: the standby's mode from now), reason
                         // (the trigger), standby, checkpoint (the bootstrap), duration_us, count
  // ---- k standbys: the election of a new primary among them ----
  candidacy,             // failed, epoch, position: a standby found its primary failed and tells
                         // the other standbys how far its state goes
  elected,               // failed, epoch, position, count (candidates heard): the most advanced
                         // standby (epoch, then position, then the lowest replica index) takes over
  follows,               // fragment_primary, epoch, position: a standby that lost the election
                         // follows the winner as its standby in the new epoch
  // ---- global checkpoints (ha = checkpoint, src/checkpoint, docs/CHECKPOINT.md) ----
  checkpoint_triggered,  // checkpoint: the coordinator started checkpoint c (a source reader: its barriers)
  checkpoint_snapshot,   // checkpoint, bytes: a fragment aligned its inputs and sent its snapshot of c
  checkpoint_completed,  // checkpoint: (coordinator) every participant's snapshot of c is in the store
  checkpoint_abandoned,  // checkpoint: (coordinator) c was in flight and will never complete
  checkpoint_rollback,   // checkpoint (rolled back to; 0: the start), failed, count (fragments): the
                         // coordinator's rollback decision
  checkpoint_restore,    // checkpoint, count (rollback number): a fragment installed its snapshot
  // ---- live switching (docs/ARCHITECTURE.md "Live switching") ----
  approach_switch,       // ha (from now), from_ha, epoch, count (standbys), bytes: the primary
                         // switched its fragment's approach; bytes: what it sent for it at once
};
inline constexpr std::size_t kTraceKindCount = static_cast<std::size_t>(TraceKind::approach_switch) + 1;
const char* to_string(TraceKind);
std::optional<TraceKind> trace_kind_from(const std::string& name);
// Data-plane kinds are recorded only at trace level data (Settings::trace_level).
bool is_data_plane(TraceKind);

enum class TraceKey : std::uint8_t {
  peer,              // node: the other end of a message exchange or a link
  failed,            // node: the node a detection declares failed
  standby,           // node
  partner,           // node: my pair partner (kNoNode: none)
  fragment_primary,  // node: the primary of the fragment the event is about
  over,              // node: the competing claimant an epoch tie was won over
  stream,            // stream
  first_id,          // tuple id
  last_id,           // tuple id
  after_id,          // tuple id
  position,          // tuple id: an acknowledged, covered or trimmed position
  count,             // tuples
  duplicates,        // tuples
  bytes,             // bytes
  chunks,            // number
  checkpoint,        // checkpoint number
  epoch,             // epoch
  generation,        // restart-point generation (upstream backup)
  incarnation,       // a restarted node's incarnation
  silent_us,         // microseconds without hearing from a node
  duration_us,       // microseconds
  detector,          // Detector
  fault,             // FaultKind
  role,              // Role
  ha,                // HaMode
  mode,              // CheckpointMode
  reason,            // TraceReason
  replay,            // 0/1
  exact_ids,         // 0/1: the takeover regenerates the same ids (1) or rebased them (0)
  claim_lost,        // 0/1
  determinants,      // 0/1: an active standby follows its primary's determinants
  from_ha,           // HaMode: the approach a live switch left
};
inline constexpr std::size_t kTraceKeyCount = static_cast<std::size_t>(TraceKey::from_ha) + 1;
const char* to_string(TraceKey);
std::optional<TraceKey> trace_key_from(const std::string& name);

// What a key's integer means, for the writers: a node or stream id (written as its name), a
// plain number, a flag, or one of the enums (written as its name).
enum class TraceValueType : std::uint8_t { node, stream, number, flag, detector, fault, role, ha, mode, reason };
TraceValueType trace_key_type(TraceKey);

// Why a checkpoint was rejected, why a queue stopped a run, why a hybrid standby switched (its
// primary stalled, the primary's input queue is long, a command, a calm period).
enum class TraceReason : std::uint8_t { corrupt, does_not_apply, queue_full, stalled, input_queue, command, calm, latency };
const char* to_string(TraceReason);

struct TraceDetail {
  TraceKey key = TraceKey::count;
  std::int64_t value = 0;
  friend bool operator==(const TraceDetail&, const TraceDetail&) = default;
};

inline constexpr std::size_t kTraceDetailsMax = 7;

struct TraceEvent {
  TimeUs at_us = 0;
  // Who recorded it; for the fault kinds (failure, resume, restart, heal, exited), recorded by
  // the driver, the node the fault hit.
  NodeId node = kNoNode;
  TraceKind kind = TraceKind::start;
  std::uint8_t detail_count = 0;
  std::array<TraceDetail, kTraceDetailsMax> details{};
  std::string text;  // for a human (a fatal error's message); never parsed

  TraceEvent() = default;
  TraceEvent(TimeUs at, NodeId n, TraceKind k) : at_us(at), node(n), kind(k) {}

  // Adds a detail (a key at most once, at most kTraceDetailsMax; checked). Any integer, flag or
  // enum value; its meaning is the key's (trace_key_type).
  template <typename T>
    requires(std::is_integral_v<T> || std::is_enum_v<T>)
  TraceEvent& with(TraceKey key, T value) {
    return add(key, static_cast<std::int64_t>(value));
  }
  TraceEvent& with_text(std::string t) {
    text = std::move(t);
    return *this;
  }

  std::optional<std::int64_t> get(TraceKey key) const;
  bool has(TraceKey key) const { return get(key).has_value(); }
  // The detail as a node / stream / tuple id; kNoNode, kNoStream, 0 when absent.
  NodeId node_of(TraceKey key) const;
  StreamId stream() const;
  TupleId id_of(TraceKey key) const;
  template <typename Enum>
  std::optional<Enum> enum_of(TraceKey key) const {
    const auto v = get(key);
    if (!v) return std::nullopt;
    return static_cast<Enum>(*v);
  }

  friend bool operator==(const TraceEvent& a, const TraceEvent& b);

 private:
  TraceEvent& add(TraceKey key, std::int64_t value);
};

}  // namespace hapair
