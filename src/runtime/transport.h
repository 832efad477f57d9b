// The data-plane transport of one node process: ZeroMQ PUSH/PULL over tcp, carrying codec
// Envelopes between nodes.
//
// Paper: the servers of a query network exchange tuple batches downstream and acknowledgements,
// checkpoints and heartbeats (sections 2 and 4); this is the real network those messages cross,
// and where their bytes are counted per message kind to measure each approach's runtime overhead
// (docs/EXPERIMENTS.md, "How we measure").
//
// Shape: one PULL socket bound per node (its inbox); one PUSH socket per peer, connected the
// first time something is sent to that peer. Sends never block: when ZeroMQ's queue towards a
// peer is full (EAGAIN), the encoded message waits in that peer's outbox and is retried in order
// on the next flush().
//
// Emulated links (docs/LINKS.md, driver/link_model.h): a message to a peer whose link the
// topology emulates ([links], [[link]]) waits, encoded, in that link's bounded delay queue until
// its release time, and the node's loop (CoreRunner::turn) hands it to the peer's socket then;
// loss and duplication are decided when it is handed over. Only this data plane is emulated: the
// launcher's control channel, the crash line and the partner watch's ZMTP heartbeats are not.
//
// Invariants: messages to one peer leave in the order send() was called (a message never
// overtakes one waiting in the outbox or in the link's delay queue); every outbox stays within
// outbox_messages_max messages and outbox_bytes_max bytes, and every message it drops to stay
// there is counted by kind; malformed input is counted and dropped, never asserted on.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include <zmq.hpp>

#include "driver/link_model.h"
#include "protocols/codec.h"
#include "protocols/core.h"
#include "protocols/messages.h"
#include "runtime/curve.h"

namespace hapair {

// IPv6 for `socket` when `endpoint` is one (tcp://[ADDRESS]:PORT, a host given by its IPv6
// address, docs/HOSTS.md); IPv4 endpoints keep IPv4-only sockets (ZeroMQ would report a dual
// stack socket's IPv4 address as ::ffff:A.B.C.D). Before bind or connect.
inline void allow_ipv6_for(zmq::socket_t& socket, const std::string& endpoint) {
  if (endpoint.find('[') != std::string::npos) socket.set(zmq::sockopt::ipv6, 1);
}


inline constexpr std::size_t kMessageKindCount = std::variant_size_v<Message>;

// The kind index (position in the Message variant) of message type T.
template <typename T, typename... Ts>
constexpr std::size_t kind_index_in(const std::variant<Ts...>*) {
  std::size_t index = 0;
  bool found = false;
  ((found = found || std::is_same_v<T, Ts>, index += found ? 0 : 1), ...);
  return index;
}
template <typename T>
inline constexpr std::size_t kKindOf = kind_index_in<T>(static_cast<const Message*>(nullptr));
// Hello is the first control-plane kind (messages.h, is_control_message).
static_assert(kKindOf<TupleBatch> == 0 && kKindOf<Hello> == kFirstControlKind);

// The rate limit of repeated log lines: the first ten occurrences, then every power of two, so
// a peer that floods garbage cannot flood the log but a steady trickle stays visible.
inline bool worth_logging(std::int64_t occurrence) {
  return occurrence <= 10 || (occurrence & (occurrence - 1)) == 0;
}

struct TransportConfig {
  // Where the PULL socket binds. "tcp://127.0.0.1:*" picks a free port; endpoint() tells which.
  std::string bind_endpoint = "tcp://127.0.0.1:*";
  // ZeroMQ's own queue bounds (ZMQ_SNDHWM per peer socket, ZMQ_RCVHWM on the inbox), in
  // messages. Raise them when batches are small and the network is fast.
  int send_hwm_messages = 10'000;
  int receive_hwm_messages = 10'000;
  // The outbox per peer, behind ZeroMQ's queue. When a send would exceed either bound, the
  // oldest non-tuple message is dropped first (a later heartbeat or ack supersedes it), and only
  // when the outbox holds nothing but tuple batches the oldest tuple batch.
  std::size_t outbox_messages_max = 4'096;
  std::size_t outbox_bytes_max = 64u << 20;
  DecodeLimits decode_limits;
  // CURVE (runtime/curve.h): the inbox is a CURVE server, every peer socket a client. Off (empty)
  // by default; the caller's CurveGate, bound in the same context before this transport, decides
  // who gets in.
  CurveKeys curve;
  // Names this transport in log lines ("hapair[filter]: ...").
  std::string log_name = "node";
};

// Decodes frames with the codec, counting what it drops and logging the drops to stderr with
// worth_logging()'s rate limit. Shared by the data transport and the control channels.
class FrameDecoder {
 public:
  FrameDecoder(std::string log_name, DecodeLimits limits) : log_name_(std::move(log_name)), limits_(limits) {}
  // Never assumes the frame is aligned (the codec copies into aligned words).
  std::optional<Envelope> decode(const void* data, std::size_t size);
  std::int64_t dropped() const { return static_cast<std::int64_t>(stats_.dropped); }
  const DecodeStats& stats() const { return stats_; }

