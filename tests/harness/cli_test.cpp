// The `hapair` command's handling of bad input and its exit statuses, by running the built binary
// (HAPAIR_BINARY): each bad input of issue 13 gets exit status 2 and a message naming the problem
// and the valid choices (with the close match); a `none` run that stops at the crash is a result
// (exit status 0) in `run` and `compare`; the simulator's "reproduce with:" line repeats the run
// exactly. Every run here uses --driver sim.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <sstream>
#include <string>

using namespace std::string_literals;

namespace {

struct Command {
  int status = -1;
  std::string out;  // stdout and stderr together
};

Command run_cli(const std::string& arguments, bool with_stderr = true) {
  Command c;
  const std::string command = std::string(HAPAIR_BINARY) + " " + arguments + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) c.out.append(buf.data(), n);
  const int status = pclose(p);
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

// Runs a bad input: exit status 2, nothing ran, and every expected piece is in the message.
void expect_bad_input(const std::string& arguments, const std::vector<std::string>& pieces) {
  INFO("hapair " << arguments);
  const Command c = run_cli(arguments);
  INFO(c.out);
  CHECK(c.status == 2);
  for (const auto& piece : pieces) CHECK_THAT(c.out, Catch::Contains(piece));
  CHECK_THAT(c.out, !Catch::Contains("bad_alloc") && !Catch::Contains("sim: seed"));
}

std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

}  // namespace

TEST_CASE("hapair chaos with a negative or zero --runs is bad input, not an allocation failure", "[cli][input]") {
  expect_bad_input("chaos --runs -5", {"--runs '-5': must be a whole number from 1 to 1000000"});
  expect_bad_input("chaos --runs 0", {"--runs '0': must be a whole number from 1 to 1000000"});
  expect_bad_input("chaos --runs 2x", {"--runs '2x'"});
  expect_bad_input("chaos --seed -3 --case -1", {"--seed '-3': must be a whole number from 0", "--case '-1'"});
  expect_bad_input("chaos --networks chian --pick rnd --faults crsh",
                   {"network 'chian' is not an example network (did you mean 'chain'?)",
                    "--pick 'rnd' is not a pick rule; the choices are: turn, random",
                    "--faults item 'crsh' is not a fault kind (did you mean 'crash'?)"});
}

TEST_CASE("hapair compare --fail-at-s must be inside the run", "[cli][input]") {
  // The built-in network's crash runs last 3.5 s (kCompareCrashDurationS).
  expect_bad_input("compare --driver sim --fail-at-s -3", {"--fail-at-s -3: must be > 0 and < 3.5 s"});
  expect_bad_input("compare --driver sim --fail-at-s 0", {"--fail-at-s 0: must be > 0 and < 3.5 s"});
  expect_bad_input("compare --driver sim --duration-s 2 --fail-at-s 2", {"--fail-at-s 2: must be > 0 and < 2 s"});
}

TEST_CASE("hapair compare --victim must be an operator fragment's primary, listed with the close match", "[cli][input]") {
  for (const char* end : {"source", "sink"})
    expect_bad_input("compare --driver sim --victim "s + end,
                     {"--victim '"s + end + "'", "which no approach protects",
                      "the victim must be the primary of an operator fragment: filter, aggregate"});
  expect_bad_input("compare --driver sim --victim agregate",
                   {"--victim 'agregate' is not a node of this network (did you mean 'aggregate'?)", "filter, aggregate"});
  expect_bad_input("compare --driver sim --victim aggregate.backup", {"fragment aggregate runs ha none, which has no standby"});
  expect_bad_input("compare --driver sim --approaches none,pasive",
                   {"--approaches item 'pasive' is not an HA mode (did you mean 'passive'?)"});
}

