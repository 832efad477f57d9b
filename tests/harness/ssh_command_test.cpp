// The ssh layer's command lines (proc/ssh_control.h), without a host: every ssh runs in batch
// mode through the host's one multiplexed master, and remote words reach the remote program as
// given. tests/hosts/ runs them against real sshd's (as root).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "proc/ssh_control.h"

using namespace hapair;

namespace {

bool has_option(const std::vector<std::string>& argv, const std::string& option) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "-o" && argv[i + 1] == option) return true;
  return false;
}

// `words` stand next to each other in argv.
bool has_words(const std::vector<std::string>& argv, const std::vector<std::string>& words) {
  return std::search(argv.begin(), argv.end(), words.begin(), words.end()) != argv.end();
}

}  // namespace

TEST_CASE("shell_quote passes safe words through and quotes everything else for a POSIX shell", "[hosts][ssh]") {
  CHECK(shell_quote("/usr/bin/hapair") == "/usr/bin/hapair");
  CHECK(shell_quote("--name=filter.backup") == "--name=filter.backup");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("$(rm -rf /); `x`") == "'$(rm -rf /); `x`'");
  CHECK(shell_command({"printf", "%s|", "a b", "it's"}) == "printf '%s|' 'a b' 'it'\\''s'");
}

TEST_CASE("every ssh runs in batch mode through the host's multiplexed master and starts none itself", "[hosts][ssh]") {
  SshTarget t;
  t.name = "h1";
  t.address = "10.0.0.2";
  t.user = "hapair";
  t.port = 2222;
  t.identity_file = "/keys/id";
  SshOptions o;
  o.connect_timeout_s = 7;
  o.known_hosts_file = "/keys/known_hosts";
  const std::vector<std::string> argv = ssh_argv(t, o, "/tmp/hapair-ssh-x/0", "hapair --version");
  CHECK(argv.front() == "/usr/bin/ssh");
  for (const char* option : {"BatchMode=yes", "ControlMaster=no", "ControlPath=/tmp/hapair-ssh-x/0",
                             "ConnectTimeout=7", "StrictHostKeyChecking=accept-new", "UserKnownHostsFile=/keys/known_hosts",
                             "IdentitiesOnly=yes"})
    CHECK(has_option(argv, option));
  // The destination and the command come last, after "--", as two words.
  REQUIRE(argv.size() >= 3);
  CHECK(argv[argv.size() - 3] == "--");
  CHECK(argv[argv.size() - 2] == "10.0.0.2");
  CHECK(argv.back() == "hapair --version");
  CHECK(std::find(argv.begin(), argv.end(), "-n") != argv.end());  // stdin never read
  CHECK(has_words(argv, {"-p", "2222"}));
  CHECK(has_words(argv, {"-l", "hapair"}));
  CHECK(has_words(argv, {"-i", "/keys/id"}));

  const std::vector<std::string> exit_argv = ssh_control_argv(t, o, "/tmp/hapair-ssh-x/0", "exit");
  CHECK(has_option(exit_argv, "ControlPath=/tmp/hapair-ssh-x/0"));
  CHECK(has_words(exit_argv, {"-O", "exit"}));
  CHECK(exit_argv.back() == "10.0.0.2");

  // A command that reads the launcher's stdin (a node's session) has no -n.
  const std::vector<std::string> session = ssh_argv(t, o, "/tmp/hapair-ssh-x/0", "exec hapair node", true);
  CHECK(std::find(session.begin(), session.end(), "-n") == session.end());

  // The master: in the foreground, the owner's child, gone with it (no ControlPersist).
  const std::vector<std::string> master = ssh_master_argv(t, o, "/tmp/hapair-ssh-x/0");
  for (const char* option : {"ControlMaster=yes", "ControlPersist=no", "ControlPath=/tmp/hapair-ssh-x/0", "BatchMode=yes"})
    CHECK(has_option(master, option));
  CHECK(std::find(master.begin(), master.end(), "-N") != master.end());
  CHECK(std::find(master.begin(), master.end(), "-f") == master.end());
  CHECK(master.back() == "10.0.0.2");
}

TEST_CASE("a remote result says how it ended, with ssh's own reason when ssh failed", "[hosts][ssh]") {
  RemoteResult r;
  r.exit_code = 3;
  CHECK(r.describe() == "exit code 3");
  CHECK_FALSE(r.ok());
  r.exit_code = 255;
  r.output = "ssh: connect to host 10.0.0.9 port 22: Connection refused\r\n";
  CHECK(r.describe() == "ssh failed (exit code 255): ssh: connect to host 10.0.0.9 port 22: Connection refused");
  r.exit_code = 0;
  r.output.clear();
  CHECK(r.ok());
}
