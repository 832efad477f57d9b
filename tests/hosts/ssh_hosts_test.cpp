// The ssh layer (proc/ssh_control.h) against real OpenSSH servers: each host a network namespace
// running its own sshd (ssh_testbed.h). One multiplexed master per host (one login, however many
// commands), remote exit codes and output as the remote program gave them, `hapair --version`
// checked on a host, a host without sshd failing with ssh's reason, a command that hangs killed
// at its timeout, and nothing left behind: no ssh master, no sshd, no namespace, no file.
//
// Needs root and openssh-server. Without them the program prints why and exits 77, which CTest
// reports as skipped (label `hosts`): never an empty pass.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <signal.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "protocols/version.h"
#include "hosts/clock_offset.h"
#include "ssh_testbed.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

constexpr double kCommandTimeoutS = 30.0;  // generous: a loaded 2-core machine; never asserted on

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

std::unique_ptr<SshTestbed> testbed(std::size_t hosts, std::size_t with_sshd) {
  std::string error;
  std::unique_ptr<SshTestbed> bed = SshTestbed::create(hosts, with_sshd, error);
  INFO(error);
  REQUIRE(bed);
  return bed;
}

SshHosts ssh_hosts(const SshTestbed& bed) {
  std::string error;
  std::optional<SshHosts> hosts = SshHosts::create(bed.options(), error);
  INFO(error);
  REQUIRE(hosts);
  for (std::size_t i = 0; i < bed.size(); ++i) hosts->add(bed.target(i));
  return std::move(*hosts);
}

std::int64_t realtime_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

// One NTP-style probe of a host over its ssh master: the host reads its clock once (t2 = t3),
// printed by `remote_clock`, a shell command that prints microseconds.
std::optional<ClockProbe> probe_over_ssh(const SshHosts& hosts, std::size_t host, const std::string& remote_clock) {
  ClockProbe p;
  p.t1_us = realtime_us();
  const RemoteResult r = hosts.run(host, remote_clock, kCommandTimeoutS);
  p.t4_us = realtime_us();
  if (!r.ok()) return std::nullopt;
  p.t2_us = p.t3_us = std::stoll(r.output);
  return p;
}

std::string joined_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("one ssh master per host carries every remote command: one login, exit codes and output as given", "[hosts][ssh]") {
  const auto bed = testbed(2, 2);
  SshHosts hosts = ssh_hosts(*bed);
  for (std::size_t h = 0; h < 2; ++h) {
    INFO("host " << h << ", sshd log:\n" << bed->sshd_log(h));
    const RemoteResult opened = hosts.open(h, kCommandTimeoutS);
    INFO(opened.describe() << ": " << opened.output);
    REQUIRE(opened.ok());
    CHECK(hosts.master_running(h));
    // The command ran in that host's namespace: its only non-loopback address is the host's.
    const RemoteResult addr = hosts.run(h, "ip -4 -o addr show dev eth0", kCommandTimeoutS);
    CHECK(addr.ok());
    CHECK_THAT(addr.output, Catch::Contains("inet " + bed->address(h) + "/"));
    const RemoteResult seven = hosts.run(h, "echo on stdout; echo on stderr >&2; exit 7", kCommandTimeoutS);
    CHECK(seven.exit_code == 7);
    CHECK(seven.describe() == "exit code 7");
    CHECK_THAT(seven.output, Catch::Contains("on stdout") && Catch::Contains("on stderr"));
    const RemoteResult quoted = hosts.run(h, shell_command({"printf", "%s|", "a b", "it's", "$HOME"}), kCommandTimeoutS);
    CHECK(quoted.output == "a b|it's|$HOME|");
    for (int i = 0; i < 5; ++i) CHECK(hosts.run(h, "true", kCommandTimeoutS).ok());
  }
  // Eight commands per host, one login each: the rest went over the master's connection.
  for (std::size_t h = 0; h < 2; ++h) {
    INFO(bed->sshd_log(h));
    CHECK(count(bed->sshd_log(h), "Accepted publickey for root") == 1);
  }
  CHECK(hosts.close(0));
  CHECK_FALSE(hosts.master_running(0));
  CHECK(hosts.master_running(1));
}

TEST_CASE("hapair --version is checked on a host: the same build, another version, no binary", "[hosts][ssh]") {
  const auto bed = testbed(1, 1);
  SshHosts hosts = ssh_hosts(*bed);
  // The namespaced host shares this machine's files, so the binary under test is there.
  CHECK(hosts.check_hapair_version(0, HAPAIR_BINARY, hapair::version_string(), kCommandTimeoutS) == "");
  const std::string other = hosts.check_hapair_version(0, HAPAIR_BINARY, "0.0.0+elsewhere", kCommandTimeoutS);
  CHECK_THAT(other, Catch::StartsWith("host h1 (root@" + bed->address(0) + "): "));
  CHECK_THAT(other, Catch::Contains("is 'hapair " + std::string(hapair::version_string()) + "', this launcher is 'hapair 0.0.0+elsewhere'"));
  const std::string missing = hosts.check_hapair_version(0, "/nonexistent/hapair", hapair::version_string(), kCommandTimeoutS);
  CHECK_THAT(missing, Catch::Contains("/nonexistent/hapair cannot be run there (exit code 127"));
  CHECK_THAT(missing, Catch::Contains("install hapair on the host"));
}

