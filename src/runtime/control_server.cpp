#include "runtime/control_server.h"

#include <cerrno>
#include <stdexcept>

#include <zmq.hpp>

#include "runtime/transport.h"

namespace hapair {

struct ControlServer::Impl {
  // The launcher process's one ZeroMQ context; it lives exactly as long as the server.
  zmq::context_t context{1};
  std::unique_ptr<CurveGate> gate;  // bound before the ROUTER, closed after it
  zmq::socket_t router{context, zmq::socket_type::router};
  std::string endpoint;
  FrameDecoder decoder{"launcher", DecodeLimits{}};
};

ControlServer::ControlServer(const std::string& bind_endpoint, const CurveKeys& curve) : impl_(std::make_unique<Impl>()) {
  zmq::socket_t& router = impl_->router;
  router.set(zmq::sockopt::linger, 0);
  router.set(zmq::sockopt::router_mandatory, 1);
  // A restarted node connects again under its name while the ROUTER may not yet have noticed
  // that the killed process's connection is gone; the new connection must win, or the launcher
  // could never answer its second Hello.
  router.set(zmq::sockopt::router_handover, 1);
  // Deliveries of a whole run pass through here; a deep queue keeps nodes from ever waiting on
  // the launcher (their sends time out rather than block forever, see node_host.cpp).
  router.set(zmq::sockopt::rcvhwm, 100'000);
  router.set(zmq::sockopt::sndhwm, 10'000);
  if (curve.on()) {
    impl_->gate = std::make_unique<CurveGate>(impl_->context, curve);
    impl_->gate->watch(router);
    impl_->gate->start();
    make_curve_server(router, curve);
  }
  try {
    allow_ipv6_for(router, bind_endpoint);
    router.bind(bind_endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot bind the control socket at " + bind_endpoint + ": " + e.what());
  }
  impl_->endpoint = router.get(zmq::sockopt::last_endpoint);
}

ControlServer::~ControlServer() = default;

const std::string& ControlServer::endpoint() const { return impl_->endpoint; }

std::optional<ControlServer::Incoming> ControlServer::receive(TimeUs wait_us) {
  zmq::socket_t& router = impl_->router;
  zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
  // Bounded: a burst of malformed frames ends the call rather than the wait.
  for (int attempt = 0; attempt < 64; ++attempt) {
    zmq::message_t identity;
    zmq::recv_result_t got;
    try {
      got = router.recv(identity, zmq::recv_flags::dontwait);
      if (!got && attempt == 0 && poll_sockets(&item, 1, wait_us) > 0)
        got = router.recv(identity, zmq::recv_flags::dontwait);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) return std::nullopt;
      throw;
    }
    if (!got) return std::nullopt;
    // A ROUTER frame sequence is [identity, body...]; the rest of a multipart message arrives
    // at once, so these receives do not wait.
    std::optional<Envelope> envelope;
    bool first = true;
    while (router.get(zmq::sockopt::rcvmore)) {
      zmq::message_t body;
      if (!router.recv(body, zmq::recv_flags::dontwait)) break;
      // Only the first body frame is a message; anything after it is garbage from a peer.
      if (first) envelope = impl_->decoder.decode(body.data(), body.size());
      first = false;
    }
    if (envelope) return Incoming{identity.to_string(), std::move(*envelope)};
  }
  return std::nullopt;
}

bool ControlServer::send(const std::string& peer, const Envelope& envelope) {
  zmq::socket_t& router = impl_->router;
  const Bytes bytes = encode(envelope);
  try {
    if (!router.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
    return router.send(zmq::buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t& e) {
    // EHOSTUNREACH: ROUTER_MANDATORY says the peer is not connected.
    if (e.num() == EHOSTUNREACH || e.num() == EINTR) return false;
    throw;
  }
}

std::int64_t ControlServer::decode_dropped() const { return impl_->decoder.dropped(); }

CurveCounts ControlServer::curve_counts() const { return impl_->gate ? impl_->gate->counts() : CurveCounts{}; }

}  // namespace hapair
