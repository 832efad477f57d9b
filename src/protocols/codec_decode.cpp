// The wire codec (see codec.h), decoding: Cap'n Proto Envelope bytes -> plain messages.h values.
// Encoding is in codec.cpp.
//
// Decoding never throws and never trusts the peer: every failure, whether our own checks or a
// kj::Exception from the capnp reader, becomes a counted drop with a reason.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/array.h>
#include <kj/exception.h>

#include <cstring>
#include <exception>
#include <string_view>
#include <utility>

#include "protocols/check.h"
#include "protocols/codec.h"
#include "wire.capnp.h"

namespace hapair {
namespace {

using Body = wire::Envelope::Body;

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
      case Body::CANDIDACY: return convert<Candidacy>(body.getCandidacy());
      case Body::REPLAY_REQUEST: return convert<ReplayRequest>(body.getReplayRequest());
      case Body::RESTART_POINTS: return convert<RestartPoints>(body.getRestartPoints());
      case Body::DETERMINANTS: return convert<Determinants>(body.getDeterminants());
      case Body::DETERMINANT_ACK: return convert<DeterminantAck>(body.getDeterminantAck());
      case Body::CHECKPOINT_TRIGGER: return convert<CheckpointTrigger>(body.getCheckpointTrigger());
      case Body::CHECKPOINT_BARRIER: return convert<CheckpointBarrier>(body.getCheckpointBarrier());
      case Body::CHECKPOINT_COMPLETE: return convert<CheckpointComplete>(body.getCheckpointComplete());
      case Body::ROLLBACK: return convert<Rollback>(body.getRollback());
      case Body::RESTORED: return convert<Restored>(body.getRestored());
      case Body::HELLO: return convert<Hello>(body.getHello());
      case Body::DIRECTORY: return convert<Directory>(body.getDirectory());
      case Body::STOP_RUN: return convert<StopRun>(body.getStopRun());
      case Body::KILL: return convert<Kill>(body.getKill());
      case Body::NODE_STATS: return convert<NodeStats>(body.getNodeStats());
      case Body::TRACE_BATCH: return convert<TraceBatch>(body.getTraceBatch());
      case Body::DELIVERY_BATCH: return convert<DeliveryBatch>(body.getDeliveryBatch());
      case Body::CLOCK_REQUEST: return convert<ClockRequest>(body.getClockRequest());
      case Body::CLOCK_REPLY: return convert<ClockReply>(body.getClockReply());
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
  bool list_fits(const List& list, const char* what, std::size_t elements_per_word = 1) {
    // `elements_per_word`: a list of small primitives packs several to a word (four UInt16s).
    if (list.size() <= message_words_ * elements_per_word) return true;
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
    m.boundary_ms = r.getBoundaryMs();
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
    // No standby is kNoNode on the wire (and its incarnation says nothing).
    if (r.getStandby() != kNoNode) m.standbys = {StandbyRef{r.getStandby(), r.getStandbyIncarnation()}};
    const auto more = r.getMoreStandbys();
    if (more.size() > 0) {
      if (m.standbys.empty()) return refuse("malformed", "Takeover.moreStandbys without a first standby");
      if (more.size() + 1 > kStandbysMax)
        return refuse("value out of range", "Takeover names " + std::to_string(more.size() + 1) + " standbys, at most " +
                                                std::to_string(kStandbysMax));
      for (auto s : more) {
        if (s.getNode() == kNoNode) return refuse("malformed", "Takeover.moreStandbys names no node");
        m.standbys.push_back(StandbyRef{s.getNode(), s.getIncarnation()});
      }
    }
    if (m.epoch > kEpochMax) return refuse("value out of range", "Takeover.epoch " + std::to_string(m.epoch));
    // Which modes a plan knows is the route table's to check (a mode no approach registered is
    // a malformed takeover there); the wire keeps 0xff for "not known".
    if (r.getMode() != 0xff) m.mode = static_cast<HaMode>(r.getMode());
    return true;
  }
  bool get(wire::Candidacy::Reader r, Candidacy& m) {
    m.fragment = r.getFragment();
    m.failed = r.getFailed();
    m.position = r.getPosition();
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
  bool get(wire::CheckpointTrigger::Reader r, CheckpointTrigger& m) {
    m.checkpoint_id = r.getCheckpointId();
    return true;
  }
  bool get(wire::CheckpointBarrier::Reader r, CheckpointBarrier& m) {
    m.stream = r.getStream();
    m.checkpoint_id = r.getCheckpointId();
    m.after_id = r.getAfterId();
    return true;
  }
  bool get(wire::CheckpointComplete::Reader r, CheckpointComplete& m) {
    m.checkpoint_id = r.getCheckpointId();
    return true;
  }
  bool get(wire::Rollback::Reader r, Rollback& m) {
    m.number = r.getNumber();
    m.to = r.getTo();
    m.failed = r.getFailed();
    const auto fragments = r.getFragments();
    if (!list_fits(fragments, "Rollback.fragments", 4)) return false;
    m.fragments.reserve(fragments.size());
    for (FragmentId f : fragments) m.fragments.push_back(f);
    return true;
  }
  bool get(wire::Restored::Reader r, Restored& m) {
    m.number = r.getNumber();
    m.fragment = r.getFragment();
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
  bool get(wire::ClockRequest::Reader r, ClockRequest& m) {
    m.sequence = r.getSequence();
    m.t1_us = r.getT1Us();
    return true;
  }
  bool get(wire::ClockReply::Reader r, ClockReply& m) {
    m.sequence = r.getSequence();
    m.t1_us = r.getT1Us();
    m.t2_us = r.getT2Us();
    m.t3_us = r.getT3Us();
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

std::optional<Envelope> decode(const std::uint8_t* data, std::size_t size, DecodeStats& stats,
                               const DecodeLimits& limits, std::vector<std::uint64_t>* scratch) {
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
    static_assert(sizeof(std::uint64_t) == sizeof(capnp::word) && alignof(std::uint64_t) >= alignof(capnp::word));
    std::vector<std::uint64_t> own;
    const capnp::word* begin = reinterpret_cast<const capnp::word*>(data);
    if (reinterpret_cast<std::uintptr_t>(data) % alignof(capnp::word) != 0) {
      constexpr std::size_t kScratchWordsMax = 8192;  // 64 KiB: every data batch, no checkpoint chunk
      std::vector<std::uint64_t>& aligned = scratch && words <= kScratchWordsMax ? *scratch : own;
      if (aligned.size() < words) aligned.resize(words);
      std::memcpy(aligned.data(), data, size);
      begin = reinterpret_cast<const capnp::word*>(aligned.data());
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
