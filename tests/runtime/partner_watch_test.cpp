// Tests of the partner watch (runtime/partner_watch.h) against a real partner process on tcp
// loopback: a SIGKILLed partner is reported by the connection detector, a SIGSTOPped one (its
// connections stay open) by the ZMTP heartbeat detector, and a partner that lives is never
// reported, however busy the watching thread is.
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "runtime/partner_watch.h"
#include "runtime/run_clock.h"

namespace hapair {
namespace {

constexpr NodeId kPartner = 3;
constexpr TimeUs kPartnerWaitMaxUs = 10'000'000;  // only reached when a report never comes

// A partner process: binds a PULL socket like a node's inbox (and, with_crash_line, a crash
// line listener, as a node does), tells its endpoints through a pipe, then serves the listener
// until it is killed.
struct PartnerProcess {
  pid_t pid = -1;
  std::string endpoint;
  std::string crash_line;

  explicit PartnerProcess(bool with_crash_line = false) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      CrashLineSlots slots;
      zmq::context_t context(1);
      zmq::socket_t inbox(context, zmq::socket_type::pull);
      inbox.bind("tcp://127.0.0.1:*");
      std::string ep = inbox.get(zmq::sockopt::last_endpoint);
      std::optional<CrashLineListener> listener;
      if (with_crash_line) listener.emplace(slots, ep, 0);
      ep += " " + (listener ? listener->endpoint() : std::string("-"));
      if (write(fds[1], ep.data(), ep.size()) < 0) _exit(2);
      close(fds[1]);
      for (;;) {
        if (listener) listener->serve();
        poll(nullptr, 0, 5);
      }
    }
    close(fds[1]);
    char buffer[256];
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    close(fds[0]);
    REQUIRE(n > 0);
    const std::string both(buffer, static_cast<std::size_t>(n));
    endpoint = both.substr(0, both.find(' '));
    crash_line = both.substr(both.find(' ') + 1);
    if (crash_line == "-") crash_line.clear();
  }
  ~PartnerProcess() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// Waits (polling the watch) until it reports, or kWaitMaxUs.
std::vector<PeerLost> wait_for_report(PartnerWatch& watch) {
  const RunClock clock = RunClock::starting_now();
  while (clock.now_us() < kPartnerWaitMaxUs) {
    std::vector<zmq::pollitem_t> items;
    watch.add_poll_items(items);
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100));
    std::vector<PeerLost> lost = watch.take_lost();
    if (!lost.empty()) return lost;
  }
  return {};
}

