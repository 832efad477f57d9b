// The real-process failure detector of a node's pair partner (Settings::detector =
// connection+heartbeat): a crash line to the partner (runtime/crash_line.h) and an idle ZeroMQ
// connection to its data socket carrying ZMTP heartbeats, watched by a socket monitor.
//
// Paper: servers detect fail-stop crashes of their partners by missed heartbeats (section 2).
// docs/FAULTS.md asks for two detectors for two questions:
// - a crash: the dead process's kernel closes its connections at once, so the crash line ends
//   within about half a millisecond of a `kill -9` (Detector::connection). A partner that
//   announced no crash line (an older node) is watched by a second idle ZeroMQ connection whose
//   monitor reports ZMQ_EVENT_DISCONNECTED instead, two wake-ups later;
// - a hang or a partition closes nothing: the second connection carries ZMTP heartbeats
//   (ZMQ_HEARTBEAT_IVL = ping_interval_ms, ZMQ_HEARTBEAT_TIMEOUT = hang_timeout_ms),
//   which ZeroMQ's I/O threads send and answer, not the node's own loop; a partner that answers
//   no PING for the timeout is disconnected (Detector::heartbeat). Because neither side's busy
//   operator thread serves these heartbeats, a node working through a long backlog is not
//   mistaken for a dead one.
//
// Both connections send no messages, so the partner's inbox sees two idle pipes and nothing
// else. A crash closes both; the connection detector's report wins when both arrive together.
//
// Invariant: each disconnect of a watched connection is reported at most once, as one PeerLost;
// ZeroMQ reconnects by itself (a restarted partner is watched again with no action here).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "protocols/core.h"
#include "protocols/topology.h"
#include "runtime/crash_line.h"
#include "runtime/curve.h"
#include "runtime/transport.h"

namespace hapair {

struct PartnerWatchConfig {
  int ping_interval_ms = 10;
  int hang_timeout_ms = 30;

  // A run's watch: a PING every hang_timeout_ms / 4, but never more often than
  // heartbeat_interval_ms. ZeroMQ times a connection out when nothing arrives for
  // hang_timeout_ms after a PING, so a hang is found between 1 and 1.25 timeouts after it
  // starts (1 and 1.05 with a PING every 10 ms at the default 200 ms) and a stalled I/O thread
  // gets the same hang_timeout_ms as before; each PING and its PONG wake an I/O thread on each
  // side of every pair, an idle spare included (docs/PERFORMANCE.md, "Where each approach's cost goes").
  static PartnerWatchConfig for_settings(const Settings& s);
};

class PartnerWatch {
 public:
  // `curve`: the run's keys when it is secure (runtime/curve.h): the watch's sockets connect to
  // the partner's data inbox, a CURVE server then, so they are CURVE clients.
  explicit PartnerWatch(zmq::context_t& context, PartnerWatchConfig config = {}, CurveKeys curve = {});
  ~PartnerWatch();
  PartnerWatch(const PartnerWatch&) = delete;
  PartnerWatch& operator=(const PartnerWatch&) = delete;

  // Starts watching `peer` at its data endpoint and, when it has one, its crash line (connects
  // at once).
  void watch(NodeId peer, const std::string& endpoint, const std::string& crash_line_endpoint = "");
  // This node's own crash line listener, served along with the watch (may stay unset).
  void serve_listener(CrashLineListener* listener) { listener_ = listener; }
  bool empty() const { return watched_.empty(); }

  // The monitor sockets, for zmq::poll: readable when a report may be waiting.
  void add_poll_items(std::vector<zmq::pollitem_t>& items);
  // How long a loop may sleep on the poll items before the watch needs a turn although none of
  // them woke it: until a crash line's next connection retry (a partner not up yet, or
  // restarting), or `longest` when no retry waits.
  std::int64_t wake_within_us(std::int64_t longest) const;
  // Whether a crash line's connection retry is due now (the one report a poll cannot wake for).
  bool retry_due() const;
  // Whether any report waits, without blocking (cheap: reads ZMQ_EVENTS).
  bool pending();
  // The failures reported since the last call, connection reports first; never blocks.
  std::vector<PeerLost> take_lost();

  std::int64_t connection_losses() const { return connection_losses_; }
  std::int64_t heartbeat_losses() const { return heartbeat_losses_; }

 private:
  struct Watched {
    NodeId peer = kNoNode;
    Detector detector = Detector::connection;
    std::unique_ptr<CrashLine> line;         // connection detector with a crash line
    std::unique_ptr<zmq::socket_t> socket;   // otherwise: the idle connection to the partner
    std::unique_ptr<zmq::socket_t> monitor;  // PAIR, receives the socket's monitor events
  };

  // Reads every waiting event of `w`; true when it saw a disconnect.
  bool drain(Watched& w);
  // Whether the connection detector of `peer` reports a disconnect within kCrashFollowsMs.
  bool crash_follows(NodeId peer);
  static constexpr int kCrashFollowsMs = 10;

  zmq::context_t& context_;
  PartnerWatchConfig config_;
  CurveKeys curve_;
  std::vector<Watched> watched_;
  CrashLineListener* listener_ = nullptr;
  std::int64_t connection_losses_ = 0;
  std::int64_t heartbeat_losses_ = 0;
};

}  // namespace hapair
