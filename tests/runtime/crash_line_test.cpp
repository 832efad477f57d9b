// Tests of the crash line (runtime/crash_line.h) on tcp loopback: the accepted line sits in a
// reserved low descriptor, an established line's end is reported once, a line that never
// connected is retried and never reported, and a SIGKILLed partner process ends its line.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "runtime/crash_line.h"
#include "runtime/run_clock.h"

namespace hapair {
namespace {

constexpr TimeUs kWaitMaxUs = 10'000'000;  // only reached when the awaited state never comes

// Calls `step` until it returns true or kWaitMaxUs passed; returns whether it did.
template <class Step>
bool eventually(Step step) {
  const RunClock clock = RunClock::starting_now();
  while (clock.now_us() < kWaitMaxUs) {
    if (step()) return true;
    poll(nullptr, 0, 1);
  }
  return false;
}

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }
bool is_socket(int fd) {
  int type = 0;
  socklen_t length = sizeof type;
  return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0;
}

TEST_CASE("crash line: split_tcp_endpoint takes tcp://HOST:PORT apart and refuses other forms") {
  std::string host;
  std::string port;
  REQUIRE(split_tcp_endpoint("tcp://127.0.0.1:5555", host, port));
  CHECK(host == "127.0.0.1");
  CHECK(port == "5555");
  CHECK_FALSE(split_tcp_endpoint("ipc:///tmp/x", host, port));
  CHECK_FALSE(split_tcp_endpoint("tcp://:5555", host, port));
  CHECK_FALSE(split_tcp_endpoint("tcp://127.0.0.1:", host, port));
}

TEST_CASE("crash line: an accepted line takes the lowest reserved descriptor and gives it back") {
  CrashLineSlots slots;
  const int lowest = slots.lowest();
  REQUIRE_FALSE(is_socket(lowest));
  CrashLineListener listener(slots, "tcp://127.0.0.1:1", 0);
  CrashLine line(listener.endpoint());
  // The watcher's line is established, the listener accepts it into the lowest slot.
  REQUIRE(eventually([&] {
    listener.serve();
    line.ended();
    return line.poll_events() == POLLIN;  // established: only POLLIN is polled for
  }));
  REQUIRE(is_socket(lowest));  // before the accept it held /dev/null
  CHECK_FALSE(line.ended());
  CHECK_FALSE(line.pending());
  CHECK(line.retry_in_ms() == -1);  // established: its socket wakes the loop, no retry is due
}

TEST_CASE("crash line: the end of an established line is reported once, then it reconnects") {
  CrashLineSlots slots;
  std::optional<CrashLineListener> listener;
  listener.emplace(slots, "tcp://127.0.0.1:1", 0);
  const std::string endpoint = listener->endpoint();
  CrashLine line(endpoint);
  REQUIRE(eventually([&] {
    listener->serve();
    line.ended();
    return line.poll_events() == POLLIN;
  }));
  REQUIRE(is_socket(slots.lowest()));
  listener.reset();  // the partner's side closes, as its kernel does when it dies
  CHECK(is_open(slots.lowest()));  // the slot holds its placeholder again
  CHECK_FALSE(is_socket(slots.lowest()));
  REQUIRE(eventually([&] { return line.pending() && line.ended(); }));
  // Reported once: while nothing listens, retries never report again.
  for (int i = 0; i < 30; ++i) {
    poll(nullptr, 0, 1);
    REQUIRE_FALSE(line.ended());
  }
  // The partner's next incarnation listens on the same port: the line comes back.
  std::string host;
  std::string port;
  REQUIRE(split_tcp_endpoint(endpoint, host, port));
  CrashLineListener again(slots, "tcp://127.0.0.1:1", std::stoi(port));
  REQUIRE(again.endpoint() == endpoint);
  REQUIRE(eventually([&] {
    again.serve();
    line.ended();
    return line.poll_events() == POLLIN;
  }));
}

TEST_CASE("crash line: a line to an address nobody listens on is never reported") {
  CrashLineSlots slots;
  std::string endpoint;
  {
    CrashLineListener gone(slots, "tcp://127.0.0.1:1", 0);
    endpoint = gone.endpoint();
  }
  CrashLine line(endpoint);
  bool waited_to_retry = false;
  for (int i = 0; i < 50; ++i) {
    poll(nullptr, 0, 1);
    REQUIRE_FALSE(line.ended());
    // Between attempts no descriptor wakes the watcher's loop: the line says when to come back.
    if (line.fd() < 0) {
      waited_to_retry = true;
      CHECK(line.retry_in_ms() >= 0);
      CHECK(line.retry_in_ms() <= CrashLine::kRetryMs);
    } else {
      CHECK(line.retry_in_ms() == -1);
    }
  }
  CHECK(waited_to_retry);
}

TEST_CASE("crash line: a SIGKILLed partner process ends its line") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    CrashLineSlots slots;
    CrashLineListener listener(slots, "tcp://127.0.0.1:1", 0);
    const std::string ep = listener.endpoint();
    if (write(fds[1], ep.data(), ep.size()) < 0) _exit(2);
    close(fds[1]);
    for (;;) {
      listener.serve();
      poll(nullptr, 0, 5);
    }
  }
  close(fds[1]);
  char buffer[128];
  const ssize_t n = read(fds[0], buffer, sizeof buffer);
  close(fds[0]);
  REQUIRE(n > 0);
  CrashLine line(std::string(buffer, static_cast<std::size_t>(n)));
  const bool up = eventually([&] {
    line.ended();
    return line.poll_events() == POLLIN;
  });
  poll(nullptr, 0, 20);  // the partner accepts it into its slot
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  REQUIRE(up);
  CHECK(eventually([&] { return line.ended(); }));
}

}  // namespace
}  // namespace hapair
