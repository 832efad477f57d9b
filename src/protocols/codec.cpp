// The wire codec (see codec.h), encoding: plain messages.h values -> Cap'n Proto Envelope bytes.
// Decoding is in codec_decode.cpp.
//
// Encoding sizes the builder's first segment from the message, so every envelope is written as
// one segment without reallocation (a 100-tuple batch costs one allocation for the builder and
// one for the output).
#include "protocols/codec.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/io.h>

#include <type_traits>
#include <utility>

#include "protocols/check.h"
#include "wire.capnp.h"

namespace hapair {
namespace {

using Body = wire::Envelope::Body;

// ---- the schema's union mirrors the variant --------------------------------------------------

template <class T, std::size_t I = 0>
constexpr std::size_t message_index() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, Message>, T>) {
    return I;
  } else {
    return message_index<T, I + 1>();
  }
}
template <class T>
constexpr bool same_kind(Body::Which which) {
  return static_cast<std::size_t>(which) == message_index<T>();
}
// A mismatch here means wire.capnp and messages.h disagree on the order of message kinds.
static_assert(same_kind<TupleBatch>(Body::TUPLE_BATCH));
static_assert(same_kind<Level0Ack>(Body::LEVEL0_ACK));
static_assert(same_kind<Level1Ack>(Body::LEVEL1_ACK));
static_assert(same_kind<Checkpoint>(Body::CHECKPOINT));
static_assert(same_kind<CheckpointAck>(Body::CHECKPOINT_ACK));
static_assert(same_kind<Heartbeat>(Body::HEARTBEAT));
static_assert(same_kind<Takeover>(Body::TAKEOVER));
static_assert(same_kind<Redirect>(Body::REDIRECT));
static_assert(same_kind<Rejoin>(Body::REJOIN));
static_assert(same_kind<Candidacy>(Body::CANDIDACY));
static_assert(same_kind<ReplayRequest>(Body::REPLAY_REQUEST));
static_assert(same_kind<RestartPoints>(Body::RESTART_POINTS));
static_assert(same_kind<Determinants>(Body::DETERMINANTS));
static_assert(same_kind<DeterminantAck>(Body::DETERMINANT_ACK));
static_assert(same_kind<CheckpointTrigger>(Body::CHECKPOINT_TRIGGER));
static_assert(same_kind<CheckpointBarrier>(Body::CHECKPOINT_BARRIER));
static_assert(same_kind<CheckpointComplete>(Body::CHECKPOINT_COMPLETE));
static_assert(same_kind<Rollback>(Body::ROLLBACK));
static_assert(same_kind<Restored>(Body::RESTORED));
static_assert(same_kind<Hello>(Body::HELLO));
static_assert(same_kind<Directory>(Body::DIRECTORY));
static_assert(same_kind<StopRun>(Body::STOP_RUN));
static_assert(same_kind<Kill>(Body::KILL));
static_assert(same_kind<NodeStats>(Body::NODE_STATS));
static_assert(same_kind<TraceBatch>(Body::TRACE_BATCH));
static_assert(same_kind<DeliveryBatch>(Body::DELIVERY_BATCH));
static_assert(same_kind<ClockRequest>(Body::CLOCK_REQUEST));
static_assert(same_kind<ClockReply>(Body::CLOCK_REPLY));
static_assert(static_cast<std::size_t>(Body::CLOCK_REPLY) + 1 == std::variant_size_v<Message>,
              "a Message alternative has no member in wire.capnp's Envelope.body");

// ---- size estimate -------------------------------------------------------------------------
// Upper bounds, in words, of what each body takes in the message (struct sections, list tags,
// blobs), so the first segment holds the whole envelope. Over-estimating only wastes a little
// zeroed memory; under-estimating only adds a second segment.

std::size_t blob_words(std::size_t bytes) { return 1 + (bytes + 7) / 8; }   // + list pointer slack
std::size_t text_words(const std::string& s) { return blob_words(s.size() + 1); }  // NUL

