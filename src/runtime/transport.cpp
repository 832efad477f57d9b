#include "runtime/transport.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "protocols/check.h"

namespace hapair {

namespace {
constexpr int kPeerReconnectIntervalMs = 5;
}  // namespace

std::optional<Envelope> FrameDecoder::decode(const void* data, std::size_t size) {
  std::optional<Envelope> envelope =
      hapair::decode(static_cast<const std::uint8_t*>(data), size, stats_, limits_, &scratch_);
  if (!envelope) {
    const auto n = static_cast<std::int64_t>(stats_.dropped);
    if (worth_logging(n))
      std::fprintf(stderr, "hapair[%s]: dropped a malformed message of %zu bytes (%lld so far): %s\n",
                   log_name_.c_str(), size, static_cast<long long>(n), stats_.last_error.c_str());
  }
  return envelope;
}

int poll_sockets(zmq::pollitem_t* items, std::size_t count, TimeUs wait_us) {
  // zmq_poll counts milliseconds; rounding up makes a timer fire up to 1 ms late rather than
  // spinning on a shared machine.
  const long wait_ms = static_cast<long>((std::max<TimeUs>(wait_us, 0) + 999) / 1000);
  const int rc = zmq_poll(items, static_cast<int>(count), wait_ms);
  if (rc >= 0) return rc;
  if (zmq_errno() == EINTR) {
    for (std::size_t i = 0; i < count; ++i) items[i].revents = 0;
    return 0;
  }
  throw zmq::error_t();
}

Transport::Transport(zmq::context_t& context, TransportConfig config)
    : context_(context),
      config_(std::move(config)),
      inbox_(context, zmq::socket_type::pull),
      decoder_(config_.log_name, config_.decode_limits) {
  HAPAIR_CHECK_MSG(config_.outbox_messages_max > 0, "outbox_messages_max=" << config_.outbox_messages_max);
  inbox_.set(zmq::sockopt::linger, 0);
  inbox_.set(zmq::sockopt::rcvhwm, config_.receive_hwm_messages);
  make_curve_server(inbox_, config_.curve);
  try {
    allow_ipv6_for(inbox_, config_.bind_endpoint);
    inbox_.bind(config_.bind_endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot bind the data socket at " + config_.bind_endpoint + ": " + e.what());
  }
  endpoint_ = inbox_.get(zmq::sockopt::last_endpoint);
}

Transport::~Transport() = default;

void Transport::set_peer(NodeId node, const std::string& endpoint) {
  Peer& peer = peers_[node];
  peer.id = node;
  if (peer.endpoint == endpoint) return;
  // A new endpoint for a known node (a restarted process): reconnect on the next send. What
  // waited for the old endpoint is sent to the new one, in order.
  peer.endpoint = endpoint;
  peer.socket.reset();
}

void Transport::send(NodeId to, const Envelope& envelope, TimeUs now_us) {
  last_now_us_ = std::max(last_now_us_, now_us);
  const std::size_t kind = envelope.body.index();
  auto it = peers_.find(to);
  if (it == peers_.end() || it->second.endpoint.empty()) {
    ++counters_.no_endpoint_dropped;
    log_drop("no endpoint is known for it", to, kind, counters_.no_endpoint_dropped);
    return;
  }
  Peer& peer = it->second;
  // Encoded straight into ZeroMQ's message: no buffer of our own to fill, copy and free.
  zmq::message_t frame;
  encode_into(envelope, [&frame](std::size_t size) {
    frame.rebuild(size);
    return static_cast<std::uint8_t*>(frame.data());
  });
  if (LinkQueue<LinkFrame>* link = links_.find(to)) {
    // Sent by the node when handed to the link, as in the simulator: a message the link loses
    // was sent, and a duplicate is the link's doing, not the node's.
    const std::size_t size = frame.size();
    const LinkFate fate = link->push(last_now_us_, size, LinkFrame{std::move(frame), kind}, [](LinkFrame& f) {
      LinkFrame copy{zmq::message_t(), f.kind};
      copy.frame.copy(f.frame);  // shares the bytes (zmq_msg_copy): both are sent, neither changed
      return copy;
    });
    if (fate != LinkFate::overflow) count_sent(kind, size);
    else log_drop("its emulated link's delay queue is full", to, kind, link->counters().overflow);
    return;
  }
  send_frame(peer, std::move(frame), kind, false);
}

void Transport::send_frame(Peer& peer, zmq::message_t frame, std::size_t kind, bool counted) {
  if (!peer.outbox.empty()) flush_peer(peer);
  if (peer.outbox.empty() && try_send(peer, frame, kind, counted)) return;
  ++counters_.send_retries;
  enqueue(peer, std::move(frame), kind, counted);
}

std::size_t Transport::release_links(TimeUs now_us) {
  if (links_.empty()) return 0;
  last_now_us_ = std::max(last_now_us_, now_us);
  return links_.release_due(last_now_us_, [this](NodeId to, LinkFrame&& f) {
    send_frame(peers_.at(to), std::move(f.frame), f.kind, true);
  });
}

void Transport::count_sent(std::size_t kind, std::size_t bytes) {
  counters_.bytes_sent[kind] += static_cast<std::int64_t>(bytes);
  counters_.messages_sent[kind] += 1;
}

bool Transport::try_send(Peer& peer, zmq::message_t& frame, std::size_t kind, bool counted) {
  if (!peer.socket) {
    peer.socket = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::push);
    peer.socket->set(zmq::sockopt::linger, 0);
    peer.socket->set(zmq::sockopt::sndhwm, config_.send_hwm_messages);
    // A restarted peer binds the same endpoint again; ZeroMQ finds it at its next reconnect
    // attempt, 100 ms after the last by default. Every message to it waits that long, including
    // the answer to its Rejoin: a partner killed within those 100 ms left it rejoining forever
    // (cases 316 and 526 of the real campaign, docs/FAULTS.md). 5 ms: a refused connect to a
    // dead peer every 5 ms costs little on a loopback or LAN.
    peer.socket->set(zmq::sockopt::reconnect_ivl, kPeerReconnectIntervalMs);
    make_curve_client(*peer.socket, config_.curve);
    allow_ipv6_for(*peer.socket, peer.endpoint);
    peer.socket->connect(peer.endpoint);
  }
  const std::size_t size = frame.size();
  // On EAGAIN ZeroMQ leaves the frame untouched, so it can wait in the outbox as it is.
  if (!peer.socket->send(frame, zmq::send_flags::dontwait)) return false;
  if (!counted) count_sent(kind, size);
  return true;
}

void Transport::flush_peer(Peer& peer) {
  while (!peer.outbox.empty()) {
    Pending& front = peer.outbox.front();
    const std::size_t size = front.frame.size();
    if (!try_send(peer, front.frame, front.kind, front.counted)) return;
    peer.outbox_bytes -= size;
    peer.outbox.pop_front();
    --outbox_messages_total_;
  }
}

std::size_t Transport::flush() {
  if (outbox_messages_total_ == 0) return 0;
  for (auto& [id, peer] : peers_) flush_peer(peer);
  return outbox_messages_total_;
}

void Transport::enqueue(Peer& peer, zmq::message_t frame, std::size_t kind, bool counted) {
  peer.outbox_bytes += frame.size();
  peer.outbox.push_back(Pending{std::move(frame), kind, counted});
  ++outbox_messages_total_;
  while (!peer.outbox.empty() &&
         (peer.outbox.size() > config_.outbox_messages_max || peer.outbox_bytes > config_.outbox_bytes_max))
    drop_one(peer);
}

void Transport::drop_one(Peer& peer) {
  auto victim = peer.outbox.begin();
  for (auto it = peer.outbox.begin(); it != peer.outbox.end(); ++it) {
    if (it->kind != kKindOf<TupleBatch>) {
      victim = it;
      break;
    }
  }
  const std::size_t kind = victim->kind;
  peer.outbox_bytes -= victim->frame.size();
  peer.outbox.erase(victim);
  --outbox_messages_total_;
  counters_.outbox_dropped[kind] += 1;
  log_drop("its outbox is full", peer.id, kind, ++outbox_drops_total_);
}

void Transport::log_drop(const char* why, NodeId peer, std::size_t kind, std::int64_t count) {
  ++drops_logged_;
  if (!worth_logging(drops_logged_)) return;
  std::fprintf(stderr, "hapair[%s]: dropped a %s message to node %u: %s (%lld drops for that reason so far)\n",
               config_.log_name.c_str(), kMessageKindNames[kind], static_cast<unsigned>(peer), why,
               static_cast<long long>(count));
}

std::size_t Transport::outbox_messages(NodeId peer) const {
  auto it = peers_.find(peer);
  return it == peers_.end() ? 0 : it->second.outbox.size();
}

std::size_t Transport::outbox_bytes(NodeId peer) const {
  auto it = peers_.find(peer);
  return it == peers_.end() ? 0 : it->second.outbox_bytes;
}

std::optional<Envelope> Transport::try_receive() {
  // Bounded, so that a flood of garbage cannot keep the caller from its timers.
  constexpr int kFramesPerCallMax = 64;
  for (int i = 0; i < kFramesPerCallMax; ++i) {
    zmq::message_t frame;
    if (!inbox_.recv(frame, zmq::recv_flags::dontwait)) return std::nullopt;
    counters_.messages_received += 1;
    counters_.bytes_received += static_cast<std::int64_t>(frame.size());
    if (reinterpret_cast<std::uintptr_t>(frame.data()) % 8 != 0) counters_.unaligned_frames_received += 1;
    if (auto envelope = decoder_.decode(frame.data(), frame.size())) return envelope;
  }
  return std::nullopt;
}

void Transport::add_metrics(Metrics& out) const {
  std::int64_t dropped_total = 0;
  for (std::size_t kind = 0; kind < kMessageKindCount; ++kind) {
    const std::string name = kMessageKindNames[kind];
    if (kind < kFirstControlKind) {
      out["bytes_sent." + name] = counters_.bytes_sent[kind];
      out["messages_sent." + name] = counters_.messages_sent[kind];
    }
    if (counters_.outbox_dropped[kind] != 0) out["outbox_dropped." + name] = counters_.outbox_dropped[kind];
    dropped_total += counters_.outbox_dropped[kind];
  }
  out["outbox_dropped"] = dropped_total;
  out["outbox_messages"] = static_cast<std::int64_t>(outbox_messages_total_);
  out["no_endpoint_dropped"] = counters_.no_endpoint_dropped;
  out["send_retries"] = counters_.send_retries;
  out["messages_received"] = counters_.messages_received;
  out["bytes_received"] = counters_.bytes_received;
  out["decode_dropped"] = decoder_.dropped();
  if (!links_.empty()) add_link_metrics(total_counters(links_), out);
}

}  // namespace hapair
