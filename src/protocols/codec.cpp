// The wire codec (see codec.h): plain messages.h values <-> Cap'n Proto Envelope bytes.
//
// Encoding sizes the builder's first segment from the message, so every envelope is written as
// one segment without reallocation (a 100-tuple batch costs one allocation for the builder and
// one for the output). Decoding never throws and never trusts the peer: every failure, whether
// our own checks or a kj::Exception from the capnp reader, becomes a counted drop with a reason.
#include "protocols/codec.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/array.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <cstring>
#include <exception>
#include <string_view>
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
static_assert(same_kind<ReplayRequest>(Body::REPLAY_REQUEST));
static_assert(same_kind<RestartPoints>(Body::RESTART_POINTS));
static_assert(same_kind<Determinants>(Body::DETERMINANTS));
static_assert(same_kind<DeterminantAck>(Body::DETERMINANT_ACK));
static_assert(same_kind<Hello>(Body::HELLO));
static_assert(same_kind<Directory>(Body::DIRECTORY));
static_assert(same_kind<StopRun>(Body::STOP_RUN));
static_assert(same_kind<Kill>(Body::KILL));
static_assert(same_kind<NodeStats>(Body::NODE_STATS));
static_assert(same_kind<TraceBatch>(Body::TRACE_BATCH));
static_assert(same_kind<DeliveryBatch>(Body::DELIVERY_BATCH));
static_assert(static_cast<std::size_t>(Body::DELIVERY_BATCH) + 1 == std::variant_size_v<Message>,
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
std::size_t body_words(const RestartPoints& m) {
  std::size_t words = 4;
  for (const auto& p : m.points) words += point_words(p);
  return words;
}
std::size_t body_words(const Determinants& m) { return 4 + m.records.size(); }
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
  b.setStandby(m.standby);
  b.setStandbyIncarnation(m.standby_incarnation);
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

// ---- decode ----------------------------------------------------------------------------------

// Why a decoded envelope was refused (reason: the dropped_by_reason key).
struct Refusal {
  const char* reason = nullptr;
  std::string detail;
};

// Converts a capnp Envelope into plain values. It refuses lists longer than the message has
// words: every element we write takes at least one word, but capnp allows lists of zero-sized
// elements, so without this check a tiny message could make us allocate gigabytes of tuples.
class Converter {
 public:
  explicit Converter(std::size_t message_words) : message_words_(message_words) {}

  std::optional<Message> body(Body::Reader body) {
    switch (body.which()) {
      case Body::TUPLE_BATCH: return convert<TupleBatch>(body.getTupleBatch());
      case Body::LEVEL0_ACK: return convert<Level0Ack>(body.getLevel0Ack());
      case Body::LEVEL1_ACK: return convert<Level1Ack>(body.getLevel1Ack());
      case Body::CHECKPOINT: return convert<Checkpoint>(body.getCheckpoint());
      case Body::CHECKPOINT_ACK: return convert<CheckpointAck>(body.getCheckpointAck());
      case Body::HEARTBEAT: return convert<Heartbeat>(body.getHeartbeat());
      case Body::TAKEOVER: return convert<Takeover>(body.getTakeover());
      case Body::REDIRECT: return convert<Redirect>(body.getRedirect());
      case Body::REJOIN: return convert<Rejoin>(body.getRejoin());
      case Body::REPLAY_REQUEST: return convert<ReplayRequest>(body.getReplayRequest());
      case Body::RESTART_POINTS: return convert<RestartPoints>(body.getRestartPoints());
      case Body::DETERMINANTS: return convert<Determinants>(body.getDeterminants());
      case Body::DETERMINANT_ACK: return convert<DeterminantAck>(body.getDeterminantAck());
      case Body::HELLO: return convert<Hello>(body.getHello());
      case Body::DIRECTORY: return convert<Directory>(body.getDirectory());
      case Body::STOP_RUN: return convert<StopRun>(body.getStopRun());
      case Body::KILL: return convert<Kill>(body.getKill());
      case Body::NODE_STATS: return convert<NodeStats>(body.getNodeStats());
      case Body::TRACE_BATCH: return convert<TraceBatch>(body.getTraceBatch());
      case Body::DELIVERY_BATCH: return convert<DeliveryBatch>(body.getDeliveryBatch());
    }
    // A discriminant from a newer schema, or a corrupt one.
    refuse("unknown message kind", "union discriminant " + std::to_string(static_cast<unsigned>(body.which())));
    return std::nullopt;
  }

  const Refusal& refusal() const { return refusal_; }

 private:
  template <class T, class R>
  std::optional<Message> convert(R reader) {
    T out;
    if (!get(reader, out)) return std::nullopt;
    return Message(std::in_place_type<T>, std::move(out));
  }

  bool refuse(const char* reason, std::string detail) {
    refusal_ = Refusal{reason, std::move(detail)};
    return false;
  }
  template <class List>
  bool list_fits(const List& list, const char* what) {
    if (list.size() <= message_words_) return true;
    return refuse("list longer than message", std::string(what) + " claims " + std::to_string(list.size()) +
                                                  " elements in a message of " +
                                                  std::to_string(message_words_) + " words");
  }

  static Bytes bytes_of(capnp::Data::Reader d) { return Bytes(d.begin(), d.end()); }
  static std::string string_of(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }
  static Tuple tuple_of(wire::Tuple::Reader r) {
    return Tuple{r.getId(), r.getTsUs(), r.getKey(), r.getValue(), r.getLineage()};
  }

  bool get(wire::TupleBatch::Reader r, TupleBatch& m) {
    m.stream = r.getStream();
    const auto tuples = r.getTuples();
    if (!list_fits(tuples, "TupleBatch.tuples")) return false;
    m.tuples.reserve(tuples.size());
    for (auto t : tuples) m.tuples.push_back(tuple_of(t));
    m.end_of_stream = r.getEndOfStream();
    m.replay = r.getReplay();
    m.prev_id = r.getPrevId();
    m.held_generation = r.getHeldGeneration();
    return true;
  }
  bool get(wire::Level0Ack::Reader r, Level0Ack& m) {
    m.stream = r.getStream();
    m.up_to = r.getUpTo();
    m.end_of_stream = r.getEndOfStream();
    return true;
  }
  bool get(wire::Level1Ack::Reader r, Level1Ack& m) {
    m.stream = r.getStream();
    m.up_to = r.getUpTo();
    m.generation = r.getGeneration();
    m.restart_point = bytes_of(r.getRestartPoint());
    return get_forwarded(r.getForwarded(), m.forwarded, 0);
  }
  // Restart points nest: a RestartPoints offer holds points (level 1) whose forwarded lists hold
  // the downstream's points (level 2), whose own lists carry trim positions only. Points below
  // level 2 are never sent, and are not read.
  static constexpr int kPointLevelsMax = 2;
  bool get_point(wire::StoredRestartPoint::Reader r, StoredRestartPoint& p, int level) {
    p.generation = r.getGeneration();
    p.up_to = r.getUpTo();
    p.restart_point = bytes_of(r.getRestartPoint());
    return get_forwarded(r.getForwarded(), p.forwarded, level);
  }
  bool get_forwarded(capnp::List<wire::DownstreamRestartPoints>::Reader list,
                     std::vector<DownstreamRestartPoints>& out, int level) {
    if (!list_fits(list, "forwarded restart points")) return false;
    out.reserve(list.size());
    for (auto f : list) {
      DownstreamRestartPoints d;
      d.stream = f.getStream();
      d.consumer = f.getConsumer();
      d.trimmed_up_to = f.getTrimmedUpTo();
      const auto points = f.getPoints();
      if (!list_fits(points, "DownstreamRestartPoints.points")) return false;
      if (level < kPointLevelsMax) {
        for (auto p : points) {
          StoredRestartPoint sp;
          if (!get_point(p, sp, level + 1)) return false;
          d.points.push_back(std::move(sp));
        }
      }
      out.push_back(std::move(d));
    }
    return true;
  }
  bool get(wire::Checkpoint::Reader r, Checkpoint& m) {
    m.checkpoint_id = r.getCheckpointId();
    m.delta = r.getDelta();
    m.base_checkpoint_id = r.getBaseCheckpointId();
    m.chunk_index = r.getChunkIndex();
    m.chunk_count = r.getChunkCount();
    // A standby indexes its chunk table with these; out of range they would be undefined.
    if (m.chunk_count == 0 || m.chunk_index >= m.chunk_count) {
      return refuse("value out of range", "checkpoint " + std::to_string(m.checkpoint_id) + " chunk " +
                                              std::to_string(m.chunk_index) + " of " +
                                              std::to_string(m.chunk_count));
    }
    m.payload = bytes_of(r.getPayload());
    return true;
  }
  bool get(wire::CheckpointAck::Reader r, CheckpointAck& m) {
    m.checkpoint_id = r.getCheckpointId();
    return true;
  }
  bool get(wire::Heartbeat::Reader r, Heartbeat& m) {
    m.seq = r.getSeq();
    return true;
  }
  bool get(wire::Takeover::Reader r, Takeover& m) {
    m.fragment = r.getFragment();
    m.new_primary = r.getNewPrimary();
    m.epoch = r.getEpoch();
    m.standby = r.getStandby();
    m.standby_incarnation = r.getStandbyIncarnation();
    if (m.epoch > kEpochMax) return refuse("value out of range", "Takeover.epoch " + std::to_string(m.epoch));
    return true;
  }
  bool get(wire::Rejoin::Reader r, Rejoin& m) {
    m.fragment = r.getFragment();
    m.node = r.getNode();
    m.incarnation = r.getIncarnation();
    return true;
  }
  bool get(wire::Redirect::Reader r, Redirect& m) {
    m.stream = r.getStream();
    m.consumer = r.getConsumer();
    m.subscribe = r.getSubscribe();
    m.after_id = r.getAfterId();
    return true;
  }
  bool get(wire::ReplayRequest::Reader r, ReplayRequest& m) {
    m.stream = r.getStream();
    m.after_id = r.getAfterId();
    m.generation = r.getGeneration();
    m.up_to = r.getUpTo();
    return true;
  }
  bool get(wire::RestartPoints::Reader r, RestartPoints& m) {
    m.stream = r.getStream();
    m.trimmed_up_to = r.getTrimmedUpTo();
    const auto points = r.getPoints();
    if (!list_fits(points, "RestartPoints.points")) return false;
    m.points.reserve(points.size());
    for (auto p : points) {
      StoredRestartPoint sp;
      if (!get_point(p, sp, 1)) return false;
      m.points.push_back(std::move(sp));
    }
    return true;
  }
  bool get(wire::Determinants::Reader r, Determinants& m) {
    m.op_index = r.getOpIndex();
    m.first_seq = r.getFirstSeq();
    const auto records = r.getRecords();
    if (!list_fits(records, "Determinants.records")) return false;
    m.records.reserve(records.size());
    for (auto d : records) m.records.push_back(DeterminantRecord{d.getPort(), d.getCount()});
    return true;
  }
  bool get(wire::DeterminantAck::Reader r, DeterminantAck& m) {
    m.op_index = r.getOpIndex();
    m.up_to_seq = r.getUpToSeq();
    return true;
  }
  bool get(wire::Hello::Reader r, Hello& m) {
    m.node_name = string_of(r.getNodeName());
    m.endpoint = string_of(r.getEndpoint());
    m.pid = r.getPid();
    m.crash_line_endpoint = string_of(r.getCrashLineEndpoint());
    return true;
  }
  bool get(wire::Directory::Reader r, Directory& m) {
    const auto endpoints = r.getEndpoints();
    if (!list_fits(endpoints, "Directory.endpoints")) return false;
    m.endpoints.reserve(endpoints.size());
    for (auto e : endpoints) m.endpoints.push_back(string_of(e));
    m.epoch_realtime_us = r.getEpochRealtimeUs();
    const auto lines = r.getCrashLineEndpoints();
    if (!list_fits(lines, "Directory.crashLineEndpoints")) return false;
    if (lines.size() != 0 && lines.size() != endpoints.size()) {
      return refuse("list length mismatch", "Directory.crashLineEndpoints has " + std::to_string(lines.size()) +
                                                " entries for " + std::to_string(endpoints.size()) + " nodes");
    }
    m.crash_line_endpoints.reserve(lines.size());
    for (auto e : lines) m.crash_line_endpoints.push_back(string_of(e));
    return true;
  }
  bool get(wire::StopRun::Reader r, StopRun& m) {
    m.immediate = r.getImmediate();
    return true;
  }
  bool get(wire::Kill::Reader r, Kill& m) {
    m.pause_ms = r.getPauseMs();
    return true;
  }
  bool get(wire::NodeStats::Reader r, NodeStats& m) {
    m.at_us = r.getAtUs();
    m.final = r.getFinal();
    const auto counters = r.getCounters();
    if (!list_fits(counters, "NodeStats.counters")) return false;
    m.counters.reserve(counters.size());
    for (auto c : counters) m.counters.push_back(Counter{string_of(c.getName()), c.getValue()});
    return true;
  }
  bool get(wire::TraceBatch::Reader r, TraceBatch& m) {
    const auto events = r.getEvents();
    if (!list_fits(events, "TraceBatch.events")) return false;
    m.events.reserve(events.size());
    for (auto e : events) {
      if (e.getKind() >= kTraceKindCount) {
        return refuse("value out of range", "TraceEvent.kind " + std::to_string(e.getKind()));
      }
      TraceEvent event(e.getAtUs(), e.getNode(), static_cast<TraceKind>(e.getKind()));
      const auto details = e.getDetails();
      if (details.size() > kTraceDetailsMax) {
        return refuse("value out of range", "TraceEvent with " + std::to_string(details.size()) + " details");
      }
      for (auto d : details) {
        const auto key = static_cast<TraceKey>(d.getKey());
        if (d.getKey() >= kTraceKeyCount || event.has(key)) {
          return refuse("value out of range", "TraceEvent detail key " + std::to_string(d.getKey()));
        }
        event.with(key, d.getValue());
      }
      event.text = string_of(e.getText());
      m.events.push_back(std::move(event));
    }
    return true;
  }
  bool get(wire::DeliveryBatch::Reader r, DeliveryBatch& m) {
    const auto deliveries = r.getDeliveries();
    if (!list_fits(deliveries, "DeliveryBatch.deliveries")) return false;
    m.deliveries.reserve(deliveries.size());
    for (auto d : deliveries)
      m.deliveries.push_back(Delivery{d.getAtUs(), d.getStream(), tuple_of(d.getTuple()), d.getFrom(), d.getReplayed()});
    m.end_of_output = r.getEndOfOutput();
    const auto orders = r.getMergeOrders();
    if (!list_fits(orders, "DeliveryBatch.mergeOrders")) return false;
    m.merge_orders.reserve(orders.size());
    for (auto o : orders) {
      const auto runs = o.getRuns();
      if (!list_fits(runs, "MergeOrder.runs")) return false;
      MergeOrder order{o.getNode(), o.getEpoch(), o.getActing(), o.getFollowing(), o.getOpIndex(), o.getFirstOutput(), {}};
      order.runs.reserve(runs.size());
      for (auto run : runs) order.runs.push_back(MergeRun{run.getPort(), run.getFirstInput(), run.getCount()});
      m.merge_orders.push_back(std::move(order));
    }
    return true;
  }

  std::size_t message_words_;
  Refusal refusal_;
};

std::nullopt_t drop(DecodeStats& stats, const char* reason, const std::string& detail) {
  ++stats.dropped;
  ++stats.dropped_by_reason[reason];
  stats.last_error = std::string(reason) + ": " + detail;
  return std::nullopt;
}

// The capnp reader reports limit violations as exceptions; name the two limits apart from
// other malformed input so an operator knows which DecodeLimits knob to look at.
const char* reason_of(const kj::Exception& e) {
  const std::string_view description(e.getDescription().cStr());
  if (description.find("traversal limit") != std::string_view::npos) return "traversal limit exceeded";
  if (description.find("deeply-nested") != std::string_view::npos) return "nesting limit exceeded";
  return "malformed capnp";
}

}  // namespace