template <class T>
std::size_t body_words(const T&) {
  return 4;  // the fixed-size kinds: at most three data words and one pointer
}
std::size_t body_words(const TupleBatch& m) { return 5 + 5 * m.tuples.size(); }
std::size_t forwarded_words(const std::vector<DownstreamRestartPoints>& forwarded);
std::size_t point_words(const StoredRestartPoint& p) {
  return 4 + blob_words(p.restart_point.size()) + forwarded_words(p.forwarded);
}
std::size_t forwarded_words(const std::vector<DownstreamRestartPoints>& forwarded) {
  std::size_t words = 1;
  for (const auto& f : forwarded) {
    words += 4;
    for (const auto& p : f.points) words += point_words(p);
  }
  return words;
}
std::size_t body_words(const Level1Ack& m) {
  return 5 + blob_words(m.restart_point.size()) + forwarded_words(m.forwarded);
}
std::size_t body_words(const Checkpoint& m) { return 4 + blob_words(m.payload.size()); }
std::size_t body_words(const Takeover& m) { return 4 + 1 + 2 * m.standbys.size(); }
std::size_t body_words(const RestartPoints& m) {
  std::size_t words = 4;
  for (const auto& p : m.points) words += point_words(p);
  return words;
}
std::size_t body_words(const Determinants& m) { return 4 + m.records.size(); }
std::size_t body_words(const Rollback& m) { return 4 + blob_words(2 * m.fragments.size()); }
std::size_t body_words(const Hello& m) {
  return 4 + text_words(m.node_name) + text_words(m.endpoint) + text_words(m.crash_line_endpoint);
}
std::size_t body_words(const Directory& m) {
  std::size_t words = 4;
  for (const auto& e : m.endpoints) words += 1 + text_words(e);
  for (const auto& e : m.crash_line_endpoints) words += 1 + text_words(e);
  return words;
}
std::size_t body_words(const NodeStats& m) {
  std::size_t words = 4;
  for (const auto& c : m.counters) words += 2 + text_words(c.name);
  return words;
}
std::size_t body_words(const TraceBatch& m) {
  std::size_t words = 2;
  for (const auto& e : m.events) words += 6 + 2 * e.detail_count + text_words(e.text);
  return words;
}
std::size_t body_words(const ClockReply&) { return 5; }  // four data words
std::size_t body_words(const DeliveryBatch& m) {
  // The struct (one data word, two pointers) and two list tags; a MergeOrder is three data words,
  // one pointer and its runs' list tag, a MergeRun two data words.
  std::size_t words = 5 + (3 + 5) * m.deliveries.size();
  for (const MergeOrder& o : m.merge_orders) words += 5 + 2 * o.runs.size();
  return words;
}

std::size_t envelope_words(const Envelope& e) {
  // Root pointer, then the Envelope struct: three data words (header + discriminant), one pointer.
  constexpr std::size_t kEnvelopeWords = 1 + 3 + 1;
  return kEnvelopeWords + std::visit([](const auto& m) { return body_words(m); }, e.body);
}

// ---- encode ----------------------------------------------------------------------------------

// Cap'n Proto lists and blobs hold fewer than 2^29 elements; a bigger one is our bug.
capnp::uint list_size(std::size_t n) {
  HAPAIR_CHECK_MSG(n < (std::size_t{1} << 29), "list of " << n << " elements does not fit a capnp list");
  return static_cast<capnp::uint>(n);
}
capnp::Data::Reader data_of(const Bytes& b) { return capnp::Data::Reader(b.data(), list_size(b.size())); }
capnp::Text::Reader text_of(const std::string& s) { return capnp::Text::Reader(s.data(), list_size(s.size())); }

void put_tuple(wire::Tuple::Builder b, const Tuple& t) {
  b.setId(t.id);
  b.setTsUs(t.ts_us);
  b.setKey(t.key);
  b.setValue(t.value);
  b.setLineage(t.lineage);
}

void put(Body::Builder body, const TupleBatch& m) {
  auto b = body.initTupleBatch();
  b.setStream(m.stream);
  auto tuples = b.initTuples(list_size(m.tuples.size()));
  for (capnp::uint i = 0; i < tuples.size(); ++i) put_tuple(tuples[i], m.tuples[i]);
  b.setEndOfStream(m.end_of_stream);
  b.setReplay(m.replay);
  b.setPrevId(m.prev_id);
  b.setHeldGeneration(m.held_generation);
  b.setBoundaryMs(m.boundary_ms);
}
void put(Body::Builder body, const Level0Ack& m) {
  auto b = body.initLevel0Ack();
  b.setStream(m.stream);
  b.setUpTo(m.up_to);
  b.setEndOfStream(m.end_of_stream);
}
void put_forwarded(capnp::List<wire::DownstreamRestartPoints>::Builder out,
                   const std::vector<DownstreamRestartPoints>& forwarded);