TEST_CASE("hapair run names an unknown node of --fail, --pause and --restart with the valid names", "[cli][input]") {
  const std::string nodes = "the nodes of this run are: source, filter, aggregate, sink";
  expect_bad_input("run --driver sim --fail aggregat@2", {"unknown node 'aggregat' (did you mean 'aggregate'?)", nodes});
  expect_bad_input("run --driver sim --pause filtr@1+0.5", {"unknown node 'filtr' (did you mean 'filter'?)", nodes});
  expect_bad_input("run --driver sim --fail aggregate@1 --restart agregate@2",
                   {"unknown node 'agregate' (did you mean 'aggregate'?)", nodes});
  expect_bad_input("run --driver sim --ha passive --fail aggregate.spare@1",
                   {"the standby of fragment aggregate (ha passive) is aggregate.backup", "aggregate.backup"});
}

TEST_CASE("hapair run refuses a fault after the end of the run", "[cli][input]") {
  expect_bad_input("run --driver sim --fail aggregate@9",
                   {"fault 1 (crash aggregate at 9 s): at 9 s: a fault must come after the start and before the sources "
                    "stop, 0 < SECONDS < 6 s (duration_s)"});
  expect_bad_input("run --driver sim --duration-s 2 --pause filter@2.5+0.1", {"0 < SECONDS < 2 s"});
}

TEST_CASE("negative and zero numbers are bad input in every command", "[cli][input]") {
  expect_bad_input("run --driver sim --seed -1", {"--seed '-1': must be a whole number from 0"});
  expect_bad_input("compare --driver sim --seed -1", {"--seed '-1': must be a whole number from 0"});
  expect_bad_input("run --driver sim --duration-s 0", {"--duration-s '0': must be a number of seconds > 0 and <= 86400"});
  expect_bad_input("run --driver sim --duration-s nan", {"--duration-s 'nan'"});
  expect_bad_input("compare --driver sim --duration-s -1", {"--duration-s '-1'"});
  expect_bad_input("run --driver sim --rate-tps -5", {"--rate-tps '-5': must be a number of tuples per second > 0 and <= 10000000"});
  expect_bad_input("run --driver sim --rate-tps 0", {"--rate-tps '0'"});
  expect_bad_input("run --driver sim --operator-cost-us -1", {"--operator-cost-us '-1': must be a number of microseconds >= 0 and <= 100000"});
  expect_bad_input("experiment recovery_breakdown --seeds 0", {"--seeds '0': must be a whole number from 1 to 100"});
  expect_bad_input("experiment recovery_breakdown --seeds -1", {"--seeds '-1'"});
  expect_bad_input("chaos --duration-s -1", {"--duration-s '-1': must be a number of seconds >= 0.5 and <= 600"});
  expect_bad_input("chaos --run-timeout-s 0", {"--run-timeout-s '0': must be a number of seconds > 0 and <= 86400"});
  expect_bad_input("bench --tuples -1 --repetitions 0", {"--tuples '-1': must be a whole number from 1 to 1000000000",
                                                         "--repetitions '0': must be a whole number from 1 to 100"});
  expect_bad_input("bench --sim --nodes 2", {"--nodes '2': must be a whole number from 3 to 10000"});
  expect_bad_input("node --topology x.toml --name filter --control tcp://127.0.0.1:1 --directory-timeout-s -1",
                   {"--directory-timeout-s '-1': must be a number of seconds > 0 and <= 86400"});
}

