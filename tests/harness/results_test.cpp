// Result files (docs/EXPERIMENTS.md, "How we measure": seed, effective config and version beside every result):
// summary.json has every required key with the right value, the CSV files have the right
// headers and rows, reading them back gives the run again, and the same inputs give
// byte-identical files.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>

#include "judge/checker.h"
#include "judge/metrics.h"
#include "report/results.h"
#include "support/result_csv.h"
#include "support/trace_read.h"

using namespace hapair;

namespace {

// summary.json read with nlohmann-json and looked at by dotted path ("semantics.lost",
// "semantics_examples[0].kind"): raw() is a value's JSON text ("1", "null", "\"boom\""; an object
// or array itself is "{" or "["), keys() the keys of an object in document order.
class SummaryJson {
 public:
  using Json = nlohmann::ordered_json;
  explicit SummaryJson(const std::string& text) : j_(Json::parse(text, nullptr, false)) {}
  bool ok() const { return !j_.is_discarded() && j_.is_object(); }
  bool has(const std::string& path) const { return find(path) != nullptr; }
  std::string raw(const std::string& path) const {
    const Json* v = find(path);
    if (v == nullptr) return "<missing>";
    if (v->is_object()) return "{";
    if (v->is_array()) return "[";
    return v->dump();
  }
  std::string str(const std::string& path) const {
    const Json* v = find(path);
    return v != nullptr && v->is_string() ? v->get<std::string>() : "<not a string: " + raw(path) + ">";
  }
  double num(const std::string& path) const {
    const Json* v = find(path);
    return v != nullptr && v->is_number() ? v->get<double>() : -1.0;
  }
  std::vector<std::string> keys(const std::string& path) const {
    std::vector<std::string> out;
    if (const Json* v = find(path); v != nullptr && v->is_object())
      for (const auto& item : v->items()) out.push_back(item.key());
    return out;
  }

 private:
  // "a.b[2].c" as the JSON pointer "/a/b/2/c".
  const Json* find(const std::string& path) const {
    std::string pointer = "/";
    for (char c : path) pointer += c == '.' || c == '[' ? std::string("/") : c == ']' ? std::string() : std::string(1, c);
    const Json::json_pointer p(pointer);
    return j_.contains(p) ? &j_.at(p) : nullptr;
  }
  Json j_;
};

std::string results_slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory under the system temp dir, removed with everything in it at scope end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hapair-results-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

Delivery delivery(TimeUs at_us, StreamId s, TupleId id, TimeUs ts, std::int64_t key, double value,
                  std::uint64_t lineage) {
  return Delivery{at_us, s, Tuple{id, ts, key, value, lineage}};
}

struct Fixture {
  RunResult run;
  std::vector<Delivery> reference;
  SemanticsReport semantics;
  RunMetrics metrics;

  explicit Fixture(bool with_failure) {
    Topology t = default_topology();
    t.settings.ha = HaMode::passive;
    run.plan = std::make_shared<const Plan>(make_plan(t));
    const StreamId totals = run.plan->stream_id("totals");
    run.driver = "sim";
    if (with_failure) run.faults.push_back(FaultSpec{FaultKind::crash, "aggregate", "", 1.0, 0.0});
    reference = {delivery(400000, totals, 1, 400000, 3, 0.1, 0xabc),
                 delivery(600000, totals, 2, 600000, 4, 2.5, 0xdef),
                 delivery(1200000, totals, 3, 1200000, 5, -7.0, 0x123456789abcdef0ULL)};
    run.deliveries = {delivery(400500, totals, 1, 400000, 3, 0.1, 0xabc),
                      delivery(601000, totals, 2, 600000, 4, 2.5, 0xdef),
                      delivery(1250000, totals, 2, 600000, 4, 2.5, 0xdef),  // duplicate after the failure
                      delivery(1260000, totals, 3, 1200000, 5, -7.0, 0x123456789abcdef0ULL)};
    const NodeId primary = run.plan->node_id("aggregate");
    const NodeId backup = run.plan->node_id("aggregate.backup");
    for (Delivery& d : run.deliveries) d.from = d.at_us < 1'000'000 ? primary : backup;
    run.deliveries[2].replayed = true;
    run.events = {trace_event(*run.plan, 1000000, "aggregate", "failure", "fault=crash"),
                  trace_event(*run.plan, 1030000, "aggregate.backup", "detection", "failed=aggregate silent_us=30000"),
                  trace_event(*run.plan, 1031000, "aggregate.backup", "takeover",
                              "ha=passive exact_ids=true checkpoint=9 -- \"quoted\", with comma")};
    run.counters["source"] = {{"bytes_sent.tuples", 4000}, {"messages_sent.tuples", 40}, {"tuples_emitted", 2400},
                              {"cpu_us", 500000}};
    run.counters["aggregate"] = {{"bytes_sent.checkpoint", 1000}, {"messages_sent.checkpoint", 10}, {"cpu_us", 250000}};
    run.samples = {MetricSample{100000, "filter", "output_queue_tuples", 12},
                   MetricSample{200000, "filter", "output_queue_tuples", 30}};
    run.end_us = 1300000;
    run.completed = true;
    semantics = check_semantics(reference, run.deliveries, {});
    metrics = compute_metrics(run, reference, 0);
  }

