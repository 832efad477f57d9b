@0xd1e5a2b3c4f50617;
# The hapair wire format: one Envelope per ZeroMQ frame, a header plus a union with one member
# per alternative of hapair::Message (protocols/messages.h), in the same order. Only codec.cpp
# reads or writes these types; the rest of the code sees the plain structs of messages.h.
#
# Paper: tuple batches flow downstream; level-0 and level-1 queue-trimming acknowledgements
# flow upstream (section 4.3); checkpoints go from a primary to its passive standby (4.1);
# determinants go from a primary to its active standby (4.2); heartbeats detect fail-stop
# crashes. The control-plane members connect node processes to the launcher.
#
# Compatibility rules (the invariant of this file): field ordinals (@N) are never renumbered
# or reused inside a struct; a new field gets the next free ordinal of its struct. Envelope.body
# lists one member per hapair::Message alternative in the variant's order, so the union
# discriminant equals the variant index (codec.cpp static_asserts this): a new data-plane kind
# goes before `hello` (the control kinds come last, messages.h kFirstControlKind) and the members
# after it move up one ordinal, a new control kind goes at the end. Every process of one run is
# the same build, so the discriminants need not survive between versions; the fields do. Defaults
# mirror the C++ member defaults, so a field an older sender did not write decodes to the same
# value as a default-constructed C++ struct (kNoStream/kNoNode/kNoFragment are 0xffff).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("hapair::wire");

# ---- shared pieces -------------------------------------------------------------------------

# protocols/tuple.h Tuple.
struct Tuple {
  id @0 :UInt64;       # TupleId, per-stream sequence number (0 = none)
  tsUs @1 :Int64;      # event timestamp, microseconds since the run epoch
  key @2 :Int64;
  value @3 :Float64;
  lineage @4 :UInt64;  # logical identity for the semantics checker
}

# ---- data plane ----------------------------------------------------------------------------

struct TupleBatch {
  stream @0 :UInt16 = 0xffff;
  tuples @1 :List(Tuple);
  endOfStream @2 :Bool;
  replay @3 :Bool;
  prevId @4 :UInt64;
  heldGeneration @5 :UInt64;
  # Every later tuple of the stream has ts >= this many ms (0: none); fits in the first word.
  boundaryMs @6 :UInt32;
}

struct Level0Ack {
  stream @0 :UInt16 = 0xffff;
  upTo @1 :UInt64;
  endOfStream @2 :Bool;
}

struct Level1Ack {
  stream @0 :UInt16 = 0xffff;
  upTo @1 :UInt64;
  generation @2 :UInt64;
  restartPoint @3 :Data;  # opaque Fragment::restart_point blob
  forwarded @4 :List(DownstreamRestartPoints);
}

struct Checkpoint {
  checkpointId @0 :UInt64;
  delta @1 :Bool;
  baseCheckpointId @2 :UInt64;
  chunkIndex @3 :UInt32;         # decode refuses chunkIndex >= chunkCount
  chunkCount @4 :UInt32 = 1;     # decode refuses 0
  payload @5 :Data;              # opaque checkpoint chunk
}

struct CheckpointAck {
  checkpointId @0 :UInt64;
}

struct Heartbeat {
  seq @0 :UInt64;
}

struct StandbyRef {
  node @0 :UInt16 = 0xffff;
  incarnation @1 :UInt64;
}

struct Takeover {
  fragment @0 :UInt16 = 0xffff;
  newPrimary @1 :UInt16 = 0xffff;
  epoch @2 :UInt64;
  standby @3 :UInt16 = 0xffff;
  standbyIncarnation @4 :UInt64;
  # The standbys after the first (k standbys; empty for one).
  moreStandbys @5 :List(StandbyRef);
  # The fragment's approach in this epoch (live switching); 0xff: not known to the sender.
  mode @6 :UInt8 = 0xff;
}

struct Redirect {
  stream @0 :UInt16 = 0xffff;
  consumer @1 :UInt16 = 0xffff;
  subscribe @2 :Bool = true;
  afterId @3 :UInt64;
}

struct ReplayRequest {
  stream @0 :UInt16 = 0xffff;
  afterId @1 :UInt64;
  generation @2 :UInt64;
  upTo @3 :UInt64;
}

struct StoredRestartPoint {
  generation @0 :UInt64;
  upTo @1 :UInt64;
  restartPoint @2 :Data;
  forwarded @3 :List(DownstreamRestartPoints);  # decode reads one level of nesting
}

# What the sender of a level-1 ack held for one of its output streams (messages.h).
struct DownstreamRestartPoints {
  stream @0 :UInt16 = 0xffff;
  consumer @1 :UInt16 = 0xffff;
  trimmedUpTo @2 :UInt64;
  points @3 :List(StoredRestartPoint);
}

struct RestartPoints {
  stream @0 :UInt16 = 0xffff;
  trimmedUpTo @1 :UInt64;
  points @2 :List(StoredRestartPoint);
}

struct DeterminantRecord {
  port @0 :UInt16;
  count @1 :UInt32;
}

struct Determinants {
  opIndex @0 :UInt16;
  firstSeq @1 :UInt64;
  records @2 :List(DeterminantRecord);
}

struct DeterminantAck {
  opIndex @0 :UInt16;
  upToSeq @1 :UInt64;
}

# A restarted node asks its fragment's primary to take it back as the standby.
struct Rejoin {
  fragment @0 :UInt16 = 0xffff;
  node @1 :UInt16 = 0xffff;
  incarnation @2 :UInt64;
}

