// `hapair compare --hosts` and `hapair run --hosts` across four hosts, each a network namespace
// running its own sshd (ssh_testbed.h): the built `hapair` binary launches the nodes over ssh,
// kills the victim on its host, and is judged against the failure-free reference as on one host;
// the node logs and hosts.json land in each run's folder; and afterwards — at the end of a run
// and after the launcher itself is SIGKILLed mid-run — no hapair or ssh process of the run, no
// listening socket but sshd's and no file of the run is left on any host.
//
// Needs root and openssh-server (main() in ssh_hosts_test.cpp skips with exit 77 otherwise).
// Every wait is bounded; no assertion is on a duration.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "protocols/version.h"
#include "proc/child_process.h"
#include "ssh_testbed.h"
#include "protocols/codec.h"
#include "support/listening.h"
#include "support/shell_command.h"

using namespace hapair;
using namespace hapair::testing;
namespace fs = std::filesystem;

namespace {

constexpr double kRunTimeoutS = 400.0;      // a whole compare on a loaded 2-core machine; never asserted on
constexpr double kCleanupTimeoutS = 60.0;   // for the remote side to notice and clean up
// A chaos seed whose first three cases on the default network lose a host and cut a link
// between two hosts (found with the pure case generator; host_faults_test.cpp).
constexpr int kChaosHostsSeed = 15;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A hosts file for the testbed (its IPv4 addresses, or its IPv6 ones): one [[host]] per namespace, each with a work folder of its own
// (the namespaces share this machine's files, so the folders tell the hosts' files apart).
std::string write_hosts_file(const SshTestbed& bed, bool ipv6 = false) {
  const std::string path = bed.dir() + "/hosts.toml";
  std::ofstream out(path);
  out << "[defaults]\nuser = \"root\"\nidentity_file = \"" << bed.dir() << "/user_key\"\nknown_hosts_file = \""
      << bed.dir() << "/known_hosts\"\n";
  for (std::size_t h = 0; h < bed.size(); ++h)
    out << "\n[[host]]\nname = \"h" << h + 1 << "\"\naddress = \"" << (ipv6 ? bed.address6(h) : bed.address(h)) << "\"\nwork_dir = \"" << bed.dir()
        << "/work-h" << h + 1 << "\"\n";
  return path;
}

// What is left of runs on the testbed's hosts: processes naming the testbed's folder (nodes,
// keepers, ssh clients and masters: they all name its key or work folders), entries in the
// hosts' work folders, and listening TCP sockets other than sshd's port 22 in each namespace.
std::vector<std::string> leftovers(const SshTestbed& bed) {
  std::vector<std::string> out;
  for (const std::string& p : processes_naming(bed.dir())) {
    // The testbed's own sshd processes (its config lives there) and their per-connection
    // children belong to the testbed, not to a run.
    if (p.find("/usr/sbin/sshd") != std::string::npos) continue;
    out.push_back("process " + p);
  }
  for (std::size_t h = 0; h < bed.size(); ++h) {
    const std::string work = bed.dir() + "/work-h" + std::to_string(h + 1);
    std::error_code ec;
    if (fs::exists(work, ec))
      for (const auto& entry : fs::directory_iterator(work)) out.push_back("file " + entry.path().string());
    const std::string in_host = "nsenter --net=" + network_namespace_path(bed.namespace_name(h)) + " ";
    // A host loss's nftables table (named after the run folder: hapair_hapair_run_...).
    const ShellResult tables = run_shell(in_host + "nft list tables 2>&1");
    if (tables.out.find("hapair_") != std::string::npos)
      out.push_back("nftables in h" + std::to_string(h + 1) + ": " + tables.out);
    // A bandwidth limit's htb root qdisc (the interface's default comes back when it goes).
    const ShellResult qdiscs = run_shell(in_host + "tc qdisc show 2>&1");
    if (qdiscs.out.find("htb") != std::string::npos || qdiscs.out.find("tbf") != std::string::npos)
      out.push_back("qdiscs in h" + std::to_string(h + 1) + ": " + qdiscs.out);
    const ShellResult ss = run_shell(in_host + "ss -Hltn 2>&1");
    std::string line;
    std::istringstream lines(ss.out);
    while (std::getline(lines, line))
      if (!line.empty() && line.find(":22 ") == std::string::npos)
        out.push_back("listening in h" + std::to_string(h + 1) + ": " + line);
  }
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Polls until nothing is left (bounded); what is still there at the end.
std::vector<std::string> wait_for_no_leftovers(const SshTestbed& bed, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::vector<std::string> left = leftovers(bed);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    left = leftovers(bed);
  }
  return left;
}

// Nothing of a run left on any host (bounded poll, wait_for_no_leftovers).
void check_nothing_left(const SshTestbed& bed) {
  const std::vector<std::string> left = wait_for_no_leftovers(bed, kCleanupTimeoutS);
  INFO("left behind:\n" << joined(left));
  CHECK(left.empty());
}

// The nodes hosts.json places on `host`, each after a space.
std::string nodes_on(const nlohmann::json& hosts, const std::string& host) {
  std::string names;
  for (const auto& n : hosts["nodes"])
    if (n["host"] == host) names += " " + n["node"].get<std::string>();
  return names;
}

std::unique_ptr<SshTestbed> testbed(std::size_t hosts, std::size_t with_sshd,
                                    const std::vector<std::string>& session_environment = {}) {
  std::string error;
  std::unique_ptr<SshTestbed> bed = SshTestbed::create(hosts, with_sshd, error, session_environment);
  INFO(error);
  REQUIRE(bed);
  return bed;
}

// `hapair COMMAND --hosts HOSTS_FILE --remote-binary <the built hapair> ARGS...`'s arguments.
std::vector<std::string> on_hosts(const std::string& command, const std::string& hosts_file, const std::vector<std::string>& args) {
  std::vector<std::string> out = {command, "--hosts", hosts_file, "--remote-binary", HAPAIR_BINARY};
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

// Starts the built hapair with `args`, output to `log`.
ChildProcess start_hapair(const std::vector<std::string>& args, const std::string& log) {
  ExecSpec spec;
  spec.argv = {HAPAIR_BINARY};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.output_path = log;
  spec.die_with_parent = true;
  spec.stdin_null = true;
  std::string error;
  ChildProcess child = ChildProcess::spawn(spec, error);
  INFO(error);
  REQUIRE(child.running());
  return child;
}

// Waits (bounded) for the child's end; nullopt when it did not end in time (then it is killed).
std::optional<ChildExit> wait_bounded(ChildProcess& child, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto exit = child.try_wait()) return exit;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  child.kill_and_wait();
  return std::nullopt;
}

// Runs `hapair ARGS` to its end (bounded), checks its exit code, and returns what it printed.
std::string run_hapair(const SshTestbed& bed, const std::vector<std::string>& args, int expected_exit) {
  ChildProcess run = start_hapair(args, bed.dir() + "/run.log");
  const std::optional<ChildExit> exit = wait_bounded(run, kRunTimeoutS);
  const std::string log = slurp(bed.dir() + "/run.log");
  INFO("hapair output:\n" << log);
  REQUIRE(exit);
  CHECK(exit->exited_with(expected_exit));
  return log;
}

// The node processes of a run on the testbed's hosts: the hapair binary itself (the copied one
// or --remote-binary's), not the ssh sessions whose command lines name it.
std::vector<pid_t> node_pids(const SshTestbed& bed) {
  std::vector<pid_t> out;
  for (const std::string& p : processes_naming("/hapair node --topology " + bed.dir() + "/work-h")) {
    const std::size_t colon = p.find(": ");
    const std::string program = p.substr(colon + 2, p.find(' ', colon + 2) - colon - 2);
    if (program.size() >= 7 && program.compare(program.size() - 7, 7, "/hapair") == 0) out.push_back(std::stoi(p));
  }
  return out;
}

// The default network with every node pinned (docs/HOSTS.md, placement): `pins` is the topology's
// host = "..." / standby_host = "..." lines per fragment, in the order source, filter, aggregate, sink.
std::string pinned_topology(const SshTestbed& bed, const std::string& name, const std::vector<std::string>& pins) {
  const std::string path = bed.dir() + "/" + name + ".toml";
  std::ofstream out(path);
  out << "[network]\nname = \"" << name << "\"\nduration_s = 2\n\n"
      << "[[source]]\nname = \"source\"\nstream = \"raw\"\nrate_tps = 2000\nkey_count = 8\nvalues = \"uniform(0, 100)\"\n"
      << "integer_values = true\n" << pins.at(0) << "\n\n"
      << "[[fragment]]\nname = \"filter\"\n" << pins.at(1) << "\n\n"
      << "[[fragment.operator]]\nname = \"keep_small\"\ntype = \"filter\"\ninput = \"raw\"\noutput = \"small\"\nwhere = \"value < 80\"\n\n"
      << "[[fragment]]\nname = \"aggregate\"\n" << pins.at(2) << "\n\n"
      << "[[fragment.operator]]\nname = \"sum_per_key\"\ntype = \"aggregate\"\ninput = \"small\"\noutput = \"totals\"\n"
      << "function = \"sum\"\nwindow_ms = 200\nslide_ms = 20\ngroup_by = \"key\"\n\n"
      << "[[sink]]\nname = \"sink\"\ninput = \"totals\"\n" << pins.at(3) << "\n";
  return path;
}

// One `hapair run --hosts` (exit 0 expected) on four fresh testbed hosts, `args` then `--out OUT`;
// with `pins`, on the default network pinned so (pinned_topology). The testbed (to check what is
// left), the run folder, what the run printed, its hosts.json and summary.json.
struct HostsRun {
  std::unique_ptr<SshTestbed> bed;
  std::string out, log;
  nlohmann::json hosts, summary;
};
HostsRun run_on_four_hosts(std::vector<std::string> args, const std::vector<std::string>& pins = {}) {
  HostsRun r;
  r.bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*r.bed);
  r.out = r.bed->dir() + "/out";
  if (!pins.empty()) args.insert(args.begin(), {"--topology", pinned_topology(*r.bed, "pinned", pins)});
  args.insert(args.end(), {"--out", r.out});
  r.log = run_hapair(*r.bed, on_hosts("run", hosts_file, args), 0);
  r.hosts = nlohmann::json::parse(slurp(r.out + "/hosts.json"));
  r.summary = nlohmann::json::parse(slurp(r.out + "/summary.json"));
  return r;
}

}  // namespace

