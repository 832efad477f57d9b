#include "runtime/curve.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <zmq.h>
#include <zmq.hpp>

#include "protocols/check.h"
#include "runtime/crash_line.h"
#include "runtime/transport.h"

namespace hapair {
namespace {

constexpr std::size_t kZ85KeyChars = 40;
constexpr const char* kKeyLineTag = "hapair-curve-keys";
constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";  // RFC 27: the one address libzmq asks
// The events a monitor reports: every way a handshake can fail.
constexpr int kRefusalEvents =
    ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

bool is_z85_key(const std::string& text) {
  if (text.size() != kZ85KeyChars) return false;
  std::uint8_t binary[32];
  return zmq_z85_decode(binary, text.c_str()) != nullptr;
}

}  // namespace

std::string curve_unavailable() {
  if (zmq_has("curve")) return "";
  int major = 0, minor = 0, patch = 0;
  zmq_version(&major, &minor, &patch);
  return "this libzmq (" + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) +
         ") has no CURVE (zmq_has(\"curve\") is false): --secure and --hosts need a libzmq built with libsodium, "
         "as Debian's libzmq5 is";
}

CurveKeys make_run_keys() {
  if (const std::string why = curve_unavailable(); !why.empty()) throw std::runtime_error(why);
  CurveKeys keys;
  char pub[kZ85KeyChars + 1];
  char sec[kZ85KeyChars + 1];
  if (zmq_curve_keypair(pub, sec) != 0) throw std::runtime_error(std::string("zmq_curve_keypair: ") + zmq_strerror(errno));
  keys.server_public = pub;
  keys.server_secret = sec;
  if (zmq_curve_keypair(pub, sec) != 0) throw std::runtime_error(std::string("zmq_curve_keypair: ") + zmq_strerror(errno));
  keys.client_public = pub;
  keys.client_secret = sec;
  return keys;
}

std::string key_line(const CurveKeys& keys) {
  HAPAIR_CHECK_MSG(keys.on(), "key_line of keys that are off");
  return std::string(kKeyLineTag) + " " + keys.server_public + " " + keys.server_secret + " " + keys.client_public +
         " " + keys.client_secret + "\n";
}

std::optional<CurveKeys> parse_key_line(const std::string& line, std::string& error) {
  std::istringstream in(line);
  std::string tag;
  CurveKeys keys;
  std::string extra;
  in >> tag >> keys.server_public >> keys.server_secret >> keys.client_public >> keys.client_secret;
  if (tag != kKeyLineTag || (in >> extra)) {
    error = std::string("the first line on stdin is not the run's keys (") + kKeyLineTag + " and four Z85 keys)";
    return std::nullopt;
  }
  for (const std::string* k : {&keys.server_public, &keys.server_secret, &keys.client_public, &keys.client_secret})
    if (!is_z85_key(*k)) {
      error = "a key on the key line is not 40 characters of Z85";
      return std::nullopt;
    }
  return keys;
}

std::optional<CurveKeys> read_key_line(int fd, int timeout_ms, std::string& error) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  // Four keys and the tag: a longer line is not a key line (and nobody waits for its end).
  while (line.size() < 256) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      error = "no keys on stdin within " + std::to_string(timeout_ms) + " ms (--keys-from-stdin)";
      return std::nullopt;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "stdin ended before the run's keys (--keys-from-stdin)";
      return std::nullopt;
    }
    if (c == '\n') {
      std::optional<CurveKeys> keys = parse_key_line(line, error);
      std::fill(line.begin(), line.end(), '\0');
      return keys;
    }
    line += c;
  }
  error = "the first line on stdin is longer than a key line (--keys-from-stdin)";
  return std::nullopt;
}

bool is_loopback_address(const std::string& host) {
  std::string h = host;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  return h == "localhost" || h == "::1" || h.rfind("127.", 0) == 0;
}

bool is_loopback_endpoint(const std::string& endpoint) {
  std::string host, port;
  return split_tcp_endpoint(endpoint, host, port) && is_loopback_address(host);
}

void make_curve_server(zmq::socket_t& socket, const CurveKeys& keys) {
  if (!keys.on()) return;
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, keys.server_secret);
  // A domain, so that the ZAP request says which gate it is for (one per context anyway).
  socket.set(zmq::sockopt::zap_domain, "hapair");
}

void make_curve_client(zmq::socket_t& socket, const CurveKeys& keys) {
  if (!keys.on()) return;
  socket.set(zmq::sockopt::curve_serverkey, keys.server_public);
  socket.set(zmq::sockopt::curve_publickey, keys.client_public);
  socket.set(zmq::sockopt::curve_secretkey, keys.client_secret);
}

