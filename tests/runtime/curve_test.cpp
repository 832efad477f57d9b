// Tests of CURVE on the run's sockets (runtime/curve.h) over real tcp loopback sockets: the key
// line a node reads on stdin, and the gate in front of a CURVE transport's inbox: the run's
// client key gets in; a client with another key, with another server key or with no CURVE at all
// does not, and each refusal is counted.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "protocols/codec.h"
#include "runtime/curve.h"
#include "runtime/run_clock.h"
#include "runtime/transport.h"

namespace hapair {
namespace {

constexpr TimeUs kCurveReceiveTimeoutUs = 10'000'000;  // only reached when a message went missing
constexpr double kRefusalWaitS = 10.0;            // only reached when a refusal went uncounted

// The next message in the inbox, waiting at most wait_us.
std::optional<Envelope> receive_within(Transport& t, TimeUs wait_us) {
  const RunClock clock = RunClock::starting_now();
  while (clock.now_us() < wait_us) {
    if (auto e = t.try_receive()) return e;
    zmq::pollitem_t item{t.inbox().handle(), 0, ZMQ_POLLIN, 0};
    poll_sockets(&item, 1, 20'000);
  }
  return t.try_receive();
}

bool curve_eventually(const std::function<bool()>& state) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kRefusalWaitS);
  while (std::chrono::steady_clock::now() < deadline) {
    if (state()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return state();
}

// An intruder's PUSH socket, sending `envelope` to `endpoint` until told to stop.
void send_from(zmq::socket_t& push, const std::string& endpoint, const Envelope& envelope) {
  push.set(zmq::sockopt::linger, 0);
  push.connect(endpoint);
  const Bytes bytes = encode(envelope);
  push.send(zmq::buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait);
}

}  // namespace

TEST_CASE("the run's keys travel as one line that a node reads without consuming what follows", "[curve]") {
  REQUIRE(curve_unavailable().empty());
  const CurveKeys keys = make_run_keys();
  CHECK(keys.server_public.size() == 40);
  CHECK(keys.client_secret.size() == 40);
  CHECK(keys.server_public != keys.client_public);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::string text = key_line(keys) + "after";
  REQUIRE(::write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  std::string error;
  const std::optional<CurveKeys> read = read_key_line(fds[0], 1'000, error);
  REQUIRE(read);
  CHECK(read->server_public == keys.server_public);
  CHECK(read->server_secret == keys.server_secret);
  CHECK(read->client_public == keys.client_public);
  CHECK(read->client_secret == keys.client_secret);
  char rest[16] = {0};
  CHECK(::read(fds[0], rest, sizeof rest) == 5);
  CHECK(std::string(rest) == "after");
  ::close(fds[1]);
  // Stdin that ends, or says something else, is an error naming the problem.
  CHECK_FALSE(read_key_line(fds[0], 1'000, error));
  CHECK(error.find("stdin ended") != std::string::npos);
  ::close(fds[0]);
  CHECK_FALSE(parse_key_line("hapair-curve-keys a b c d", error));
  CHECK(error.find("Z85") != std::string::npos);
  CHECK_FALSE(parse_key_line("hello", error));
  CHECK(error.find("not the run's keys") != std::string::npos);
}

TEST_CASE("a CURVE inbox lets in the run's client key only and counts every refused handshake", "[curve]") {
  const CurveKeys keys = make_run_keys();
  zmq::context_t context(1);
  CurveGate gate(context, keys);
  TransportConfig config;
  config.curve = keys;
  Transport inbox(context, config);
  gate.watch(inbox.inbox());
  gate.start();

  // A stranger with a key of its own and the run's server key (a public key can leak): the gate
  // refuses it.
  const CurveKeys stranger = make_run_keys();
  zmq::context_t intruder(1);
  zmq::socket_t other_key(intruder, zmq::socket_type::push);
  make_curve_client(other_key, CurveKeys{keys.server_public, "", stranger.client_public, stranger.client_secret});
  send_from(other_key, inbox.endpoint(), Envelope{Header{0, 9, 0}, Kill{0}});
  // One without the server's key: the handshake cannot even be decrypted.
  zmq::socket_t other_server(intruder, zmq::socket_type::push);
  make_curve_client(other_server, stranger);
  send_from(other_server, inbox.endpoint(), Envelope{Header{0, 9, 0}, Kill{0}});
  // One without CURVE at all.
  zmq::socket_t plain(intruder, zmq::socket_type::push);
  send_from(plain, inbox.endpoint(), Envelope{Header{0, 9, 0}, Kill{0}});

  REQUIRE(curve_eventually([&] { return gate.counts().refused_key >= 1 && gate.counts().refused >= 3; }));
  CHECK(gate.counts().accepted == 0);
  CHECK_FALSE(receive_within(inbox, 200'000));

  // A peer of the run gets through.
  TransportConfig peer_config;
  peer_config.curve = keys;
  peer_config.bind_endpoint = "tcp://127.0.0.1:*";
  Transport peer(context, peer_config);
  peer.set_peer(0, inbox.endpoint());
  peer.send(0, Envelope{Header{1, 1, 0}, Heartbeat{7}});
  const std::optional<Envelope> got = receive_within(inbox, kCurveReceiveTimeoutUs);
  REQUIRE(got);
  CHECK(std::get<Heartbeat>(got->body).seq == 7);
  CHECK(gate.counts().accepted >= 1);
  CHECK(inbox.decode_dropped() == 0);
  Metrics metrics;
  gate.add_metrics(metrics);
  CHECK(metrics.at("curve.refused") >= 3);
}

TEST_CASE("only loopback addresses count as this machine only", "[curve]") {
  CHECK(is_loopback_endpoint("tcp://127.0.0.1:*"));
  CHECK(is_loopback_endpoint("tcp://127.0.0.1:5555"));
  CHECK(is_loopback_endpoint("tcp://[::1]:5555"));
  CHECK(is_loopback_address("localhost"));
  CHECK_FALSE(is_loopback_endpoint("tcp://0.0.0.0:5555"));
  CHECK_FALSE(is_loopback_endpoint("tcp://10.0.0.1:5555"));
  CHECK_FALSE(is_loopback_address("0.0.0.0"));
}

}  // namespace hapair