 private:
  std::string log_name_;
  DecodeLimits limits_;
  DecodeStats stats_;
  std::vector<std::uint64_t> scratch_;  // aligned copies of unaligned frames, reused
};

// zmq::poll that treats an interrupted wait (EINTR: a signal arrived) as a wait in which nothing
// became ready, so signal handlers that only set a flag cannot crash the loop that checks it.
int poll_sockets(zmq::pollitem_t* items, std::size_t count, TimeUs wait_us);

// Cumulative counters, indexed by message kind (the Message variant's index).
struct TransportCounters {
  std::array<std::int64_t, kMessageKindCount> bytes_sent{};
  std::array<std::int64_t, kMessageKindCount> messages_sent{};
  std::array<std::int64_t, kMessageKindCount> outbox_dropped{};
  std::int64_t no_endpoint_dropped = 0;  // sends to a node nobody told us the endpoint of
  std::int64_t send_retries = 0;         // EAGAIN from ZeroMQ (the message went to the outbox)
  std::int64_t messages_received = 0;
  std::int64_t bytes_received = 0;
  std::int64_t unaligned_frames_received = 0;  // frames whose data was not 8-byte aligned
};

// A message on an emulated link: its encoded frame and its kind.
struct LinkFrame {
  zmq::message_t frame;
  std::size_t kind = 0;
};

class Transport {
 public:
  // Binds the inbox. Throws std::runtime_error naming the endpoint when it cannot be bound (an
  // environment failure, reported by the process host).
  Transport(zmq::context_t& context, TransportConfig config);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // The bound endpoint as ZeroMQ reports it (ZMQ_LAST_ENDPOINT), with the real port.
  const std::string& endpoint() const { return endpoint_; }

  // Where `node` listens. The socket is connected on the first send to it.
  void set_peer(NodeId node, const std::string& endpoint);

  // Encodes and sends without blocking; see the class comment for what happens under pressure.
  // `now_us` (run time) is when the message is handed to an emulated link; the two-argument form
  // uses the last time the transport was given (enough for peers whose links emulate nothing).
  void send(NodeId to, const Envelope& envelope, TimeUs now_us);
  void send(NodeId to, const Envelope& envelope) { send(to, envelope, last_now_us_); }

  // Emulates these links from now on (an empty set: none, the default).
  void emulate_links(OutgoingLinks<LinkFrame> links) { links_ = std::move(links); }
  // Hands every emulated message due at `now_us` to its peer's socket (or outbox); how many.
  std::size_t release_links(TimeUs now_us);
  // When the next emulated message is due; kNever when none waits.
  TimeUs next_link_release_us() const { return links_.empty() ? kNever : links_.next_release_us(); }
  bool emulates_links() const { return !links_.empty(); }
  // Retries every outbox in order; returns how many messages still wait.
  std::size_t flush();
  std::size_t outbox_messages() const { return outbox_messages_total_; }
  std::size_t outbox_messages(NodeId peer) const;
  std::size_t outbox_bytes(NodeId peer) const;

  // The next well-formed message waiting in the inbox, or nullopt when none is waiting now.
  // Never blocks; malformed frames are counted, logged and skipped.
  std::optional<Envelope> try_receive();
  // The inbox, for zmq::poll.
  zmq::socket_t& inbox() { return inbox_; }

  const TransportCounters& counters() const { return counters_; }
  std::int64_t decode_dropped() const { return decoder_.dropped(); }
  // Adds bytes_sent.<kind> and messages_sent.<kind> for every data-plane kind, decode_dropped,
  // outbox_dropped(.<kind>), outbox_messages and the receive counters to `out`.
  void add_metrics(Metrics& out) const;

 private:
  struct Pending {
    zmq::message_t frame;
    std::size_t kind = 0;
    bool counted = false;  // counted as sent when handed to its emulated link
  };
  struct Peer {
    NodeId id = kNoNode;
    std::string endpoint;
    std::unique_ptr<zmq::socket_t> socket;
    std::deque<Pending> outbox;
    std::size_t outbox_bytes = 0;
  };

  bool try_send(Peer& peer, zmq::message_t& frame, std::size_t kind, bool counted);
  // To the socket, or the outbox behind what waits there.
  void send_frame(Peer& peer, zmq::message_t frame, std::size_t kind, bool counted);
  void count_sent(std::size_t kind, std::size_t bytes);
  void flush_peer(Peer& peer);
  void enqueue(Peer& peer, zmq::message_t frame, std::size_t kind, bool counted);
  void drop_one(Peer& peer);
  void log_drop(const char* why, NodeId peer, std::size_t kind, std::int64_t count);

  zmq::context_t& context_;
  TransportConfig config_;
  zmq::socket_t inbox_;
  std::string endpoint_;
  std::map<NodeId, Peer> peers_;
  std::size_t outbox_messages_total_ = 0;
  FrameDecoder decoder_;
  TransportCounters counters_;
  std::int64_t drops_logged_ = 0;
  std::int64_t outbox_drops_total_ = 0;
  OutgoingLinks<LinkFrame> links_;
  TimeUs last_now_us_ = 0;
};

}  // namespace hapair
