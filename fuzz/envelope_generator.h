// Structure-aware input for the wire fuzz targets: turns fuzzer bytes into valid Envelope values
// of every message kind whose fields a peer could set to anything — huge counts and lengths,
// unknown node, stream and fragment ids, epochs far in the past or future, checkpoint chunks with
// any index and count, tuple ids that go backwards. libFuzzer mutates the bytes; this maps them
// onto the interesting corners of each field, so the decoder's checks and the role cores behind
// it see values a random byte string would almost never reach.
//
// Invariant: the generator consumes a bounded number of bytes per envelope and bounds every list
// (kListMax entries, kBlobMax bytes), so one input costs bounded time and memory: an absurd
// *claim* (a count field, an id) is cheap, an absurd *allocation* is not what we test here (the
// decoder's reader limits are tested by the raw-frame target).
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "protocols/messages.h"

namespace hapair::fuzz {

inline constexpr std::size_t kListMax = 40;
inline constexpr std::size_t kBlobMax = 600;

class EnvelopeGenerator {
 public:
  // `node_count`, `stream_count`, `fragment_count`: the plan the envelopes are aimed at, so
  // most ids are real ones and some are just past the end or kNo*.
  EnvelopeGenerator(FuzzedDataProvider& in, std::size_t node_count, std::size_t stream_count,
                    std::size_t fragment_count)
      : in_(in), nodes_(node_count), streams_(stream_count), fragments_(fragment_count) {}

  Envelope envelope() {
    Envelope e;
    e.header.sender = node();
    e.header.epoch = epoch();
    e.header.sent_us = static_cast<TimeUs>(u64());
    e.body = body(in_.ConsumeIntegralInRange<std::size_t>(0, std::variant_size_v<Message> - 1));
    return e;
  }

  Message body(std::size_t kind) {
    switch (kind) {
      case 0: {
        TupleBatch m{stream(), tuples(), in_.ConsumeBool(), in_.ConsumeBool(), u64(), u64()};
        return m;
      }
      case 1: return Level0Ack{stream(), u64(), in_.ConsumeBool()};
      case 2: return Level1Ack{stream(), u64(), u64(), blob(), forwarded(1)};
      case 3: {
        Checkpoint m;
        m.checkpoint_id = u64();
        m.delta = in_.ConsumeBool();
        m.base_checkpoint_id = u64();
        // Any count a sender may claim (up to 2^32 - 1 chunks) and any index inside it: the
        // encoder refuses an index outside the count (our bug), the decoder refuses it from a
        // peer (decode_fuzz reaches that).
        m.chunk_count = std::max<std::uint32_t>(1, u32());
        m.chunk_index = u32() % m.chunk_count;
        m.payload = blob();
        return m;
      }
      case 4: return CheckpointAck{u64()};
      case 5: return Heartbeat{u64()};
      case 6: return Takeover{fragment(), node(), epoch(), {{node(), u64()}}};
      case 7: return Redirect{stream(), node(), in_.ConsumeBool(), u64()};
      case 8: return ReplayRequest{stream(), u64(), u64(), u64()};
      case 9: return RestartPoints{stream(), u64(), points(1)};
      case 10: {
        Determinants m{static_cast<std::uint16_t>(u32() & 0xffff), u64(), {}};
        const std::size_t n = count();
        for (std::size_t i = 0; i < n; ++i)
          m.records.push_back(DeterminantRecord{static_cast<std::uint16_t>(u32() & 0xffff), u32()});
        return m;
      }
      case 11: return DeterminantAck{static_cast<std::uint16_t>(u32() & 0xffff), u64()};
      case 12: return Rejoin{fragment(), node(), u64()};
      case 13: return Candidacy{fragment(), node(), u64()};
      case 14: return CheckpointTrigger{u64()};
      case 15: return CheckpointBarrier{stream(), u64(), u64()};
      case 16: return CheckpointComplete{u64()};
      case 17: {
        Rollback m{u64(), u64(), fragment(), {}};
        const std::size_t n = count();
        for (std::size_t i = 0; i < n; ++i) m.fragments.push_back(fragment());
        return m;
      }
      case 18: return Restored{u64(), fragment()};
      case 19: return Hello{text(), text(), static_cast<std::int64_t>(u64()), text()};
      case 20: {
        Directory m;
        const std::size_t n = count();
        for (std::size_t i = 0; i < n; ++i) m.endpoints.push_back(text());
        m.epoch_realtime_us = static_cast<std::int64_t>(u64());
        // Either no crash lines or one per endpoint (the decoder refuses other lengths).
        if (in_.ConsumeBool())
          for (std::size_t i = 0; i < n; ++i) m.crash_line_endpoints.push_back(text());
        return m;
      }
      case 21: return StopRun{in_.ConsumeBool()};
      case 22: return Kill{static_cast<std::int64_t>(u64())};
      case 23: {
        NodeStats m{static_cast<TimeUs>(u64()), in_.ConsumeBool(), {}};
        const std::size_t n = count();
        for (std::size_t i = 0; i < n; ++i) m.counters.push_back(Counter{text(), static_cast<std::int64_t>(u64())});
        return m;
      }
      case 24: {
        TraceBatch m;
        const std::size_t n = count();
        for (std::size_t i = 0; i < n; ++i) {
          TraceEvent e(static_cast<TimeUs>(u64()), node(),
                       static_cast<TraceKind>(in_.ConsumeIntegralInRange<std::size_t>(0, kTraceKindCount - 1)));
          const std::size_t details = in_.ConsumeIntegralInRange<std::size_t>(0, kTraceDetailsMax);
          for (std::size_t d = 0; d < details; ++d) {
            const auto key = static_cast<TraceKey>(in_.ConsumeIntegralInRange<std::size_t>(0, kTraceKeyCount - 1));
            if (!e.has(key)) e.with(key, static_cast<std::int64_t>(u64()));
          }
          e.text = text();
          m.events.push_back(std::move(e));
        }
        return m;
      }
      case 26: return ClockRequest{u64(), static_cast<std::int64_t>(u64())};
      case 27:
        return ClockReply{u64(), static_cast<std::int64_t>(u64()), static_cast<std::int64_t>(u64()),
                          static_cast<std::int64_t>(u64())};
      default: {  // 25
        DeliveryBatch m;
        const std::size_t n = count();
        for (std::size_t i = 0; i < n; ++i)
          m.deliveries.push_back(Delivery{static_cast<TimeUs>(u64()), stream(), tuple()});
        m.end_of_output = in_.ConsumeBool();
        const std::size_t o = count();
        for (std::size_t i = 0; i < o; ++i) {
          MergeOrder order{node(), epoch(), in_.ConsumeBool(), in_.ConsumeBool(),
                           static_cast<std::uint16_t>(u32() & 0xffff), u64(), {}};
          const std::size_t r = count();
          for (std::size_t j = 0; j < r; ++j)
            order.runs.push_back(MergeRun{static_cast<std::uint16_t>(u32() & 0xffff), u64(), u32()});
          m.merge_orders.push_back(std::move(order));
        }
        return m;
      }
    }
  }