void put_point(wire::StoredRestartPoint::Builder b, const StoredRestartPoint& p) {
  b.setGeneration(p.generation);
  b.setUpTo(p.up_to);
  b.setRestartPoint(data_of(p.restart_point));
  if (!p.forwarded.empty()) put_forwarded(b.initForwarded(list_size(p.forwarded.size())), p.forwarded);
}
void put_forwarded(capnp::List<wire::DownstreamRestartPoints>::Builder out,
                   const std::vector<DownstreamRestartPoints>& forwarded) {
  for (capnp::uint i = 0; i < out.size(); ++i) {
    const DownstreamRestartPoints& f = forwarded[i];
    out[i].setStream(f.stream);
    out[i].setConsumer(f.consumer);
    out[i].setTrimmedUpTo(f.trimmed_up_to);
    auto points = out[i].initPoints(list_size(f.points.size()));
    for (capnp::uint j = 0; j < points.size(); ++j) put_point(points[j], f.points[j]);
  }
}
void put(Body::Builder body, const Level1Ack& m) {
  auto b = body.initLevel1Ack();
  b.setStream(m.stream);
  b.setUpTo(m.up_to);
  b.setGeneration(m.generation);
  b.setRestartPoint(data_of(m.restart_point));
  if (!m.forwarded.empty()) put_forwarded(b.initForwarded(list_size(m.forwarded.size())), m.forwarded);
}
void put(Body::Builder body, const Checkpoint& m) {
  // The receiver refuses these, so sending one is our bug, not the peer's.
  HAPAIR_CHECK_MSG(m.chunk_count >= 1 && m.chunk_index < m.chunk_count,
                   "checkpoint " << m.checkpoint_id << " chunk " << m.chunk_index << " of " << m.chunk_count);
  auto b = body.initCheckpoint();
  b.setCheckpointId(m.checkpoint_id);
  b.setDelta(m.delta);
  b.setBaseCheckpointId(m.base_checkpoint_id);
  b.setChunkIndex(m.chunk_index);
  b.setChunkCount(m.chunk_count);
  b.setPayload(data_of(m.payload));
}
void put(Body::Builder body, const CheckpointAck& m) { body.initCheckpointAck().setCheckpointId(m.checkpoint_id); }
void put(Body::Builder body, const Heartbeat& m) { body.initHeartbeat().setSeq(m.seq); }
void put(Body::Builder body, const Takeover& m) {
  auto b = body.initTakeover();
  b.setFragment(m.fragment);
  b.setNewPrimary(m.new_primary);
  b.setEpoch(m.epoch);
  if (m.mode) b.setMode(static_cast<std::uint8_t>(*m.mode));
  HAPAIR_CHECK_MSG(m.standbys.size() <= kStandbysMax,
                   "a Takeover names " << m.standbys.size() << " standbys; the wire carries " << kStandbysMax);
  // No standby is kNoNode on the wire, with incarnation 0: a standby naming no node is written
  // as none (the decoder reads it so), so that every accepted encoding re-encodes to itself.
  const StandbyRef none{kNoNode, 0};
  const StandbyRef& standby = m.standbys.empty() || m.standbys.front().node == kNoNode ? none : m.standbys.front();
  b.setStandby(standby.node);
  b.setStandbyIncarnation(standby.incarnation);
  if (m.standbys.size() > 1 && standby.node != kNoNode) {
    auto more = b.initMoreStandbys(static_cast<unsigned>(m.standbys.size() - 1));
    for (std::size_t i = 1; i < m.standbys.size(); ++i) {
      HAPAIR_CHECK_MSG(m.standbys[i].node != kNoNode, "a Takeover names no node as its standby " << i);
      more[static_cast<unsigned>(i - 1)].setNode(m.standbys[i].node);
      more[static_cast<unsigned>(i - 1)].setIncarnation(m.standbys[i].incarnation);
    }
  }
}
void put(Body::Builder body, const Candidacy& m) {
  auto b = body.initCandidacy();
  b.setFragment(m.fragment);
  b.setFailed(m.failed);
  b.setPosition(m.position);
}
void put(Body::Builder body, const Rejoin& m) {
  auto b = body.initRejoin();
  b.setFragment(m.fragment);
  b.setNode(m.node);
  b.setIncarnation(m.incarnation);
}
void put(Body::Builder body, const Redirect& m) {
  auto b = body.initRedirect();
  b.setStream(m.stream);
  b.setConsumer(m.consumer);
  b.setSubscribe(m.subscribe);
  b.setAfterId(m.after_id);
}
void put(Body::Builder body, const ReplayRequest& m) {
  auto b = body.initReplayRequest();
  b.setStream(m.stream);
  b.setAfterId(m.after_id);
  b.setGeneration(m.generation);
  b.setUpTo(m.up_to);
}
void put(Body::Builder body, const RestartPoints& m) {
  auto b = body.initRestartPoints();
  b.setStream(m.stream);
  b.setTrimmedUpTo(m.trimmed_up_to);
  auto points = b.initPoints(list_size(m.points.size()));
  for (capnp::uint i = 0; i < points.size(); ++i) put_point(points[i], m.points[i]);
}
void put(Body::Builder body, const Determinants& m) {
  auto b = body.initDeterminants();
  b.setOpIndex(m.op_index);
  b.setFirstSeq(m.first_seq);
  auto records = b.initRecords(list_size(m.records.size()));
  for (capnp::uint i = 0; i < records.size(); ++i) {
    records[i].setPort(m.records[i].port);
    records[i].setCount(m.records[i].count);
  }
}
void put(Body::Builder body, const DeterminantAck& m) {
  auto b = body.initDeterminantAck();
  b.setOpIndex(m.op_index);
  b.setUpToSeq(m.up_to_seq);
}
void put(Body::Builder body, const CheckpointTrigger& m) {
  body.initCheckpointTrigger().setCheckpointId(m.checkpoint_id);
}
void put(Body::Builder body, const CheckpointBarrier& m) {
  auto b = body.initCheckpointBarrier();
  b.setStream(m.stream);
  b.setCheckpointId(m.checkpoint_id);
  b.setAfterId(m.after_id);
}
void put(Body::Builder body, const CheckpointComplete& m) {
  body.initCheckpointComplete().setCheckpointId(m.checkpoint_id);
}
void put(Body::Builder body, const Rollback& m) {
  auto b = body.initRollback();
  b.setNumber(m.number);
  b.setTo(m.to);
  b.setFailed(m.failed);
  auto fragments = b.initFragments(list_size(m.fragments.size()));
  for (capnp::uint i = 0; i < fragments.size(); ++i) fragments.set(i, m.fragments[i]);
}
void put(Body::Builder body, const Restored& m) {
  auto b = body.initRestored();
  b.setNumber(m.number);
  b.setFragment(m.fragment);
}
void put(Body::Builder body, const Hello& m) {
  auto b = body.initHello();
  b.setNodeName(text_of(m.node_name));
  b.setEndpoint(text_of(m.endpoint));
  b.setPid(m.pid);
  b.setCrashLineEndpoint(text_of(m.crash_line_endpoint));
}
void put(Body::Builder body, const Directory& m) {
  auto b = body.initDirectory();
  auto endpoints = b.initEndpoints(list_size(m.endpoints.size()));
  for (capnp::uint i = 0; i < endpoints.size(); ++i) endpoints.set(i, text_of(m.endpoints[i]));
  b.setEpochRealtimeUs(m.epoch_realtime_us);
  auto lines = b.initCrashLineEndpoints(list_size(m.crash_line_endpoints.size()));
  for (capnp::uint i = 0; i < lines.size(); ++i) lines.set(i, text_of(m.crash_line_endpoints[i]));
}
void put(Body::Builder body, const StopRun& m) { body.initStopRun().setImmediate(m.immediate); }
void put(Body::Builder body, const Kill& m) { body.initKill().setPauseMs(m.pause_ms); }
void put(Body::Builder body, const ClockRequest& m) {
  auto b = body.initClockRequest();
  b.setSequence(m.sequence);
  b.setT1Us(m.t1_us);
}
void put(Body::Builder body, const ClockReply& m) {
  auto b = body.initClockReply();
  b.setSequence(m.sequence);
  b.setT1Us(m.t1_us);
  b.setT2Us(m.t2_us);
  b.setT3Us(m.t3_us);
}
void put(Body::Builder body, const NodeStats& m) {
  auto b = body.initNodeStats();
  b.setAtUs(m.at_us);
  b.setFinal(m.final);
  auto counters = b.initCounters(list_size(m.counters.size()));
  for (capnp::uint i = 0; i < counters.size(); ++i) {
    counters[i].setName(text_of(m.counters[i].name));
    counters[i].setValue(m.counters[i].value);
  }
}
void put(Body::Builder body, const TraceBatch& m) {
  auto events = body.initTraceBatch().initEvents(list_size(m.events.size()));
  for (capnp::uint i = 0; i < events.size(); ++i) {
    const TraceEvent& e = m.events[i];
    events[i].setAtUs(e.at_us);
    events[i].setNode(e.node);
    events[i].setKind(static_cast<std::uint8_t>(e.kind));
    auto details = events[i].initDetails(e.detail_count);
    for (capnp::uint j = 0; j < e.detail_count; ++j) {
      details[j].setKey(static_cast<std::uint8_t>(e.details[j].key));
      details[j].setValue(e.details[j].value);
    }
    if (!e.text.empty()) events[i].setText(text_of(e.text));
  }
}
void put(Body::Builder body, const DeliveryBatch& m) {
  auto b = body.initDeliveryBatch();
  auto deliveries = b.initDeliveries(list_size(m.deliveries.size()));
  for (capnp::uint i = 0; i < deliveries.size(); ++i) {
    const Delivery& d = m.deliveries[i];
    deliveries[i].setAtUs(d.at_us);
    deliveries[i].setStream(d.stream);
    deliveries[i].setFrom(d.from);
    deliveries[i].setReplayed(d.replayed);
    put_tuple(deliveries[i].initTuple(), d.tuple);
  }
  b.setEndOfOutput(m.end_of_output);
  if (m.merge_orders.empty()) return;
  auto orders = b.initMergeOrders(list_size(m.merge_orders.size()));
  for (capnp::uint i = 0; i < orders.size(); ++i) {
    const MergeOrder& o = m.merge_orders[i];
    orders[i].setNode(o.node);
    orders[i].setEpoch(o.epoch);
    orders[i].setActing(o.acting);
    orders[i].setFollowing(o.following);
    orders[i].setOpIndex(o.op_index);
    orders[i].setFirstOutput(o.first_output);
    auto runs = orders[i].initRuns(list_size(o.runs.size()));
    for (capnp::uint j = 0; j < runs.size(); ++j) {
      runs[j].setPort(o.runs[j].port);
      runs[j].setFirstInput(o.runs[j].first_input);
      runs[j].setCount(o.runs[j].count);
    }
  }
}

}  // namespace

void encode_into(const Envelope& envelope, const std::function<std::uint8_t*(std::size_t)>& room) {
  capnp::MallocMessageBuilder builder(list_size(envelope_words(envelope)));
  auto root = builder.initRoot<wire::Envelope>();
  auto header = root.initHeader();
  header.setSender(envelope.header.sender);
  header.setEpoch(envelope.header.epoch);
  header.setSentUs(envelope.header.sent_us);
  auto body = root.initBody();
  std::visit([&body](const auto& m) { put(body, m); }, envelope.body);

  // The same bytes capnp::messageToFlatArray() returns, written straight into the caller's room.
  const std::size_t size = capnp::computeSerializedSizeInWords(builder) * sizeof(capnp::word);
  std::uint8_t* out = room(size);
  kj::ArrayOutputStream stream(kj::arrayPtr(out, size));
  capnp::writeMessage(stream, builder);
  HAPAIR_CHECK_MSG(stream.getArray().size() == size, "wrote " << stream.getArray().size() << " of " << size << " bytes");
}

Bytes encode(const Envelope& envelope) {
  Bytes out;
  encode_into(envelope, [&out](std::size_t size) {
    out.resize(size);
    return out.data();
  });
  return out;
}

}  // namespace hapair
