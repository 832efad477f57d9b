// Every message kind hapair sends, as plain C++ values. The Cap'n Proto schema (wire.capnp)
// mirrors these one to one and only the codec (codec.cpp, codec_decode.cpp) converts between them.
//
// Paper: tuple batches flow downstream; level-0 and level-1 queue-trimming acknowledgements flow
// upstream (section 4.3); checkpoints flow from a primary to its passive standby (section 4.1);
// heartbeats detect fail-stop crashes; active standbys receive the primary's non-deterministic
// choices (determinants, section 4.2). Control messages (hello, directory, stats, traces,
// deliveries, kill) connect node processes to the launcher and are not counted as HA overhead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocols/approach_traits.h"
#include "protocols/bytes.h"
#include "protocols/ids.h"
#include "protocols/trace.h"
#include "protocols/tuple.h"

namespace hapair {

// ---- data plane ---------------------------------------------------------------------------

// A batch of consecutive tuples of one stream, in id order. `end_of_stream` says the stream
// ends after the last tuple of the batch (the batch may be empty). `replay` marks tuples re-sent
// from a retained output queue during recovery. `prev_id` is the id of the tuple the sender sent
// to this consumer just before this batch (0: none), so a consumer detects a lost batch (ids
// are sparse: a Filter keeps its input's ids) and asks for a replay instead of skipping it.
struct TupleBatch {
  StreamId stream = kNoStream;
  Tuples tuples;
  bool end_of_stream = false;
  bool replay = false;
  TupleId prev_id = 0;
  // Upstream backup: the newest restart-point generation the sender holds from the receiving
  // fragment (its level-1 acks arrived). The receiver starts a new generation only when every
  // upstream holds the current one, so a recovery node always finds one they all hold.
  std::uint64_t held_generation = 0;
  // A boundary (Borealis's punctuation), in a plan with a Union in timestamp order: every tuple
  // of the stream after this batch has ts >= boundary_ms milliseconds (0: none). A batch may
  // carry only a boundary. Milliseconds, so the field fits in the batch's first word.
  std::uint32_t boundary_ms = 0;
  friend bool operator==(const TupleBatch&, const TupleBatch&) = default;
};

// Level-0 ack: "I have received (and accepted) every tuple of `stream` up to id `up_to`".
// Also the credit for flow control: a sender keeps at most a bounded number of tuples in flight
// beyond the last level-0 ack.
struct Level0Ack {
  StreamId stream = kNoStream;
  TupleId up_to = 0;
  bool end_of_stream = false;  // the end of the stream was received too
  friend bool operator==(const Level0Ack&, const Level0Ack&) = default;
};

// A restart point an upstream holds for its downstream fragment (from its level-1 acks).
// `forwarded`: what the downstream itself held for its own downstream when it sent this point
// (see DownstreamRestartPoints); empty in a point that was itself forwarded (one hop only).
struct DownstreamRestartPoints;
struct StoredRestartPoint {
  std::uint64_t generation = 0;
  TupleId up_to = 0;  // the level-1 position it came with
  Bytes restart_point;
  std::vector<DownstreamRestartPoints> forwarded;
  friend bool operator==(const StoredRestartPoint&, const StoredRestartPoint&) = default;
};

// Upstream backup, two adjacent failures: what the sender of a level-1 ack held for one of its
// output streams when it made its restart point. `trimmed_up_to`: the sender's queue of `stream`
// held every tuple after this id, and the restart point regenerates exactly those, so a
// recovery node restarted from it holds them again and may say so. `consumer` (kNoFragment
// when none of the stream's consumers sent restart points) and `points`: that consumer's
// restart points as the sender held them (their own `forwarded` lists carry trim positions
// only). The upstream keeps them with the sender's restart point; a recovery node of the sender
// installs them, so a recovery node of the consumer that fails with it finds them there.
struct DownstreamRestartPoints {
  StreamId stream = kNoStream;
  FragmentId consumer = kNoFragment;
  TupleId trimmed_up_to = 0;
  std::vector<StoredRestartPoint> points;
  friend bool operator==(const DownstreamRestartPoints&, const DownstreamRestartPoints&) = default;
};

// Level-1 ack: "input of `stream` up to id `up_to` is no longer needed by me"; the upstream may
// trim its output queue up to there. With upstream backup it carries the sender's restart point
// (how to restart it from empty state, see retention/level1_round.h) with a generation
// number, and what the sender held for its own downstream at that point (`forwarded`, one entry
// per (output stream, consumer)); the upstream keeps the last two and hands them to a recovery
// node.
struct Level1Ack {
  StreamId stream = kNoStream;
  TupleId up_to = 0;
  std::uint64_t generation = 0;
  Bytes restart_point;
  std::vector<DownstreamRestartPoints> forwarded;
  friend bool operator==(const Level1Ack&, const Level1Ack&) = default;
};

// One chunk of a checkpoint from a primary to its passive standby. A checkpoint is installed
// only when all `chunk_count` chunks of `checkpoint_id` have arrived. A delta checkpoint applies
// on top of `base_checkpoint_id`.
struct Checkpoint {
  std::uint64_t checkpoint_id = 0;
  bool delta = false;
  std::uint64_t base_checkpoint_id = 0;
  std::uint32_t chunk_index = 0;
  std::uint32_t chunk_count = 1;
  Bytes payload;
  friend bool operator==(const Checkpoint&, const Checkpoint&) = default;
};

struct CheckpointAck {
  std::uint64_t checkpoint_id = 0;
  friend bool operator==(const CheckpointAck&, const CheckpointAck&) = default;
};

struct Heartbeat {
  std::uint64_t seq = 0;
  friend bool operator==(const Heartbeat&, const Heartbeat&) = default;
};

// A standby as a route names it: the node, and the incarnation its pair was formed with (its
// Rejoin's; 0 for the plan's own standby): a restarted standby takes only an answer to its own
// request for one.
struct StandbyRef {
  NodeId node = kNoNode;
  std::uint64_t incarnation = 0;
  friend bool operator==(const StandbyRef&, const StandbyRef&) = default;
};

// "Node `new_primary` runs `fragment` from now on, at `epoch`, with `standbys` as its standbys
// (none after a takeover or a dissolution)." Sent by a node that took over to every neighbour of
// the fragment (upstream and downstream) and to its old partner, and again when a restored
// standby joins the pair, and by the winner of an election among k standbys, naming the other
// candidates it heard as its standbys (they follow it). The wire carries the first standby in
// `standby`, `standbyIncarnation` and the others in `moreStandbys` (wire.capnp), at most
// kStandbysMax in all; the codec refuses to encode more.
struct Takeover {
  FragmentId fragment = kNoFragment;
  NodeId new_primary = kNoNode;
  Epoch epoch = 0;
  std::vector<StandbyRef> standbys;
  // The fragment's approach in this epoch (live switching, docs/ARCHITECTURE.md "Live
  // switching"); none: not known to the sender (a takeover implied by a message), the follower
  // keeps the approach it knew.
  std::optional<HaMode> mode = std::nullopt;
  bool names_standby(NodeId n) const {
    for (const StandbyRef& s : standbys)
      if (s.node == n) return true;
    return false;
  }
  friend bool operator==(const Takeover&, const Takeover&) = default;
};

// Ask an upstream to start (subscribe) or stop sending `stream` to `consumer`, continuing after
// `after_id`. Used when an active standby or a restored backup joins as an extra consumer.
struct Redirect {
  StreamId stream = kNoStream;
  NodeId consumer = kNoNode;
  bool subscribe = true;
  TupleId after_id = 0;
  friend bool operator==(const Redirect&, const Redirect&) = default;
};

// "Re-send `stream` to me, starting after id `after_id`." Sent by a new primary to its upstream
// neighbours (from its checkpoint's or restart point's input position) and by downstream
// neighbours to a new primary (from the last id they accepted). `generation` names the restart
// point chosen by an upstream-backup recovery node (0 otherwise).
//
// With up_to > 0 it is a gap fill: a consumer that received batches beyond a lost one keeps them
// and asks only for the tuples with after_id < id <= up_to; the sender re-sends just those and
// carries on where it was (selective repeat, instead of going back N batches).
struct ReplayRequest {
  StreamId stream = kNoStream;
  TupleId after_id = 0;
  std::uint64_t generation = 0;
  TupleId up_to = 0;
  friend bool operator==(const ReplayRequest&, const ReplayRequest&) = default;
};

// Upstream -> upstream-backup recovery node: the restart points held for `stream`, and the
// oldest id still retained in the output queue (trimmed_up_to + 1).
struct RestartPoints {
  StreamId stream = kNoStream;
  TupleId trimmed_up_to = 0;
  std::vector<StoredRestartPoint> points;
  friend bool operator==(const RestartPoints&, const RestartPoints&) = default;
};

// One non-deterministic choice of an arbitrary operator: Union took `count` tuples in a row
// from input `port`. Records are numbered consecutively from `first_seq`.
struct DeterminantRecord {
  std::uint16_t port = 0;
  std::uint32_t count = 0;
  friend bool operator==(const DeterminantRecord&, const DeterminantRecord&) = default;
};

// Primary -> active standby: the interleaving chosen by operator `op_index` of the fragment.
struct Determinants {
  std::uint16_t op_index = 0;
  std::uint64_t first_seq = 0;
  std::vector<DeterminantRecord> records;
  friend bool operator==(const Determinants&, const Determinants&) = default;
};

struct DeterminantAck {
  std::uint16_t op_index = 0;
  std::uint64_t up_to_seq = 0;
  friend bool operator==(const DeterminantAck&, const DeterminantAck&) = default;
};

// A restarted node (`node`, of `fragment`) asks the fragment's current primary to take it back
// as its standby, so the process pair is restored after a failover (docs/FAULTS.md, "Who may act as primary"). The
// primary answers with a Takeover naming it as standby, and then brings it up to date: nothing
// to do for a spare, a full checkpoint for a passive standby, a full checkpoint plus input from
// upstream (Redirect) and determinants for an active standby.
struct Rejoin {
  FragmentId fragment = kNoFragment;
  NodeId node = kNoNode;
  // Distinguishes a repeated request (same incarnation) from a process that restarted again.
  std::uint64_t incarnation = 0;
  friend bool operator==(const Rejoin&, const Rejoin&) = default;
};

// One of k standbys found its primary `failed` and tells the other standbys of its fragment how
// far its state goes: its `position` (passive standby: the id of its last installed checkpoint),
// at the epoch in the header. Each standby takes over only if it is the most advanced of the
// candidates it heard (epoch, then position, then the lowest replica index: Raft's "at least
// as up to date" rule; primary/election.h). Repeated every heartbeat interval until decided. A
// standby that still hears the primary answers with a refusal, `failed` = kNoNode (a pre-vote:
// nobody wins while one holds).
struct Candidacy {
  FragmentId fragment = kNoFragment;
  NodeId failed = kNoNode;
  std::uint64_t position = 0;
  friend bool operator==(const Candidacy&, const Candidacy&) = default;
};

// ---- global checkpoints (ha = checkpoint, docs/CHECKPOINT.md) ------------------------------
// Flink-style aligned barrier snapshots (Carbone et al. 2015): a coordinator, which runs no
// fragment, triggers checkpoint `checkpoint_id` at the fragments that read source streams;
// barriers follow the data as positions; every operator fragment sends its snapshot to the
// coordinator as `Checkpoint` chunks (a GlobalSnapshot payload, checkpoint/global_snapshot.h);
// the coordinator declares the checkpoint complete, and on a failure rolls fragments back.

// Coordinator -> a fragment reading a source stream: "checkpoint `checkpoint_id` begins: its
// barrier on each of your source inputs is the last id you accepted from it".
struct CheckpointTrigger {
  std::uint64_t checkpoint_id = 0;
  friend bool operator==(const CheckpointTrigger&, const CheckpointTrigger&) = default;
};

// Producer -> consumer: "checkpoint `checkpoint_id` falls after tuple `after_id` of `stream`".
// A position, not a tuple in the stream: it may overtake the tuples it follows and is repeated
// until the checkpoint completes or is abandoned, so a repetition is harmless.
struct CheckpointBarrier {
  StreamId stream = kNoStream;
  std::uint64_t checkpoint_id = 0;
  TupleId after_id = 0;
  friend bool operator==(const CheckpointBarrier&, const CheckpointBarrier&) = default;
};

// Coordinator -> every participant: "checkpoint `checkpoint_id` is complete" (its snapshots and
// manifest are in the store); a fragment then sends level-1 acks up to its input positions of it.
struct CheckpointComplete {
  std::uint64_t checkpoint_id = 0;
  friend bool operator==(const CheckpointComplete&, const CheckpointComplete&) = default;
};

// Coordinator -> the fragments it names (and their replacements): "roll back to checkpoint `to`
// (0: the start of the run, nothing was complete yet), because fragment `failed` failed";
// `number` counts the coordinator's rollbacks, so a repeated order is recognised.
struct Rollback {
  std::uint64_t number = 0;
  std::uint64_t to = 0;
  FragmentId failed = kNoFragment;
  std::vector<FragmentId> fragments;
  friend bool operator==(const Rollback&, const Rollback&) = default;
};

// A rolled-back fragment (or its replacement) -> coordinator: "`fragment` installed its snapshot
// of rollback `number`". Checkpoints are triggered again once every named fragment restored.
struct Restored {
  std::uint64_t number = 0;
  FragmentId fragment = kNoFragment;
  friend bool operator==(const Restored&, const Restored&) = default;
};

// ---- control plane (launcher <-> nodes) ----------------------------------------------------

// Node -> launcher: "I am `node_name`, my data socket is bound at `endpoint`", and (detector =
// connection+heartbeat) my crash line listens at `crash_line_endpoint` (runtime/crash_line.h).
struct Hello {
  std::string node_name;
  std::string endpoint;
  std::int64_t pid = 0;
  std::string crash_line_endpoint;  // empty: this node has no crash line
  friend bool operator==(const Hello&, const Hello&) = default;
};

// Launcher -> nodes: every node's data endpoint (indexed by NodeId) and the run epoch as a
// CLOCK_REALTIME instant in microseconds; all nodes measure time from it.
struct Directory {
  std::vector<std::string> endpoints;
  std::int64_t epoch_realtime_us = 0;
  std::vector<std::string> crash_line_endpoints;  // indexed by NodeId like endpoints; may be empty
  friend bool operator==(const Directory&, const Directory&) = default;
};

// Launcher -> node: finish (flush, report final stats) and exit.
struct StopRun {
  bool immediate = false;
  friend bool operator==(const StopRun&, const StopRun&) = default;
};

// Launcher -> node: crash yourself with SIGKILL now (failure injection on a remote host), or
// stop handling events for `pause_ms` (a paused, not crashed, process).
struct Kill {
  std::int64_t pause_ms = 0;  // 0: SIGKILL
  friend bool operator==(const Kill&, const Kill&) = default;
};

struct Counter {
  std::string name;
  std::int64_t value = 0;
  friend bool operator==(const Counter&, const Counter&) = default;
};

// Node -> launcher, periodically and at exit: cumulative counters (bytes and messages sent by
// kind, cpu time, drops, queue lengths ...).
struct NodeStats {
  TimeUs at_us = 0;
  bool final = false;
  std::vector<Counter> counters;
  friend bool operator==(const NodeStats&, const NodeStats&) = default;
};

struct TraceBatch {
  std::vector<TraceEvent> events;
  friend bool operator==(const TraceBatch&, const TraceBatch&) = default;
};

// A tuple handed to the client application at a sink.
struct Delivery {
  TimeUs at_us = 0;
  StreamId stream = kNoStream;
  Tuple tuple;
  NodeId from = kNoNode;  // the node that sent it to the sink (its lineage, for the timeline)
  bool replayed = false;  // it arrived in a replayed batch
  friend bool operator==(const Delivery&, const Delivery&) = default;
};

// The merge order an arbitrary operator (Union) really chose, as a node reports it to the
// harness (docs/FAULTS.md: the checker recomputes the reference from the recorded choices).
// Never sent between nodes. A run: `count` consecutive outputs that are the inputs
// first_input, first_input + 1, ... of input `port`.
struct MergeRun {
  std::uint16_t port = 0;
  TupleId first_input = 0;
  std::uint32_t count = 0;
  friend bool operator==(const MergeRun&, const MergeRun&) = default;
};

// Operator `op_index` of `node`'s fragment emitted the output ids first_output, first_output + 1,
// ... as `runs` say. `epoch` is the node's epoch of its fragment when it emitted them, `acting`
// whether it was the fragment's primary then, and `following` whether its Union followed the
// primary's determinants (an active standby) rather than choosing on its own.
struct MergeOrder {
  NodeId node = kNoNode;
  Epoch epoch = 0;
  bool acting = false;
  bool following = false;
  std::uint16_t op_index = 0;
  TupleId first_output = 0;
  std::vector<MergeRun> runs;
  friend bool operator==(const MergeOrder&, const MergeOrder&) = default;
};

// What a node reports to the launcher for the checker: a sink's deliveries, and the merge order
// of its Unions (any node running a fragment with one).
struct DeliveryBatch {
  std::vector<Delivery> deliveries;
  bool end_of_output = false;  // the sink has seen end-of-stream on every input
  std::vector<MergeOrder> merge_orders;
  friend bool operator==(const DeliveryBatch&, const DeliveryBatch&) = default;
};

// Launcher -> node: a clock probe (NTP's client request, RFC 5905 section 8; docs/HOSTS.md "Clock
// offsets"). `t1_us` is the launcher's clock when it sent the probe; the node answers at once
// with a ClockReply. Times are CLOCK_REALTIME microseconds as each side's run clock sees them
// (the realtime instant its run clock implies, or the realtime clock itself before the run clock
// exists), so the offset measured is the one between the run clocks.
struct ClockRequest {
  std::uint64_t sequence = 0;  // pairs the reply with its request
  std::int64_t t1_us = 0;
  friend bool operator==(const ClockRequest&, const ClockRequest&) = default;
};

// Node -> launcher: the answer to a ClockRequest: its t1 echoed, t2 when the node read the
// request and t3 when it sent this, both by the node's clock. The launcher adds t4 on arrival.
struct ClockReply {
  std::uint64_t sequence = 0;
  std::int64_t t1_us = 0;
  std::int64_t t2_us = 0;
  std::int64_t t3_us = 0;
  friend bool operator==(const ClockReply&, const ClockReply&) = default;
};

// ---- the envelope ---------------------------------------------------------------------------

using Message = std::variant<TupleBatch, Level0Ack, Level1Ack, Checkpoint, CheckpointAck, Heartbeat,
                             Takeover, Redirect, ReplayRequest, RestartPoints, Determinants,
                             DeterminantAck, Rejoin, Candidacy, CheckpointTrigger, CheckpointBarrier,
                             CheckpointComplete, Rollback, Restored, Hello, Directory, StopRun, Kill, NodeStats,
                             TraceBatch, DeliveryBatch, ClockRequest, ClockReply>;

// Names per message kind, in the variant's order; used for bytes_by_kind / messages_by_kind.
inline constexpr const char* kMessageKindNames[] = {
    "tuples",         "level0_ack",   "level1_ack",     "checkpoint", "checkpoint_ack",
    "heartbeat",      "takeover",     "redirect",       "replay_request", "restart_points",
    "determinants",   "determinant_ack", "rejoin",      "candidacy",
    "checkpoint_trigger", "checkpoint_barrier", "checkpoint_complete", "rollback", "restored",
    "hello",          "directory",    "stop",           "kill",       "stats",
    "trace",          "deliveries",   "clock_request",  "clock_reply"};
static_assert(std::size(kMessageKindNames) == std::variant_size_v<Message>);

inline const char* message_kind_name(const Message& m) { return kMessageKindNames[m.index()]; }
// Control-plane messages run between nodes and the launcher and are not HA overhead. They come
// last in Message, from Hello on.
inline constexpr std::size_t kFirstControlKind = 19;
static_assert(std::string_view(kMessageKindNames[kFirstControlKind]) == "hello");
inline bool is_control_message(const Message& m) { return m.index() >= kFirstControlKind; }

struct Header {
  NodeId sender = kNoNode;
  Epoch epoch = 0;
  TimeUs sent_us = 0;
  friend bool operator==(const Header&, const Header&) = default;
};

struct Envelope {
  Header header;
  Message body;
  friend bool operator==(const Envelope&, const Envelope&) = default;
};

}  // namespace hapair
