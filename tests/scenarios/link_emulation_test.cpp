// Link emulation in the simulator (docs/LINKS.md): on links with delay, jitter, loss and
// duplication ([links]) the precise approaches stay precise through a crash (the protocols'
// retransmission covers what the links lose, duplicate filters what they duplicate), the links
// really lost and delayed messages, and the same seed writes byte-identical result files.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "judged_run.h"

using namespace hapair;
namespace fs = std::filesystem;

namespace {

Topology lossy_network(HaMode ha) {
  Topology t = default_topology();
  t.settings.ha = ha;
  t.settings.duration_s = 3.0;
  t.settings.seed = 5;
  t.links.defaults.latency_ms = 5.0;
  t.links.defaults.jitter_ms = 2.0;
  t.links.defaults.loss_ratio = 0.01;
  t.links.defaults.duplication_ratio = 0.01;
  return t;
}

std::int64_t summed(const RunResult& r, const std::string& counter) {
  std::int64_t total = 0;
  for (const auto& [node, counters] : r.counters) {
    auto it = counters.find(counter);
    if (it != counters.end()) total += it->second;
  }
  return total;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("precise approaches stay precise through a crash on links with delay, jitter, 1 % loss and duplication", "[scenarios][links]") {
  for (const HaMode ha : {HaMode::upstream, HaMode::passive, HaMode::active}) {
    INFO("ha " << to_string(ha));
    const test::JudgedRun r = test::judged_sim_run(lossy_network(ha), {FaultSpec{FaultKind::crash, "aggregate", "", 1.5, 0}});
    INFO(r.check.reason);
    REQUIRE(r.outcome.result.completed);
    CHECK(r.outcome.semantics.verdict == "precise");
    CHECK(r.check.status == RunStatus::result);
    // The branches under test ran: the links lost and duplicated messages, and held every one.
    CHECK(summed(r.outcome.result, "link_lost") > 0);
    CHECK(summed(r.outcome.result, "link_duplicated") > 0);
    const std::int64_t released = summed(r.outcome.result, "link_released");
    REQUIRE(released > 0);
    CHECK(summed(r.outcome.result, "link_delay_us_total") >= released * 5'000);
    // Delivered tuples crossed at least two links from the source: their latency is at least two
    // latency_ms (by construction). Windows the end of the streams closed early are left out.
    std::size_t checked = 0;
    for (const Delivery& d : r.outcome.result.deliveries) {
      if (d.tuple.ts_us > 2'500'000) continue;
      REQUIRE(d.at_us - d.tuple.ts_us >= 2 * 5'000);
      ++checked;
    }
    CHECK(checked > 100);
  }
}

TEST_CASE("the same seed on emulated links writes byte-identical result files", "[scenarios][links][determinism]") {
  const fs::path scratch = fs::temp_directory_path() / ("hapair-links-" + std::to_string(::getpid()));
  Topology t = lossy_network(HaMode::passive);
  t.links.defaults.bandwidth_bytes_per_s = 5e6;
  LinkSpec slow;  // one link of its own, so per-link settings take part too
  slow.from = "filter";
  slow.to = "aggregate";
  slow.settings.latency_ms = 12.0;
  t.links.links = {slow};
  auto plan = std::make_shared<const Plan>(make_plan(t));
  const Reference reference = compute_reference(*plan);
  for (const char* dir : {"a", "b"}) {
    RunRequest request;
    request.driver = "sim";
    request.faults = {FaultSpec{FaultKind::crash, "aggregate", "", 1.5, 0}};
    request.out_dir = (scratch / dir).string();
    const RunOutcome outcome = run_once(plan, request, reference);
    REQUIRE(outcome.write_error.empty());
    CHECK(outcome.semantics.verdict == "precise");
  }
  for (const char* name : {"summary.json", "output.csv", "events.csv", "metrics.csv", "config.toml"}) {
    INFO(name);
    const std::string a = read_text(scratch / "a" / name);
    REQUIRE_FALSE(a.empty());
    CHECK(a == read_text(scratch / "b" / name));
  }
  CHECK(read_text(scratch / "a" / "config.toml").find("[[link]]\nfrom = \"filter\"\nto = \"aggregate\"\nlatency_ms = 12\n") !=
        std::string::npos);
  fs::remove_all(scratch);
}

TEST_CASE("a simulated run whose links delay longer than a heartbeat interval still ends when its sinks are done", "[scenarios][links]") {
  // A heartbeat is always waiting in some delay queue; a run's end does not wait for it (a real
  // run stops its nodes with messages in their queues too).
  Topology t = lossy_network(HaMode::passive);
  t.links.defaults = LinkSettings{};
  t.links.defaults.latency_ms = 15.0;
  t.links.defaults.jitter_ms = 10.0;
  const test::JudgedRun r = test::judged_sim_run(t);
  INFO(r.check.reason);
  REQUIRE(r.outcome.result.completed);
  CHECK(r.outcome.result.errors.empty());
  CHECK(r.outcome.semantics.verdict == "precise");
  CHECK(r.outcome.result.end_us < static_cast<TimeUs>((t.settings.duration_s + 1.0) * 1e6));
}