// Issue 16, item 6: every numeric option of every command, past either end of its range (or no
// number at all), is refused before anything runs, with the option and its range named.
TEST_CASE("every numeric option of every command is range-checked, naming the option and its range", "[cli][input]") {
  const std::string seconds = "must be a number of seconds > 0 and <= 86400";
  const std::string rate = "must be a number of tuples per second > 0 and <= 10000000";
  const std::string cost = "must be a number of microseconds >= 0 and <= 100000";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --driver sim --duration-s 1e9", "--duration-s '1e9': " + seconds},
      {"run --driver sim --duration-s 5s", "--duration-s '5s': " + seconds},
      {"run --driver sim --rate-tps 2e7", "--rate-tps '2e7': " + rate},
      {"run --driver sim --rate-tps inf", "--rate-tps 'inf': " + rate},
      {"run --driver sim --operator-cost-us 1e6", "--operator-cost-us '1e6': " + cost},
      {"run --driver sim --seed 18446744073709551616", "--seed '18446744073709551616': must be a whole number from 0 to 18446744073709551615"},
      {"compare --driver sim --repeat 0", "--repeat '0': must be a whole number from 1 to 100"},
      {"compare --driver sim --repeat 101", "--repeat '101': must be a whole number from 1 to 100"},
      {"compare --driver sim --reruns 11", "--reruns '11': must be a whole number from 0 to 10"},
      {"compare --driver sim --reruns -1", "--reruns '-1': must be a whole number from 0 to 10"},
      {"compare --driver sim --duration-s inf", "--duration-s 'inf': " + seconds},
      {"compare --driver sim --failure-free-duration-s -2", "--failure-free-duration-s '-2': " + seconds},
      {"compare --driver sim --failure-free-duration-s nan", "--failure-free-duration-s 'nan': " + seconds},
      {"compare --driver sim --rate-tps -1", "--rate-tps '-1': " + rate},
      {"compare --driver sim --operator-cost-us -0.5", "--operator-cost-us '-0.5': " + cost},
      {"compare --driver sim --fail-at-s abc", "--fail-at-s abc: must be > 0 and < 3.5 s"},
      {"compare --driver sim --fail-at-s 1e300", "--fail-at-s 1e300: must be > 0 and < 3.5 s"},
      {"experiment recovery_breakdown --seeds 101", "--seeds '101': must be a whole number from 1 to 100"},
      {"chaos --runs 1000001", "--runs '1000001': must be a whole number from 1 to 1000000"},
      {"chaos --seed 1.5", "--seed '1.5': must be a whole number from 0"},
      {"chaos --case x", "--case 'x': must be a whole number from 0"},
      {"chaos --duration-s 601", "--duration-s '601': must be a number of seconds >= 0.5 and <= 600"},
      {"chaos --duration-s 0.4", "--duration-s '0.4': must be a number of seconds >= 0.5 and <= 600"},
      {"chaos --run-timeout-s inf", "--run-timeout-s 'inf': " + seconds},
      {"soak --driver sim --runs 0", "--runs '0': must be a whole number from 1 to 100000"},
      {"soak --driver sim --runs 100001", "--runs '100001': must be a whole number from 1 to 100000"},
      {"soak --driver sim --runs -5", "--runs '-5': must be a whole number from 1 to 100000"},
      {"soak --driver sim --duration-s -1", "--duration-s '-1': " + seconds},
      {"soak --driver sim --rate-tps 0", "--rate-tps '0': " + rate},
      {"soak --driver sim --operator-cost-us 1e9", "--operator-cost-us '1e9': " + cost},
      {"soak --driver sim --victim aggregate --fail-at-s 9", "--fail-at-s 9: must be > 0 and < 3 s"},
      {"soak --driver sim --victim aggregate --fail-at-s x", "--fail-at-s x: must be > 0 and < 3 s"},
      {"bench --tuples 1000000001", "--tuples '1000000001': must be a whole number from 1 to 1000000000"},
      {"bench --batch-tuples 0", "--batch-tuples '0': must be a whole number from 1 to 100000"},
      {"bench --batch-tuples 100001", "--batch-tuples '100001': must be a whole number from 1 to 100000"},
      {"bench --repetitions 101", "--repetitions '101': must be a whole number from 1 to 100"},
      {"bench --timeout-s 0", "--timeout-s '0': " + seconds},
      {"bench --sim --nodes 10001", "--nodes '10001': must be a whole number from 3 to 10000"},
      {"bench --sim --tuples 0", "--tuples '0': must be a whole number from 1 to 1000000000"},
      {"bench --chain --checkpoint-mode delt", "--checkpoint-mode: 'delt' is not one of full, delta"},
      {"bench --chain --ack-interval-ms 0", "--ack-interval-ms '0': must be a whole number from 1 to 60000"},
      {"node --topology x.toml --name filter --control tcp://127.0.0.1:1 --directory-timeout-s 1e6",
       "--directory-timeout-s '1e6': " + seconds},
  };
  for (const auto& [arguments, piece] : cases) expect_bad_input(arguments, {piece});
}