CurveGate::CurveGate(zmq::context_t& context, CurveKeys keys) : context_(context), keys_(std::move(keys)) {
  HAPAIR_CHECK_MSG(keys_.on(), "a CurveGate without keys");
  client_public_binary_.resize(32);
  HAPAIR_CHECK(zmq_z85_decode(reinterpret_cast<std::uint8_t*>(client_public_binary_.data()), keys_.client_public.c_str()) !=
               nullptr);
  zap_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::rep);
  zap_->set(zmq::sockopt::linger, 0);
  zap_->bind(kZapEndpoint);
}

CurveGate::~CurveGate() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  // The watched sockets' monitors need no stopping: a monitor whose reader is gone drops its
  // events, and a closed server socket stops its own.
}

void CurveGate::watch(zmq::socket_t& server) {
  HAPAIR_CHECK_MSG(!thread_.joinable(), "CurveGate::watch after start");
  char address[96];
  std::snprintf(address, sizeof address, "inproc://hapair-curve-%p-%zu", static_cast<void*>(this), monitors_.size());
  if (zmq_socket_monitor(server.handle(), address, kRefusalEvents) != 0) throw zmq::error_t();
  auto monitor = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::pair);
  monitor->set(zmq::sockopt::linger, 0);
  monitor->connect(address);
  monitors_.push_back(std::move(monitor));
}

void CurveGate::start() {
  HAPAIR_CHECK_MSG(!thread_.joinable(), "CurveGate::start twice");
  // The sockets move to the thread here (std::thread's start is a full barrier, which is what
  // libzmq asks of a socket that changes threads); nothing else touches them from now on.
  thread_ = std::thread([this] { serve(); });
}

void CurveGate::serve() {
  try {
    serve_until_stopped();
  } catch (const zmq::error_t& e) {
    // Fails closed: without answers to ZAP requests no handshake completes, so nobody gets in.
    std::fprintf(stderr, "hapair: the CURVE gate stopped: ZeroMQ error: %s\n", e.what());
  }
  zap_.reset();
  monitors_.clear();
}

void CurveGate::serve_until_stopped() {
  std::vector<zmq::pollitem_t> items;
  items.push_back({zap_->handle(), 0, ZMQ_POLLIN, 0});
  for (auto& m : monitors_) items.push_back({m->handle(), 0, ZMQ_POLLIN, 0});
  while (!stop_) {
    if (poll_sockets(items.data(), items.size(), 50'000) <= 0) continue;
    if (items[0].revents & ZMQ_POLLIN) {
      // RFC 27: version, request id, domain, address, identity, mechanism, credentials...
      std::vector<zmq::message_t> request;
      do {
        request.emplace_back();
        if (!zap_->recv(request.back(), zmq::recv_flags::dontwait)) {
          request.pop_back();
          break;
        }
      } while (zap_->get(zmq::sockopt::rcvmore));
      // A REP socket must not answer what it did not receive.
      if (request.empty()) continue;
      const bool ok = request.size() >= 7 && request[5].to_string() == "CURVE" &&
                      request[6].to_string() == client_public_binary_;
      (ok ? accepted_ : refused_key_) += 1;
      const std::string id = request.size() >= 2 ? request[1].to_string() : std::string();
      zap_->send(zmq::buffer(std::string("1.0")), zmq::send_flags::sndmore);
      zap_->send(zmq::buffer(id), zmq::send_flags::sndmore);
      zap_->send(zmq::buffer(std::string(ok ? "200" : "400")), zmq::send_flags::sndmore);
      zap_->send(zmq::buffer(std::string(ok ? "OK" : "not the run's key")), zmq::send_flags::sndmore);
      zap_->send(zmq::buffer(std::string()), zmq::send_flags::sndmore);  // user id
      zap_->send(zmq::buffer(std::string()), zmq::send_flags::none);      // metadata
    }
    for (std::size_t i = 1; i < items.size(); ++i) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      zmq::socket_t& monitor = *monitors_[i - 1];
      for (int burst = 0; burst < 64; ++burst) {
        zmq::message_t event;
        if (!monitor.recv(event, zmq::recv_flags::dontwait)) break;
        // Frame 1: the event (16 bits) and its value; frame 2: the peer's endpoint.
        std::uint16_t id = 0;
        if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
        while (monitor.get(zmq::sockopt::rcvmore)) {
          zmq::message_t rest;
          if (!monitor.recv(rest, zmq::recv_flags::dontwait)) break;
        }
        if (id & kRefusalEvents) refused_ += 1;
      }
    }
  }
}

CurveCounts CurveGate::counts() const { return CurveCounts{accepted_.load(), refused_key_.load(), refused_.load()}; }

void CurveGate::add_metrics(Metrics& out) const {
  const CurveCounts c = counts();
  out["curve.accepted"] = c.accepted;
  out["curve.refused"] = c.refused;
  out["curve.refused_key"] = c.refused_key;
}

}  // namespace hapair