Bytes encode(const Envelope& envelope) {
  capnp::MallocMessageBuilder builder(list_size(envelope_words(envelope)));
  auto root = builder.initRoot<wire::Envelope>();
  auto header = root.initHeader();
  header.setSender(envelope.header.sender);
  header.setEpoch(envelope.header.epoch);
  header.setSentUs(envelope.header.sent_us);
  auto body = root.initBody();
  std::visit([&body](const auto& m) { put(body, m); }, envelope.body);

  // The same bytes capnp::messageToFlatArray() returns, written straight into the result.
  Bytes out(capnp::computeSerializedSizeInWords(builder) * sizeof(capnp::word));
  kj::ArrayOutputStream stream(kj::arrayPtr(out.data(), out.size()));
  capnp::writeMessage(stream, builder);
  HAPAIR_CHECK_MSG(stream.getArray().size() == out.size(),
                   "wrote " << stream.getArray().size() << " of " << out.size() << " bytes");
  return out;
}

std::optional<Envelope> decode(const std::uint8_t* data, std::size_t size, DecodeStats& stats,
                               const DecodeLimits& limits) {
  HAPAIR_CHECK_MSG(limits.traversal_limit_words > 0 && limits.nesting_limit > 0,
                   "traversal_limit_words=" << limits.traversal_limit_words
                                            << " nesting_limit=" << limits.nesting_limit);
  HAPAIR_CHECK(data != nullptr || size == 0);
  if (size == 0) return drop(stats, "empty", "0 bytes");
  if (size > limits.max_message_bytes) {
    return drop(stats, "too large",
                std::to_string(size) + " bytes > max_message_bytes " + std::to_string(limits.max_message_bytes));
  }
  if (size % sizeof(capnp::word) != 0) {
    return drop(stats, "not word aligned length", std::to_string(size) + " bytes is not a multiple of 8");
  }
  try {
    const std::size_t words = size / sizeof(capnp::word);
    // capnp 0.9 refuses unaligned input, and ZeroMQ frames often are unaligned: read in place
    // only when the input happens to be aligned, otherwise from an aligned copy.
    kj::Array<capnp::word> aligned_copy;
    const capnp::word* begin = reinterpret_cast<const capnp::word*>(data);
    if (reinterpret_cast<std::uintptr_t>(data) % alignof(capnp::word) != 0) {
      aligned_copy = kj::heapArray<capnp::word>(words);
      std::memcpy(aligned_copy.begin(), data, size);
      begin = aligned_copy.begin();
    }
    capnp::ReaderOptions options;
    options.traversalLimitInWords = limits.traversal_limit_words;
    options.nestingLimit = limits.nesting_limit;
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(begin, words), options);
    // One frame is one message; bytes after it mean the frame is not what the sender wrote.
    if (reader.getEnd() != begin + words) {
      return drop(stats, "trailing bytes",
                  std::to_string((begin + words - reader.getEnd()) * sizeof(capnp::word)) +
                      " bytes after the message");
    }
    const auto root = reader.getRoot<wire::Envelope>();
    Envelope envelope;
    const auto header = root.getHeader();
    envelope.header.sender = header.getSender();
    envelope.header.epoch = header.getEpoch();
    envelope.header.sent_us = header.getSentUs();
    Converter converter(words);
    std::optional<Message> body = converter.body(root.getBody());
    if (!body) return drop(stats, converter.refusal().reason, converter.refusal().detail);
    // Epochs only grow by one per takeover; one near 2^64 is a corrupt or hostile header, and
    // following it would leave no room for the next takeover's epoch.
    if (envelope.header.epoch > kEpochMax) {
      return drop(stats, "value out of range", "header epoch " + std::to_string(envelope.header.epoch));
    }
    envelope.body = std::move(*body);
    ++stats.decoded;
    return envelope;
  } catch (const kj::Exception& e) {
    return drop(stats, reason_of(e), e.getDescription().cStr());
  } catch (const std::exception& e) {
    // E.g. std::bad_alloc: the limits keep allocations proportional to the input, but a drop is
    // still the right answer to anything the environment throws while decoding.
    return drop(stats, "decoder exception", e.what());
  } catch (...) {
    return drop(stats, "decoder exception", "unknown exception");
  }
}

}  // namespace hapair