  std::string write(const std::filesystem::path& dir) const {
    return write_results(dir.string(), run, semantics, metrics, "[settings]\nseed = 7\n", 7, "0.1.0+test", reference);
  }
};

}  // namespace

TEST_CASE("summary.json has every required key with the run's values", "[results]") {
  const Fixture fx(true);
  const TempDir dir;
  REQUIRE(fx.write(dir.path()).empty());
  const SummaryJson j(results_slurp(dir / "summary.json"));
  REQUIRE(j.ok());

  for (const char* key : {"ha", "driver", "seed", "version", "network", "tuples_in", "tuples_out", "throughput_tps",
                          "latency_ms", "failure", "recovery", "semantics", "overhead", "nodes"}) {
    INFO(key);
    CHECK(j.has(key));
  }
  CHECK(j.str("ha") == "passive");
  CHECK(j.str("driver") == "sim");
  CHECK(j.raw("seed") == "7");
  CHECK(j.str("version") == "0.1.0+test");
  CHECK(j.str("network") == "default");
  CHECK(j.raw("tuples_in") == "2400");
  CHECK(j.raw("tuples_out") == "4");
  // 4 deliveries over 1 260 000 - 400 500 us.
  CHECK(j.num("throughput_tps") == Approx(4.0 / 0.8595));
  CHECK(j.keys("latency_ms") == std::vector<std::string>{"p50", "p99", "max"});
  // Latencies 500, 1000, 60000, 650000 us: p50 = rank 2, p99 = rank 4.
  CHECK(j.raw("latency_ms.p50") == "1");
  CHECK(j.raw("latency_ms.p99") == "650");
  CHECK(j.raw("latency_ms.max") == "650");

  CHECK(j.keys("failure") == std::vector<std::string>{"node", "at_s", "kind"});
  CHECK(j.str("failure.node") == "aggregate");
  CHECK(j.raw("failure.at_s") == "1");
  CHECK(j.str("failure.kind") == "crash");

  for (const char* key : {"detection_ms", "takeover_ms", "recovery_ms", "catchup_ms", "replay_ms", "recovered"}) {
    INFO(key);
    CHECK(j.has(std::string("recovery.") + key));
  }
  CHECK(j.raw("recovery.detection_ms") == "30");
  CHECK(j.raw("recovery.takeover_ms") == "31");
  // The duplicate at 1 250 000 is not new; window 3 at 1 260 000 is.
  CHECK(j.raw("recovery.recovery_ms") == "260");
  CHECK(j.raw("recovery.replay_ms") == "null");
  CHECK(j.raw("recovery.recovered") == "true");

  CHECK(j.keys("semantics") == std::vector<std::string>{"verdict", "lost", "duplicates", "differing",
                                                        "reference_tuples", "delivered_tuples", "order_matches",
                                                        "multiset_compare", "note", "merge_order_replayed",
                                                        "not_judged"});
  CHECK(j.str("semantics.verdict") == "rollback");
  CHECK(j.raw("semantics.lost") == "0");
  CHECK(j.raw("semantics.duplicates") == "1");
  CHECK(j.raw("semantics.differing") == "0");
  CHECK(j.raw("semantics.reference_tuples") == "3");
  CHECK(j.raw("semantics.delivered_tuples") == "4");
  CHECK(j.raw("semantics.order_matches") == "true");
  CHECK(j.raw("semantics.multiset_compare") == "false");
  CHECK(j.str("semantics.note") == "compared as multisets and in order (deterministic network)");
  CHECK(j.str("semantics_examples[0].kind") == "duplicate");
  CHECK(j.str("semantics_examples[0].entry.lineage") == "0000000000000def");

  for (const char* key : {"bytes_total", "bytes_by_kind", "messages_by_kind", "cpu_s"}) {
    INFO(key);
    CHECK(j.has(std::string("overhead.") + key));
  }
  CHECK(j.raw("overhead.bytes_total") == "5000");
  CHECK(j.raw("overhead.bytes_by_kind.tuples") == "4000");
  CHECK(j.raw("overhead.bytes_by_kind.checkpoint") == "1000");
  CHECK(j.raw("overhead.messages_by_kind.checkpoint") == "10");
  CHECK(j.keys("overhead.bytes_by_kind").size() == kFirstControlKind);
  CHECK(j.raw("overhead.cpu_s") == "0.75");

  CHECK(j.raw("nodes.source.tuples_emitted") == "2400");
  CHECK(j.raw("nodes.aggregate.cpu_us") == "250000");
  CHECK(j.raw("output_queue_tuples_max.filter") == "30");
  CHECK(j.str("ha_by_fragment.aggregate") == "passive");
  CHECK(j.raw("completed") == "true");
  CHECK(j.raw("errors") == "[");
}

