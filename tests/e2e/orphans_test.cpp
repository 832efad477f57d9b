// No orphans (issue 16): whatever ends a command that runs real node processes — Ctrl-C of run,
// compare, experiment, chaos, soak or demo (during a real run started from its page), a `kill -9` of the launcher, a chaos run killed for taking
// too long — no `hapair node` process stays alive and no temporary run folder (hapair-run-*)
// stays behind. Each command runs as the built `hapair` binary in a process group of its own
// (as a shell starts it), with TMPDIR and --out inside a folder of this test, so its node
// processes are told apart from anyone else's by that folder on their command line. The test
// waits for states (a node alive; no node and no folder left) with generous timeouts, never for
// a measured duration.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "e2e/e2e_support.h"

using hapair::e2e::is_hapair_node;
using hapair::e2e::process_ids;
using hapair::e2e::process_info;

namespace {

using hapair::e2e::wait_for;

struct Folder {
  std::string path;
  Folder() {
    char pattern[] = "/tmp/hapair-orphans-test-XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~Folder() { std::filesystem::remove_all(path); }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
};

// The live `hapair node` processes whose command line names a path inside `folder`.
std::vector<pid_t> nodes_of(const std::string& folder) {
  std::vector<pid_t> out;
  for (pid_t pid : process_ids()) {
    const auto p = process_info(pid);
    // A zombie (killed, not yet reaped by its parent) runs nothing; it is its parent's to reap.
    if (!p || !is_hapair_node(*p) || p->state == 'Z') continue;
    for (const auto& a : p->args)
      if (a.find(folder) != std::string::npos) {
        out.push_back(pid);
        break;
      }
  }
  return out;
}

// The hapair-run-* folders in `folder` (the launcher's temporary folders, TMPDIR=folder).
std::vector<std::string> run_folders(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.path().filename().string().rfind("hapair-run-", 0) == 0) out.push_back(e.path().string());
  return out;
}

// Starts `hapair ARGS` in a new process group with TMPDIR=folder, its output in folder/out.log.
pid_t start(const std::vector<std::string>& arguments, const std::string& folder) {
  std::vector<std::string> args = {HAPAIR_BINARY};
  args.insert(args.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = folder + "/out.log";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    setenv("TMPDIR", folder.c_str(), 1);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    for (int sig : {SIGINT, SIGTERM, SIGABRT, SIGSEGV}) signal(sig, SIG_DFL);  // not the test framework's
    if (chdir(HAPAIR_SOURCE_DIR) != 0) _exit(126);  // experiment and chaos find their files from here
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);  // either side may win the race; both set the same group
  return pid;
}

// Waits for the command to end; its wait status, or -1 when it did not end in time (then it and
// its group are killed, so the test leaves nothing behind itself).
int wait_exit(pid_t pid, double timeout_s) {
  int status = -1;
  const bool ended = wait_for([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout_s);
  if (ended) return status;
  kill(-pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

std::string output_of(const std::string& folder) {
  std::ifstream in(folder + "/out.log");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Starts the command, waits until one of its nodes runs, applies `stop`, and checks that the
// command ends and leaves no node and no temporary run folder.
void check_no_orphans(const std::vector<std::string>& arguments, const std::function<void(pid_t)>& stop) {
  const Folder folder;
  std::vector<std::string> args = arguments;
  for (auto& a : args)
    if (a == "OUT") a = folder.path + "/out";
  const pid_t pid = start(args, folder.path);
  const bool started = wait_for([&] { return !nodes_of(folder.path).empty(); }, 120);
  INFO(output_of(folder.path));
  if (!started) wait_exit(pid, 0);
  REQUIRE(started);
  stop(pid);
  const int status = wait_exit(pid, 120);
  INFO("wait status " << status);
  CHECK(status != -1);
  // The launcher killed or lost its nodes; they and the folder go (the folder possibly a moment
  // after the launcher, by its watcher process).
  CHECK(wait_for([&] { return nodes_of(folder.path).empty(); }, 30));
  CHECK(wait_for([&] { return run_folders(folder.path).empty(); }, 30));
  for (pid_t node : nodes_of(folder.path)) kill(node, SIGKILL);
}

void ctrl_c(pid_t pid) { kill(-pid, SIGINT); }  // what a terminal does: the whole group
void kill_9(pid_t pid) { kill(pid, SIGKILL); }  // the launcher only; its nodes must follow

}  // namespace

TEST_CASE("Ctrl-C of hapair run leaves no node process and no temporary run folder", "[orphans]") {
  check_no_orphans({"run", "--duration-s", "60"}, ctrl_c);
}

TEST_CASE("SIGTERM of the launcher alone of hapair run kills its nodes and removes the run folder", "[orphans]") {
  check_no_orphans({"run", "--ha", "passive", "--duration-s", "60"}, [](pid_t pid) { kill(pid, SIGTERM); });
}

TEST_CASE("Ctrl-C of hapair compare stops the whole comparison and leaves no node process", "[orphans]") {
  check_no_orphans({"compare", "--repeat", "1", "--duration-s", "60", "--fail-at-s", "30", "--out", "OUT"}, ctrl_c);
}

TEST_CASE("Ctrl-C of hapair experiment leaves no node process and no temporary run folder", "[orphans]") {
  check_no_orphans({"experiment", "recovery_breakdown", "--quick", "--driver", "real", "--out", "OUT"}, ctrl_c);
}

TEST_CASE("Ctrl-C of hapair chaos leaves no node process and no temporary run folder", "[orphans]") {
  check_no_orphans({"chaos", "--driver", "real", "--runs", "3", "--duration-s", "60", "--out", "OUT"}, ctrl_c);
}

TEST_CASE("Ctrl-C of hapair soak leaves no node process and no temporary run folder", "[orphans]") {
  check_no_orphans({"soak", "--runs", "2", "--duration-s", "60", "--fail-at-s", "30", "--out", "OUT"}, ctrl_c);
}

TEST_CASE("kill -9 of the launcher of hapair run kills its nodes and removes the run folder", "[orphans]") {
  check_no_orphans({"run", "--ha", "active", "--duration-s", "60"}, kill_9);
}

TEST_CASE("kill -9 of hapair chaos kills its isolated case, the case's nodes, and removes the run folder", "[orphans]") {
  check_no_orphans({"chaos", "--driver", "real", "--runs", "2", "--duration-s", "60", "--out", "OUT"}, kill_9);
}

TEST_CASE("a chaos run killed for taking too long leaves no node process and no temporary run folder", "[orphans]") {
  // The case's child runs 60 s of input and is SIGKILLed as hung after --run-timeout-s: the
  // same end as a test whose framework kills it at its timeout.
  check_no_orphans({"chaos", "--driver", "real", "--runs", "1", "--duration-s", "60", "--run-timeout-s", "8",
                    "--out", "OUT"},
                   [](pid_t) {});
}

namespace {

// POSTs `body` to http://127.0.0.1:PORT/api/demo and returns the whole answer ("" on failure).
std::string post_demo(int port, const std::string& body) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "POST /api/demo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  close(fd);
  return answer;
}

}  // namespace

TEST_CASE("Ctrl-C of hapair demo during a real run stops the server, its nodes and removes its folders", "[orphans]") {
  const Folder folder;
  const pid_t pid = start({"demo", "--port", "0"}, folder.path);
  int port = 0;
  REQUIRE(wait_for([&] {
    const std::string out = output_of(folder.path);
    const auto at = out.find("http://127.0.0.1:");
    if (at == std::string::npos) return false;
    port = std::atoi(out.c_str() + at + 17);
    return port > 0;
  }, 30));
  const std::string started = post_demo(port, R"({"op":"real_start","ha":"passive","duration_s":60})");
  INFO(started);
  REQUIRE(started.find("\"run\":1") != std::string::npos);
  REQUIRE(wait_for([&] { return nodes_of(folder.path).size() >= 4; }, 60));
  ctrl_c(pid);
  const int status = wait_exit(pid, 60);
  INFO(output_of(folder.path));
  REQUIRE(status != -1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(wait_for([&] { return nodes_of(folder.path).empty(); }, 30));
  // The demo's temporary folder of real runs (hapair-demo-*) and the launcher's (hapair-run-*).
  CHECK(wait_for([&] {
    for (const auto& e : std::filesystem::directory_iterator(folder.path)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("hapair-demo-", 0) == 0 || name.rfind("hapair-run-", 0) == 0) return false;
    }
    return true;
  }, 30));
  for (pid_t node : nodes_of(folder.path)) kill(node, SIGKILL);
}
