// The crash line: one plain TCP connection from a node to its pair partner that carries nothing
// and exists only to end when the partner's process dies (Detector::connection of PartnerWatch).
//
// Why not a ZeroMQ connection: a killed process's kernel closes its file descriptors in
// ascending order, after tearing down its memory, and every close that wakes a peer on the same
// core may be preempted by that peer. A ZeroMQ connection's descriptor is wherever the I/O
// thread's accept put it (among 30 others), and its end reaches the watcher through the
// watcher's I/O thread and a monitor socket: two wake-ups. Measured here under the experiments'
// load, that put a partner's detection 0.8-2 ms after the SIGKILL. The crash line is accepted into
// one of a few descriptors reserved at process start (the lowest after stdio), so the dying
// kernel closes it first, and the watcher's own loop polls the socket: one wake-up.
//
// CrashLineSlots (the watched side, created before anything else opens descriptors) reserves the
// low descriptors; CrashLineListener listens and accepts into them; CrashLine (the watching side)
// connects to the partner's listener and reports when an established line ends. A line that
// cannot connect (the partner is not up yet, or restarting) is retried, never reported: only the
// end of a line that was up means a death.
//
// Invariant: a CrashLine reports each established connection's end at most once.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace hapair {

// A few descriptors just above stdio, held open on /dev/null until a crash line takes one.
class CrashLineSlots {
 public:
  static constexpr int kSlots = 4;
  CrashLineSlots();  // call before the ZeroMQ context exists
  ~CrashLineSlots();
  CrashLineSlots(const CrashLineSlots&) = delete;
  CrashLineSlots& operator=(const CrashLineSlots&) = delete;

  // Moves `fd` onto a free slot and returns the slot's descriptor (closing `fd`); returns `fd`
  // itself when every slot is taken.
  int take(int fd);
  // Closes a descriptor returned by take(), putting the placeholder back when it was a slot.
  void release(int fd);
  int lowest() const { return slots_[0].fd; }

 private:
  struct Slot {
    int fd = -1;
    bool used = false;
  };
  std::array<Slot, kSlots> slots_{};
};

class CrashLineListener {
 public:
  // Listens on the host of `data_endpoint` (tcp://HOST:PORT) at `port` (0: any free port), with
  // SO_REUSEADDR so that a restarted node binds its first incarnation's port again.
  CrashLineListener(CrashLineSlots& slots, const std::string& data_endpoint, int port);
  ~CrashLineListener();
  CrashLineListener(const CrashLineListener&) = delete;
  CrashLineListener& operator=(const CrashLineListener&) = delete;

  std::string endpoint() const { return endpoint_; }  // tcp://HOST:PORT, for Hello
  void add_poll_items(std::vector<zmq::pollitem_t>& items) const;
  // Whether a partner waits to be accepted or a line to be closed, without blocking.
  bool pending() const;
  // Accepts waiting partners into the reserved slots and closes lines whose partner went away.
  void serve();

 private:
  CrashLineSlots& slots_;
  int listen_fd_ = -1;
  std::string endpoint_;
  std::vector<int> accepted_;
};

class CrashLine {
 public:
  explicit CrashLine(std::string endpoint);  // tcp://HOST:PORT; connects at once
  ~CrashLine();
  CrashLine(const CrashLine&) = delete;
  CrashLine& operator=(const CrashLine&) = delete;

  // The socket for zmq::poll (POLLIN: the line may have ended or finished connecting), or -1
  // while no connection is under way.
  int fd() const { return fd_; }
  short poll_events() const;  // POLLOUT too while connecting
  // Whether anything waits to be read about the line, without blocking.
  bool pending() const;
  // True once when a line that was established has ended. Also finishes a connection under way,
  // and retries a failed one at most every kRetryMs.
  bool ended();
  // While no connection is under way: milliseconds until the next retry is due (0: due now), so
  // an idle loop wakes for it; -1 while a connection is under way or established (the socket
  // wakes the loop then).
  std::int64_t retry_in_ms() const;

  static constexpr int kRetryMs = 10;

 private:
  void connect_now();
  void close_line();

  std::string endpoint_;
  std::string host_;
  int port_ = 0;
  int fd_ = -1;
  bool established_ = false;
  std::int64_t retry_at_ms_ = 0;
};

// Splits tcp://HOST:PORT; false when it is not of that form (PORT may be * or a number).
bool split_tcp_endpoint(const std::string& endpoint, std::string& host, std::string& port);

}  // namespace hapair