struct Candidacy {
  fragment @0 :UInt16 = 0xffff;
  failed @1 :UInt16 = 0xffff;
  position @2 :UInt64;
}

# ---- global checkpoints (ha = checkpoint; protocols/messages.h, docs/CHECKPOINT.md) ----------

struct CheckpointTrigger {
  checkpointId @0 :UInt64;
}

# A barrier is a position: checkpoint checkpointId falls after tuple afterId of the stream.
struct CheckpointBarrier {
  stream @0 :UInt16 = 0xffff;
  checkpointId @1 :UInt64;
  afterId @2 :UInt64;
}

struct CheckpointComplete {
  checkpointId @0 :UInt64;
}

struct Rollback {
  number @0 :UInt64;
  to @1 :UInt64;                 # 0: the start of the run
  failed @2 :UInt16 = 0xffff;    # FragmentId
  fragments @3 :List(UInt16);    # FragmentIds
}

struct Restored {
  number @0 :UInt64;
  fragment @1 :UInt16 = 0xffff;
}

# ---- control plane (launcher <-> nodes) ----------------------------------------------------

struct Hello {
  nodeName @0 :Text;
  endpoint @1 :Text;
  pid @2 :Int64;
  crashLineEndpoint @3 :Text;
}

struct Directory {
  endpoints @0 :List(Text);  # indexed by NodeId
  epochRealtimeUs @1 :Int64;
  crashLineEndpoints @2 :List(Text);  # indexed by NodeId; empty when no node has a crash line
}

struct StopRun {
  immediate @0 :Bool;
}

struct Kill {
  pauseMs @0 :Int64;  # 0: SIGKILL
}

struct Counter {
  name @0 :Text;
  value @1 :Int64;
}

struct NodeStats {
  atUs @0 :Int64;
  final @1 :Bool;
  counters @2 :List(Counter);
}

# A typed trace event (protocols/trace.h): kind and keys are the TraceKind / TraceKey values.
struct TraceDetail {
  key @0 :UInt8;
  value @1 :Int64;
}

struct TraceEvent {
  atUs @0 :Int64;
  node @1 :UInt16 = 0xffff;
  kind @2 :UInt8;
  details @3 :List(TraceDetail);
  text @4 :Text;
}

struct TraceBatch {
  events @0 :List(TraceEvent);
}

struct Delivery {
  atUs @0 :Int64;
  stream @1 :UInt16 = 0xffff;
  tuple @2 :Tuple;
  from @3 :UInt16 = 0xffff;
  replayed @4 :Bool;
}

struct MergeRun {
  port @0 :UInt16;
  count @1 :UInt32;
  firstInput @2 :UInt64;
}

# protocols/messages.h MergeOrder: the interleaving a Union really chose, for the checker.
struct MergeOrder {
  node @0 :UInt16 = 0xffff;
  epoch @1 :UInt64;
  acting @2 :Bool;
  following @3 :Bool;
  opIndex @4 :UInt16;
  firstOutput @5 :UInt64;
  runs @6 :List(MergeRun);
}

struct DeliveryBatch {
  deliveries @0 :List(Delivery);
  endOfOutput @1 :Bool;
  mergeOrders @2 :List(MergeOrder);
}

# protocols/messages.h ClockRequest / ClockReply: NTP's four timestamps over the control channel.
struct ClockRequest {
  sequence @0 :UInt64;
  t1Us @1 :Int64;
}

struct ClockReply {
  sequence @0 :UInt64;
  t1Us @1 :Int64;
  t2Us @2 :Int64;
  t3Us @3 :Int64;
}

# ---- the envelope --------------------------------------------------------------------------

struct Envelope {
  # protocols/messages.h Header, inline (a group costs no pointer).
  header :group {
    sender @0 :UInt16 = 0xffff;  # NodeId
    epoch @1 :UInt64;            # the sender's fragment epoch
    sentUs @2 :Int64;            # send time, microseconds since the run epoch
  }
  # One member per hapair::Message alternative, in variant order: the discriminant of member
  # @(N+3) is N, the variant index.
  body :union {
    tupleBatch @3 :TupleBatch;                    # 0
    level0Ack @4 :Level0Ack;                      # 1
    level1Ack @5 :Level1Ack;                      # 2
    checkpoint @6 :Checkpoint;                    # 3
    checkpointAck @7 :CheckpointAck;              # 4
    heartbeat @8 :Heartbeat;                      # 5
    takeover @9 :Takeover;                        # 6
    redirect @10 :Redirect;                       # 7
    replayRequest @11 :ReplayRequest;             # 8
    restartPoints @12 :RestartPoints;             # 9
    determinants @13 :Determinants;               # 10
    determinantAck @14 :DeterminantAck;           # 11
    rejoin @15 :Rejoin;                           # 12
    candidacy @16 :Candidacy;                     # 13
    checkpointTrigger @17 :CheckpointTrigger;     # 14
    checkpointBarrier @18 :CheckpointBarrier;     # 15
    checkpointComplete @19 :CheckpointComplete;   # 16
    rollback @20 :Rollback;                       # 17
    restored @21 :Restored;                       # 18
    hello @22 :Hello;                             # 19
    directory @23 :Directory;                     # 20
    stopRun @24 :StopRun;                         # 21
    kill @25 :Kill;                               # 22
    nodeStats @26 :NodeStats;                     # 23
    traceBatch @27 :TraceBatch;                   # 24
    deliveryBatch @28 :DeliveryBatch;             # 25
    clockRequest @29 :ClockRequest;               # 26
    clockReply @30 :ClockReply;                   # 27
  }
}
