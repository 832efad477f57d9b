#include "runtime/core_runner.h"

#include <time.h>

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "driver/operator_cost.h"
#include "protocols/check.h"

namespace hapair {
namespace {

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

CoreRunner::CoreRunner(NodeCore& core, Transport& transport, NodeId self, const RunClock& clock,
                       CoreRunnerConfig config)
    : core_(core), transport_(transport), clock_(clock), config_(config), applier_(self) {
  HAPAIR_CHECK_MSG(config_.receive_messages_per_turn_max > 0,
                   "receive_messages_per_turn_max=" << config_.receive_messages_per_turn_max);
  HAPAIR_CHECK_MSG(config_.operator_cost_us_per_tuple >= 0.0,
                   "operator_cost_us_per_tuple=" << config_.operator_cost_us_per_tuple);
}

void CoreRunner::set_partner_watch(PartnerWatch* watch, std::function<bool()> allowed) {
  HAPAIR_CHECK(!started_);
  watch_ = watch;
  peer_lost_allowed_ = std::move(allowed);
}

void CoreRunner::start(CoreOutput& out, bool restarted) {
  HAPAIR_CHECK(!started_);
  started_ = true;
  handle(Start{restarted, watch_ != nullptr}, out);
  transport_.flush();
}

bool CoreRunner::peer_lost_if_reported(CoreOutput& out) {
  if (!watch_ || !watch_->pending()) return false;
  const std::vector<PeerLost> lost = watch_->take_lost();
  if (lost.empty() || (peer_lost_allowed_ && !peer_lost_allowed_())) return false;
  for (const PeerLost& l : lost) handle(l, out);
  transport_.flush();
  return true;
}

bool CoreRunner::turn(CoreOutput& out, zmq::socket_t* also_poll, TimeUs wait_us) {
  HAPAIR_CHECK(started_);
  tick_if_due(out);
  const TimeUs now = clock_.now_us();
  transport_.release_links(now);
  const std::size_t waiting = transport_.flush();

  TimeUs wait = std::min(wait_us, config_.wait_us_max);
  if (applier_.wake().at_us() != kNever) wait = std::min(wait, applier_.wake().at_us() - now);
  if (waiting > 0) wait = std::min(wait, config_.outbox_retry_us);
  // Emulated links (docs/LINKS.md): the next message due on one bounds the wait like a timer. The
  // poll waits whole milliseconds, rounded up, which made releases 0.6 ms late on average; when a
  // release bounds the wait, the poll takes the whole milliseconds and a sleep the rest.
  const TimeUs release_us = transport_.next_link_release_us();
  const bool release_bounds = release_us != kNever && release_us - now < wait;
  if (release_bounds) wait = release_us - now;
  if (watch_) wait = watch_->wake_within_us(wait);

  std::vector<zmq::pollitem_t>& items = poll_items_;
  items.assign(1, {transport_.inbox().handle(), 0, ZMQ_POLLIN, 0});
  if (also_poll) items.push_back({also_poll->handle(), 0, ZMQ_POLLIN, 0});
  const std::size_t watch_items = items.size();
  if (watch_) watch_->add_poll_items(items);
  const bool release_sleeps = release_bounds && wait > 0 && wait == release_us - now;
  const int ready = poll_sockets(items.data(), items.size(), release_sleeps ? wait / 1000 * 1000 : wait);
  // At most a millisecond, and only when nothing came: no input waits longer than a timer would.
  if (release_sleeps && ready == 0 && release_us - clock_.now_us() <= 1'000) clock_.sleep_until(release_us);
  // The poll has just looked at every watched line: only a line it woke, or a retry that is due,
  // has anything to report, so a busy node does not ask the watch again (a system call per line)
  // after every turn.
  bool watch_woke = watch_ && watch_->retry_due();
  for (std::size_t i = watch_items; i < items.size(); ++i) watch_woke = watch_woke || items[i].revents != 0;
  if (watch_woke) peer_lost_if_reported(out);

  if (items[0].revents & ZMQ_POLLIN) {
    for (int i = 0; i < config_.receive_messages_per_turn_max; ++i) {
      const std::int64_t before_ns = config_.cpu_by_kind ? thread_cpu_ns() : 0;
      std::optional<Envelope> envelope = transport_.try_receive();
      if (!envelope) break;
      const std::size_t kind = envelope->body.index();
      handle(Received{std::move(*envelope)}, out);
      ++messages_handled_;
      if (config_.cpu_by_kind) cpu_by_kind_.received_ns[kind] += thread_cpu_ns() - before_ns;
      // A node working through a backlog (a replay, a catch-up, operators with a real cost)
      // still keeps its timers, and learns of its partner's crash between two messages.
      bool lost = false;
      if (watch_) {
        const TimeUs at = clock_.now_us();
        if (at >= next_watch_us_) {
          next_watch_us_ = at + config_.watch_between_messages_us;
          lost = peer_lost_if_reported(out);
        }
      }
      const bool released = transport_.emulates_links() && transport_.release_links(clock_.now_us()) > 0;
      if (tick_if_due(out) || lost || released) transport_.flush();
    }
  }
  tick_if_due(out);
  transport_.release_links(clock_.now_us());
  transport_.flush();
  return also_poll && (items[1].revents & ZMQ_POLLIN);
}

bool CoreRunner::tick_if_due(CoreOutput& out) {
  if (!applier_.wake().due(clock_.now_us())) return false;
  applier_.wake().clear();
  const std::int64_t before_ns = config_.cpu_by_kind ? thread_cpu_ns() : 0;
  handle(Tick{}, out);
  if (config_.cpu_by_kind) cpu_by_kind_.timers_ns += thread_cpu_ns() - before_ns;
  return true;
}

void CoreRunner::handle(const Event& event, CoreOutput& out) {
  // Work cut short by a partner's failure report is finished before the next event, so the
  // total charged stays what the model says; only the report overtook it.
  if (owed_cost_ns_ > 0 && !std::holds_alternative<PeerLost>(event)) spend_cpu_ns(std::exchange(owed_cost_ns_, 0), false);
  // RunClock is monotonic; the max() only guards the core contract against a clock bug.
  const TimeUs now = std::max(last_now_us_, clock_.now_us());
  last_now_us_ = now;
  perform(now, core_.handle(now, event), out);
}

void CoreRunner::spend_operator_cost(const Effects& effects) {
  if (effects.operator_tuples == 0 || config_.operator_cost_us_per_tuple <= 0.0) return;
  // Busy, not asleep: the cost is CPU time, measured as such by the CPU overhead metric, and
  // it competes for the machine's cores as real operator work would. It is counted on the
  // thread's CPU clock, so time the thread spends preempted (another process, CPU steal) is
  // not charged: the work is the same however busy the machine is.
  spend_cpu_ns(static_cast<std::int64_t>(operator_cost_us(config_.operator_cost_us_per_tuple, effects) * 1000.0), true);
}

void CoreRunner::spend_cpu_ns(std::int64_t spend_ns, bool interruptible) {
  const std::int64_t until = thread_cpu_ns() + spend_ns;
  for (std::uint32_t i = 1;; ++i) {
    const std::int64_t now = thread_cpu_ns();
    if (now >= until) return;
    // A partner's failure report is served within about ten microseconds of work, not after
    // the whole batch: a standby busy with its share of the input still takes over at once.
    if (interruptible && watch_ && i % 32 == 0 && watch_->pending()) {
      owed_cost_ns_ += until - now;
      return;
    }
  }
}

namespace {

// The runtime's side of the effects (driver/effects.h): sends go to the transport, the rest to
// the host's CoreOutput; the wake-up is polled (CoreRunner::turn), so scheduling it does nothing.
class RunnerEffects final : public EffectsDriver {
 public:
  RunnerEffects(Transport& transport, CoreOutput& out, TimeUs now) : transport_(transport), out_(out), now_(now) {}
  void send(Outgoing&& outgoing) override { transport_.send(outgoing.to, outgoing.envelope, now_); }
  void deliver(std::vector<Delivery>& deliveries) override {
    // Appending into the buffer the host keeps reusing avoids reallocating a large vector (and
    // its page faults) on every turn; taking the core's buffer is cheaper only when it is bigger.
    if (out_.deliveries.empty() && out_.deliveries.capacity() < deliveries.size()) {
      out_.deliveries.swap(deliveries);
    } else {
      out_.deliveries.insert(out_.deliveries.end(), std::make_move_iterator(deliveries.begin()),
                             std::make_move_iterator(deliveries.end()));
    }
  }
  void record_trace(TraceEvent&& trace) override { out_.traces.push_back(std::move(trace)); }
  void record_merge_order(MergeOrder&& order) override { out_.merge_orders.push_back(std::move(order)); }
  void schedule_wake(TimeUs) override {}
  void finished() override { out_.finished = true; }
  void fatal_error(std::string&& message) override {
    if (out_.fatal_error.empty()) out_.fatal_error = std::move(message);
  }

 private:
  Transport& transport_;
  CoreOutput& out_;
  TimeUs now_;
};

}  // namespace

void CoreRunner::perform(TimeUs now, Effects&& effects, CoreOutput& out) {
  spend_operator_cost(effects);
  RunnerEffects driver(transport_, out, now);
  applier_.apply(now, std::move(effects), driver);
}

}  // namespace hapair
