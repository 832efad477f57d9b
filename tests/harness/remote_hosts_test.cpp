// The pure parts of running on several hosts (launch/remote_hosts.h): the instant of a signal
// sent on another host, put on the launcher's clock with the host's offset and bounded by the
// launcher's own window; and the shell scripts the hosts run, run here by a local /bin/sh (the
// keeper makes the run folder, kills what is left and removes it when its stdin ends; a node's
// session writes its pid and becomes the node). tests/hosts/ runs them over real ssh.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "launch/remote_hosts.h"

using namespace hapair;
using namespace hapair::launcher;
namespace fs = std::filesystem;

namespace {

RemoteSignal signal_at(std::int64_t before, std::int64_t after, std::int64_t sent, std::int64_t answered) {
  return RemoteSignal{true, "", before, after, sent, answered};
}

std::string remote_slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("a signal's instant on another host is its reading corrected by the host's offset, within the launcher's window",
          "[hosts][clock]") {
  // The same clock (0 +- 100 us): the reading just before the kill, bounded by the one after and
  // the offset's bound, cut to the launcher's window [900, 1200].
  RemoteInstant same = remote_instant(signal_at(1'000, 1'010, 900, 1'200), ClockOffset(0, 100, 200));
  CHECK(same.at_us == 1'000);
  CHECK(same.error_bound_us == 110);
  // A host 2 s ahead: its reading put back on the launcher's clock.
  RemoteInstant ahead = remote_instant(signal_at(2'001'000, 2'001'010, 900, 1'200), ClockOffset(2'000'000, 100, 200));
  CHECK(ahead.at_us == 1'000);
  CHECK(ahead.error_bound_us == 110);
  // An estimate that admits 0 (here 40 +- 100 us) is not applied; the bound covers every offset
  // it admits (1000 +- 150), cut to the launcher's window: [900, 1150], the reading kept.
  RemoteInstant small = remote_instant(signal_at(1'000, 1'010, 900, 1'200), ClockOffset(40, 100, 200));
  CHECK(small.at_us == 1'000);
  CHECK(small.error_bound_us == 150);
  // A wide offset bound is cut to when the launcher knows the signal happened, [900, 1200]; the
  // reading stays the estimate, the bound its distance to the farther end.
  RemoteInstant wide = remote_instant(signal_at(1'000, 1'010, 900, 1'200), ClockOffset(0, 100'000, 200'000));
  CHECK(wide.at_us == 1'000);
  CHECK(wide.error_bound_us == 200);
  // A reading that contradicts the launcher's window (an offset wrong beyond its bound): only
  // the launcher's window is sure.
  RemoteInstant wrong = remote_instant(signal_at(50'000, 50'010, 900, 1'200), ClockOffset(0, 100, 200));
  CHECK(wrong.at_us == 1'050);
  CHECK(wrong.error_bound_us == 150);
  // No offset measured: the host's readings alone.
  RemoteInstant unknown = remote_instant(signal_at(1'000, 1'010, 900, 1'200), std::nullopt);
  CHECK(unknown.at_us == 1'000);
  CHECK(unknown.error_bound_us == 10);
}

TEST_CASE("the keeper makes the run folder, and when its stdin ends kills the run's processes and removes it", "[hosts]") {
  char pattern[] = "/tmp/hapair-keeper-test-XXXXXX";
  REQUIRE(::mkdtemp(pattern) != nullptr);
  const std::string base = pattern;
  const std::string work = base + "/work dir";  // a space: the words are quoted
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  ExecSpec keeper_spec;
  keeper_spec.argv = {"/bin/sh", "-c", keeper_command(work)};
  keeper_spec.output_path = base + "/keeper.log";
  keeper_spec.stdin_fd = fds[0];
  keeper_spec.die_with_parent = true;
  std::string error;
  ChildProcess keeper = ChildProcess::spawn(keeper_spec, error);
  ::close(fds[0]);
  REQUIRE(keeper.running());
  // Its first line names the run folder (bounded wait).
  std::string run_dir;
  for (int i = 0; i < 2'000 && run_dir.empty(); ++i) {
    const std::string log = remote_slurp(base + "/keeper.log");
    if (log.rfind("hapair-run-dir ", 0) == 0) run_dir = log.substr(15, log.find('\n') - 15);
    else std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE_FALSE(run_dir.empty());
  CHECK(run_dir.rfind(work + "/hapair-run-", 0) == 0);
  CHECK(fs::is_directory(run_dir));
  // A "node": a session that writes its pid and becomes a process naming the run folder.
  ExecSpec node_spec;
  node_spec.argv = {"/bin/sh", "-c", node_session_command(run_dir, "n1", {"/usr/bin/tail", "-f", run_dir + "/n1.pid"})};
  node_spec.output_path = base + "/n1.log";
  node_spec.stdin_null = true;
  node_spec.die_with_parent = true;
  ChildProcess node = ChildProcess::spawn(node_spec, error);
  REQUIRE(node.running());
  for (int i = 0; i < 2'000 && !fs::exists(run_dir + "/n1.pid"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // The pid file holds the node's own pid: the session became the node (exec).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(std::stoi(remote_slurp(run_dir + "/n1.pid")) == node.pid());
  ::close(fds[1]);  // the launcher is gone
  const auto exit = keeper.wait();
  REQUIRE(exit);
  CHECK(exit->clean());
  const auto node_exit = node.wait();
  REQUIRE(node_exit);
  CHECK(node_exit->signal_number() == SIGKILL);
  CHECK_FALSE(fs::exists(run_dir));
  CHECK_THAT(remote_slurp(base + "/keeper.log"), Catch::Contains("hapair-run-removed " + run_dir));
  fs::remove_all(base);
}

TEST_CASE("a signal command sends the signal named to the node of the pid file and prints the host's clock around it",
          "[hosts]") {
  const std::string command = signal_command("/w/run", "aggregate", "KILL");
  CHECK_THAT(command, Catch::Contains("/w/run/aggregate.pid"));
  CHECK_THAT(command, Catch::Contains("kill -KILL"));
  CHECK_THAT(command, Catch::Contains("date +%s%N"));
}
