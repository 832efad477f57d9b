#include "harness/results.h"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>

#include "protocols/check.h"

namespace hapair {

namespace {

// ---- number formatting ------------------------------------------------------------------------

// The shortest form that reads back as exactly the same double (std::to_chars: fixed or
// exponent notation, whichever is shorter), so that files are both readable and lossless, and
// the same on every run.
std::string shortest_double(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  HAPAIR_CHECK_MSG(ec == std::errc(), "to_chars failed for a double");
  return std::string(buf, end);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// ---- a tiny JSON writer -------------------------------------------------------------------------

// Writes pretty-printed JSON (two-space indent) in the order the caller emits keys. It keeps only
// a stack of "container has items" flags; the caller is trusted to nest correctly, which the
// checks enforce.
class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  JsonWriter& key(std::string_view k) {
    HAPAIR_CHECK_MSG(!after_key_ && !has_items_.empty(), "key " << k << " outside an object");
    next_item();
    write_string(k);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& null() { return raw("null"); }
  JsonWriter& boolean(bool b) { return raw(b ? "true" : "false"); }
  JsonWriter& number(std::uint64_t v) { return raw(std::to_string(v)); }
  JsonWriter& number(std::int64_t v) { return raw(std::to_string(v)); }
  JsonWriter& number(double v) { return std::isfinite(v) ? raw(shortest_double(v)) : null(); }
  JsonWriter& number(const std::optional<double>& v) { return v ? number(*v) : null(); }
  JsonWriter& string(std::string_view s) {
    value_position();
    write_string(s);
    return *this;
  }

  std::string take() {
    HAPAIR_CHECK_MSG(has_items_.empty() && !after_key_, "unclosed JSON containers: " << has_items_.size());
    out_ += '\n';
    return std::move(out_);
  }

 private:
  JsonWriter& open(char c) {
    value_position();
    out_ += c;
    has_items_.push_back(false);
    return *this;
  }
  JsonWriter& close(char c) {
    HAPAIR_CHECK(!has_items_.empty() && !after_key_);
    const bool had_items = has_items_.back();
    has_items_.pop_back();
    if (had_items) newline();
    out_ += c;
    return *this;
  }
  JsonWriter& raw(std::string_view text) {
    value_position();
    out_ += text;
    return *this;
  }
  // A value goes right after its key, or as the next item of an array, or at the top.
  void value_position() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!has_items_.empty()) next_item();
  }
  void next_item() {
    if (has_items_.back()) out_ += ',';
    has_items_.back() = true;
    newline();
  }
  void newline() {
    out_ += '\n';
    out_.append(2 * has_items_.size(), ' ');
  }
  void write_string(std::string_view s) {
    out_ += '"';
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (c == '\n') {
        out_ += "\\n";
      } else if (c == '\t') {
        out_ += "\\t";
      } else if (u < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", u);
        out_ += buf;
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> has_items_;
  bool after_key_ = false;
};

template <typename Map>
void write_number_map(JsonWriter& w, const Map& m) {
  w.begin_object();
  for (const auto& [k, v] : m) w.key(k).number(v);
  w.end_object();
}

void write_entry(JsonWriter& w, const std::string& stream, const SemanticsEntry& e) {
  char lineage[24];
  std::snprintf(lineage, sizeof lineage, "%016" PRIx64, e.lineage);
  w.begin_object();
  w.key("stream").string(stream);
  w.key("lineage").string(lineage);
  w.key("key").number(e.key);
  w.key("value").number(e.value);
  w.key("ts_us").number(e.ts_us);
  w.end_object();
}

// ---- names ----------------------------------------------------------------------------------------

std::string stream_name(const Plan* plan, StreamId s) {
  if (plan != nullptr && s < plan->streams.size()) return plan->streams[s].name;
  return std::to_string(s);
}

std::string node_name(const Plan* plan, NodeId n) {
  if (n == kNoNode) return "launcher";
  if (plan != nullptr && n < plan->nodes.size()) return plan->nodes[n].name;
  return std::to_string(n);
}

template <typename Int>
bool parse_int(std::string_view s, Int& out, int base = 10) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// A name the plan knows (`found`, the plan's id for it, or `none`) or else a plain number.
template <typename Id>
bool parse_id(const std::string& s, Id found, Id none, Id& out) {
  if (found == none) return parse_int(s, out);
  out = found;
  return true;
}

bool parse_stream(const Plan* plan, const std::string& s, StreamId& out) {
  return parse_id(s, plan != nullptr ? plan->stream_id(s) : kNoStream, kNoStream, out);
}

bool parse_node(const Plan* plan, const std::string& s, NodeId& out) {
  if (s == "launcher") {
    out = kNoNode;
    return true;
  }
  return parse_id(s, plan != nullptr ? plan->node_id(s) : kNoNode, kNoNode, out);
}

// ---- CSV --------------------------------------------------------------------------------------------

std::string csv_quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

// Quotes a field only when it needs it (a separator, quote or line break inside).
std::string csv_field(std::string_view s) {
  return s.find_first_of(",\"\r\n") == std::string_view::npos ? std::string(s) : csv_quoted(s);
}

struct CsvRecord {
  std::size_t line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

// Splits CSV text into records; quoted fields may hold separators, doubled quotes and line
// breaks. A trailing line break does not make an empty record; "\r\n" is accepted.
std::vector<CsvRecord> parse_csv(std::string_view text) {
  std::vector<CsvRecord> records;
  std::size_t line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    CsvRecord r;
    r.line = line;
    std::string field;
    bool quoted = false;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (quoted) {
        if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          if (c == '\n') ++line;
          field += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        r.fields.push_back(std::move(field));
        field.clear();
      } else if (c == '\n') {
        ++line;
        ++i;
        break;
      } else if (c != '\r') {
        field += c;
      }
    }
    r.fields.push_back(std::move(field));
    records.push_back(std::move(r));
  }
  return records;
}

const char* const kOutputHeader = "delivery_us,stream,id,ts_us,key,value,lineage";
const char* const kEventsHeader = "time_us,node,event,details";
const char* const kMetricsHeader = "time_us,node,metric,value";

std::string problem(const CsvRecord& r, const std::string& what) { return "line " + std::to_string(r.line) + ": " + what; }

// The records after a header that must equal `header`, each with as many fields as the header;
// a wrong header, or a record with another field count, is a problem.
std::vector<CsvRecord> body_after_header(std::string_view text, std::string_view header,
                                         std::vector<std::string>& problems) {
  std::vector<CsvRecord> records = parse_csv(text);
  if (records.empty()) {
    problems.push_back("empty file, expected header " + std::string(header));
    return {};
  }
  std::string got;
  for (const std::string& f : records.front().fields) got += (got.empty() ? "" : ",") + f;
  if (got != header) {
    problems.push_back("line 1: header is '" + got + "', expected '" + std::string(header) + "'");
    return {};
  }
  const std::size_t field_count = records.front().fields.size();
  std::vector<CsvRecord> body;
  for (std::size_t i = 1; i < records.size(); ++i) {
    if (records[i].fields.size() == field_count) {
      body.push_back(std::move(records[i]));
    } else {
      problems.push_back(problem(records[i], "expected " + std::to_string(field_count) + " fields, got " +
                                                 std::to_string(records[i].fields.size())));
    }
  }
  return body;
}

bool read_file(const std::string& path, std::string& text, std::vector<std::string>& problems) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problems.push_back("cannot open " + path);
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
  return true;
}

std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return "cannot create " + path.string();
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return "cannot write " + path.string();
  return {};
}

}  // namespace

