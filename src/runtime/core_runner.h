// Drives one pure NodeCore over a Transport in real time: the heart of a node's poll loop,
// shared by the node process host (node_host.h) and the in-process one-hop benchmark.
//
// Paper: not a paper concept; it is the "runtime" driver of docs/ARCHITECTURE.md, which feeds a
// role's state machine `effects = core.handle(now, event)` with real received messages and
// timer expiries and performs the effects on real sockets.
//
// Invariants: the core sees non-decreasing `now` (RunClock); its effects are applied by the
// driver kit (driver/effects.h), so it is called with Tick at or after every wake-up time it asked
// for, by the kit's wake rule (the earliest outstanding wish); a turn handles at most receive_messages_per_turn_max
// messages, and a wake-up time that passes while it works through them is served between two
// messages, so timers (heartbeats) fire even under a flood.
#pragma once

#include <cstdint>
#include <array>
#include <functional>
#include <variant>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "driver/core_factory.h"
#include "driver/effects.h"
#include "protocols/core.h"
#include "protocols/plan.h"
#include "runtime/partner_watch.h"
#include "runtime/run_clock.h"
#include "runtime/transport.h"

namespace hapair {

// What the core produced that is not a send: the host reports these to the launcher (or, in a
// benchmark, counts them). The host empties the vectors as it reports them.
struct CoreOutput {
  std::vector<Delivery> deliveries;
  std::vector<TraceEvent> traces;
  std::vector<MergeOrder> merge_orders;
  bool finished = false;    // the core has reported Effects::finished
  std::string fatal_error;  // the first fatal error the core reported
};

struct CoreRunnerConfig {
  int receive_messages_per_turn_max = 256;
  // The longest a turn waits for input when nothing else bounds it: the core's next wake-up, the
  // caller's own deadline (the host's stats and flushes), an outbox retry and the partner watch's
  // next connection retry each bound it themselves, so this is only a backstop. An idle node (an
  // upstream-backup spare, a sink between batches) wakes for its timers only: at 5 ms it woke
  // 200 times a second, ~15 ms of CPU a second for nothing (docs/PERFORMANCE.md).
  TimeUs wait_us_max = 100'000;
  // The longest a turn waits while an outbox holds messages ZeroMQ refused, before retrying.
  TimeUs outbox_retry_us = 1'000;
  // Settings::operator_cost_us_per_tuple (driver/operator_cost.h): after each handle() the runner
  // works on the CPU for the call's operator cost. The cost is CPU time of the node's thread
  // (CLOCK_THREAD_CPUTIME_ID), not wall-clock time: a node that is preempted while it works is
  // charged the same, not more.
  double operator_cost_us_per_tuple = 0.0;
  // Whether to split the thread's CPU time by what it was spent on (cpu_by_kind()): reading the
  // thread's CPU clock costs a system call (about 0.7 us on the development machine) per message
  // and per timer, so the in-process one-hop benchmark leaves it off; node processes turn it on.
  bool cpu_by_kind = false;
  // Between two messages of a backlog the runner asks the partner watch for a report at most
  // this often: each ask is a system call per watched line, and a node working through a
  // backlog of 100-tuple batches asked several times per batch. A crash is still learnt within
  // this long of the message being handled (the line itself reports it in under a millisecond).
  TimeUs watch_between_messages_us = 200;
};

// The node thread's CPU time by what it was spent on (CoreRunnerConfig::cpu_by_kind): handling a
// received message of each kind (decoding it, the core's handle(), the operator cost it charged
// and encoding and sending what the core sent in answer), and the core's timers (Tick: batch
// flushes, heartbeats, acknowledgements, checkpoints). The rest of the process's CPU (ZeroMQ's
// I/O threads, polling, reports to the launcher) is in none of them.
struct CpuByKind {
  std::array<std::int64_t, std::variant_size_v<Message>> received_ns{};
  std::int64_t timers_ns = 0;
};

class CoreRunner {
 public:
  CoreRunner(NodeCore& core, Transport& transport, NodeId self, const RunClock& clock,
             CoreRunnerConfig config = {});

  // Feeds Start (with restarted = true for a process restarted after a crash, so the core
  // rejoins its fragment instead of starting fresh). Call once, before the first turn.
  void start(CoreOutput& out, bool restarted = false);
  // The driver's detector of the pair partner (connection+heartbeat): its reports are fed as
  // PeerLost between messages and after every wait. `allowed` is asked first and may refuse
  // (a node that was told to stop sees its partner exit, which is no failure). Set before
  // start(): the core then learns that the driver watches its partner.
  void set_partner_watch(PartnerWatch* watch, std::function<bool()> allowed);
  // One loop turn: waits for input on the inbox (and on `also_poll`, when given) until the
  // core's next wake-up or at most `wait_us` (capped by wait_us_max), feeds Tick when a wake-up
  // time has passed, feeds the received messages and performs the sends. Returns whether
  // `also_poll` is readable.
  bool turn(CoreOutput& out, zmq::socket_t* also_poll, TimeUs wait_us);

  TimeUs next_wake_us() const { return applier_.wake().at_us(); }
  std::int64_t messages_handled() const { return messages_handled_; }
  // All zero unless CoreRunnerConfig::cpu_by_kind.
  const CpuByKind& cpu_by_kind() const { return cpu_by_kind_; }

 private:
  void handle(const Event& event, CoreOutput& out);
  void perform(TimeUs now, Effects&& effects, CoreOutput& out);
  void spend_operator_cost(const Effects& effects);
  // Spins until the thread has used `spend_ns` of CPU time; when `interruptible`, stops early
  // if the partner watch has a report, and owes the rest (owed_cost_ns_).
  void spend_cpu_ns(std::int64_t spend_ns, bool interruptible);
  // Feeds Tick when the core's wake-up time has come (true), else nothing (false).
  bool tick_if_due(CoreOutput& out);
  // Feeds the partner watch's reports, if any (true when it fed one).
  bool peer_lost_if_reported(CoreOutput& out);

  NodeCore& core_;
  Transport& transport_;
  const RunClock& clock_;
  CoreRunnerConfig config_;
  PartnerWatch* watch_ = nullptr;
  std::int64_t owed_cost_ns_ = 0;
  std::function<bool()> peer_lost_allowed_;
  TimeUs last_now_us_ = 0;
  TimeUs next_watch_us_ = 0;  // when to ask the partner watch between two messages again
  std::vector<zmq::pollitem_t> poll_items_;  // a turn's, kept to spare an allocation per turn
  EffectsApplier applier_;
  std::int64_t messages_handled_ = 0;
  CpuByKind cpu_by_kind_;
  bool started_ = false;
};

}  // namespace hapair
