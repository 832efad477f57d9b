// Garbage on the wire (issue 16): while a real run goes on, a stranger sends to every port every
// node process listens on (its ZeroMQ data socket and its crash line) random bytes, truncated
// frames, empty frames, raw TCP connections that write junk and hang up, and well-formed
// envelopes with wrong fields (unknown senders, streams and kinds a node does not expect, stale
// epochs, absurd ids). Every node counts and drops what it cannot use, the run's output is still
// precise, and nobody is taken for dead: no detection, no takeover, no disturbance.
//
// Out of scope, on purpose: a forged message that names a real node and a newer epoch (a
// Takeover "from" the standby). That is impersonation, not garbage; hapair's failure model is
// fail-stop (the paper's, section 2), and its messages are not authenticated.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <zmq.hpp>

#include "e2e/e2e_support.h"
#include "protocols/codec.h"
#include "protocols/rng.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

Bytes random_bytes(Rng& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng.next_u64());
  return b;
}

// One message of garbage: what kind of wrongness is chosen by `i`.
Bytes garbage(Rng& rng, std::uint64_t i, std::size_t nodes) {
  auto envelope = [&](Message body, NodeId sender, Epoch epoch) {
    Envelope e;
    e.header = Header{sender, epoch, static_cast<TimeUs>(rng.next_u64() >> 20)};
    e.body = std::move(body);
    return encode(e);
  };
  const NodeId stranger = static_cast<NodeId>(nodes + rng.below(100));
  switch (i % 8) {
    case 0: return random_bytes(rng, rng.below(200));
    case 1: return Bytes{};
    case 2: {  // a valid message cut short
      Bytes b = envelope(Heartbeat{i}, 0, 0);
      b.resize(rng.below(b.size()));
      return b;
    }
    case 3: return envelope(TupleBatch{static_cast<StreamId>(rng.below(50)), {Tuple{rng.next_u64(), 0, 1, 2.0, 3}}, false, false, 0, 0},
                            stranger, rng.below(5));
    case 4: return envelope(Level1Ack{1, rng.next_u64(), rng.next_u64(), random_bytes(rng, 40), {}}, stranger, 0);
    case 5: return envelope(Checkpoint{rng.next_u64(), false, 0, 0, 1, random_bytes(rng, 64)}, stranger, 7);
    case 6: return envelope(ReplayRequest{static_cast<StreamId>(rng.below(4)), rng.next_u64(), 3, 0}, stranger, kEpochMax);
    default: {  // a valid message with its bytes flipped here and there
      // Flipped bytes can turn the stranger into a node of the run: a well-formed message in a
      // real node's name (an ack of tuples nobody received) is impersonation, which the
      // fail-stop model leaves out (messages are not authenticated), not garbage. Such flips
      // are drawn again.
      const Bytes clean = envelope(Level0Ack{1, i, false}, stranger, 0);
      for (;;) {
        Bytes b = clean;
        for (int k = 0; k < 3; ++k) b[rng.below(b.size())] ^= static_cast<std::uint8_t>(1 + rng.below(255));
        DecodeStats stats;
        const std::optional<Envelope> e = decode(b, stats);
        if (!e || e->header.sender >= nodes) return b;
      }
    }
  }
}

// Sends garbage to every listening port of the run's node processes until `stop`; returns what
// it sent.
struct Flood {
  std::uint64_t messages = 0;
  std::uint64_t raw_connections = 0;
  std::size_t ports = 0;
};

Flood flood(std::atomic<bool>& stop, std::size_t nodes) {
  Flood f;
  std::set<int> ports;
  // Wait until every node process listens (its data socket; a node with a pair partner also
  // its crash line), then give the last ones a moment to open their second port.
  while (!stop) {
    const auto pids = node_children();
    bool all = pids.size() == nodes;
    for (pid_t pid : pids) all = all && !listening_ports({pid}).empty();
    if (all) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ports = listening_ports(node_children());
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  f.ports = ports.size();
  zmq::context_t context(1);
  std::vector<zmq::socket_t> pushes;
  for (int port : ports) {
    zmq::socket_t s(context, zmq::socket_type::push);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::sndhwm, 100);
    s.connect("tcp://127.0.0.1:" + std::to_string(port));
    pushes.push_back(std::move(s));
  }
  Rng rng(20261204);
  for (std::uint64_t round = 0; !stop; ++round) {
    for (auto& s : pushes) {
      const Bytes b = garbage(rng, f.messages, nodes);
      if (s.send(zmq::buffer(b.data(), b.size()), zmq::send_flags::dontwait)) ++f.messages;
    }
    if (round % 20 == 0) {
      for (int port : ports) {  // a raw connection that writes junk and hangs up
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
          const Bytes junk = random_bytes(rng, 1 + rng.below(300));
          if (write(fd, junk.data(), junk.size()) > 0) ++f.raw_connections;
        }
        if (fd >= 0) close(fd);
      }
    }
    // About 1,000 messages a second to each port: a flood, not a denial of service.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return f;
}

}  // namespace

TEST_CASE("garbage sent to every port of a running pipeline is counted and dropped, the run stays precise and nobody is taken for dead", "[e2e][garbage]") {
  for (const HaMode ha : {HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO("ha " << to_string(ha));
    auto plan = plan_of("", ha, 4.0);
    std::atomic<bool> stop{false};
    Flood sent;
    std::thread stranger([&] { sent = flood(stop, plan->nodes.size()); });
    const RunOutcome o = run_real(plan, {});
    stop = true;
    stranger.join();
    INFO("sent " << sent.messages << " messages and " << sent.raw_connections << " raw connections to " << sent.ports
                 << " ports");
    REQUIRE(o.result.completed);
    // A data socket per node, and a crash line per node that has a pair partner.
    std::size_t paired = 0;
    for (const PlanNode& n : plan->nodes) paired += plan->fragments[n.fragment].has_standby();
    CHECK(sent.ports == plan->nodes.size() + paired);
    CHECK(sent.messages > 1000);
    // Every node counted what it dropped.
    for (const PlanNode& n : plan->nodes) {
      INFO("node " << n.name);
      const auto& counters = o.result.counters.at(n.name);
      CHECK(counters.count("decode_dropped"));
      if (counters.count("decode_dropped")) CHECK(counters.at("decode_dropped") > 0);
    }
    CHECK(o.semantics.verdict == "precise");
    CHECK(o.semantics.lost == 0);
    CHECK(count_events(o.result, "takeover") == 0);
    CHECK(count_events(o.result, "detection") == 0);
    CHECK(count_events(o.result, "standby_suspected") == 0);
    CHECK_FALSE(o.metrics.disturbance.disturbed());
  }
}