// ---- summary.json ---------------------------------------------------------------------------------

std::string summary_json(const RunResult& result, const SemanticsReport& semantics, const RunMetrics& metrics,
                         std::uint64_t seed, const std::string& version) {
  const Plan* plan = result.plan.get();
  JsonWriter w;
  w.begin_object();
  if (plan != nullptr) {
    w.key("ha").string(to_string(plan->settings().ha));
  } else {
    w.key("ha").null();
  }
  w.key("driver").string(result.driver);
  w.key("seed").number(seed);
  w.key("version").string(version);
  if (plan != nullptr) {
    w.key("network").string(plan->topology.name);
  } else {
    w.key("network").null();
  }
  w.key("tuples_in").number(metrics.tuples_in);
  w.key("tuples_in_from").string(metrics.tuples_in_from_counters ? "counters" : "reference");
  w.key("tuples_out").number(metrics.tuples_out);
  w.key("throughput_tps").number(metrics.throughput_tps);
  w.key("latency_ms").begin_object();
  w.key("p50").number(metrics.latency.p50_ms);
  w.key("p99").number(metrics.latency.p99_ms);
  w.key("max").number(metrics.latency.max_ms);
  w.end_object();

  w.key("failure");
  if (const FaultSpec* fault = measured_fault(result)) {
    w.begin_object();
    w.key("node").string(fault->node);
    w.key("at_s").number(fault->at_s);
    w.key("kind").string(to_string(fault->kind));
    w.end_object();
  } else {
    w.null();
  }

  w.key("recovery");
  if (metrics.recovery) {
    const RecoveryMetrics& r = *metrics.recovery;
    w.begin_object();
    w.key("detection_ms").number(r.detection_ms);
    w.key("detector").string(r.detector);
    w.key("detected_by").string(r.detected_by);
    w.key("takeover_ms").number(r.takeover_ms);
    w.key("recovery_ms").number(r.recovery_ms);
    w.key("catchup_ms").number(r.catchup_ms);
    w.key("replay_ms").number(r.replay_ms);
    w.key("restore_ms").number(r.restore_ms);
    w.key("recovered").boolean(r.recovered);
    w.key("catchup_reached_normal").boolean(r.catchup_reached_normal);
    w.key("failure_us").number(r.failure_us);
    w.key("failure_from_event").boolean(r.failure_from_event);
    w.key("prefailure_p99_ms").number(r.prefailure_p99_ms);
    w.key("reference_delivered_before").number(r.reference_delivered_before);
    w.key("new_after").number(r.new_after);
    w.end_object();
  } else {
    w.null();
  }

  w.key("disturbance").begin_object();
  w.key("disturbed").boolean(metrics.disturbance.disturbed());
  w.key("text").string(describe_disturbances(metrics.disturbance));
  w.key("items").begin_array();
  for (const Disturbance& d : metrics.disturbance.disturbances) {
    w.begin_object();
    w.key("kind").string(to_string(d.kind));
    w.key("at_us").number(d.at_us);
    w.key("node").string(d.node);
    w.key("detail").string(d.detail);
    w.end_object();
  }
  w.end_array();
  w.key("detections").begin_array();
  for (const DetectionSeen& d : metrics.disturbance.detections) {
    w.begin_object();
    w.key("at_us").number(d.at_us);
    w.key("by").string(d.by);
    w.key("failed").string(d.failed);
    w.key("detector").string(d.detector);
    w.key("of_standby").boolean(d.of_standby);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  // Fragments that ran without a standby after their primary declared it lost.
  w.key("unprotected").begin_array();
  for (const UnprotectedSpan& u : metrics.unprotected) {
    w.begin_object();
    w.key("fragment").string(u.fragment);
    w.key("primary").string(u.primary);
    w.key("standby").string(u.standby);
    w.key("lost_us").number(u.lost_us);
    w.key("silent_ms").number(u.silent_ms);
    w.key("released_tuples").number(u.released_tuples);
    w.key("unprotected_ms").number(u.unprotected_ms);
    w.key("restored").boolean(u.restored);
    w.end_object();
  }
  w.end_array();

  w.key("semantics").begin_object();
  w.key("verdict").string(semantics.verdict);
  w.key("lost").number(semantics.lost);
  w.key("duplicates").number(semantics.duplicates);
  w.key("differing").number(semantics.differing);
  w.key("reference_tuples").number(semantics.reference_tuples);
  w.key("delivered_tuples").number(semantics.delivered_tuples);
  w.key("order_matches").boolean(semantics.order_matches);
  w.key("multiset_compare").boolean(semantics.multiset_compare);
  w.key("note").string(semantics.note);
  w.key("merge_order_replayed").boolean(semantics.merge_order_replayed);
  w.key("not_judged").begin_array();
  for (const NotJudged& n : semantics.not_judged) {
    w.begin_object();
    w.key("stream").string(n.stream);
    w.key("reason").string(n.reason);
    w.end_object();
  }
  w.end_array();
  w.end_object();

  w.key("semantics_examples").begin_array();
  for (const SemanticsExample& e : semantics.examples) {
    w.begin_object();
    w.key("kind").string(e.kind);
    w.key("entry");
    write_entry(w, stream_name(plan, e.entry.stream), e.entry);
    w.key("reference_count").number(e.reference_count);
    w.key("delivered_count").number(e.delivered_count);
    w.key("delivered_instead");
    if (e.delivered_instead) {
      write_entry(w, stream_name(plan, e.delivered_instead->stream), *e.delivered_instead);
    } else {
      w.null();
    }
    w.end_object();
  }
  w.end_array();

  w.key("overhead").begin_object();
  w.key("bytes_total").number(metrics.overhead.bytes_total);
  w.key("messages_total").number(metrics.overhead.messages_total);
  w.key("bytes_by_kind");
  write_number_map(w, metrics.overhead.bytes_by_kind);
  w.key("messages_by_kind");
  write_number_map(w, metrics.overhead.messages_by_kind);
  w.key("cpu_s").number(metrics.overhead.cpu_s);
  w.end_object();

  w.key("completed").boolean(result.completed);
  w.key("end_us").number(result.end_us);
  w.key("errors").begin_array();
  for (const std::string& e : result.errors) w.string(e);
  w.end_array();

  w.key("ha_by_fragment").begin_object();
  if (plan != nullptr) {
    for (const PlanFragment& f : plan->fragments) w.key(f.name).string(to_string(f.ha));
  }
  w.end_object();

  w.key("output_queue_tuples_max");
  write_number_map(w, metrics.output_queue_tuples_max);

  w.key("nodes").begin_object();
  for (const auto& [node, counters] : result.counters) {
    w.key(node);
    write_number_map(w, counters);
  }
  w.end_object();

  w.end_object();
  return w.take();
}

// ---- CSV files -------------------------------------------------------------------------------------

std::string output_csv(const RunResult& result) {
  std::string out = std::string(kOutputHeader) + "\n";
  char buf[160];
  for (const Delivery& d : result.deliveries) {
    std::snprintf(buf, sizeof buf, "%" PRId64 ",%s,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%.17g,%016" PRIx64 "\n",
                  d.at_us, csv_field(stream_name(result.plan.get(), d.stream)).c_str(), d.tuple.id, d.tuple.ts_us,
                  d.tuple.key, d.tuple.value, d.tuple.lineage);
    out += buf;
  }
  return out;
}

std::string events_csv(const RunResult& result) {
  std::string out = std::string(kEventsHeader) + "\n";
  for (const TraceEvent& e : result.events) {
    out += std::to_string(e.at_us) + "," + csv_field(node_name(result.plan.get(), e.node)) + "," +
           csv_field(e.event) + "," + csv_quoted(e.details) + "\n";
  }
  return out;
}

std::string merge_order_csv(const RunResult& result) {
  std::string out = "node,epoch,acting,following,op_index,first_output,port,first_input,count\n";
  char buf[160];
  for (const MergeOrder& o : result.merge_orders) {
    const std::string node = csv_field(node_name(result.plan.get(), o.node));
    TupleId output = o.first_output;
    for (const MergeRun& r : o.runs) {
      std::snprintf(buf, sizeof buf, ",%" PRIu64 ",%d,%d,%u,%" PRIu64 ",%u,%" PRIu64 ",%u\n", o.epoch, o.acting ? 1 : 0,
                    o.following ? 1 : 0, static_cast<unsigned>(o.op_index), output, static_cast<unsigned>(r.port),
                    r.first_input, static_cast<unsigned>(r.count));
      out += node + buf;
      output += r.count;
    }
  }
  return out;
}

std::string metrics_csv(const RunResult& result) {
  std::string out = std::string(kMetricsHeader) + "\n";
  for (const MetricSample& s : result.samples) {
    out += std::to_string(s.at_us) + "," + csv_field(s.node) + "," + csv_field(s.name) + "," +
           std::to_string(s.value) + "\n";
  }
  return out;
}

std::string write_results(const std::string& dir, const RunResult& result, const SemanticsReport& semantics,
                          const RunMetrics& metrics, const std::string& effective_config_text,
                          std::uint64_t seed, const std::string& version) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create directory " + dir + ": " + ec.message();
  const std::filesystem::path base(dir);
  const std::pair<const char*, std::string> files[] = {
      {"summary.json", summary_json(result, semantics, metrics, seed, version)},
      {"output.csv", output_csv(result)},
      {"events.csv", events_csv(result)},
      {"metrics.csv", metrics_csv(result)},
      {"config.ini", effective_config_text},
  };
  for (const auto& [name, text] : files) {
    std::string error = write_file(base / name, text);
    if (!error.empty()) return error;
  }
  if (!result.merge_orders.empty()) return write_file(base / "merge_order.csv", merge_order_csv(result));
  return {};
}