TEST_CASE("hapair run reports every problem at once, each with the valid choices", "[cli][input]") {
  const Command c = run_cli("run --driver simm --ha pasive --seed -1 --fail aggregat@2");
  INFO(c.out);
  CHECK(c.status == 2);
  CHECK_THAT(c.out, Catch::Contains("bad input (4 problems)"));
  CHECK_THAT(c.out, Catch::Contains("--driver 'simm' is not a driver (did you mean 'sim'?); the choices are: real, sim"));
  CHECK_THAT(c.out, Catch::Contains("--ha 'pasive' is not an HA mode (did you mean 'passive'?)"));
  CHECK_THAT(c.out, Catch::Contains("--seed '-1'"));
  CHECK_THAT(c.out, Catch::Contains("unknown node 'aggregat'"));
}

TEST_CASE("a none run that stops at the crash exits 0 in hapair run and hapair compare", "[cli][exit]") {
  const Command run = run_cli("run --driver sim --duration-s 2 --fail aggregate@1");
  INFO(run.out);
  CHECK(run.status == 0);
  CHECK_THAT(run.out, Catch::Contains("outcome: the output stopped at the failure, the expected result"));
  CHECK_THAT(run.out, !Catch::Contains("error:"));

  const std::string out = "/tmp/hapair_cli_test_compare-" + std::to_string(::getpid());
  const Command compare = run_cli("compare --driver sim --duration-s 2 --out " + out);
  INFO(compare.out);
  CHECK(compare.status == 0);
  const std::string none_row = line_starting(compare.out, "none ");
  CHECK_THAT(none_row, Catch::Contains("gap") && Catch::Contains("stopped at the crash"));
  CHECK_THAT(compare.out, !Catch::Contains("error"));
  for (const char* precise : {"upstream ", "passive ", "active "}) CHECK_THAT(line_starting(compare.out, precise), Catch::Contains("precise"));
}

TEST_CASE("the simulator's reproduce line repeats the run exactly, with --ha and the faults", "[cli][reproduce]") {
  // Amnesia's spare takes over and then crashes too: the fragment has no node left, the output
  // stops, and the simulator prints how to reproduce the run.
  const std::string arguments = "run --driver sim --ha amnesia --duration-s 2 --rate-tps 500 --fail aggregate@1 --fail aggregate.spare@1.5";
  const Command first = run_cli(arguments);
  INFO(first.out);
  REQUIRE(first.status == 0);
  const std::string line = line_starting(first.out, "reproduce with: ");
  REQUIRE_FALSE(line.empty());
  CHECK(line == "reproduce with: hapair run --driver sim --seed 1 --ha amnesia --duration-s 2 --rate-tps 500 --fail "
                "aggregate@1 --fail aggregate.spare@1.5");
  const std::string again = line.substr(std::string("reproduce with: hapair ").size());
  const Command second = run_cli(again, false);
  CHECK(second.status == 0);
  CHECK(second.out == run_cli(arguments, false).out);  // the same summary, byte for byte
}

TEST_CASE("the help of every command that runs something documents its exit statuses", "[cli][exit]") {
  for (const char* command : {"run", "compare", "experiment", "chaos"}) {
    INFO(command);
    const Command help = run_cli(std::string(command) + " --help");
    CHECK(help.status == 0);
    CHECK_THAT(help.out, Catch::Contains("Exit status: 0 when every run gave a result") ||
                             Catch::Contains("Exit status: 0 when the run gave a result"));
    CHECK_THAT(help.out, Catch::Contains("2 for bad input"));
  }
}