TEST_CASE("compare --hosts on four hosts over ssh: the verdicts of one host, logs and results collected, nothing left",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  const std::string out = bed->dir() + "/out";
  const auto started = std::chrono::steady_clock::now();
  ChildProcess compare = start_hapair(on_hosts("compare", hosts_file, {"--approaches",
                                       "upstream,passive,active", "--repeat", "1", "--reruns", "1", "--duration-s", "2",
                                       "--failure-free-duration-s", "1", "--fail-at-s", "1", "--out", out}),
                                      bed->dir() + "/compare.log");
  const std::optional<ChildExit> exit = wait_bounded(compare, kRunTimeoutS);
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string log = slurp(bed->dir() + "/compare.log");
  INFO("hapair compare output:\n" << log << "\n(took " << took_s << " s)");
  REQUIRE(exit);
  CHECK(exit->clean());  // 0: every run kept its approach's guarantee

  // Every crash run: the checker's verdict against the failure-free reference, as on one host.
  for (const std::string approach : {"upstream", "passive", "active"}) {
    const std::string run = out + "/" + approach + "_crash_rep1";
    INFO("run " << run);
    REQUIRE(fs::exists(run + "/summary.json"));
    const auto summary = nlohmann::json::parse(slurp(run + "/summary.json"));
    CHECK(summary["semantics"]["verdict"] == "precise");
    CHECK(summary["semantics"]["lost"] == 0);
    CHECK(summary["semantics"]["duplicates"] == 0);
    CHECK(summary["recovery"]["recovered"] == true);
    std::printf("%s over ssh: verdict %s, recovery %s ms (detection %s ms)\n", approach.c_str(),
                summary["semantics"]["verdict"].dump().c_str(), summary["recovery"]["recovery_ms"].dump().c_str(),
                summary["recovery"]["detection_ms"].dump().c_str());
    // hosts.json: where each node ran, every host's clock offset within its bound of 0 (the
    // namespaces share this machine's clock), and the SIGKILL sent on the victim's host.
    REQUIRE(fs::exists(run + "/hosts.json"));
    const auto hosts = nlohmann::json::parse(slurp(run + "/hosts.json"));
    REQUIRE(hosts["hosts"].size() == 4);
    for (const auto& h : hosts["hosts"]) {
      INFO(h.dump());
      REQUIRE(h["clock_offset_us"].is_number());
      CHECK(std::llabs(h["clock_offset_us"].get<long long>()) <= h["clock_error_bound_us"].get<long long>());
      CHECK(h["time_correction_us"] == 0);
    }
    // The clock probes over the control channel: a round before the run and more during it,
    // every one of them admitting 0 on every host.
    REQUIRE(hosts["clocks"]["hosts"].size() == 4);
    std::string bounds;
    for (const auto& h : hosts["clocks"]["hosts"]) {
      INFO(h.dump());
      CHECK(h["time_correction_us"] == 0);
      REQUIRE(h["rounds"].size() >= 2);
      REQUIRE(h["rounds"][0]["offset_us"].is_number());
      // A round after the crash of a host's only node (aggregate) has no estimate there.
      for (const auto& r : h["rounds"]) {
        if (r["offset_us"].is_null()) continue;
        CHECK(std::llabs(r["offset_us"].get<long long>()) <= r["error_bound_us"].get<long long>());
        bounds += " " + r["offset_us"].dump() + "+-" + r["error_bound_us"].dump();
      }
    }
    REQUIRE(summary["clocks"]["cross_host_error_bound_us"].is_number());
    std::printf("%s: clock offsets over the control channel (us):%s; cross-host bound %s us\n", approach.c_str(),
                bounds.c_str(), summary["clocks"]["cross_host_error_bound_us"].dump().c_str());
    std::set<std::string> used_hosts;
    for (const auto& n : hosts["nodes"]) {
      used_hosts.insert(n["host"].get<std::string>());
      // The node's log came back over its ssh session.
      CHECK(fs::exists(run + "/" + n["node"].get<std::string>() + ".log"));
    }
    CHECK(used_hosts.size() == 4);
    REQUIRE(hosts["signals"].size() == 1);
    CHECK(hosts["signals"][0]["node"] == "aggregate");
    CHECK(hosts["signals"][0]["signal"] == "SIGKILL");
    std::printf("%s: SIGKILL at %s us +- %s us (ssh round trip %s us)\n", approach.c_str(),
                hosts["signals"][0]["at_us"].dump().c_str(), hosts["signals"][0]["error_bound_us"].dump().c_str(),
                hosts["signals"][0]["ssh_round_trip_us"].dump().c_str());
  }
  check_nothing_left(*bed);
}