TEST_CASE("a host without sshd fails with ssh's reason, a command that hangs is killed at its timeout", "[hosts][ssh]") {
  const auto bed = testbed(2, 1);  // host 1 has no sshd
  SshHosts hosts = ssh_hosts(*bed);
  const RemoteResult refused = hosts.open(1, kCommandTimeoutS);
  INFO(refused.output);
  CHECK(refused.exit_code == 255);
  CHECK_FALSE(refused.timed_out);
  CHECK_THAT(refused.describe(), Catch::StartsWith("ssh failed (exit code 255): ") && Catch::Contains("Connection refused"));
  CHECK_FALSE(hosts.master_running(1));
  CHECK_FALSE(hosts.close(1));

  REQUIRE(hosts.open(0, kCommandTimeoutS).ok());
  const RemoteResult hung = hosts.run(0, "sleep 600", 0.5);
  CHECK(hung.timed_out);
  CHECK_FALSE(hung.ok());
  CHECK_THAT(hung.describe(), Catch::Contains("no answer within 0.5 s; ssh was killed"));
  // The master survives a killed client and carries the next command.
  CHECK(hosts.run(0, "true", kCommandTimeoutS).ok());
}

TEST_CASE("a namespaced host's clock offset measured over ssh is 0 within its bound, an injected offset is recovered", "[hosts][ssh][clock]") {
  const auto bed = testbed(1, 1);
  SshHosts hosts = ssh_hosts(*bed);
  REQUIRE(hosts.open(0, kCommandTimeoutS).ok());
  const std::string clock = "echo $(( $(date +%s%N) / 1000 ))";
  const std::int64_t injected_us = -2'345'678;  // a host whose clock is 2.3 s behind
  const std::string shifted = "echo $(( $(date +%s%N) / 1000 + (" + std::to_string(injected_us) + ") ))";
  ClockOffsetEstimator same(5), behind(5);
  for (int i = 0; i < 5; ++i) {
    const auto a = probe_over_ssh(hosts, 0, clock);
    const auto b = probe_over_ssh(hosts, 0, shifted);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(same.add(*a));
    CHECK(behind.add(*b));
  }
  REQUIRE(same.best());
  REQUIRE(behind.best());
  INFO("same clock: " << same.best()->offset_us() << " +- " << same.best()->error_bound_us() << " us; shifted: "
                      << behind.best()->offset_us() << " +- " << behind.best()->error_bound_us() << " us");
  // Namespaces share the machine's clock: the true offset is 0.
  CHECK(same.best()->admits(0));
  CHECK(behind.best()->admits(injected_us));
  CHECK(same.complete());
}

TEST_CASE("nothing is left behind: no ssh master, no sshd, no namespace, no file", "[hosts][ssh]") {
  std::string control_dir, bed_dir;
  std::vector<std::string> namespaces;
  std::vector<pid_t> sshd;
  {
    const auto bed = testbed(2, 2);
    bed_dir = bed->dir();
    for (std::size_t h = 0; h < 2; ++h) namespaces.push_back(bed->namespace_name(h));
    sshd = bed->sshd_pids();
    REQUIRE(sshd.size() == 2);
    {
      SshHosts hosts = ssh_hosts(*bed);
      control_dir = hosts.control_dir();
      for (std::size_t h = 0; h < 2; ++h) REQUIRE(hosts.open(h, kCommandTimeoutS).ok());
      CHECK(processes_naming(control_dir).size() == 2);  // the two masters
    }
    INFO(joined_lines(processes_naming(control_dir)));
    CHECK(processes_naming(control_dir).empty());
    CHECK_FALSE(std::filesystem::exists(control_dir));
  }
  for (pid_t p : sshd) CHECK(::kill(p, 0) != 0);
  for (const std::string& ns : namespaces) CHECK_FALSE(std::filesystem::exists(network_namespace_path(ns)));
  CHECK_FALSE(std::filesystem::exists(bed_dir));
}

int main(int argc, char* argv[]) {
  if (const std::string reason = ssh_testbed_unavailable(); !reason.empty()) {
    std::printf("SKIPPED: the ssh testbed cannot run here: %s\n", reason.c_str());
    return 77;  // CTest's SKIP_RETURN_CODE for this test
  }
  return Catch::Session().run(argc, argv);
}