TEST_CASE("hapair run --install-package needs --hosts, an existing file, and excludes --copy-binary", "[cli][input]") {
  expect_bad_input("run --install-package /nonexistent/hapair.deb", {"--install-package needs --hosts FILE"});
  const std::string hosts = "/tmp/hapair-cli-test-hosts-" + std::to_string(::getpid()) + ".toml";
  {
    FILE* f = std::fopen(hosts.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("[[host]]\nname = \"h1\"\naddress = \"10.0.0.1\"\nuser = \"u\"\nwork_dir = \"/tmp/w\"\n", f);
    std::fclose(f);
  }
  expect_bad_input("run --hosts " + hosts + " --install-package /nonexistent/hapair.deb",
                   {"--install-package /nonexistent/hapair.deb: no such file"});
  expect_bad_input("run --hosts " + hosts + " --install-package " + hosts + " --copy-binary",
                   {"--install-package and --copy-binary exclude each other"});
  std::remove(hosts.c_str());
}

TEST_CASE("faults across hosts are checked before anything connects: the host a loss names, a partition within one host, host-loss without hosts",
          "[cli][input]") {
  const std::string hosts = "/tmp/hapair-cli-test-hosts4-" + std::to_string(::getpid()) + ".toml";
  {
    FILE* f = std::fopen(hosts.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("[defaults]\nuser = \"u\"\nwork_dir = \"/tmp/w\"\n", f);
    for (int h = 1; h <= 4; ++h) std::fprintf(f, "[[host]]\nname = \"h%d\"\naddress = \"10.0.0.%d\"\n", h, h);
    std::fclose(f);
  }
  expect_bad_input("run --hosts " + hosts + " --ha passive --lose-host host-of:nobody@1",
                   {"host loss of 'host-of:nobody': no node 'nobody' in the plan (its nodes: source, filter"});
  expect_bad_input("run --hosts " + hosts + " --ha passive --lose-host h9@1", {"no such host in", "(its hosts: h1, h2, h3, h4"});
  // Passive standby on the default network puts filter and the sink on h2 (hapair plan).
  expect_bad_input("run --hosts " + hosts + " --ha passive --partition filter-sink@1+0.5",
                   {"--partition filter-sink: both run on host h2", "pin them"});
  expect_bad_input("run --pause-host h1@1+0.5", {"--pause-host needs --hosts FILE"});
  expect_bad_input("run --hosts " + hosts + " --ha passive --pause-host h1@1", {"--pause-host 'h1@1' is not HOST@SECONDS+DURATION"});
  expect_bad_input("run --hosts " + hosts + " --ha passive --pause-host h9@1+0.5",
                   {"host pause of 'h9': no such host in", "(its hosts: h1, h2, h3, h4"});
  expect_bad_input("run --limit-bandwidth h1-h2=8mbit@1", {"--limit-bandwidth needs --hosts FILE"});
  expect_bad_input("run --hosts " + hosts + " --ha passive --limit-bandwidth h1-h2=8mb@1",
                   {"the rate '8mb' is not a number with one of the units bit, kbit, mbit, gbit"});
  expect_bad_input("run --hosts " + hosts + " --ha passive --limit-bandwidth h1h2=8mbit",
                   {"is not HOST-HOST=RATE@SECONDS or HOST-HOST=RATE@SECONDS+DURATION"});
  expect_bad_input("run --hosts " + hosts + " --ha passive --limit-bandwidth h1-h9=8mbit@1",
                   {"link 'h1-h9' is not HOST-HOST with two hosts of", "(its hosts: h1, h2, h3, h4"});
  expect_bad_input("run --hosts " + hosts + " --ha passive --limit-bandwidth h2-h2=8mbit@1",
                   {"link 'h2-h2': both ends are host h2"});
  expect_bad_input("compare --driver both --hosts " + hosts, {"--driver both runs the simulator on this machine"});
  expect_bad_input("compare --driver neither", {"--driver 'neither' is not a driver", "real, sim, both"});
  expect_bad_input("compare --lose-host", {"--lose-host needs --hosts FILE"});
  expect_bad_input("soak --hosts " + hosts + " --lose-host", {"--lose-host needs --hosts FILE and --victim NODE"});
  expect_bad_input("chaos --driver real --faults host-loss", {"fault kind host-loss needs --hosts FILE"});
  expect_bad_input("chaos --driver sim --hosts " + hosts, {"--hosts needs --driver real"});
  expect_bad_input("experiment recovery_vs_interval --driver sim --hosts " + hosts, {"--hosts needs --driver real"});
  expect_bad_input("experiment recovery_vs_interval --copy-binary", {"--copy-binary needs --hosts FILE"});
  std::remove(hosts.c_str());
}