TEST_CASE("experiment --hosts: every run of an experiment across the hosts, judged as on one host, the claim checked, logs in each run folder, nothing left",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  const std::string out = bed->dir() + "/experiment";
  // recovery_breakdown --quick: the four approaches (amnesia, upstream, passive, active), one
  // seed, each run losing the aggregate to a SIGKILL sent on its host; --quick stays on real
  // processes across hosts.
  const std::string log = run_hapair(*bed,
                                     on_hosts("experiment", hosts_file, {"recovery_breakdown", "--quick", "--out", out}),
                                     0);
  INFO("hapair experiment output:\n" << log);
  CHECK_THAT(log, Catch::Contains("driver real") && Catch::Contains("across the hosts of " + hosts_file));
  CHECK_THAT(log, Catch::Contains("claim holds") || Catch::Contains("claim differs"));
  // One CSV row per run, every run a result (its approach's guarantee kept), each from a run
  // folder with the hosts' record and every node's log.
  std::istringstream csv(slurp(out + "/recovery_breakdown.csv"));
  std::string header;
  REQUIRE(std::getline(csv, header));
  std::vector<std::string> columns;
  {
    std::istringstream cells(header);
    for (std::string c; std::getline(cells, c, ',');) columns.push_back(c);
  }
  const auto column = [&](const std::string& name) {
    const auto it = std::find(columns.begin(), columns.end(), name);
    REQUIRE(it != columns.end());
    return static_cast<std::size_t>(it - columns.begin());
  };
  const std::size_t completed = column("completed"), errors = column("errors"), verdict = column("verdict"),
                    run_dir = column("run_dir"), approach = column("approach");
  std::set<std::string> approaches;
  std::size_t rows = 0;
  for (std::string line; std::getline(csv, line);) {
    if (line.empty()) continue;
    ++rows;
    std::vector<std::string> cells;
    std::istringstream in(line);
    for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
    REQUIRE(cells.size() >= columns.size() - 1);
    INFO(line);
    CHECK(cells.at(completed) == "true");
    CHECK(cells.at(errors) == "0");
    approaches.insert(cells.at(approach));
    if (cells.at(approach) != "amnesia") CHECK(cells.at(verdict) == "precise");
    const std::string run = out + "/" + cells.at(run_dir);
    REQUIRE(fs::exists(run + "/hosts.json"));
    const auto hosts = nlohmann::json::parse(slurp(run + "/hosts.json"));
    CHECK(hosts["hosts"].size() == 4);
    REQUIRE(hosts["signals"].size() == 1);
    CHECK(hosts["signals"][0]["node"] == "aggregate");
    CHECK(hosts["signals"][0]["signal"] == "SIGKILL");
    for (const auto& n : hosts["nodes"]) CHECK(fs::exists(run + "/" + n["node"].get<std::string>() + ".log"));
  }
  CHECK(rows == 4);
  CHECK(approaches == std::set<std::string>{"amnesia", "upstream", "passive", "active"});
  CHECK_THAT(slurp(out + "/config.toml"), Catch::Contains("--hosts " + hosts_file));
  check_nothing_left(*bed);
}