// ---- reading back ------------------------------------------------------------------------------------

ReadDeliveries parse_output_csv(const std::string& text, const Plan* plan) {
  ReadDeliveries r;
  for (const CsvRecord& rec : body_after_header(text, kOutputHeader, r.problems)) {
    const auto& f = rec.fields;
    Delivery d;
    if (!parse_int(f[0], d.at_us) || !parse_stream(plan, f[1], d.stream) || !parse_int(f[2], d.tuple.id) ||
        !parse_int(f[3], d.tuple.ts_us) || !parse_int(f[4], d.tuple.key) || !parse_double(f[5], d.tuple.value) ||
        !parse_int(f[6], d.tuple.lineage, 16)) {
      r.problems.push_back(problem(rec, "malformed delivery row"));
      continue;
    }
    r.deliveries.push_back(d);
  }
  return r;
}

ReadEvents parse_events_csv(const std::string& text, const Plan* plan) {
  ReadEvents r;
  for (const CsvRecord& rec : body_after_header(text, kEventsHeader, r.problems)) {
    const auto& f = rec.fields;
    TraceEvent e;
    if (!parse_int(f[0], e.at_us) || !parse_node(plan, f[1], e.node) || f[2].empty()) {
      r.problems.push_back(problem(rec, "malformed event row"));
      continue;
    }
    e.event = f[2];
    e.details = f[3];
    r.events.push_back(e);
  }
  return r;
}

