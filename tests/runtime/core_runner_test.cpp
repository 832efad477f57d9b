// Tests of the core runner (runtime/core_runner.h), the real-time driver of a pure core: it
// keeps the core contract of core.h (non-decreasing `now`, Tick at or after every wake-up the
// core asked for) and bounds the messages one turn handles, so timers fire under a flood.
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "runtime/core_runner.h"
#include "runtime/run_clock.h"
#include "runtime/transport.h"

namespace hapair {
namespace {

constexpr TimeUs kGiveUpUs = 10'000'000;  // only reached when the runner stopped working

// Asks to be woken every 3 ms, 20 times, and records what it was asked and when it was called.
class WakingCore : public NodeCore {
 public:
  Effects handle(TimeUs now, const Event& event) override {
    Effects e;
    nows.push_back(now);
    if (std::holds_alternative<Tick>(event)) ticks.push_back({wish_, now});
    if (std::holds_alternative<Start>(event) || (std::holds_alternative<Tick>(event) && now >= wish_)) {
      if (ticks.size() < 20) {
        wish_ = now + 3'000;
        e.wake_at(wish_);
      }
    } else {
      e.wake_at(wish_);  // an early Tick: the wish still stands
    }
    return e;
  }
  Metrics metrics() const override { return {}; }
  std::vector<TimeUs> nows;
  std::vector<std::pair<TimeUs, TimeUs>> ticks;  // (wished, called at)

 private:
  TimeUs wish_ = kNever;
};

// Counts what it receives.
class CountingCore : public NodeCore {
 public:
  Effects handle(TimeUs, const Event& event) override {
    if (std::holds_alternative<Received>(event)) ++received;
    return {};
  }
  Metrics metrics() const override { return {}; }
  int received = 0;
};

// Reports that its Start handled `operator_tuples` tuples at an operator.
class WorkingCore : public NodeCore {
 public:
  explicit WorkingCore(std::uint64_t operator_tuples) : operator_tuples_(operator_tuples) {}
  Effects handle(TimeUs, const Event& event) override {
    Effects e;
    if (std::holds_alternative<Start>(event)) {
      e.tuples_processed = operator_tuples_;
      e.operator_tuples = operator_tuples_;
    }
    return e;
  }
  Metrics metrics() const override { return {}; }

 private:
  std::uint64_t operator_tuples_;
};

}  // namespace

TEST_CASE("core runner spends operator_cost_us_per_tuple for every tuple an operator processed") {
  // A lower bound only (a busy machine can only make it longer): 50 tuples at 200 us each keep
  // the runner busy for at least 10 ms before the call's effects are performed.
  zmq::context_t context(1);
  Transport transport(context, TransportConfig{});
  WorkingCore core(50);
  const RunClock clock = RunClock::starting_now();
  CoreRunnerConfig config;
  config.operator_cost_us_per_tuple = 200.0;
  CoreRunner runner(core, transport, 0, clock, config);
  CoreOutput out;
  const TimeUs before = clock.now_us();
  runner.start(out);
  CHECK(clock.now_us() - before >= 50 * 200);
}

TEST_CASE("core runner calls Tick at or after every wake-up the core asked for, with non-decreasing time") {
  zmq::context_t context(1);
  Transport transport(context, TransportConfig{});
  WakingCore core;
  const RunClock clock = RunClock::starting_now();
  CoreRunner runner(core, transport, 0, clock);
  CoreOutput out;
  runner.start(out);
  while (core.ticks.size() < 20 && clock.now_us() < kGiveUpUs) runner.turn(out, nullptr, 5'000);

  REQUIRE(core.ticks.size() >= 20);
  for (const auto& [wished, at] : core.ticks) {
    INFO("wished " << wished << " called at " << at);
    CHECK(at >= wished);
  }
  CHECK(std::is_sorted(core.nows.begin(), core.nows.end()));
}

TEST_CASE("core runner handles at most receive_messages_per_turn_max messages in one turn and the rest later") {
  zmq::context_t context(1);
  Transport receiver(context, TransportConfig{});
  Transport sender(context, TransportConfig{});
  sender.set_peer(1, receiver.endpoint());
  constexpr int kMessages = 1'000;
  for (int i = 0; i < kMessages; ++i) sender.send(1, Envelope{Header{0, 0, 0}, Heartbeat{static_cast<std::uint64_t>(i)}});
  // Give the flood time to arrive, so that one turn has more waiting than it may take.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  CountingCore core;
  const RunClock clock = RunClock::starting_now();
  CoreRunnerConfig config;
  config.receive_messages_per_turn_max = 256;
  CoreRunner runner(core, receiver, 1, clock, config);
  CoreOutput out;
  runner.start(out);
  int most_in_one_turn = 0;
  while (core.received < kMessages && clock.now_us() < kGiveUpUs) {
    sender.flush();
    const int before = core.received;
    runner.turn(out, nullptr, 5'000);
    most_in_one_turn = std::max(most_in_one_turn, core.received - before);
  }
  CHECK(core.received == kMessages);
  CHECK(runner.messages_handled() == kMessages);
  CHECK(most_in_one_turn == 256);
}

}  // namespace hapair