TEST_CASE("run --hosts with a host whose clock is 2.3 s ahead: the probes recover the offset within their bound and correct its times",
          "[hosts][remote]") {
  // h2 runs the sink (hapair plan: passive standby on the default network puts filter and sink
  // there, aggregate alone on h4); its nodes' clocks read 2,345,678 us ahead of the machine's.
  constexpr long long kShiftUs = 2'345'678;
  const auto bed = testbed(4, 4, {"", "HAPAIR_TEST_CLOCK_SHIFT_US=" + std::to_string(kShiftUs)});
  const std::string hosts_file = write_hosts_file(*bed);
  const std::string out = bed->dir() + "/out";
  const std::string log = run_hapair(*bed,
                                     on_hosts("run", hosts_file, {"--ha", "passive",
                                      "--duration-s", "2", "--fail", "aggregate@1", "--out", out}),
                                     0);
  INFO("hapair run output:\n" << log);
  const auto hosts = nlohmann::json::parse(slurp(out + "/hosts.json"));
  REQUIRE(nodes_on(hosts, "h2").find("sink") != std::string::npos);
  for (const auto& h : hosts["clocks"]["hosts"]) {
    INFO(h.dump());
    const long long truth = h["host"] == "h2" ? kShiftUs : 0;
    REQUIRE(h["offset_us"].is_number());
    // Every round admits the true offset; the correction is the first round's, applied only
    // where it excludes 0.
    REQUIRE(h["rounds"][0]["offset_us"].is_number());
    for (const auto& r : h["rounds"]) {
      if (r["offset_us"].is_null()) continue;  // after the crash of h4's only node
      CHECK(std::llabs(r["offset_us"].get<long long>() - truth) <= r["error_bound_us"].get<long long>());
    }
    CHECK(h["time_correction_us"] == (truth == 0 ? 0 : h["offset_us"].get<long long>()));
    std::printf("%s: offset %s us +- %s us (injected %lld us), remaining bound %s us\n",
                h["host"].get<std::string>().c_str(), h["offset_us"].dump().c_str(), h["error_bound_us"].dump().c_str(),
                truth, h["remaining_error_bound_us"].dump().c_str());
  }
  // The sink's deliveries are on the launcher's clock again: the recovery after the crash on h4
  // is judged as on one host, not 2.3 s late.
  const auto summary = nlohmann::json::parse(slurp(out + "/summary.json"));
  CHECK(summary["semantics"]["verdict"] == "precise");
  REQUIRE(summary["recovery"]["recovered"] == true);
  CHECK(summary["recovery"]["recovery_ms"].get<double>() >= 0);
  CHECK(summary["recovery"]["recovery_ms"].get<double>() < kShiftUs / 2e3);
  CHECK(summary["latency_ms"]["p50"].get<double>() < kShiftUs / 2e3);
  std::printf("shifted sink host: recovery %s ms, latency p50 %s ms, cross-host bound %s us\n",
              summary["recovery"]["recovery_ms"].dump().c_str(), summary["latency_ms"]["p50"].dump().c_str(),
              summary["clocks"]["cross_host_error_bound_us"].dump().c_str());
  check_nothing_left(*bed);
}

TEST_CASE("run --hosts --install-package: the Debian package unpacked into each host's run folder runs the nodes, nothing left",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  // The package of the build under test (CPack, as scripts/package.sh makes it).
  const ShellResult cpack = run_shell("cpack -G DEB --config " + shell_quote(std::string(HAPAIR_CPACK_CONFIG)) + " -B " +
                                      shell_quote(bed->dir() + "/package") + " 2>&1");
  INFO(cpack.out);
  REQUIRE(cpack.status == 0);
  std::string deb;
  for (const auto& entry : fs::directory_iterator(bed->dir() + "/package"))
    if (entry.path().extension() == ".deb") deb = entry.path().string();
  REQUIRE(!deb.empty());
  const std::string out = bed->dir() + "/out";
  const std::string log = run_hapair(
      *bed, {"run", "--hosts", hosts_file, "--install-package", deb, "--ha", "passive", "--duration-s", "1", "--out", out}, 0);
  INFO("hapair run output:\n" << log);
  const auto hosts = nlohmann::json::parse(slurp(out + "/hosts.json"));
  for (const auto& h : hosts["hosts"]) {
    INFO(h.dump());
    CHECK(h["binary"].get<std::string>() == h["run_dir"].get<std::string>() + "/pkg/usr/bin/hapair");
  }
  const auto summary = nlohmann::json::parse(slurp(out + "/summary.json"));
  CHECK(summary["semantics"]["verdict"] == "precise");
  check_nothing_left(*bed);
}

TEST_CASE("run --hosts --lose-host: the host's links dropped, then its node killed, the standby learns by silence",
          "[hosts][remote]") {
  // Passive standby on the default network puts aggregate alone on h4 (hapair plan).
  const HostsRun r = run_on_four_hosts({"--ha", "passive", "--duration-s", "2", "--lose-host", "h4@1"});
  INFO("hapair run output:\n" << r.log);
  const nlohmann::json& hosts = r.hosts;
  const nlohmann::json& summary = r.summary;
  CHECK(nodes_on(hosts, "h4") == " aggregate");
  REQUIRE(hosts["signals"].size() == 1);
  CHECK(hosts["signals"][0]["host"] == "h4");
  CHECK(hosts["signals"][0]["signal"] == "host loss: links dropped, then SIGKILL");
  CHECK(summary["semantics"]["verdict"] == "precise");
  CHECK(summary["recovery"]["recovered"] == true);
  // Nothing closed: the crash line saw no end, the heartbeats' silence found it.
  CHECK(summary["recovery"]["detector"] == "heartbeat");
  std::printf("host loss over ssh: verdict %s, detector %s, detection %s ms, recovery %s ms\n",
              summary["semantics"]["verdict"].dump().c_str(), summary["recovery"]["detector"].dump().c_str(),
              summary["recovery"]["detection_ms"].dump().c_str(), summary["recovery"]["recovery_ms"].dump().c_str());
  check_nothing_left(*r.bed);
}

namespace {

// The trace of a run folder (trace.jsonl), one event per line.
std::vector<nlohmann::json> trace_of(const std::string& run) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(slurp(run + "/trace.jsonl"));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::size_t count_events(const std::vector<nlohmann::json>& trace, const std::string& kind, const std::string& node) {
  return static_cast<std::size_t>(std::count_if(trace.begin(), trace.end(), [&](const nlohmann::json& e) {
    return e["kind"] == kind && (node.empty() || e["node"] == node);
  }));
}


}  // namespace

