// Only the run's own processes get in (issue 33, item 8; docs/HOSTS.md): while a secure run
// (CURVE on every socket, as every --hosts run is) goes on, an intruder connects to every port
// the node processes and the launcher listen on and sends well-formed envelopes that name real
// nodes of the run: a tuple batch in the source's name, a takeover in a standby's name with a
// newer epoch, a kill. Without CURVE such a message would be obeyed (the garbage test leaves
// impersonation out for that reason). Here nothing reaches a core: the intruder comes three ways
// (no CURVE, its own keys, its own client key with the run's server key), every node and the
// launcher count the refused handshakes, the run's output is precise, and nobody is killed or
// taken over.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "e2e/e2e_support.h"
#include "protocols/codec.h"
#include "runtime/curve.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

// The well-formed envelopes an impostor would send: data, a takeover, a kill.
std::vector<Bytes> forged_envelopes(const Plan& plan, std::uint64_t round) {
  std::vector<Bytes> out;
  const NodeId source = 0;
  for (const PlanFragment& f : plan.fragments) {
    for (const StreamId s : f.inputs) {
      TupleBatch batch;
      batch.stream = s;
      batch.tuples.push_back(Tuple{round + 1, 0, 1, 2.0, 3});
      out.push_back(encode(Envelope{Header{source, 0, 0}, batch}));
    }
    for (const NodeId standby : f.standbys) {
      Takeover t;
      t.fragment = f.id;
      t.new_primary = standby;
      t.epoch = 1'000 + round;
      out.push_back(encode(Envelope{Header{standby, t.epoch, 0}, t}));
    }
  }
  out.push_back(encode(Envelope{Header{kNoNode, 0, 0}, Kill{0}}));
  return out;
}

struct Intrusion {
  std::size_t ports = 0;
  std::uint64_t messages = 0;
};

// Connects to every listening port of the node processes and of this process (the launcher's
// control socket) in the three ways, and sends forged envelopes until `stop`.
Intrusion intrude(std::atomic<bool>& stop, const Plan& plan, const std::string& server_public) {
  Intrusion done;
  std::set<int> ports;
  while (!stop) {
    const auto pids = node_children();
    if (pids.size() == plan.nodes.size()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ports = listening_ports(node_children());
      for (int port : listening_ports({getpid()})) ports.insert(port);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  done.ports = ports.size();
  const CurveKeys own = make_run_keys();
  const CurveKeys with_run_server{server_public, "", own.client_public, own.client_secret};
  zmq::context_t context(1);
  std::vector<zmq::socket_t> sockets;
  for (int port : ports) {
    for (int way = 0; way < 3; ++way) {
      zmq::socket_t s(context, zmq::socket_type::dealer);
      s.set(zmq::sockopt::linger, 0);
      s.set(zmq::sockopt::sndhwm, 100);
      if (way == 1) make_curve_client(s, own);
      if (way == 2) make_curve_client(s, with_run_server);
      s.connect("tcp://127.0.0.1:" + std::to_string(port));
      sockets.push_back(std::move(s));
    }
  }
  for (std::uint64_t round = 0; !stop; ++round) {
    for (const Bytes& b : forged_envelopes(plan, round))
      for (auto& s : sockets)
        if (s.send(zmq::buffer(b.data(), b.size()), zmq::send_flags::dontwait)) ++done.messages;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done;
}

}  // namespace

TEST_CASE("a process without the run's key sends data, a takeover and a kill to a secure run: refused, counted, the run precise and nobody killed", "[e2e][curve]") {
  REQUIRE(curve_unavailable().empty());
  auto plan = plan_of("", HaMode::passive, 3.0);
  LaunchOptions options;
  options.hapair_binary = HAPAIR_BINARY;
  options.secure = true;
  options.keys = make_run_keys();  // so that the intruder can know the run's server key
  std::vector<std::string> said;
  options.print = [&](const std::string& line) { said.push_back(line); };
  std::atomic<bool> stop{false};
  Intrusion sent;
  std::thread intruder([&] { sent = intrude(stop, *plan, options.keys.server_public); });
  const RunResult result = launch_real_run(*plan, options);
  stop = true;
  intruder.join();
  INFO("sent " << sent.messages << " forged envelopes to " << sent.ports << " ports");
  for (const std::string& e : result.errors) UNSCOPED_INFO("run error: " << e);
  for (const std::string& line : said) UNSCOPED_INFO("launcher: " << line);
  REQUIRE(result.errors.empty());
  REQUIRE(result.completed);
  CHECK(sent.ports > plan->nodes.size());  // every node's data socket and the control socket
  CHECK(sent.messages > 100);

  const Reference reference = compute_reference(*plan);
  const SemanticsReport semantics = judge_run(judge_against(*plan, reference, result), reference);
  CHECK(semantics.verdict == "precise");
  CHECK(semantics.lost == 0);
  CHECK(semantics.duplicates == 0);
  CHECK(count_events(result, "takeover") == 0);
  CHECK(count_events(result, "detection") == 0);
  std::int64_t accepted = 0;
  // Every node refused the intruder, the one with the run's server key by its key, and decoded
  // nothing it did not expect.
  for (const PlanNode& n : plan->nodes) {
    INFO("node " << n.name);
    const Metrics& counters = result.counters.at(n.name);
    REQUIRE(counters.count("curve.refused"));
    CHECK(counters.at("curve.refused") > 0);
    CHECK(counters.at("curve.refused_key") > 0);
    CHECK(counters.at("decode_dropped") == 0);
    accepted += counters.at("curve.accepted");
  }
  CHECK(accepted > 0);  // the run's own connections got in
  // The launcher's control socket refused it too, and said so.
  bool reported = false;
  for (const std::string& line : said)
    reported = reported || (line.find("CURVE refused") != std::string::npos &&
                            line.find(" 0 at the control socket") == std::string::npos);
  CHECK(reported);
}
