#include "support/result_csv.h"

#include "support/trace_read.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>

namespace hapair {

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

namespace {

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

const char* const kOutputHeader = "delivery_us,stream,id,ts_us,key,value,lineage,from,replayed";
// Hand-written examples in the tests may leave out the last two columns.
const char* const kShortOutputHeader = "delivery_us,stream,id,ts_us,key,value,lineage";
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

}  // namespace

ReadDeliveries parse_output_csv(const std::string& text, const Plan* plan) {
  ReadDeliveries r;
  const bool short_form = text.rfind(std::string(kShortOutputHeader) + "\n", 0) == 0;
  for (const CsvRecord& rec : body_after_header(text, short_form ? kShortOutputHeader : kOutputHeader, r.problems)) {
    const auto& f = rec.fields;
    Delivery d;
    std::int64_t replayed = 0;
    if (!parse_int(f[0], d.at_us) || !parse_stream(plan, f[1], d.stream) || !parse_int(f[2], d.tuple.id) ||
        !parse_int(f[3], d.tuple.ts_us) || !parse_int(f[4], d.tuple.key) || !parse_double(f[5], d.tuple.value) ||
        !parse_int(f[6], d.tuple.lineage, 16) ||
        (!short_form && (!parse_node(plan, f[7], d.from) || !parse_int(f[8], replayed) || replayed < 0 || replayed > 1))) {
      r.problems.push_back(problem(rec, "malformed delivery row"));
      continue;
    }
    d.replayed = replayed == 1;
    r.deliveries.push_back(d);
  }
  return r;
}

ReadEvents parse_events_csv(const std::string& text, const Plan* plan) {
  ReadEvents r;
  for (const CsvRecord& rec : body_after_header(text, kEventsHeader, r.problems)) {
    const auto& f = rec.fields;
    TimeUs at_us = 0;
    NodeId node = kNoNode;
    if (!parse_int(f[0], at_us) || !parse_node(plan, f[1], node) || f[2].empty()) {
      r.problems.push_back(problem(rec, "malformed event row"));
      continue;
    }
    std::string why;
    auto e = parse_trace_event(plan, at_us, node, f[2], f[3], &why);
    if (!e) {
      r.problems.push_back(problem(rec, why));
      continue;
    }
    r.events.push_back(std::move(*e));
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

}  // namespace hapair