// Watches a partner (with or without a crash line), lets its connections come up, sends it
// `signal` and returns what the watch reported.
struct Report {
  std::vector<PeerLost> lost;
  std::int64_t connection_losses = 0;
};
Report report_after(int signal, bool with_crash_line, PartnerWatchConfig config = PartnerWatchConfig{10, 30}) {
  PartnerProcess partner(with_crash_line);
  REQUIRE(partner.crash_line.empty() != with_crash_line);
  zmq::context_t context(1);
  PartnerWatch watch(context, config);
  watch.watch(kPartner, partner.endpoint, partner.crash_line);
  RunClock::starting_now().sleep_until(100'000);  // every connection up before the signal
  REQUIRE(watch.take_lost().empty());
  kill(partner.pid, signal);
  Report report{wait_for_report(watch), watch.connection_losses()};
  if (signal == SIGSTOP) kill(partner.pid, SIGCONT);
  return report;
}

TEST_CASE("a SIGKILLed partner is reported by its crash line, as a connection loss") {
  const Report r = report_after(SIGKILL, true);
  REQUIRE(r.lost.size() == 1);
  CHECK(r.lost[0].peer == kPartner);
  CHECK(r.lost[0].detector == Detector::connection);
  CHECK(r.connection_losses == 1);
}

TEST_CASE("a SIGSTOPped partner with a crash line is reported by the heartbeat detector") {
  const Report r = report_after(SIGSTOP, true);
  REQUIRE(r.lost.size() == 1);
  CHECK(r.lost[0].detector == Detector::heartbeat);
  CHECK(r.connection_losses == 0);
}

TEST_CASE("a SIGKILLed partner without a crash line is reported by the connection detector") {
  const Report r = report_after(SIGKILL, false);
  REQUIRE(r.lost.size() == 1);
  CHECK(r.lost[0].peer == kPartner);
  CHECK(r.lost[0].detector == Detector::connection);
  CHECK(r.connection_losses >= 1);
}

TEST_CASE("a SIGSTOPped partner is reported by the heartbeat detector, not as a crash") {
  const Report r = report_after(SIGSTOP, false);
  REQUIRE(r.lost.size() == 1);
  CHECK(r.lost[0].peer == kPartner);
  CHECK(r.lost[0].detector == Detector::heartbeat);
  CHECK(r.connection_losses == 0);
}

TEST_CASE("a run's watch pings every quarter of the hang timeout, never more often than the heartbeats") {
  Settings s;  // the defaults: heartbeats every 10 ms, hangs after 200 ms
  PartnerWatchConfig c = PartnerWatchConfig::for_settings(s);
  CHECK(c.ping_interval_ms == 50);
  CHECK(c.hang_timeout_ms == 200);
  s.hang_timeout_ms = 30;  // a short timeout: the heartbeat interval bounds the pings
  c = PartnerWatchConfig::for_settings(s);
  CHECK(c.ping_interval_ms == 10);
  CHECK(c.hang_timeout_ms == 30);
  s.heartbeat_interval_ms = 20;
  s.hang_timeout_ms = 1000;
  CHECK(PartnerWatchConfig::for_settings(s).ping_interval_ms == 250);
}

TEST_CASE("a SIGSTOPped partner is found by the pings of a run's default watch") {
  const Report r = report_after(SIGSTOP, true, PartnerWatchConfig::for_settings(Settings{}));
  REQUIRE(r.lost.size() == 1);
  CHECK(r.lost[0].peer == kPartner);
  CHECK(r.lost[0].detector == Detector::heartbeat);
  CHECK(r.connection_losses == 0);
}

TEST_CASE("a live partner is not reported while the watching thread is busy") {
  PartnerProcess partner;
  zmq::context_t context(1);
  PartnerWatch watch(context, PartnerWatchConfig{10, 30});
  watch.watch(kPartner, partner.endpoint);
  // The watching thread computes without looking at the watch for ten failure timeouts: the
  // heartbeats are ZeroMQ's I/O thread's work, so nothing is missed meanwhile.
  const RunClock busy = RunClock::starting_now();
  volatile std::uint64_t x = 0;
  while (busy.now_us() < 300'000) x = x + 1;
  CHECK_FALSE(watch.pending());
  CHECK(watch.take_lost().empty());
  CHECK(watch.heartbeat_losses() == 0);
  CHECK(watch.connection_losses() == 0);
}

TEST_CASE("a watch whose crash line waits to reconnect bounds its loop's sleep by the retry") {
  constexpr std::int64_t kLongestUs = 1'000'000;
  zmq::context_t context(1);
  PartnerWatch watch(context, PartnerWatchConfig{10, 30});
  {
    PartnerProcess partner(true);
    watch.watch(kPartner, partner.endpoint, partner.crash_line);
    RunClock::starting_now().sleep_until(100'000);
    watch.take_lost();  // the line comes up
    // Up: its socket wakes the loop; nothing asks for an earlier turn.
    CHECK(watch.wake_within_us(kLongestUs) == kLongestUs);
    CHECK_FALSE(watch.retry_due());
    kill(partner.pid, SIGKILL);
    REQUIRE(wait_for_report(watch).size() == 1);
  }
  // The partner is gone (a restart would listen again): between connection attempts no
  // descriptor is polled, so an idle loop that slept for its own timers only would retry late.
  // The watch asks for a turn within the retry interval instead.
  std::int64_t shortest = kLongestUs;
  bool due_seen = false;
  for (int i = 0; i < 200 && (shortest == kLongestUs || !due_seen); ++i) {
    std::vector<zmq::pollitem_t> items;
    watch.add_poll_items(items);
    const std::int64_t wake_us = watch.wake_within_us(kLongestUs);
    shortest = std::min(shortest, wake_us);
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(std::min<std::int64_t>(wake_us / 1000 + 1, 20)));
    due_seen = due_seen || watch.retry_due();  // after sleeping that long, the retry is due
    watch.take_lost();  // (the idle connection's own end may follow the line's, under load)
  }
  CHECK(shortest <= CrashLine::kRetryMs * 1000);
  CHECK(due_seen);
}

}  // namespace
}  // namespace hapair