TEST_CASE("run --hosts --partition between a primary's host and its standby's: the standby takes over, the old primary is fenced, precise, nothing left",
          "[hosts][remote]") {
  // aggregate alone on h3 and its standby alone on h4: the cut of h3-h4 separates only the pair.
  const HostsRun r = run_on_four_hosts({"--ha", "passive", "--partition", "aggregate-aggregate.backup@0.8+0.6"},
                                       {"host = \"h1\"", "host = \"h1\"\nstandby_host = \"h2\"",
                                        "host = \"h3\"\nstandby_host = \"h4\"", "host = \"h2\""});
  INFO("hapair run output:\n" << r.log);
  const nlohmann::json& hosts = r.hosts;
  CHECK(nodes_on(hosts, "h3") == " aggregate");
  CHECK(nodes_on(hosts, "h4") == " aggregate.backup");
  // The cut and the heal, each on both hosts of the link.
  std::multiset<std::string> signals;
  for (const auto& sig : hosts["signals"]) signals.insert(sig["host"].get<std::string>() + " " + sig["signal"].get<std::string>());
  CHECK(signals == std::multiset<std::string>{"h3 link cut (nftables drops the peer's address)", "h3 link healed",
                                              "h4 link cut (nftables drops the peer's address)", "h4 link healed"});
  // The documented outcome (docs/FAULTS.md, partition primary-backup under passive standby): the
  // standby hears nothing, takes over; after the heal the old primary learns the newer epoch, is
  // fenced and rejoins; the output is precise.
  const std::vector<nlohmann::json> trace = trace_of(r.out);
  CHECK(count_events(trace, "failure", "aggregate") == 1);
  CHECK(count_events(trace, "heal", "aggregate") == 1);
  CHECK(count_events(trace, "takeover", "aggregate.backup") >= 1);
  CHECK(count_events(trace, "fenced", "aggregate") >= 1);
  CHECK(r.summary["semantics"]["verdict"] == "precise");
  CHECK(r.summary["semantics"]["lost"] == 0);
  check_nothing_left(*r.bed);  // the cut tables too
}