  // A 64-bit field: mostly small numbers near what a run uses, sometimes the extremes.
  std::uint64_t u64() {
    switch (in_.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: return 0;
      case 1: return 1;
      case 2: return std::numeric_limits<std::uint64_t>::max() - in_.ConsumeIntegralInRange<std::uint64_t>(0, 2);
      case 3: return std::uint64_t{1} << in_.ConsumeIntegralInRange<int>(0, 63);
      case 4: return static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::min());  // negative as int64
      case 5: return in_.ConsumeIntegral<std::uint64_t>();
      default: return in_.ConsumeIntegralInRange<std::uint64_t>(0, 3000);
    }
  }
  std::uint32_t u32() {
    switch (in_.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: return 0;
      case 1: return std::numeric_limits<std::uint32_t>::max();
      case 2: return in_.ConsumeIntegral<std::uint32_t>();
      default: return in_.ConsumeIntegralInRange<std::uint32_t>(0, 8);
    }
  }
  // A node id: a real one, one just past the plan, or kNoNode.
  NodeId node() { return id_near(nodes_); }
  StreamId stream() { return id_near(streams_); }
  FragmentId fragment() { return id_near(fragments_); }
  // An epoch: the first few, or absurdly far ahead (a fenced node must not be revived by it).
  Epoch epoch() {
    return in_.ConsumeBool() ? in_.ConsumeIntegralInRange<Epoch>(0, 3) : u64();
  }

 private:
  std::uint16_t id_near(std::size_t real) {
    switch (in_.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: return 0xffff;
      case 1: return static_cast<std::uint16_t>(real + in_.ConsumeIntegralInRange<std::size_t>(0, 3));
      case 2: return in_.ConsumeIntegral<std::uint16_t>();
      default: return real == 0 ? 0 : static_cast<std::uint16_t>(in_.ConsumeIntegralInRange<std::size_t>(0, real - 1));
    }
  }
  std::size_t count() { return in_.ConsumeIntegralInRange<std::size_t>(0, in_.ConsumeBool() ? 3 : kListMax); }
  Bytes blob() {
    const auto s = in_.ConsumeBytes<std::uint8_t>(in_.ConsumeIntegralInRange<std::size_t>(0, kBlobMax));
    return Bytes(s.begin(), s.end());
  }
  std::string text() { return in_.ConsumeRandomLengthString(80); }
  Tuple tuple() {
    Tuple t;
    t.id = u64();
    t.ts_us = static_cast<TimeUs>(u64());
    t.key = static_cast<std::int64_t>(u64());
    t.value = in_.ConsumeBool() ? in_.ConsumeFloatingPoint<double>() : static_cast<double>(in_.ConsumeIntegral<std::int8_t>());
    t.lineage = u64();
    return t;
  }
  Tuples tuples() {
    Tuples out;
    const std::size_t n = count();
    // Mostly ascending ids from a fuzzed start (what a sender would send), sometimes anything.
    const bool ascending = in_.ConsumeBool();
    TupleId id = u64();
    for (std::size_t i = 0; i < n; ++i) {
      Tuple t = tuple();
      if (ascending) t.id = id++;
      out.push_back(t);
    }
    return out;
  }
  std::vector<StoredRestartPoint> points(int depth) {
    std::vector<StoredRestartPoint> out;
    const std::size_t n = in_.ConsumeIntegralInRange<std::size_t>(0, 3);
    for (std::size_t i = 0; i < n; ++i) out.push_back(StoredRestartPoint{u64(), u64(), blob(), forwarded(depth)});
    return out;
  }
  std::vector<DownstreamRestartPoints> forwarded(int depth) {
    std::vector<DownstreamRestartPoints> out;
    if (depth <= 0) return out;
    const std::size_t n = in_.ConsumeIntegralInRange<std::size_t>(0, 3);
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(DownstreamRestartPoints{stream(), fragment(), u64(), points(depth - 1)});
    return out;
  }

  FuzzedDataProvider& in_;
  std::size_t nodes_, streams_, fragments_;
};

}  // namespace hapair::fuzz