TEST_CASE("a run without a failure writes null failure and recovery", "[results]") {
  const Fixture fx(false);
  const SummaryJson j(summary_json(fx.run, fx.semantics, fx.metrics, 7, "v"));
  REQUIRE(j.ok());
  CHECK(j.raw("failure") == "null");
  CHECK(j.raw("recovery") == "null");
}

TEST_CASE("output.csv has the header and one exact row per delivery in order", "[results]") {
  const Fixture fx(true);
  const TempDir dir;
  REQUIRE(fx.write(dir.path()).empty());
  CHECK(results_slurp(dir / "output.csv") ==
        "delivery_us,stream,id,ts_us,key,value,lineage,from,replayed\n"
        "400500,totals,1,400000,3,0.10000000000000001,0000000000000abc,aggregate,0\n"
        "601000,totals,2,600000,4,2.5,0000000000000def,aggregate,0\n"
        "1250000,totals,2,600000,4,2.5,0000000000000def,aggregate.backup,1\n"
        "1260000,totals,3,1200000,5,-7,123456789abcdef0,aggregate.backup,0\n");
}

TEST_CASE("events.csv quotes the typed details, trace.jsonl has a field per detail, metrics.csv lists the samples, config.toml is verbatim", "[results]") {
  const Fixture fx(true);
  const TempDir dir;
  REQUIRE(fx.write(dir.path()).empty());
  CHECK(results_slurp(dir / "events.csv") ==
        "time_us,node,event,details\n"
        "1000000,aggregate,failure,\"fault=crash\"\n"
        "1030000,aggregate.backup,detection,\"failed=aggregate silent_us=30000\"\n"
        "1031000,aggregate.backup,takeover,\"ha=passive exact_ids=true checkpoint=9 -- \"\"quoted\"\", with comma\"\n");
  CHECK(results_slurp(dir / "trace.jsonl") ==
        "{\"t_us\":1000000,\"node\":\"aggregate\",\"kind\":\"failure\",\"fault\":\"crash\"}\n"
        "{\"t_us\":1030000,\"node\":\"aggregate.backup\",\"kind\":\"detection\",\"failed\":\"aggregate\",\"silent_us\":30000}\n"
        "{\"t_us\":1031000,\"node\":\"aggregate.backup\",\"kind\":\"takeover\",\"ha\":\"passive\",\"exact_ids\":true,"
        "\"checkpoint\":9,\"text\":\"\\\"quoted\\\", with comma\"}\n");
  CHECK(results_slurp(dir / "metrics.csv") ==
        "time_us,node,metric,value\n"
        "100000,filter,output_queue_tuples,12\n"
        "200000,filter,output_queue_tuples,30\n");
  CHECK(results_slurp(dir / "config.toml") == "[settings]\nseed = 7\n");
}

TEST_CASE("output.csv and events.csv read back into the same deliveries and events", "[results]") {
  const Fixture fx(true);
  const TempDir dir;
  REQUIRE(fx.write(dir.path()).empty());
  const ReadDeliveries out = read_output_csv((dir / "output.csv").string(), fx.run.plan.get());
  CHECK(out.problems.empty());
  CHECK(out.deliveries == fx.run.deliveries);
  const ReadEvents events = read_events_csv((dir / "events.csv").string(), fx.run.plan.get());
  CHECK(events.problems.empty());
  CHECK(events.events == fx.run.events);
}