TEST_CASE("run --hosts with IPv6 addresses: ssh, control and data over IPv6, a cut between a primary's host and its standby's and a bandwidth limit through tc, precise, nothing left",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed, true);
  // aggregate alone on h3 and its standby alone on h4: the cut of h3-h4 separates only the pair;
  // source and filter on h1 send to aggregate on h3 across the limited link h1-h3.
  const std::string topology = pinned_topology(*bed, "cut6", {"host = \"h1\"", "host = \"h1\"\nstandby_host = \"h2\"",
                                                              "host = \"h3\"\nstandby_host = \"h4\"", "host = \"h2\""});
  const std::string out = bed->dir() + "/out";
  ChildProcess run = start_hapair(on_hosts("run", hosts_file, {"--topology", topology, "--ha", "passive", "--partition",
                                                               "aggregate-aggregate.backup@0.8+0.6", "--limit-bandwidth",
                                                               "h1-h3=4mbit@0.3+1", "--out", out}),
                                  bed->dir() + "/run.log");
  // While the limit lasts, h1's interface sends what goes to h3 through the run's class (its
  // IPv6 u32 filter in place), whose tbf child has the rate, and bytes pass through it.
  const std::string in_h1 = "nsenter --net=" + network_namespace_path(bed->namespace_name(0)) + " ";
  const std::string show = in_h1 + "sh -c 'for x in $(ls /sys/class/net); do tc filter show dev $x; tc -s class show dev $x; "
                                   "tc qdisc show dev $x; done' 2>&1";
  std::string classes;
  long long sent = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kRunTimeoutS);
  while (std::chrono::steady_clock::now() < deadline && !run.try_wait()) {
    const ShellResult shown = run_shell(show);
    const std::size_t cls = shown.out.find("class htb 1:10 ");
    const std::size_t at = cls == std::string::npos ? cls : shown.out.find("Sent ", cls);
    if (shown.out.find("flowid 1:10") != std::string::npos && at != std::string::npos &&
        (sent = std::atoll(shown.out.c_str() + at + 5)) > 0) {
      classes = shown.out;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO("h1's filters, classes and qdiscs while the limit lasted:\n" << classes);
  CHECK(sent > 0);
  CHECK_THAT(classes, Catch::Contains("qdisc tbf 10: parent 1:10 rate 4Mbit"));
  const std::optional<ChildExit> exit = wait_bounded(run, kRunTimeoutS);
  const std::string log = slurp(bed->dir() + "/run.log");
  INFO("hapair run output:\n" << log);
  REQUIRE(exit);
  CHECK(exit->exited_with(0));
  const auto hosts = nlohmann::json::parse(slurp(out + "/hosts.json"));
  // The nodes bound IPv6 endpoints and dialled the launcher at its IPv6 address.
  for (const auto& n : hosts["nodes"]) CHECK_THAT(n["endpoint"].get<std::string>(), Catch::StartsWith("tcp://[fd68:"));
  CHECK_THAT(hosts["control_endpoint"].get<std::string>(), Catch::StartsWith("tcp://[fd68:"));
  std::multiset<std::string> signals;
  long long put_at = -1, lifted_at = -1;
  for (const auto& sig : hosts["signals"]) {
    signals.insert(sig["host"].get<std::string>() + " " + sig["signal"].get<std::string>());
    if (sig["host"] == "h1" && sig["signal"] == "bandwidth limit put (tc tbf on the traffic to the peer)") put_at = sig["at_us"];
    if (sig["host"] == "h1" && sig["signal"] == "bandwidth limit lifted") lifted_at = sig["at_us"];
  }
  CHECK(signals == std::multiset<std::string>{"h3 link cut (nftables drops the peer's address)", "h3 link healed",
                                              "h4 link cut (nftables drops the peer's address)", "h4 link healed",
                                              "h1 bandwidth limit put (tc tbf on the traffic to the peer)",
                                              "h3 bandwidth limit put (tc tbf on the traffic to the peer)",
                                              "h1 bandwidth limit lifted", "h3 bandwidth limit lifted"});
  // Lifted a duration after it was in place (scheduled from that instant; ssh may add to it).
  CHECK(lifted_at - put_at >= 1'000'000);
  // The cut held over IPv6: the standby heard nothing, took over; the old primary was fenced.
  const std::vector<nlohmann::json> trace = trace_of(out);
  CHECK(count_events(trace, "takeover", "aggregate.backup") >= 1);
  CHECK(count_events(trace, "fenced", "aggregate") >= 1);
  const auto summary = nlohmann::json::parse(slurp(out + "/summary.json"));
  CHECK(summary["semantics"]["verdict"] == "precise");
  CHECK(summary["semantics"]["lost"] == 0);
  check_nothing_left(*bed);  // the cut tables and the qdiscs too
}

TEST_CASE("run --hosts --lose-host host-of: a host holding the primaries of two adjacent fragments, lost at once: precise",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  // filter and aggregate, adjacent fragments, both primaries on h4; their standbys elsewhere.
  const std::string topology = pinned_topology(*bed, "two", {"host = \"h1\"", "host = \"h4\"\nstandby_host = \"h2\"",
                                                             "host = \"h4\"\nstandby_host = \"h3\"", "host = \"h1\""});
  // docs/FAULTS.md: a second crash of the adjacent fragment at the same instant is recovered as
  // one crash per fragment: precise under upstream backup (each fragment has its spare) and
  // passive standby.
  for (const std::string approach : {"upstream", "passive"}) {
    const std::string out = bed->dir() + "/out-" + approach;
    const std::string log = run_hapair(*bed,
                                       on_hosts("run", hosts_file, {"--topology", topology,
                                        "--ha", approach, "--lose-host", "host-of:filter@1", "--out", out}),
                                       0);
    INFO(approach << ": hapair run output:\n" << log);
    const auto hosts = nlohmann::json::parse(slurp(out + "/hosts.json"));
    CHECK(nodes_on(hosts, "h4") == " filter aggregate");
    REQUIRE(hosts["signals"].size() == 2);  // one loss, recorded for both of its nodes
    for (const auto& sig : hosts["signals"]) CHECK(sig["host"] == "h4");
    const std::vector<nlohmann::json> trace = trace_of(out);
    CHECK(count_events(trace, "failure", "filter") == 1);
    CHECK(count_events(trace, "failure", "aggregate") == 1);
    const auto summary = nlohmann::json::parse(slurp(out + "/summary.json"));
    CHECK(summary["semantics"]["verdict"] == "precise");
    CHECK(summary["semantics"]["lost"] == 0);
    CHECK(summary["recovery"]["recovered"] == true);
    CHECK(summary["recovery"]["detector"] == "heartbeat");
    std::printf("two primaries lost with their host (%s): verdict %s, detection %s ms, recovery %s ms\n", approach.c_str(),
                summary["semantics"]["verdict"].dump().c_str(), summary["recovery"]["detection_ms"].dump().c_str(),
                summary["recovery"]["recovery_ms"].dump().c_str());
  }
  check_nothing_left(*bed);
}

TEST_CASE("run --hosts --pause-host: every node of a host stopped at once and continued together, the standbys take over, the old primaries are fenced, precise",
          "[hosts][remote]") {
  // filter and aggregate, adjacent fragments, both primaries on h4; their standbys elsewhere.
  // Stopped for 0.7 s, well beyond the heartbeat's hang timeout across hosts (200 ms): nothing
  // closes, so only silence tells the standbys.
  const HostsRun r = run_on_four_hosts({"--ha", "passive", "--pause-host", "host-of:filter@0.6+0.7"},
                                       {"host = \"h1\"", "host = \"h4\"\nstandby_host = \"h2\"",
                                        "host = \"h4\"\nstandby_host = \"h3\"", "host = \"h1\""});
  INFO("hapair run output:\n" << r.log);
  const nlohmann::json& hosts = r.hosts;
  CHECK(nodes_on(hosts, "h4") == " filter aggregate");
  // One command stopped both, one continued both: each recorded for both nodes at one instant.
  std::map<std::string, std::set<long long>> instants;
  std::multiset<std::string> signals;
  for (const auto& sig : hosts["signals"]) {
    CHECK(sig["host"] == "h4");
    signals.insert(sig["node"].get<std::string>() + " " + sig["signal"].get<std::string>());
    instants[sig["signal"].get<std::string>()].insert(sig["at_us"].get<long long>());
  }
  CHECK(signals == std::multiset<std::string>{"filter host pause: SIGSTOP to every node there",
                                              "aggregate host pause: SIGSTOP to every node there",
                                              "filter host pause ends: SIGCONT to every node there",
                                              "aggregate host pause ends: SIGCONT to every node there"});
  for (const auto& [signal, at] : instants) CHECK(at.size() == 1);
  const std::vector<nlohmann::json> trace = trace_of(r.out);
  for (const std::string node : {"filter", "aggregate"}) {
    INFO(node);
    CHECK(count_events(trace, "failure", node) == 1);
    CHECK(count_events(trace, "resume", node) == 1);
    CHECK(count_events(trace, "takeover", node + ".backup") >= 1);
    CHECK(count_events(trace, "fenced", node) >= 1);
  }
  CHECK(r.summary["semantics"]["verdict"] == "precise");
  CHECK(r.summary["semantics"]["lost"] == 0);
  CHECK(r.summary["semantics"]["duplicates"] == 0);
  check_nothing_left(*r.bed);
}

TEST_CASE("run --hosts: a node paused, then lost with its host before the pause ends, gets no SIGCONT: the run goes on, precise",
          "[hosts][remote]") {
  // aggregate (alone on h4) stopped at 0.5 s for 0.8 s, its host lost at 0.8 s: its standby
  // takes over; the pause's end finds nothing to continue (chaos --hosts seed 1, case 11).
  const HostsRun r = run_on_four_hosts(
      {"--ha", "passive", "--duration-s", "2", "--pause", "aggregate@0.5+0.8", "--lose-host", "host-of:aggregate@0.8"});
  INFO("hapair run output:\n" << r.log);
  CHECK_THAT(r.log, !Catch::Contains("No such process"));
  const std::vector<nlohmann::json> trace = trace_of(r.out);
  CHECK(count_events(trace, "resume", "aggregate") == 1);  // recorded, not sent
  CHECK(r.summary["semantics"]["verdict"] == "precise");
  std::multiset<std::string> signals;
  for (const auto& sig : r.hosts["signals"]) signals.insert(sig["signal"].get<std::string>());
  CHECK(signals.count("SIGCONT") == 0);
  check_nothing_left(*r.bed);
}

TEST_CASE("chaos --driver real --hosts: host losses and link cuts among the faults, no violation, nothing left",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  const std::string out = bed->dir() + "/chaos";
  // Seed 15's first cases on the default network draw a host loss and a cut between two hosts
  // (tests/harness/host_faults_test.cpp checks such draws in general); without live switches,
  // whose crashes around a switch would replace those schedules.
  const std::string log = run_hapair(*bed,
                                     on_hosts("chaos", hosts_file, {"--driver", "real", "--runs", "3", "--seed", std::to_string(kChaosHostsSeed), "--networks", "default",
                                      "--approaches", "upstream,passive,active", "--duration-s", "1.5", "--no-switches", "--out", out}),
                                     0);
  INFO("hapair chaos output:\n" << log);
  CHECK_THAT(log, Catch::Contains("violations: 0"));
  // Every run says how to reproduce it with the hosts named.
  const std::string csv = slurp(out + "/chaos.csv");
  CHECK_THAT(csv, Catch::Contains("loss of the host-of:"));
  CHECK_THAT(csv, Catch::Contains("<->"));
  check_nothing_left(*bed);
}

namespace {

// A stranger on the hosts' network: connects to every port the run's node processes listen on,
// without CURVE and with keys of its own, and sends well-formed envelopes in the names of nodes
// of the run (a tuple batch from node 0, a takeover of fragment 1 by node 2 at a newer epoch, a
// kill) until `stop`; how many ports it found.
std::size_t intrude(const SshTestbed& bed, std::atomic<bool>& stop) {
  std::vector<std::string> endpoints;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kRunTimeoutS);
  while (!stop && std::chrono::steady_clock::now() < deadline) {
    const std::vector<pid_t> pids = node_pids(bed);
    if (pids.size() == 6) {  // the default network with passive standby
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      for (pid_t pid : node_pids(bed))
        for (const ListeningSocket& l : listening_sockets(pid))
          endpoints.push_back("tcp://" + l.address + ":" + std::to_string(l.port));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Takeover takeover;
  takeover.fragment = 1;
  takeover.new_primary = 2;
  takeover.epoch = 1'000;
  const std::vector<Bytes> forged{encode(Envelope{Header{0, 0, 0}, TupleBatch{0, {Tuple{1, 0, 1, 2.0, 3}}, false, false, 0, 0}}),
                                  encode(Envelope{Header{2, 1'000, 0}, takeover}),
                                  encode(Envelope{Header{kNoNode, 0, 0}, Kill{0}})};
  char server_public[41], server_secret[41], client_public[41], client_secret[41];
  REQUIRE(zmq_curve_keypair(server_public, server_secret) == 0);
  REQUIRE(zmq_curve_keypair(client_public, client_secret) == 0);
  zmq::context_t context(1);
  std::vector<zmq::socket_t> sockets;
  for (const std::string& endpoint : endpoints) {
    for (const bool curve : {false, true}) {
      zmq::socket_t s(context, zmq::socket_type::dealer);
      s.set(zmq::sockopt::linger, 0);
      if (curve) {
        s.set(zmq::sockopt::curve_serverkey, std::string(server_public));
        s.set(zmq::sockopt::curve_publickey, std::string(client_public));
        s.set(zmq::sockopt::curve_secretkey, std::string(client_secret));
      }
      s.connect(endpoint);
      sockets.push_back(std::move(s));
    }
  }
  while (!stop) {
    for (const Bytes& b : forged)
      for (zmq::socket_t& s : sockets) s.send(zmq::buffer(b.data(), b.size()), zmq::send_flags::dontwait);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return endpoints.size();
}

}  // namespace

TEST_CASE("run --hosts: a stranger without the run's key sends data, a takeover and a kill to every node: refused, counted, the run precise",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  const std::string out = bed->dir() + "/out";
  ChildProcess run = start_hapair(on_hosts("run", hosts_file, {"--ha", "passive",
                                   "--duration-s", "2", "--out", out}),
                                  bed->dir() + "/run.log");
  std::atomic<bool> stop{false};
  std::size_t ports = 0;
  std::thread stranger([&] { ports = intrude(*bed, stop); });
  const std::optional<ChildExit> exit = wait_bounded(run, kRunTimeoutS);
  stop = true;
  stranger.join();
  INFO("hapair run output:\n" << slurp(bed->dir() + "/run.log"));
  REQUIRE(exit);
  CHECK(exit->clean());  // nobody killed: a node that died unasked is an error of the run
  CHECK(ports >= 6);     // every node's data socket (and the pairs' crash lines)
  const auto summary = nlohmann::json::parse(slurp(out + "/summary.json"));
  CHECK(summary["semantics"]["verdict"] == "precise");
  CHECK(summary["semantics"]["lost"] == 0);
  REQUIRE(summary["nodes"].size() == 6);
  for (const auto& [node, counters] : summary["nodes"].items()) {
    INFO("node " << node << ": " << counters.dump());
    CHECK(counters["curve.refused"].get<long long>() > 0);
    CHECK(counters["curve.accepted"].get<long long>() > 0);
    CHECK(counters["decode_dropped"].get<long long>() == 0);
  }
  check_nothing_left(*bed);
}

TEST_CASE("run --hosts refuses hosts whose hapair is another build, naming both versions and every host, nothing left",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  const std::string other = bed->dir() + "/other-hapair";
  std::ofstream(other) << "#!/bin/sh\necho 'hapair 0.0.0+elsewhere'\n";
  fs::permissions(other, fs::perms::owner_all);
  const std::string log = run_hapair(*bed, {"run", "--hosts", hosts_file, "--remote-binary", other, "--ha", "passive"}, 1);
  for (std::size_t h = 0; h < bed->size(); ++h)
    CHECK_THAT(log, Catch::Contains("host h" + std::to_string(h + 1) + " (root@" + bed->address(h) + "): " + other +
                                    " is 'hapair 0.0.0+elsewhere', this launcher is 'hapair " + std::string(hapair::version_string()) + "'"));
  CHECK_THAT(log, Catch::Contains("(or pass --copy-binary)"));
  check_nothing_left(*bed);
}

TEST_CASE("run --hosts with a host that cannot be reached: refused naming it, nothing left on the others",
          "[hosts][remote]") {
  const auto bed = testbed(4, 3);  // h4 runs no sshd
  const std::string hosts_file = write_hosts_file(*bed);
  const std::string log =
      run_hapair(*bed, on_hosts("run", hosts_file, {"--ha", "passive"}), 1);
  CHECK_THAT(log, Catch::Contains("host h4 (root@" + bed->address(3) + "): cannot log in: ssh failed (exit code 255)") &&
                      Catch::Contains("Connection refused"));
  check_nothing_left(*bed);
}

TEST_CASE("run --hosts when a host's ssh connections die mid-run: its nodes and run folder go, the run says so",
          "[hosts][remote]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  // The run goes on without h4 (its standby takes over), to its end.
  ChildProcess run = start_hapair(on_hosts("run", hosts_file, {"--ha", "passive",
                                   "--duration-s", "4", "--out", bed->dir() + "/out"}),
                                  bed->dir() + "/run.log");
  // Wait (bounded) until the run is under way (its progress line after 1 s); aggregate runs
  // alone on h4 (hapair plan).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kRunTimeoutS);
  while (std::chrono::steady_clock::now() < deadline && run.running() && !run.try_wait() &&
         slurp(bed->dir() + "/run.log").find("hapair run: 1 / 4.0 s") == std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // h4's sshd per-connection processes killed: every connection to h4 drops at once, as when
  // the host's network or sshd fails; its listener stays, so the cleanup can connect again.
  struct stat ns {};
  REQUIRE(::stat(network_namespace_path(bed->namespace_name(3)).c_str(), &ns) == 0);
  const std::string wanted = "net:[" + std::to_string(ns.st_ino) + "]";
  const std::vector<pid_t> listeners = bed->sshd_pids();
  std::size_t killed = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    const std::string net = fs::read_symlink(entry.path() / "ns" / "net", ec).string();
    if (ec || net != wanted || slurp(entry.path().string() + "/comm") != "sshd\n") continue;
    if (std::find(listeners.begin(), listeners.end(), std::stoi(pid)) != listeners.end()) continue;
    if (::kill(std::stoi(pid), SIGKILL) == 0) ++killed;
  }
  CHECK(killed > 0);
  const std::optional<ChildExit> exit = wait_bounded(run, kRunTimeoutS);
  const std::string log = slurp(bed->dir() + "/run.log");
  INFO("hapair run output:\n" << log);
  REQUIRE(exit);
  CHECK(exit->exited_with(1));
  CHECK_THAT(log, Catch::Contains("node aggregate exited unexpectedly with exit code 255 (from ssh"));
  check_nothing_left(*bed);
}

namespace {

// Starts `hapair run --hosts --copy-binary` (a 60 s run), waits until its six nodes run on their
// hosts, sends the launcher `signal_number`, and checks that nothing of the run is left on any
// host and that the launcher's ssh control folder is gone, each within a bounded poll.
void stop_launcher_mid_run(int signal_number) {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  ChildProcess run = start_hapair({"run", "--hosts", hosts_file, "--copy-binary", "--ha", "passive", "--duration-s", "60",
                                   "--out", bed->dir() + "/out"},
                                  bed->dir() + "/run.log");
  // Every node of the run running on its host (its pid file written, the copied binary running).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kRunTimeoutS);
  std::size_t nodes = 0;
  while (std::chrono::steady_clock::now() < deadline && run.running() && !run.try_wait()) {
    nodes = node_pids(*bed).size();
    if (nodes == 6) break;  // the default network with passive standby: source, sink, 2 primaries, 2 backups
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO("hapair run output:\n" << slurp(bed->dir() + "/run.log"));
  REQUIRE(nodes == 6);
  // The launcher's own ssh control folder, to check it goes too.
  std::string control_dir;
  for (const std::string& p : processes_naming("ControlMaster=yes")) {
    const std::size_t at = p.find("ControlPath=");
    if (at != std::string::npos && p.find(bed->dir()) != std::string::npos)
      control_dir = fs::path(p.substr(at + 12, p.find(' ', at) - at - 12)).parent_path().string();
  }
  CHECK_FALSE(control_dir.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the run under way
  REQUIRE(run.signal(signal_number));
  const std::optional<ChildExit> exit = wait_bounded(run, kCleanupTimeoutS);
  REQUIRE(exit);
  // SIGINT: the launcher cleans up, then re-raises it (the default disposition ends it).
  CHECK(exit->signal_number() == signal_number);
  check_nothing_left(*bed);
  const auto gone = std::chrono::steady_clock::now() + std::chrono::duration<double>(kCleanupTimeoutS);
  while (!control_dir.empty() && fs::exists(control_dir) && std::chrono::steady_clock::now() < gone)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(fs::exists(control_dir));
}

}  // namespace

TEST_CASE("run --hosts with the launcher SIGKILLed mid-run: the hosts notice and nothing is left", "[hosts][remote]") {
  stop_launcher_mid_run(SIGKILL);
}

TEST_CASE("run --hosts stopped by Ctrl-C (SIGINT) mid-run: the launcher stops every host and nothing is left",
          "[hosts][remote]") {
  stop_launcher_mid_run(SIGINT);
}

// Not part of the suite: one run across the four hosts with a crash, a restart and a pause, its
// output and hosts.json printed (`test_hosts "[probe]"`), for looking at the setup's phases and
// the measured instants.
TEST_CASE("one run --hosts, printed", "[.][probe]") {
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  const auto t0 = std::chrono::steady_clock::now();
  ChildProcess run = start_hapair(on_hosts("run", hosts_file, {"--ha", "passive",
                                   "--duration-s", "2", "--fail", "aggregate@0.5", "--restart", "aggregate@1",
                                   "--pause", "filter@1.5+0.2", "--out", bed->dir() + "/out"}),
                                  bed->dir() + "/run.log");
  wait_bounded(run, 100);
  std::printf("took %.2f s\n%s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
              slurp(bed->dir() + "/run.log").c_str());
  std::printf("%s\n", slurp(bed->dir() + "/out/hosts.json").c_str());
}

// Measurements on the four namespaced hosts (by hand, docs/HOSTS.md "Measured"): builds the
// testbed, writes its hosts file, runs the shell command in $HAPAIR_MEASURE_COMMAND with
// $HOSTS_FILE set to it (and $HAPAIR to the build's binary), then tears the testbed down and
// checks nothing of a run was left. `HAPAIR_MEASURE_COMMAND='...' test_hosts "[measure]"`.
TEST_CASE("a command run against the namespaced hosts, for measurements", "[.][measure]") {
  const char* command = std::getenv("HAPAIR_MEASURE_COMMAND");
  REQUIRE(command != nullptr);
  const auto bed = testbed(4, 4);
  const std::string hosts_file = write_hosts_file(*bed);
  const std::string full = "HOSTS_FILE=" + shell_quote(hosts_file) + " HAPAIR=" + shell_quote(std::string(HAPAIR_BINARY)) +
                           " sh -c " + shell_quote(command);
  std::printf("testbed hosts file %s; running: %s\n", hosts_file.c_str(), command);
  std::fflush(stdout);
  const int status = std::system(full.c_str());
  std::printf("exit status %d\n", status);
  check_nothing_left(*bed);
}