namespace {

template <typename Read>
Read read_and_parse(const std::string& path, const Plan* plan, Read (*parse)(const std::string&, const Plan*)) {
  std::string text;
  Read r;
  if (!read_file(path, text, r.problems)) return r;
  return parse(text, plan);
}

}  // namespace

ReadDeliveries read_output_csv(const std::string& path, const Plan* plan) {
  return read_and_parse(path, plan, &parse_output_csv);
}

ReadEvents read_events_csv(const std::string& path, const Plan* plan) {
  return read_and_parse(path, plan, &parse_events_csv);
}

// ---- terminal summary ----------------------------------------------------------------------------------

namespace {

std::string ms_or_none(const std::optional<double>& ms) { return ms ? fixed(*ms, 1) + " ms" : "none"; }

}  // namespace

std::string format_summary(const RunResult& result, const SemanticsReport& semantics, const RunMetrics& metrics) {
  std::ostringstream s;
  const Plan* plan = result.plan.get();
  s << "network " << (plan ? plan->topology.name : std::string("?")) << ", ha "
    << (plan ? to_string(plan->settings().ha) : "?") << ", driver " << result.driver
    << (result.completed ? "" : " (run did not complete)") << "\n";
  s << "tuples in " << metrics.tuples_in << ", out " << metrics.tuples_out << ", throughput "
    << fixed(metrics.throughput_tps, 1) << " tuples/s\n";
  s << "latency p50 " << fixed(metrics.latency.p50_ms, 3) << " ms, p99 " << fixed(metrics.latency.p99_ms, 3)
    << " ms, max " << fixed(metrics.latency.max_ms, 3) << " ms\n";
  for (std::size_t i = 0; i < metrics.recoveries.size(); ++i) {
    const RecoveryMetrics& r = metrics.recoveries[i];
    s << (metrics.recoveries.size() > 1 ? "failure " + std::to_string(i + 1) + ": " : std::string("failure: "))
      << to_string(r.kind) << " of " << r.node << " at " << fixed(r.at_s, 3) << " s ("
      << (r.failure_from_event ? "observed at " : "configured, ") << fixed(static_cast<double>(r.failure_us) / 1e6, 6)
      << " s)\n";
    s << "  detection " << ms_or_none(r.detection_ms);
    if (r.detection_ms) s << " (" << r.detector << " detector, by " << r.detected_by << ")";
    s << ", takeover " << ms_or_none(r.takeover_ms);
    if (r.replay_ms) s << ", replay " << ms_or_none(r.replay_ms);
    if (r.restore_ms) s << ", pair restored in " << ms_or_none(r.restore_ms);
    s << "\n";
    if (r.recovered) {
      s << "  recovery " << ms_or_none(r.recovery_ms) << " (first new output), catch-up " << ms_or_none(r.catchup_ms)
        << (r.catchup_reached_normal ? " (latency back to normal)" : " (latency never back to normal: to the last delivery)")
        << "\n";
    } else {
      s << "  not recovered: no new output after the failure\n";
    }
  }
  // Disturbances: a run whose pair was swapped before its failure, or that saw a false
  // detection, is never shown as clean.
  if (metrics.disturbance.disturbed()) {
    s << "disturbed: " << describe_disturbances(metrics.disturbance)
      << (metrics.recovery ? " (the recovery figures above do not measure the planned failure alone)" : "") << "\n";
  } else {
    s << "undisturbed: no takeover or detection "
      << (metrics.recovery ? "before the failure, none of a node no fault touched" : "in this failure-free run") << "\n";
  }
  for (const UnprotectedSpan& u : metrics.unprotected) {
    s << "standby lost: " << u.standby << " (standby of " << u.primary << ") at "
      << fixed(static_cast<double>(u.lost_us) / 1e6, 3) << " s (last heard " << fixed(u.silent_ms, 1)
      << " ms before); " << u.released_tuples << " held tuples released; fragment " << u.fragment
      << " unprotected for " << fixed(u.unprotected_ms, 1) << " ms"
      << (u.restored ? " (until the pair was restored)" : " (to the last output: the pair was not restored)") << "\n";
  }
  s << "semantics: " << semantics.verdict << " (lost " << semantics.lost << ", duplicates " << semantics.duplicates
    << ", differing " << semantics.differing << "; reference " << semantics.reference_tuples << " tuples, delivered "
    << semantics.delivered_tuples << ")\n";
  s << "  " << semantics.note << "\n";
  for (const NotJudged& n : semantics.not_judged)
    s << "  not judged: stream " << n.stream << " (" << n.reason << ")\n";
  for (const SemanticsExample& e : semantics.examples) {
    s << "  " << e.kind << ": " << stream_name(plan, e.entry.stream) << " key " << e.entry.key << " ts "
      << e.entry.ts_us << " us value " << shortest_double(e.entry.value) << " (reference x" << e.reference_count
      << ", delivered x" << e.delivered_count << ")";
    if (e.delivered_instead) s << ", delivered value " << shortest_double(e.delivered_instead->value) << " instead";
    s << "\n";
  }
  // What the nodes said they could not replay: the cause of a gap, or of rebased ids.
  std::size_t replay_gaps = 0;
  for (const TraceEvent& e : result.events) {
    if (e.event != "replay_gap") continue;
    if (++replay_gaps <= 3)
      s << "  replay gap at " << (plan && e.node < plan->nodes.size() ? plan->nodes[e.node].name : std::to_string(e.node))
        << " (" << fixed(static_cast<double>(e.at_us) / 1e6, 6) << " s): " << e.details << "\n";
  }
  if (replay_gaps > 3) s << "  (" << replay_gaps - 3 << " more replay gaps in events.csv)\n";
  s << "overhead: " << metrics.overhead.bytes_total << " bytes in " << metrics.overhead.messages_total
    << " data-plane messages, cpu " << fixed(metrics.overhead.cpu_s, 3) << " s\n";
  // The line that says the output stopped is the end of the run, not a failure (RunResult::stall).
  for (const std::string& e : result.errors) s << (e == result.stall ? "stopped: " : "error: ") << e << "\n";
  return s.str();
}

}  // namespace hapair
