// Issue "foundation": the default network over real processes and tcp loopback, without failure
// and under amnesia with a real SIGKILL, and the command line's handling of bad configs.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "e2e/e2e_support.h"
#include "judge/reference.h"
#include "report/results.h"
#include "support/result_csv.h"

using namespace hapair;
using namespace hapair::e2e;

TEST_CASE("the default network over real processes delivers exactly the reference output", "[e2e]") {
  auto plan = plan_of("", HaMode::none, 2.0);
  auto o = run_real(plan, {});
  REQUIRE(o.result.errors.empty());
  REQUIRE(o.result.completed);
  CHECK(o.semantics.verdict == "precise");
  CHECK(o.semantics.lost == 0);
  CHECK(o.semantics.duplicates == 0);
  CHECK(o.semantics.order_matches);
  CHECK(o.semantics.reference_tuples > 500);
  CHECK(o.metrics.overhead.bytes_by_kind.at("tuples") > 0);
}

TEST_CASE("amnesia after a SIGKILL of the aggregate: the run completes, output resumes, and the gap is counted exactly", "[e2e]") {
  auto plan = plan_of("", HaMode::amnesia, 3.0);
  const std::string out = std::filesystem::temp_directory_path() / ("hapair-e2e-amnesia-" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  auto o = run_real(plan, {crash("aggregate", 1.5)}, out);
  REQUIRE(o.result.errors.empty());
  REQUIRE(o.result.completed);
  CHECK(o.semantics.verdict == "gap");
  REQUIRE(o.metrics.recovery.has_value());
  CHECK(o.metrics.recovery->recovered);
  CHECK(o.metrics.recovery->detection_ms.has_value());
  // Output resumes: reference tuples delivered after the failure.
  CHECK(o.metrics.recovery->new_after > 100);
  // The loss is exact: recount it independently from the written output.csv.
  auto read = read_output_csv(out + "/output.csv", plan.get());
  REQUIRE(read.problems.empty());
  const auto reference = reference_output(*plan);
  const std::uint64_t lost = recount_lost(reference, read.deliveries);
  CHECK(lost > 0);
  CHECK(o.semantics.lost == lost);
  CHECK(std::filesystem::exists(out + "/summary.json"));
  CHECK(std::filesystem::exists(out + "/events.csv"));
  CHECK(std::filesystem::exists(out + "/config.toml"));
}

namespace {

struct Command {
  int status = -1;
  std::string output;
};

Command run_command(const std::string& cmd) {
  Command c;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) c.output.append(buf, n);
  const int st = pclose(p);
  c.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return c;
}

}  // namespace

TEST_CASE("hapair run rejects a malformed topology, naming every problem with file and line", "[e2e]") {
  const std::string path = std::filesystem::temp_directory_path() / ("hapair-bad-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(path) << "[network]\nduration_s = -3\nbogus_key = 1\n\n[[source]]\nname = \"s\"\nstream = \"raw\"\n"
                         "rate_tps = 100\n\n[[fragment]]\nname = \"f\"\nha = \"sometimes\"\n\n[[fragment.operator]]\nname = \"o\"\n"
                         "type = \"filter\"\ninput = \"raw\"\noutput = \"out\"\nwhere = \"value < 5\"\n\n[[sink]]\nname = \"k\"\n"
                         "input = \"out\"\n";
  auto c = run_command(std::string(HAPAIR_BINARY) + " run --topology " + path);
  INFO(c.output);
  CHECK(c.status == 2);
  CHECK(c.output.find("bogus_key") != std::string::npos);
  CHECK(c.output.find(".toml:3:") != std::string::npos);
  CHECK(c.output.find("sometimes") != std::string::npos);
  CHECK(c.output.find("amnesia") != std::string::npos);  // the allowed HA modes are listed
}

TEST_CASE("hapair run rejects unknown options, HA modes and faults with clear messages", "[e2e]") {
  auto c1 = run_command(std::string(HAPAIR_BINARY) + " run --ha sometimes");
  CHECK(c1.status == 2);
  CHECK(c1.output.find("none, amnesia, upstream, passive, active") != std::string::npos);
  auto c2 = run_command(std::string(HAPAIR_BINARY) + " run --fail nosuchnode@1");
  CHECK(c2.status == 2);
  CHECK(c2.output.find("nosuchnode") != std::string::npos);
  auto c3 = run_command(std::string(HAPAIR_BINARY) + " run --fail aggregate");
  CHECK(c3.status == 2);
  CHECK(c3.output.find("NODE@SECONDS") != std::string::npos);
}