TEST_CASE("malformed CSV rows are reported with their line and skipped", "[results]") {
  const ReadDeliveries out = parse_output_csv(
      "delivery_us,stream,id,ts_us,key,value,lineage\n"
      "1,0,1,1,1,1.5,00000000000000ff\n"
      "2,0,1,1,1,not-a-number,00000000000000ff\n"
      "3,0,1\n",
      nullptr);
  REQUIRE(out.deliveries.size() == 1);
  CHECK(out.deliveries[0].tuple.lineage == 0xff);
  // Rows with the wrong field count are reported first, then rows whose fields do not parse.
  CHECK(out.problems == std::vector<std::string>{"line 4: expected 7 fields, got 3", "line 3: malformed delivery row"});
  const ReadEvents events = parse_events_csv("time,who\n", nullptr);
  CHECK(events.events.empty());
  REQUIRE(events.problems.size() == 1);
  CHECK(events.problems[0].rfind("line 1: header is 'time,who'", 0) == 0);
  CHECK(read_output_csv("/nonexistent/hapair/output.csv", nullptr).problems ==
        std::vector<std::string>{"cannot open /nonexistent/hapair/output.csv"});
}

TEST_CASE("the same inputs written twice give byte-identical files", "[results]") {
  const Fixture a(true);
  const Fixture b(true);
  const TempDir dir1;
  const TempDir dir2;
  REQUIRE(a.write(dir1.path()).empty());
  REQUIRE(b.write(dir2.path()).empty());
  for (const char* name : {"summary.json", "output.csv", "events.csv", "trace.jsonl", "metrics.csv", "config.toml"}) {
    INFO(name);
    const std::string one = results_slurp(dir1 / name);
    CHECK_FALSE(one.empty());
    CHECK(one == results_slurp(dir2 / name));
  }
}

TEST_CASE("write_results reports a directory it cannot create", "[results]") {
  const Fixture fx(false);
  const TempDir dir;
  { std::ofstream(dir / "a_file") << "x"; }
  const std::string error = fx.write(dir / "a_file" / "sub");
  CHECK(error.rfind("cannot create directory", 0) == 0);
}

TEST_CASE("the terminal summary names the figures, the failure and the verdict", "[results]") {
  const Fixture fx(true);
  const std::string text = format_summary(fx.run, fx.semantics, fx.metrics);
  INFO(text);
  CHECK(text.find("network default, ha passive, driver sim\n") != std::string::npos);
  CHECK(text.find("tuples in 2400, out 4, throughput 4.7 tuples/s\n") != std::string::npos);
  CHECK(text.find("latency p50 1.000 ms, p99 650.000 ms") != std::string::npos);
  CHECK(text.find("failure: crash of aggregate at 1.000 s (observed at 1.000000 s)\n") != std::string::npos);
  CHECK(text.find("detection 30.0 ms (heartbeat detector, by aggregate.backup), takeover 31.0 ms\n") !=
        std::string::npos);
  CHECK(text.find("undisturbed: no takeover or detection before the failure") != std::string::npos);
  CHECK(text.find("recovery 260.0 ms (first new output), catch-up ") != std::string::npos);
  CHECK(text.find("semantics: rollback (lost 0, duplicates 1, differing 0; reference 3 tuples, delivered 4)") !=
        std::string::npos);
  CHECK(text.find("overhead: 5000 bytes in 50 data-plane messages, cpu 0.750 s") != std::string::npos);
}

TEST_CASE("a run on several hosts whose clock bound exceeds a figure it reports says so, naming the figure",
          "[results][clock]") {
  RunResult result;
  RunMetrics metrics;
  metrics.tuples_out = 10;
  metrics.latency.p50_ms = 1.5;
  RecoveryMetrics recovery;
  recovery.detection_ms = 0.9;
  recovery.takeover_ms = 1.0;
  recovery.recovery_ms = 20.0;
  metrics.recoveries.push_back(recovery);
  // One host (no bound): nothing to say.
  CHECK(clock_bound_note(result, metrics).empty());
  result.clock_error_bound_us = 300;
  CHECK(clock_bound_note(result, metrics).empty());
  result.clock_error_bound_us = 1'200;
  const std::string note = clock_bound_note(result, metrics);
  CHECK(note.find("1.200 ms exceeds the detection (0.900 ms) and takeover (1.000 ms)") != std::string::npos);
  CHECK(note.find("recovery") == std::string::npos);
  CHECK(note.find("latency") == std::string::npos);
}
