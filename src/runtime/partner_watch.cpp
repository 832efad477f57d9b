#include "runtime/partner_watch.h"

#include <zmq.h>

#include <algorithm>
#include <cstdio>
#include <poll.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "protocols/check.h"

namespace hapair {

PartnerWatchConfig PartnerWatchConfig::for_settings(const Settings& s) {
  // The constructor checks the pair; here only that ZeroMQ's int option holds the timeout.
  HAPAIR_CHECK_MSG(s.hang_timeout_ms <= INT32_MAX, "hang_timeout_ms=" << s.hang_timeout_ms);
  const std::int64_t ping_ms = std::max(s.heartbeat_interval_ms, s.hang_timeout_ms / 4);
  return PartnerWatchConfig{static_cast<int>(ping_ms), static_cast<int>(s.hang_timeout_ms)};
}

PartnerWatch::PartnerWatch(zmq::context_t& context, PartnerWatchConfig config, CurveKeys curve)
    : context_(context), config_(config), curve_(std::move(curve)) {
  HAPAIR_CHECK_MSG(config_.ping_interval_ms > 0 && config_.hang_timeout_ms > config_.ping_interval_ms,
                   "ping_interval_ms=" << config_.ping_interval_ms << " hang_timeout_ms=" << config_.hang_timeout_ms);
}

PartnerWatch::~PartnerWatch() {
  // The monitored sockets stop their monitors before they close, so no event is left half-sent.
  for (Watched& w : watched_) {
    if (w.socket) zmq_socket_monitor(w.socket->handle(), nullptr, 0);
  }
}

void PartnerWatch::watch(NodeId peer, const std::string& endpoint, const std::string& crash_line_endpoint) {
  for (const Detector detector : {Detector::connection, Detector::heartbeat}) {
    Watched w;
    w.peer = peer;
    w.detector = detector;
    if (detector == Detector::connection && !crash_line_endpoint.empty()) {
      w.line = std::make_unique<CrashLine>(crash_line_endpoint);
      watched_.push_back(std::move(w));
      continue;
    }
    w.socket = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::push);
    w.socket->set(zmq::sockopt::linger, 0);
    if (detector == Detector::heartbeat) {
      w.socket->set(zmq::sockopt::heartbeat_ivl, config_.ping_interval_ms);
      w.socket->set(zmq::sockopt::heartbeat_timeout, config_.hang_timeout_ms);
    }
    char address[96];
    std::snprintf(address, sizeof address, "inproc://hapair-watch-%p-%zu", static_cast<void*>(this), watched_.size());
    if (zmq_socket_monitor(w.socket->handle(), address, ZMQ_EVENT_DISCONNECTED) != 0) throw zmq::error_t();
    w.monitor = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::pair);
    w.monitor->set(zmq::sockopt::linger, 0);
    w.monitor->connect(address);
    make_curve_client(*w.socket, curve_);
    allow_ipv6_for(*w.socket, endpoint);
    w.socket->connect(endpoint);
    watched_.push_back(std::move(w));
  }
}

void PartnerWatch::add_poll_items(std::vector<zmq::pollitem_t>& items) {
  for (Watched& w : watched_) {
    if (w.line) {
      if (w.line->fd() >= 0) items.push_back({nullptr, w.line->fd(), w.line->poll_events(), 0});
    } else {
      items.push_back({w.monitor->handle(), 0, ZMQ_POLLIN, 0});
    }
  }
  if (listener_) listener_->add_poll_items(items);
}

std::int64_t PartnerWatch::wake_within_us(std::int64_t longest) const {
  for (const Watched& w : watched_) {
    if (!w.line) continue;
    const std::int64_t ms = w.line->retry_in_ms();
    if (ms >= 0) longest = std::min(longest, ms * 1000);
  }
  return longest;
}

bool PartnerWatch::retry_due() const {
  for (const Watched& w : watched_)
    if (w.line && w.line->retry_in_ms() == 0) return true;
  return false;
}

bool PartnerWatch::pending() {
  for (Watched& w : watched_) {
    if (w.line ? w.line->pending() : (w.monitor->get(zmq::sockopt::events) & ZMQ_POLLIN) != 0) return true;
  }
  return listener_ && listener_->pending();
}

bool PartnerWatch::drain(Watched& w) {
  if (w.line) return w.line->ended();
  bool lost = false;
  // A monitor event is two frames: 6 bytes (uint16 event, uint32 value), then the endpoint.
  for (int i = 0; i < 64; ++i) {
    zmq::message_t head;
    if (!w.monitor->recv(head, zmq::recv_flags::dontwait)) break;
    std::uint16_t event = 0;
    if (head.size() >= sizeof event) std::memcpy(&event, head.data(), sizeof event);
    while (head.more()) {
      zmq::message_t rest;
      if (!w.monitor->recv(rest, zmq::recv_flags::dontwait)) break;
      if (!rest.more()) break;
    }
    if (event == ZMQ_EVENT_DISCONNECTED) lost = true;
  }
  return lost;
}

bool PartnerWatch::crash_follows(NodeId peer) {
  // The heartbeat connection's report came first, yet a crash closes both connections at the
  // same moment: give the other one's report a moment to arrive, so a crash is named a crash.
  for (Watched& w : watched_) {
    if (w.peer != peer || w.detector != Detector::connection) continue;
    if (w.line) {
      if (w.line->fd() < 0) return false;
      pollfd item{w.line->fd(), POLLIN, 0};
      return ::poll(&item, 1, kCrashFollowsMs) > 0 && w.line->ended();
    }
    zmq::pollitem_t item{w.monitor->handle(), 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, kCrashFollowsMs) > 0) return drain(w);
  }
  return false;
}

std::vector<PeerLost> PartnerWatch::take_lost() {
  if (listener_) listener_->serve();
  std::vector<PeerLost> lost;
  // Connection reports first: a crash closes both connections, and it is the crash that
  // should be named.
  for (const Detector detector : {Detector::connection, Detector::heartbeat}) {
    for (Watched& w : watched_) {
      if (w.detector != detector || !drain(w)) continue;
      const bool named = std::any_of(lost.begin(), lost.end(), [&](const PeerLost& l) { return l.peer == w.peer; });
      if (detector == Detector::heartbeat && !named && crash_follows(w.peer)) {
        ++connection_losses_;
        lost.push_back(PeerLost{w.peer, Detector::connection});
        continue;
      }
      (detector == Detector::connection ? connection_losses_ : heartbeat_losses_) += 1;
      if (!named) lost.push_back(PeerLost{w.peer, detector});
    }
  }
  return lost;
}

}  // namespace hapair
