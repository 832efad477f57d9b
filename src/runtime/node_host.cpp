#include "runtime/node_host.h"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "node/node_factory.h"
#include "protocols/check.h"
#include "runtime/run_clock.h"

namespace hapair {
namespace {

// glibc gives every allocation above its mmap threshold (128 KiB, raised as such blocks are freed)
// fresh pages from the kernel and returns the heap's free top above its trim threshold: each
// checkpoint, chunk and big ZeroMQ message then paid page faults and zeroing of new pages
// (measured: 15 % of passive standby's extra CPU in the chain bench, docs/PERFORMANCE.md). A node
// reuses freed memory instead; its queues are bounded, so what it keeps is bounded too.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

// Thrown out of the loop when a setup step fails; run_node_process prints it and exits 1.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The node's end of the control plane: a DEALER to the launcher's ROUTER.
class ControlClient {
 public:
  ControlClient(zmq::context_t& context, const NodeProcessOptions& options, NodeId self)
      : socket_(context, zmq::socket_type::dealer),
        decoder_(options.node_name + " control", DecodeLimits{}),
        self_(self),
        log_name_(options.node_name) {
    socket_.set(zmq::sockopt::routing_id, options.node_name);
    // Reports still queued at exit (final stats, the last deliveries) get this long to leave.
    socket_.set(zmq::sockopt::linger, options.control_send_timeout_ms);
    socket_.set(zmq::sockopt::sndtimeo, options.control_send_timeout_ms);
    socket_.set(zmq::sockopt::sndhwm, 10'000);
    make_curve_client(socket_, options.curve);
    allow_ipv6_for(socket_, options.control_endpoint);
    socket_.connect(options.control_endpoint);
  }

  zmq::socket_t& socket() { return socket_; }

  void send(TimeUs now, Message body) {
    const Envelope envelope{Header{self_, 0, now}, std::move(body)};
    const Bytes bytes = encode(envelope);
    bool sent = false;
    try {
      sent = socket_.send(zmq::buffer(bytes.data(), bytes.size()), zmq::send_flags::none).has_value();
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
    if (!sent) {
      ++send_failed_;
      if (worth_logging(send_failed_))
        std::fprintf(stderr, "hapair[%s]: could not send a %s message to the launcher (%lld so far)\n",
                     log_name_.c_str(), message_kind_name(envelope.body), static_cast<long long>(send_failed_));
    }
  }

  // The next well-formed control message, waiting up to wait_us for it.
  std::optional<Envelope> receive(TimeUs wait_us) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (wait_us > 0 && poll_sockets(&item, 1, wait_us) == 0) return std::nullopt;
    for (int i = 0; i < 64; ++i) {
      zmq::message_t frame;
      if (!socket_.recv(frame, zmq::recv_flags::dontwait)) return std::nullopt;
      if (auto envelope = decoder_.decode(frame.data(), frame.size())) return envelope;
    }
    return std::nullopt;
  }

  std::int64_t send_failed() const { return send_failed_; }
  std::int64_t decode_dropped() const { return decoder_.dropped(); }

 private:
  zmq::socket_t socket_;
  FrameDecoder decoder_;
  NodeId self_;
  std::string log_name_;
  std::int64_t send_failed_ = 0;
};

enum class ControlAction { none, stop };

// How long a node that was told to stop keeps its sockets open (see finish()).
constexpr TimeUs kStopGraceUs = 50'000;

class NodeHost {
 public:
  NodeHost(zmq::context_t& context, const NodeProcessOptions& options, NodeId self, CrashLineSlots& slots)
      : context_(context),
        options_(options),
        self_(self),
        plan_(*options.plan),
        is_sink_(plan_.runs_fragment(self) &&
                 plan_.fragments.at(plan_.nodes.at(self).fragment).kind == FragmentKind::sink),
        gate_(options.curve.on() ? std::make_unique<CurveGate>(context, options.curve) : nullptr),
        transport_(context, transport_config(options, plan_.nodes.at(self))),
        control_(context, options, self),
        core_(options.core_factory ? options.core_factory(options.plan, self)
                                   : make_node_core(options.plan, self)) {
    HAPAIR_CHECK_MSG(core_ != nullptr, "no core for node " << options.node_name);
    if (gate_) {
      gate_->watch(transport_.inbox());
      gate_->start();
    }
    // A node of no fragment (the coordinator of global checkpoints) has no pair partner to be
    // watched by: no crash line.
    if (plan_.settings().detector == DetectorKind::connection_heartbeat && plan_.runs_fragment(self) &&
        plan_.fragments.at(plan_.nodes.at(self).fragment).has_standby()) {
      std::string host;
      std::string port = "0";
      if (!options.crash_line_bind.empty() && !split_tcp_endpoint(options.crash_line_bind, host, port))
        throw SetupError("--crash-line '" + options.crash_line_bind + "' is not tcp://HOST:PORT");
      try {
        listener_.emplace(slots, transport_.endpoint(), std::stoi(port));
      } catch (const std::invalid_argument&) {
        throw SetupError("--crash-line '" + options.crash_line_bind + "' has no port number");
      } catch (const std::runtime_error& e) {
        throw SetupError(e.what());
      }
    }
  }

