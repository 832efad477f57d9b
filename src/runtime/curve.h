// CURVE on every ZeroMQ socket of a run (docs/HOSTS.md, "Only the run's own processes get in"):
// the run's keys, how a node receives them, the socket options of a CURVE server and client, and
// the gate that lets in only clients holding the run's client key.
//
// Paper: not a paper concept. The paper's failure model is fail-stop (section 2) and its
// messages are not authenticated; across hosts a node's ports are reachable by anyone on the
// network, and a forged Takeover or Kill would be obeyed. With CURVE (libzmq's, built on
// libsodium) a process without the run's keys cannot complete a handshake, so nothing it sends
// reaches a core.
//
// The keys: one server keypair and one client keypair per run, made by the launcher
// (make_run_keys), handed to every node on its stdin (key_line / read_key_line; over ssh for
// other hosts), never written to a file. Every socket that binds (a node's data inbox, the
// launcher's control ROUTER) is a CURVE server with the run's server secret key; every socket
// that connects (peer PUSH sockets, the partner watch's heartbeat sockets, a node's control
// DEALER) is a CURVE client with the run's client keys and the server's public key. One pair
// for every node is the simple sound choice: every node runs the same code under the same
// launcher, so per-node keys would add key distribution without keeping out anyone who holds a
// node's keys.
//
// CurveGate (one per ZeroMQ context): the ZAP handler (RFC 27) that accepts a CURVE client only
// when its public key is the run's client key, and socket monitors on the server sockets that
// count every failed handshake (no CURVE, another server key, another client key).
//
// Invariants: the ZAP handler is bound before any server socket of its context (libzmq lets
// every client in when no handler is bound); a refused client's messages never reach a socket's
// receive queue (libzmq drops the connection before the handshake completes); the counters only
// grow.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "protocols/core.h"

namespace zmq {
class context_t;
class socket_t;
}  // namespace zmq

namespace hapair {

// Z85 text, 40 characters each. Empty: CURVE is off.
struct CurveKeys {
  std::string server_public;
  std::string server_secret;
  std::string client_public;
  std::string client_secret;
  bool on() const { return !server_public.empty(); }
};

// "" when this libzmq has CURVE (zmq_has("curve")); otherwise why --secure cannot work here.
std::string curve_unavailable();

// A fresh server keypair and client keypair (zmq_curve_keypair). Throws std::runtime_error when
// libzmq cannot make them (no CURVE).
CurveKeys make_run_keys();

// The line a node reads on stdin (`hapair node --keys-from-stdin`), newline included.
std::string key_line(const CurveKeys& keys);
// Reads the key line from `fd` one byte at a time (nothing after the newline is consumed, so a
// later reader of the same descriptor sees the rest), waiting at most timeout_ms in all. nullopt
// with `error` set when the line does not come in time or is not a key line.
std::optional<CurveKeys> read_key_line(int fd, int timeout_ms, std::string& error);
std::optional<CurveKeys> parse_key_line(const std::string& line, std::string& error);

// Socket options (set before bind / connect). No-ops when `keys` is off.
void make_curve_server(zmq::socket_t& socket, const CurveKeys& keys);
void make_curve_client(zmq::socket_t& socket, const CurveKeys& keys);

// Whether only this machine can reach an address: 127.0.0.0/8, ::1, localhost. A listener
// elsewhere is said so (the launcher's control socket, `hapair demo`).
bool is_loopback_address(const std::string& host);
// The same of tcp://HOST:PORT (false when it is not of that form).
bool is_loopback_endpoint(const std::string& endpoint);

// What a gate counted (cumulative).
struct CurveCounts {
  std::int64_t accepted = 0;     // ZAP requests with the run's client key
  std::int64_t refused_key = 0;  // ZAP requests with another key (refused with status 400)
  std::int64_t refused = 0;      // failed handshakes on the watched sockets, whatever the cause
};

class CurveGate {
 public:
  // Binds the ZAP handler in `context` (before any server socket of the context exists).
  CurveGate(zmq::context_t& context, CurveKeys keys);
  ~CurveGate();
  CurveGate(const CurveGate&) = delete;
  CurveGate& operator=(const CurveGate&) = delete;

  // Counts the failed handshakes of this server socket. Only before start().
  void watch(zmq::socket_t& server);
  // Starts the thread that answers ZAP requests and reads the monitors; handshakes wait until
  // then.
  void start();

  CurveCounts counts() const;
  // curve.accepted, curve.refused, curve.refused_key.
  void add_metrics(Metrics& out) const;

 private:
  void serve();
  void serve_until_stopped();

  zmq::context_t& context_;
  CurveKeys keys_;
  std::string client_public_binary_;  // 32 bytes, as ZAP carries it
  std::unique_ptr<zmq::socket_t> zap_;
  std::vector<std::unique_ptr<zmq::socket_t>> monitors_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> accepted_{0};
  std::atomic<std::int64_t> refused_key_{0};
  std::atomic<std::int64_t> refused_{0};
};

}  // namespace hapair
