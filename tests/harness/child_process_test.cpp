// The one child-process helper (proc/child_process.h): how a child ended is described in one
// wording for an exit code and for a signal, a program is started with its output file and
// environment, a program that cannot be executed ends with exit code 127, and a child is never
// left behind by its owner.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "proc/child_process.h"

using namespace hapair;

namespace {

ChildExit run_to_end(const std::function<int()>& body) {
  std::string error;
  ChildProcess child = ChildProcess::fork_call(body, error);
  REQUIRE(error.empty());
  REQUIRE(child.running());
  const std::optional<ChildExit> exit = child.wait();
  REQUIRE(exit.has_value());
  CHECK_FALSE(child.running());
  return *exit;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hapair-child-process-test-" + std::to_string(getpid()) + "-" + name))
      .string();
}

}  // namespace

TEST_CASE("a child that exits is described by its exit code", "[child_process]") {
  const ChildExit exit = run_to_end([] { return 7; });
  CHECK(exit.exited());
  CHECK(exit.exit_code() == 7);
  CHECK_FALSE(exit.signaled());
  CHECK(exit.signal_number() == 0);
  CHECK(exit.exited_with(7));
  CHECK_FALSE(exit.clean());
  CHECK(exit.describe() == "exit code 7");
  CHECK(run_to_end([] { return 0; }).clean());
}

TEST_CASE("a child killed by a signal is described by the signal's number and name", "[child_process]") {
  const ChildExit exit = run_to_end([] {
    ::raise(SIGKILL);
    return 0;
  });
  CHECK(exit.signaled());
  CHECK(exit.signal_number() == SIGKILL);
  CHECK_FALSE(exit.exited());
  CHECK(exit.exit_code() == -1);
  CHECK(exit.describe() == "signal 9 (SIGKILL)");
}

TEST_CASE("a child that aborts is described as a failed invariant check", "[child_process]") {
  const ChildExit exit = run_to_end([]() -> int { std::abort(); });
  CHECK(exit.signal_number() == SIGABRT);
  CHECK(exit.describe() == "signal 6 (SIGABRT: an invariant check failed)");
  CHECK(describe_wait_status(exit.wait_status) == exit.describe());
}

TEST_CASE("a child whose body throws ends with an exit code instead of unwinding into the parent", "[child_process]") {
  const ChildExit exit = run_to_end([]() -> int { throw std::runtime_error("boom"); });
  CHECK(exit.exited_with(70));
}

TEST_CASE("a started program writes to its output file and sees the changed environment", "[child_process]") {
  const std::string out = temp_path("env");
  ExecSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo \"backend=$MPLBACKEND\"; echo to-stderr >&2"};
  spec.output_path = out;
  spec.environment = {"MPLBACKEND=Agg"};
  std::string error;
  ChildProcess child = ChildProcess::spawn(spec, error);
  REQUIRE(error.empty());
  const std::optional<ChildExit> exit = child.wait();
  REQUIRE(exit.has_value());
  CHECK(exit->clean());
  CHECK(slurp(out) == "backend=Agg\nto-stderr\n");
  // Appending keeps what an earlier incarnation wrote.
  spec.argv = {"/bin/sh", "-c", "echo again"};
  spec.append_output = true;
  ChildProcess second = ChildProcess::spawn(spec, error);
  REQUIRE(second.wait().has_value());
  CHECK(slurp(out) == "backend=Agg\nto-stderr\nagain\n");
  std::filesystem::remove(out);
}

TEST_CASE("a program that cannot be executed ends with exit code 127 and says so", "[child_process]") {
  const std::string out = temp_path("noexec");
  ExecSpec spec;
  spec.argv = {"/nonexistent/hapair-no-such-program", "--flag"};
  spec.output_path = out;
  spec.die_with_parent = true;
  std::string error;
  ChildProcess child = ChildProcess::spawn(spec, error);
  REQUIRE(error.empty());
  const std::optional<ChildExit> exit = child.wait();
  REQUIRE(exit.has_value());
  CHECK(exit->exited_with(127));
  CHECK(exit->describe() == "exit code 127");
  CHECK(slurp(out) == "hapair: cannot exec /nonexistent/hapair-no-such-program\n");
  std::filesystem::remove(out);
}

TEST_CASE("an output file that cannot be opened is an error and starts nothing", "[child_process]") {
  ExecSpec spec;
  spec.argv = {"/bin/true"};
  spec.output_path = "/nonexistent/dir/log";
  std::string error;
  ChildProcess child = ChildProcess::spawn(spec, error);
  CHECK_FALSE(child.running());
  CHECK(error.rfind("cannot open /nonexistent/dir/log: ", 0) == 0);
  CHECK_FALSE(child.wait().has_value());
  CHECK_FALSE(child.signal(SIGKILL));
}

TEST_CASE("a child still running when its owner goes away is killed and reaped", "[child_process]") {
  pid_t pid = -1;
  {
    ExecSpec spec;
    spec.argv = {"/bin/sleep", "600"};
    std::string error;
    ChildProcess child = ChildProcess::spawn(spec, error);
    REQUIRE(child.running());
    pid = child.pid();
    CHECK_FALSE(child.try_wait().has_value());  // still running
    CHECK(child.signal(SIGSTOP));
    CHECK(child.signal(SIGCONT));
    ChildProcess moved = std::move(child);
    CHECK_FALSE(child.running());
    CHECK(moved.pid() == pid);
  }
  // Reaped: the pid is no longer ours (no zombie left to signal).
  errno = 0;
  CHECK(::kill(pid, 0) == -1);
  CHECK(errno == ESRCH);
}