  int run() {
    control_.send(0, Hello{options_.node_name, transport_.endpoint(), static_cast<std::int64_t>(getpid()),
                           listener_ ? listener_->endpoint() : std::string()});
    const Directory directory = wait_for_directory();
    if (stop_requested_) return kNodeExitOk;
    for (NodeId id = 0; id < directory.endpoints.size(); ++id) transport_.set_peer(id, directory.endpoints[id]);
    // Link emulation ([links], [[link]]; docs/LINKS.md): this node's side of every emulated link.
    transport_.emulate_links(OutgoingLinks<LinkFrame>(plan_, self_));
    watch_partner(context_, directory);
    // An injected offset (clock_shift_us) makes the run clock read as a clock that far ahead would.
    epoch_realtime_us_ = directory.epoch_realtime_us;
    clock_ = RunClock::from_realtime_epoch(directory.epoch_realtime_us - options_.clock_shift_us);

    // Until the epoch only the launcher is listened to, so a StopRun or Kill still works.
    while (!stop_requested_ && clock_->now_us() < 0) {
      if (auto envelope = control_.receive(std::min<TimeUs>(-clock_->now_us(), 5'000))) on_control(*envelope);
    }
    if (stop_requested_) return finish(kNodeExitOk);
    return loop();
  }

 private:
  static TransportConfig transport_config(const NodeProcessOptions& options, const PlanNode& node) {
    TransportConfig config = options.transport;
    config.bind_endpoint = !options.bind_endpoint.empty() ? options.bind_endpoint
                           : !node.endpoint.empty()       ? node.endpoint
                                                          : std::string("tcp://127.0.0.1:*");
    config.log_name = options.node_name;
    config.curve = options.curve;
    return config;
  }

  // Settings::detector = connection+heartbeat: the other node of this node's fragment (its pair
  // partner: the primary of a standby, the standby of a primary) is watched by PartnerWatch.
  void watch_partner(zmq::context_t& context, const Directory& directory) {
    const Settings& s = plan_.settings();
    if (s.detector != DetectorKind::connection_heartbeat) return;
    // The partners: the other nodes of my fragment; for the coordinator of global checkpoints (a
    // node of no fragment), every node of every fragment it coordinates.
    std::vector<NodeId> partners;
    if (plan_.runs_fragment(self_)) {
      partners = plan_.fragments.at(plan_.nodes.at(self_).fragment).replicas();
    } else {
      for (const PlanFragment& f : plan_.fragments)
        if (f.kind == FragmentKind::operators && plan_.traits(f.id).coordinator)
          for (NodeId n : f.replicas()) partners.push_back(n);
    }
    watch_.emplace(context, PartnerWatchConfig::for_settings(s), options_.curve);
    for (const NodeId partner : partners) {
      if (partner == kNoNode || partner == self_ || directory.endpoints.at(partner).empty()) continue;
      const std::string line =
          partner < directory.crash_line_endpoints.size() ? directory.crash_line_endpoints[partner] : std::string();
      watch_->watch(partner, directory.endpoints[partner], line);
    }
    if (listener_) watch_->serve_listener(&*listener_);
  }

  Directory wait_for_directory() {
    const RunClock waiting = RunClock::starting_now();
    const auto timeout_us = static_cast<TimeUs>(options_.directory_timeout_s * 1e6);
    while (waiting.now_us() < timeout_us) {
      std::optional<Envelope> envelope = control_.receive(std::min<TimeUs>(timeout_us - waiting.now_us(), 100'000));
      if (!envelope) continue;
      if (auto* directory = std::get_if<Directory>(&envelope->body)) {
        if (directory->endpoints.size() != plan_.nodes.size())
          throw SetupError("the launcher's directory lists " + std::to_string(directory->endpoints.size()) +
                           " endpoints but the plan has " + std::to_string(plan_.nodes.size()) +
                           " nodes (is the launcher using the same topology file?)");
        return *directory;
      }
      on_control(*envelope);
      if (stop_requested_) return {};
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", options_.directory_timeout_s);
    throw SetupError("no directory from the launcher at " + options_.control_endpoint + " within " + seconds + " s");
  }

  int loop() {
    CoreRunnerConfig runner_config = options_.runner;
    runner_config.operator_cost_us_per_tuple = plan_.settings().operator_cost_us_per_tuple;
    // The counters cpu_us.<kind> and cpu_us.timers: where a node's CPU goes (hapair bench --chain).
    runner_config.cpu_by_kind = true;
    CoreRunner runner(*core_, transport_, self_, *clock_, runner_config);
    runner_ = &runner;
    if (watch_ && !watch_->empty()) {
      // A partner that exits after StopRun has not failed: a pending StopRun is read first.
      runner.set_partner_watch(&*watch_, [this] {
        for (int i = 0; i < 16 && !stop_requested_; ++i) {
          std::optional<Envelope> envelope = control_.receive(0);
          if (!envelope) break;
          on_control(*envelope);
        }
        return !stop_requested_;
      });
    }
    runner.start(out_, options_.rejoin);
    next_stats_us_ = clock_->now_us() + options_.stats_interval_us;
    for (;;) {
      report();
      if (!out_.fatal_error.empty()) {
        const TimeUs now = clock_->now_us();
        std::fprintf(stderr, "hapair[%s]: fatal error: %s\n", options_.node_name.c_str(), out_.fatal_error.c_str());
        out_.traces.push_back(TraceEvent(now, self_, TraceKind::fatal).with_text(out_.fatal_error));
        return finish(kNodeExitFatal);
      }
      if (stop_requested_) return finish(kNodeExitOk);

      const TimeUs now = clock_->now_us();
      TimeUs wait_us = next_stats_us_ - now;
      if (!out_.deliveries.empty()) wait_us = std::min(wait_us, deliveries_since_us_ + options_.delivery_flush_us - now);
      if (runner.turn(out_, &control_.socket(), wait_us)) {
        // Bounded, like the data inbox: the launcher sends a handful of messages per run.
        for (int i = 0; i < 16 && !stop_requested_; ++i) {
          std::optional<Envelope> envelope = control_.receive(0);
          if (!envelope) break;
          on_control(*envelope);
        }
      }
    }
  }

  // The node's clock as a clock probe reads it: the realtime instant its run clock implies (which
  // carries the injected shift), or before the run clock exists the realtime clock itself.
  std::int64_t probe_clock_us() const {
    return clock_ ? epoch_realtime_us_ + clock_->now_us() : RunClock::realtime_us() + options_.clock_shift_us;
  }

  void on_control(const Envelope& envelope) {
    if (const auto* request = std::get_if<ClockRequest>(&envelope.body)) {
      // t2 as soon as the request is in hand, t3 just before the answer leaves.
      const std::int64_t t2 = probe_clock_us();
      control_.send(clock_ ? clock_->now_us() : 0, ClockReply{request->sequence, request->t1_us, t2, probe_clock_us()});
      return;
    }
    if (const auto* kill = std::get_if<Kill>(&envelope.body)) {
      if (kill->pause_ms <= 0) {
        std::fprintf(stderr, "hapair[%s]: killed by the launcher\n", options_.node_name.c_str());
        std::fflush(stderr);
        raise(SIGKILL);
      }
      // A paused process handles nothing, not even its timers; what arrives meanwhile waits in
      // ZeroMQ's queues, as it would for a process stopped by SIGSTOP.
      const RunClock pause = RunClock::starting_now();
      pause.sleep_until(us_from_ms(static_cast<double>(kill->pause_ms)));
      return;
    }
    if (std::holds_alternative<StopRun>(envelope.body)) {
      stop_requested_ = true;
      return;
    }
    ++control_unexpected_;
    if (worth_logging(control_unexpected_))
      std::fprintf(stderr, "hapair[%s]: ignored an unexpected %s message from the launcher\n",
                   options_.node_name.c_str(), message_kind_name(envelope.body));
  }

  // Sends what is due: traces at once, deliveries in batches, end_of_output, periodic stats.
  void report() {
    const TimeUs now = clock_->now_us();
    if (!out_.traces.empty()) {
      control_.send(now, TraceBatch{std::move(out_.traces)});
      out_.traces.clear();
    }
    flush_merge_orders(now);
    if (!out_.deliveries.empty() && deliveries_since_us_ == kNever) deliveries_since_us_ = now;
    const bool end_due = out_.finished && is_sink_ && !end_reported_;
    if (out_.deliveries.size() >= options_.delivery_batch_max ||
        (!out_.deliveries.empty() && now - deliveries_since_us_ >= options_.delivery_flush_us) || end_due)
      flush_deliveries(now);
    if (end_due) {
      control_.send(now, DeliveryBatch{{}, true, {}});
      end_reported_ = true;
    }
    if (now >= next_stats_us_) {
      send_stats(now, false);
      next_stats_us_ = now + options_.stats_interval_us;
    }
  }

  void flush_deliveries(TimeUs now) {
    const std::size_t batch_max = std::max<std::size_t>(options_.delivery_batch_max, 1);
    for (std::size_t first = 0; first < out_.deliveries.size(); first += batch_max) {
      const std::size_t last = std::min(out_.deliveries.size(), first + batch_max);
      DeliveryBatch batch;
      batch.deliveries.assign(std::make_move_iterator(out_.deliveries.begin() + static_cast<std::ptrdiff_t>(first)),
                              std::make_move_iterator(out_.deliveries.begin() + static_cast<std::ptrdiff_t>(last)));
      deliveries_reported_ += static_cast<std::int64_t>(batch.deliveries.size());
      control_.send(now, std::move(batch));
    }
    out_.deliveries.clear();
    deliveries_since_us_ = kNever;
  }

  // A Union's merge order goes out at once, like traces: what a SIGKILL takes with it is lost
  // to the checker, which then cannot judge what depended on it.
  void flush_merge_orders(TimeUs now) {
    if (out_.merge_orders.empty()) return;
    DeliveryBatch batch;
    batch.merge_orders.swap(out_.merge_orders);
    control_.send(now, std::move(batch));
  }

  void send_stats(TimeUs now, bool final) {
    Metrics metrics;
    transport_.add_metrics(metrics);
    metrics["decode_dropped"] = transport_.decode_dropped() + control_.decode_dropped();
    metrics["cpu_us"] = RunClock::process_cpu_us();
    if (runner_ != nullptr) {
      const CpuByKind& cpu = runner_->cpu_by_kind();
      for (std::size_t k = 0; k < cpu.received_ns.size(); ++k)
        if (cpu.received_ns[k] > 0) metrics[std::string("cpu_us.") + kMessageKindNames[k]] = cpu.received_ns[k] / 1000;
      metrics["cpu_us.timers"] = cpu.timers_ns / 1000;
    }
    metrics["deliveries_reported"] = deliveries_reported_;
    metrics["control_send_failed"] = control_.send_failed();
    metrics["control_unexpected"] = control_unexpected_;
    metrics["finished"] = out_.finished ? 1 : 0;
    if (gate_) gate_->add_metrics(metrics);
    if (watch_) {
      metrics["partner_lost.connection"] = watch_->connection_losses();
      metrics["partner_lost.heartbeat"] = watch_->heartbeat_losses();
    }
    // Lets a launcher (or a test) check afterwards that the process is really gone.
    metrics["pid"] = static_cast<std::int64_t>(getpid());
    // The host's own counters win a name clash: they describe the process, not the role.
    for (const auto& [name, value] : core_->metrics()) metrics.emplace(name, value);
    NodeStats stats;
    stats.at_us = now;
    stats.final = final;
    stats.counters.reserve(metrics.size());
    for (const auto& [name, value] : metrics) stats.counters.push_back(Counter{name, value});
    control_.send(now, std::move(stats));
  }

  // Reports everything still pending and the final stats; the control socket's linger gives
  // them time to leave before the process exits.
  int finish(int status) {
    const TimeUs now = clock_ ? clock_->now_us() : 0;
    if (!out_.traces.empty()) {
      control_.send(now, TraceBatch{std::move(out_.traces)});
      out_.traces.clear();
    }
    if (!out_.deliveries.empty()) flush_deliveries(now);
    flush_merge_orders(now);
    transport_.flush();
    send_stats(now, true);
    // The launcher told every node to stop at about the same time; a node that closed its
    // sockets at once could be taken for crashed by a partner that has not read its own
    // StopRun yet. A short grace lets every partner see StopRun first.
    if (status == kNodeExitOk && watch_ && !watch_->empty()) RunClock::starting_now().sleep_until(kStopGraceUs);
    return status;
  }

  zmq::context_t& context_;
  const NodeProcessOptions& options_;
  NodeId self_;
  const Plan& plan_;
  bool is_sink_;
  std::unique_ptr<CurveGate> gate_;  // bound before the data inbox, closed after it
  Transport transport_;
  ControlClient control_;
  std::unique_ptr<NodeCore> core_;
  std::optional<CrashLineListener> listener_;  // declared before watch_, which points to it
  std::optional<PartnerWatch> watch_;
  std::optional<RunClock> clock_;
  std::int64_t epoch_realtime_us_ = 0;  // the Directory's, once it came
  CoreOutput out_;
  const CoreRunner* runner_ = nullptr;  // loop()'s, while it runs (for cpu_us.<kind>)
  bool stop_requested_ = false;
  bool end_reported_ = false;
  TimeUs next_stats_us_ = 0;
  TimeUs deliveries_since_us_ = kNever;
  std::int64_t deliveries_reported_ = 0;
  std::int64_t control_unexpected_ = 0;
};

}  // namespace

namespace {

// exit_on_stdin_eof: a thread that blocks reading stdin and ends the process when it ends. A
// thread, not a descriptor in the poll loop, so that it works in every phase (waiting for the
// Directory, running, stopping) and whatever the loop waits on.
void exit_when_stdin_ends(const std::string& who) {
  std::thread([who] {
    char buffer[256];
    for (;;) {
      const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
      if (n > 0 || (n < 0 && errno == EINTR)) continue;
      std::fprintf(stderr, "%s: stdin ended (the launcher's ssh session is gone); exiting\n", who.c_str());
      std::fflush(stderr);
      ::_exit(kNodeExitLauncherGone);
    }
  }).detach();
}

}  // namespace

int run_node_process(const NodeProcessOptions& options) {
  keep_freed_memory();
  const std::string who = "hapair node " + options.node_name;
  // The keys come first: the stdin watch below reads (and discards) whatever follows them.
  NodeProcessOptions keyed = options;
  if (options.keys_from_stdin) {
    std::string error;
    const auto timeout_ms = static_cast<int>(std::min(options.directory_timeout_s, 3'600.0) * 1e3);
    std::optional<CurveKeys> keys = read_key_line(STDIN_FILENO, timeout_ms, error);
    if (!keys) {
      std::fprintf(stderr, "%s: %s\n", who.c_str(), error.c_str());
      return kNodeExitSetupError;
    }
    keyed.curve = std::move(*keys);
  }
  if (!keyed.curve.on() && options.exit_on_stdin_eof)
    std::fprintf(stderr, "%s: warning: no CURVE keys: this node's ports let in anyone who reaches them\n", who.c_str());
  if (options.exit_on_stdin_eof) exit_when_stdin_ends(who);
  if (!options.plan) {
    std::fprintf(stderr, "%s: no plan given\n", who.c_str());
    return kNodeExitSetupError;
  }
  const NodeId self = options.plan->node_id(options.node_name);
  if (self == kNoNode) {
    std::string names;
    for (const PlanNode& node : options.plan->nodes) names += (names.empty() ? "" : ", ") + node.name;
    std::fprintf(stderr, "%s: the topology %s has no node '%s' (its nodes: %s)\n", who.c_str(),
                 options.topology_path.c_str(), options.node_name.c_str(), names.c_str());
    return kNodeExitSetupError;
  }
  if (options.control_endpoint.empty()) {
    std::fprintf(stderr, "%s: no control endpoint given\n", who.c_str());
    return kNodeExitSetupError;
  }
  try {
    // The crash line's descriptors come first, so that this process's kernel closes them first
    // when it is killed (runtime/crash_line.h).
    CrashLineSlots slots;
    zmq::context_t context(1);
    NodeHost host(context, keyed, self, slots);
    return host.run();
  } catch (const SetupError& e) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
  } catch (const zmq::error_t& e) {
    std::fprintf(stderr, "%s: ZeroMQ error: %s\n", who.c_str(), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
  }
  return kNodeExitSetupError;
}

}  // namespace hapair
