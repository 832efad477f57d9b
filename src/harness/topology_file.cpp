// The topology file format (docs/TOPOLOGY.md): a line-based INI parser of our own, so that every
// problem can name its file and line, and a writer that shares the parser's key tables, so
// that every key written is a key read back and the round trip is exact.
#include "harness/topology_file.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <system_error>

#include "protocols/plan.h"

namespace hapair {
namespace {

constexpr std::size_t kFileBytesMax = 1u << 20;

// ---- values ---------------------------------------------------------------------------------

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// A whole string as a number of type T; a leading '+' is allowed. Locale-independent (unlike
// strtod), so a file means the same everywhere.
template <typename T>
std::optional<T> parse_number(const std::string& s) {
  T v{};
  const char* first = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr != last || first == last) return std::nullopt;
  return v;
}
const auto parse_int = parse_number<std::int64_t>;
const auto parse_uint = parse_number<std::uint64_t>;
const auto parse_double = parse_number<double>;

std::optional<bool> parse_bool(const std::string& s) {
  if (s == "true") return true;
  if (s == "false") return false;
  return std::nullopt;
}

// The shortest text that parses back to exactly `v`; whole numbers without an exponent.
std::string format_double(double v) {
  if (v == 0.0) return std::signbit(v) ? "-0" : "0";
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string format_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::optional<std::vector<std::string>> parse_list(const std::string& s) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const auto comma = s.find(',', start);
    const std::string item = trim(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (item.empty()) return std::nullopt;
    items.push_back(item);
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

// ---- knobs: one key of a section, how to read it and how to write it -----------------------

using SetResult = std::optional<std::string>;  // nullopt: accepted; else what was expected

struct Knob {
  std::string key;
  std::function<std::optional<std::string>()> get;  // nullopt: not written
  std::function<SetResult(const std::string&)> set;
};

template <typename T, typename Parse, typename Format>
Knob make_knob(std::string key, T& field, Parse parse, Format format, std::string expected) {
  return Knob{std::move(key), [&field, format] { return std::optional<std::string>(format(field)); },
              [&field, parse, expected](const std::string& text) -> SetResult {
                auto v = parse(text);
                if (!v) return expected;
                field = *v;
                return std::nullopt;
              }};
}

Knob int_knob(std::string key, std::int64_t& field) {
  return make_knob(std::move(key), field, parse_int, [](std::int64_t v) { return std::to_string(v); },
                   "expected a whole number, like 100");
}
Knob uint_knob(std::string key, std::uint64_t& field) {
  return make_knob(std::move(key), field, parse_uint, [](std::uint64_t v) { return std::to_string(v); },
                   "expected a whole number >= 0, like 42");
}
Knob double_knob(std::string key, double& field) {
  return make_knob(std::move(key), field, parse_double, format_double, "expected a number, like 2000, 0.5 or 1.25e9");
}
Knob bool_knob(std::string key, bool& field) {
  return make_knob(std::move(key), field, parse_bool, [](bool v) { return std::string(v ? "true" : "false"); },
                   "expected true or false");
}
Knob text_knob(std::string key, std::string& field) {
  return make_knob(std::move(key), field, [](const std::string& s) { return std::optional<std::string>(s); },
                   [](const std::string& s) { return s; }, "");
}
template <typename E>
Knob enum_knob(std::string key, E& field, std::optional<E> (*parse)(const std::string&), const std::string& allowed) {
  return make_knob(std::move(key), field, parse, [](E v) { return std::string(to_string(v)); },
                   "unknown value; allowed values: " + allowed);
}

// `ha` of a processing fragment: "default" leaves it to the network's `ha`.
Knob fragment_ha_knob(std::optional<HaMode>& field) {
  auto get = [&field]() -> std::optional<std::string> { return std::string(field ? to_string(*field) : "default"); };
  auto set = [&field](const std::string& s) -> SetResult {
    if (s == "default") {
      field.reset();
      return std::nullopt;
    }
    const auto mode = parse_ha_mode(s);
    if (!mode) return "unknown value; allowed values: default, " + allowed_ha_modes();
    field = *mode;
    return std::nullopt;
  };
  return Knob{"ha", get, set};
}
// Sources and sinks accept `ha` only so that validate() can explain why it must stay none; it is
// written only when set.
Knob edge_ha_knob(std::optional<HaMode>& field) {
  Knob k = fragment_ha_knob(field);
  k.get = [&field]() -> std::optional<std::string> {
    if (!field) return std::nullopt;
    return std::string(to_string(*field));
  };
  return k;
}
Knob unless_empty(Knob k) {
  auto get = k.get;
  k.get = [get]() -> std::optional<std::string> {
    auto v = get();
    if (v && v->empty()) return std::nullopt;
    return v;
  };
  return k;
}

// input = s for one stream, inputs = a, b for several; both read into the same list.
std::vector<Knob> input_knobs(std::vector<std::string>& field) {
  const std::string expected = "expected stream names separated by commas, like a, b";
  auto set = [&field, expected](const std::string& s) -> SetResult {
    auto items = parse_list(s);
    if (!items) return expected;
    field = *items;
    return std::nullopt;
  };
  return {Knob{"input",
               [&field]() -> std::optional<std::string> {
                 if (field.size() != 1) return std::nullopt;
                 return field.front();
               },
               set},
          Knob{"inputs",
               [&field]() -> std::optional<std::string> {
                 if (field.size() == 1) return std::nullopt;
                 return format_list(field);
               },
               set}};
}

Knob values_knob(ValueDistribution& field) {
  const std::string expected = "expected uniform(MIN, MAX), normal(MEAN, STDDEV) or exponential(MEAN)";
  auto get = [&field]() -> std::optional<std::string> {
    std::string out = std::string(to_string(field.kind)) + "(" + format_double(field.a);
    if (field.kind != DistributionKind::exponential) out += ", " + format_double(field.b);
    return out + ")";
  };
  auto set = [&field, expected](const std::string& s) -> SetResult {
    const auto open = s.find('(');
    if (open == std::string::npos || s.back() != ')') return expected;
    const std::string name = trim(s.substr(0, open));
    auto kind = parse_distribution_kind(name);
    if (!kind) return "unknown distribution '" + name + "'; allowed values: " + allowed_distribution_kinds();
    auto args = parse_list(s.substr(open + 1, s.size() - open - 2));
    const std::size_t wanted = *kind == DistributionKind::exponential ? 1 : 2;
    if (!args || args->size() != wanted) return expected;
    ValueDistribution d;
    d.kind = *kind;
    auto a = parse_double((*args)[0]);
    auto b = wanted == 2 ? parse_double((*args)[1]) : std::optional<double>(d.b);
    if (!a || !b) return expected + ", with numbers as parameters";
    d.a = *a;
    d.b = *b;
    field = d;
    return std::nullopt;
  };
  return Knob{"values", get, set};
}

// where = FIELD OP NUMBER, e.g. "value < 80".
Knob filter_where_knob(OperatorSpec& o) {
  auto get = [&o]() -> std::optional<std::string> {
    return std::string(to_string(o.filter_field)) + " " + to_string(o.filter_op) + " " + format_double(o.filter_constant);
  };
  auto set = [&o](const std::string& s) -> SetResult {
    const std::string expected = "expected FIELD OP NUMBER, like value < 80 (fields: " + allowed_fields() +
                                 "; operators: " + allowed_compare_ops() + ")";
    std::size_t i = 0;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    const std::string field_text = s.substr(0, i);
    std::size_t j = i;
    while (j < s.size() && s[j] == ' ') ++j;
    std::size_t k = j;
    while (k < s.size() && std::strchr("<>=!", s[k]) != nullptr) ++k;
    const std::string op_text = s.substr(j, k - j);
    const std::string number_text = trim(s.substr(k));
    auto field = parse_field(field_text);
    if (!field) return "unknown field '" + field_text + "'; " + expected;
    auto op = parse_compare_op(op_text);
    if (!op) return "unknown comparison '" + op_text + "'; " + expected;
    auto constant = parse_double(number_text);
    if (!constant) return "'" + number_text + "' is not a number; " + expected;
    o.filter_field = *field;
    o.filter_op = *op;
    o.filter_constant = *constant;
    return std::nullopt;
  };
  return Knob{"where", get, set};
}

Knob group_by_knob(bool& group_by_key) {
  return make_knob(
      "group_by", group_by_key,
      [](const std::string& s) -> std::optional<bool> {
        if (s == "key") return true;
        if (s == "none") return false;
        return std::nullopt;
      },
      [](bool v) { return std::string(v ? "key" : "none"); }, "unknown value; allowed values: key, none");
}

std::vector<Knob> network_knobs(Topology& t) {
  Settings& s = t.settings;
  return {text_knob("name", t.name),
          uint_knob("seed", s.seed),
          double_knob("duration_s", s.duration_s),
          enum_knob("ha", s.ha, parse_ha_mode, allowed_ha_modes()),
          int_knob("batch_tuples", s.batch_tuples),
          int_knob("batch_flush_ms", s.batch_flush_ms),
          int_knob("heartbeat_interval_ms", s.heartbeat_interval_ms),
          int_knob("failure_timeout_ms", s.failure_timeout_ms),
          int_knob("ack_interval_ms", s.ack_interval_ms),
          int_knob("checkpoint_interval_ms", s.checkpoint_interval_ms),
          enum_knob("checkpoint_mode", s.checkpoint_mode, parse_checkpoint_mode, allowed_checkpoint_modes()),
          int_knob("checkpoint_chunk_bytes", s.checkpoint_chunk_bytes),
          int_knob("output_queue_tuples_max", s.output_queue_tuples_max),
          int_knob("input_queue_tuples_max", s.input_queue_tuples_max),
          int_knob("inflight_tuples_max", s.inflight_tuples_max),
          enum_knob("queue_full_policy", s.queue_full_policy, parse_queue_full_policy, allowed_queue_full_policies()),
          bool_knob("determinants", s.determinants),
          enum_knob("trimming", s.trimming, parse_trimming_rule, allowed_trimming_rules()),
          enum_knob("detector", s.detector, parse_detector_kind, allowed_detector_kinds()),
          int_knob("hang_timeout_ms", s.hang_timeout_ms),
          int_knob("conservative_retention_ms", s.conservative_retention_ms),
          double_knob("drain_timeout_s", s.drain_timeout_s),
          double_knob("drain_quiet_s", s.drain_quiet_s),
          double_knob("operator_cost_us_per_tuple", s.operator_cost_us_per_tuple),
          int_knob("retransmit_timeout_ms", s.retransmit_timeout_ms)};
}

std::vector<Knob> sim_knobs(SimSettings& s) {
  return {double_knob("link_latency_ms", s.link_latency_ms),
          double_knob("link_jitter_ms", s.link_jitter_ms),
          double_knob("bandwidth_bytes_per_s", s.bandwidth_bytes_per_s),
          double_knob("loss_ratio", s.loss_ratio),
          double_knob("duplication_ratio", s.duplication_ratio),
          double_knob("reorder_ratio", s.reorder_ratio),
          double_knob("cpu_us_per_tuple", s.cpu_us_per_tuple),
          double_knob("cpu_us_per_message", s.cpu_us_per_message),
          double_knob("node_capacity", s.node_capacity)};
}

std::vector<Knob> source_knobs(FragmentSpec& f) {
  SourceSpec& s = f.source;
  return {text_knob("stream", s.stream),
          double_knob("rate_tps", s.rate_tps),
          int_knob("key_count", s.key_count),
          values_knob(s.values),
          bool_knob("integer_values", s.integer_values),
          text_knob("endpoint", f.endpoint),
          edge_ha_knob(f.ha),
          unless_empty(text_knob("standby_endpoint", f.standby_endpoint))};
}

std::vector<Knob> fragment_knobs(FragmentSpec& f) {
  return {fragment_ha_knob(f.ha), text_knob("endpoint", f.endpoint), text_knob("standby_endpoint", f.standby_endpoint)};
}

std::vector<Knob> sink_knobs(FragmentSpec& f) {
  std::vector<Knob> k = input_knobs(f.sink_inputs);
  k.push_back(text_knob("endpoint", f.endpoint));
  k.push_back(edge_ha_knob(f.ha));
  k.push_back(unless_empty(text_knob("standby_endpoint", f.standby_endpoint)));
  return k;
}

std::vector<Knob> operator_type_knobs(OperatorSpec& o, OperatorKind kind) {
  switch (kind) {
    case OperatorKind::filter: return {filter_where_knob(o)};
    case OperatorKind::map:
      return {double_knob("scale", o.map_scale), double_knob("offset", o.map_offset),
              int_knob("key_modulo", o.map_key_modulo)};
    case OperatorKind::union_op: return {};
    case OperatorKind::aggregate:
      return {enum_knob("function", o.function, parse_aggregate_function, allowed_aggregate_functions()),
              int_knob("window_ms", o.window_ms), int_knob("slide_ms", o.slide_ms), group_by_knob(o.group_by_key)};
    case OperatorKind::join:
      return {int_knob("window_ms", o.join_window_ms),
              enum_knob("combine", o.combine, parse_join_combine, allowed_join_combines())};
  }
  return {};
}

// The common keys of an operator, then those of its type.
std::vector<Knob> operator_knobs(OperatorSpec& o, std::string& fragment, std::optional<OperatorKind> kind) {
  std::vector<Knob> k{text_knob("fragment", fragment),
                      enum_knob("type", o.kind, parse_operator_kind, allowed_operator_kinds())};
  for (Knob& i : input_knobs(o.inputs)) k.push_back(std::move(i));
  k.push_back(text_knob("output", o.output));
  if (kind)
    for (Knob& i : operator_type_knobs(o, *kind)) k.push_back(std::move(i));
  return k;
}

constexpr OperatorKind kAllOperatorKinds[] = {OperatorKind::filter, OperatorKind::map, OperatorKind::union_op,
                                              OperatorKind::aggregate, OperatorKind::join};

std::string key_list(const std::vector<Knob>& knobs) {
  std::vector<std::string> keys;
  for (const Knob& k : knobs) keys.push_back(k.key);
  return format_list(keys);
}

// ---- the parser -----------------------------------------------------------------------------

struct Entry {
  std::string key;
  std::string value;
  int line = 0;
};

struct Section {
  std::string kind;  // network, sim, source, fragment, operator, sink
  std::string name;
  std::string header;  // "[source s1]", for messages
  int line = 0;
  std::vector<Entry> entries;

  const Entry* find(const std::string& key) const {
    for (const Entry& e : entries)
      if (e.key == key) return &e;
    return nullptr;
  }
};

const char* const kSectionsAllowed = "[network], [sim], [source NAME], [fragment NAME], [operator NAME], [sink NAME]";

bool valid_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// A comment starts with '#' or ';' at the start of a line or after whitespace; no value of the
// format contains either.
std::string strip_comment(const std::string& line) {
  for (std::size_t i = 0; i < line.size(); ++i)
    if ((line[i] == '#' || line[i] == ';') && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t'))
      return line.substr(0, i);
  return line;
}

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  TopologyLoad run(const std::string& text) {
    if (text.size() > kFileBytesMax) {
      problems_.push_back(file_ + ": the file has " + std::to_string(text.size()) + " bytes, at most " +
                          std::to_string(kFileBytesMax) + " are accepted");
      return TopologyLoad{std::nullopt, problems_};
    }
    lex(text);
    Topology t = interpret();
    for (std::string& p : validate(t)) problems_.push_back(std::move(p));
    TopologyLoad load;
    if (problems_.empty()) load.topology = std::move(t);
    load.problems = problems_;
    return load;
  }

 private:
  std::string at(int line) const { return file_ + ":" + std::to_string(line); }
  void problem(int line, const std::string& what) { problems_.push_back(at(line) + ": " + what); }

  void lex(const std::string& text) {
    std::size_t pos = 0;
    int line_no = 0;
    bool in_bad_section = false;  // entries of a rejected section header are skipped silently
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;
    while (pos <= text.size()) {
      const auto nl = text.find('\n', pos);
      std::string raw = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
      ++line_no;
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      const std::string line = trim(strip_comment(raw));
      if (line.empty()) continue;
      if (line.front() == '[') {
        in_bad_section = !section_header(line, line_no);
        continue;
      }
      const auto eq = line.find('=');
      if (eq == std::string::npos) {
        problem(line_no, "expected 'key = value', a [section] header or a comment, got '" + line + "'");
        continue;
      }
      Entry e{trim(line.substr(0, eq)), trim(line.substr(eq + 1)), line_no};
      if (!valid_key(e.key)) {
        problem(line_no, "'" + e.key + "' is not a key; keys are lower-case letters, digits and '_'");
        continue;
      }
      if (in_bad_section) continue;
      if (sections_.empty()) {
        problem(line_no, "key '" + e.key + "' outside any section; start with a section: " + kSectionsAllowed);
        continue;
      }
      Section& s = sections_.back();
      if (const Entry* first = s.find(e.key)) {
        problem(line_no, "duplicate key '" + e.key + "' in " + s.header + " (first set at " + at(first->line) + ")");
        continue;
      }
      s.entries.push_back(e);
    }
  }

  // false: the header is rejected (and reported).
  bool section_header(const std::string& line, int line_no) {
    if (line.back() != ']') {
      problem(line_no, "a section header must end with ']': '" + line + "'");
      return false;
    }
    const std::string inner = trim(line.substr(1, line.size() - 2));
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < inner.size()) {
      const auto b = inner.find_first_not_of(" \t", i);
      if (b == std::string::npos) break;
      const auto e = inner.find_first_of(" \t", b);
      words.push_back(inner.substr(b, e == std::string::npos ? std::string::npos : e - b));
      i = e == std::string::npos ? inner.size() : e;
    }
    const std::string kind = words.empty() ? "" : words[0];
    const bool unnamed = kind == "network" || kind == "sim";
    const bool named = kind == "source" || kind == "fragment" || kind == "operator" || kind == "sink";
    if (!unnamed && !named) {
      problem(line_no, "unknown section '" + line + "'; allowed sections: " + kSectionsAllowed);
      return false;
    }
    if (unnamed && words.size() != 1) {
      problem(line_no, "'" + line + "': a [" + kind + "] section takes no name");
      return false;
    }
    if (named && words.size() != 2) {
      problem(line_no, "'" + line + "': expected [" + kind + " NAME] with one name");
      return false;
    }
    if (unnamed) {
      for (const Section& s : sections_)
        if (s.kind == kind) {
          problem(line_no, "duplicate section [" + kind + "] (first at " + at(s.line) + ")");
          return false;
        }
    }
    Section s;
    s.kind = kind;
    s.name = named ? words[1] : "";
    s.header = named ? "[" + kind + " " + s.name + "]" : "[" + kind + "]";
    s.line = line_no;
    sections_.push_back(s);
    return true;
  }

  // Applies a section's entries to its knobs; `unknown` reports an entry no knob takes.
  void apply(const Section& s, const std::vector<Knob>& knobs, const std::function<void(const Entry&)>& unknown) {
    for (const Entry& e : s.entries) {
      const Knob* knob = nullptr;
      for (const Knob& k : knobs)
        if (k.key == e.key) knob = &k;
      if (knob == nullptr) {
        unknown(e);
        continue;
      }
      if (auto error = knob->set(e.value)) problem(e.line, s.header + " " + e.key + " = " + e.value + ": " + *error);
    }
  }
  void apply(const Section& s, const std::vector<Knob>& knobs) {
    apply(s, knobs, [&](const Entry& e) {
      problem(e.line, "unknown key '" + e.key + "' in " + s.header + "; allowed keys: " + key_list(knobs));
    });
  }

  void require(const Section& s, const std::vector<const char*>& any_of) {
    for (const char* k : any_of)
      if (s.find(k) != nullptr) return;
    std::string keys;
    for (const char* k : any_of) keys += std::string(keys.empty() ? "'" : " or '") + k + "'";
    problem(s.line, s.header + " is missing the key " + keys);
  }

  void inputs_once(const Section& s) {
    const Entry* one = s.find("input");
    const Entry* many = s.find("inputs");
    if (one && many) problem(std::max(one->line, many->line), s.header + ": give either 'input' or 'inputs', not both");
  }

  FragmentSpec fragment_spec(const Section& s, FragmentKind kind) {
    FragmentSpec f;
    f.name = s.name;
    f.kind = kind;
    f.where = at(s.line);
    return f;
  }

  void operator_section(const Section& s) {
    Pending p;
    p.spec.name = s.name;
    p.spec.where = at(s.line);
    p.line = s.line;
    std::optional<OperatorKind> kind;
    if (const Entry* type = s.find("type")) {
      kind = parse_operator_kind(type->value);
      if (kind) p.spec.kind = *kind;
    }
    const std::vector<Knob> knobs = operator_knobs(p.spec, p.fragment, kind);
    const std::vector<std::string> typed_keys = all_operator_keys();
    apply(s, knobs, [&](const Entry& e) {
      const bool some_type_takes_it = std::find(typed_keys.begin(), typed_keys.end(), e.key) != typed_keys.end();
      if (!kind && some_type_takes_it) return;  // without a valid type only the type is reported
      if (kind && some_type_takes_it) {
        problem(e.line, "key '" + e.key + "' in " + s.header + " does not apply to a " + to_string(*kind) +
                            " operator; allowed keys for a " + to_string(*kind) + ": " + key_list(knobs));
        return;
      }
      problem(e.line, "unknown key '" + e.key + "' in " + s.header + "; allowed keys: " +
                          (kind ? key_list(knobs) : format_list(typed_keys)));
    });
    require(s, {"fragment"});
    require(s, {"type"});
    require(s, {"input", "inputs"});
    require(s, {"output"});
    inputs_once(s);
    if (kind == OperatorKind::filter) require(s, {"where"});
    pending_.push_back(std::move(p));
  }

  // Every key some operator type accepts, common keys first, each once.
  static std::vector<std::string> all_operator_keys() {
    OperatorSpec scratch;
    std::string fragment;
    std::vector<std::string> keys;
    auto note = [&](const std::vector<Knob>& knobs) {
      for (const Knob& k : knobs)
        if (std::find(keys.begin(), keys.end(), k.key) == keys.end()) keys.push_back(k.key);
    };
    note(operator_knobs(scratch, fragment, std::nullopt));
    for (OperatorKind k : kAllOperatorKinds) note(operator_type_knobs(scratch, k));
    return keys;
  }

  Topology interpret() {
    Topology t;
    t.source_file = file_;
    t.settings.where = file_;
    t.sim.where = file_;
    for (const Section& s : sections_) {
      if (s.kind == "network") {
        t.settings.where = at(s.line);
        apply(s, network_knobs(t));
      } else if (s.kind == "sim") {
        t.sim.where = at(s.line);
        apply(s, sim_knobs(t.sim));
      } else if (s.kind == "source") {
        FragmentSpec f = fragment_spec(s, FragmentKind::source);
        apply(s, source_knobs(f));
        require(s, {"stream"});
        t.fragments.push_back(std::move(f));
      } else if (s.kind == "fragment") {
        FragmentSpec f = fragment_spec(s, FragmentKind::operators);
        apply(s, fragment_knobs(f));
        t.fragments.push_back(std::move(f));
      } else if (s.kind == "sink") {
        FragmentSpec f = fragment_spec(s, FragmentKind::sink);
        apply(s, sink_knobs(f));
        require(s, {"input", "inputs"});
        inputs_once(s);
        t.fragments.push_back(std::move(f));
      } else if (s.kind == "operator") {
        operator_section(s);
      }
    }
    // Operators join their fragment in the order they appear.
    for (Pending& p : pending_) {
      if (p.fragment.empty()) continue;  // reported as missing
      FragmentSpec* target = nullptr;
      for (FragmentSpec& f : t.fragments)
        if (f.name == p.fragment && target == nullptr) target = &f;
      if (target == nullptr) {
        problem(p.line, "[operator " + p.spec.name + "] fragment = " + p.fragment + ": no [fragment " + p.fragment +
                            "] section defines it");
        continue;
      }
      if (target->kind != FragmentKind::operators) {
        problem(p.line, "[operator " + p.spec.name + "] fragment = " + p.fragment + ": that is a " + to_string(target->kind) +
                            "; operators belong to a [fragment NAME] section");
        continue;
      }
      target->operators.push_back(std::move(p.spec));
    }
    return t;
  }

  struct Pending {
    OperatorSpec spec;
    std::string fragment;
    int line = 0;
  };

  std::string file_;
  std::vector<Section> sections_;
  std::vector<Pending> pending_;
  std::vector<std::string> problems_;
};

void write_section(std::string& out, const std::string& header, const std::vector<Knob>& knobs) {
  out += "\n" + header + "\n";
  for (const Knob& k : knobs) {
    auto v = k.get();
    if (!v) continue;
    out += k.key + (v->empty() ? " =" : " = " + *v) + "\n";
  }
}

}  // namespace

TopologyLoad parse_topology(const std::string& text, const std::string& file_name) {
  return Parser(file_name).run(text);
}

TopologyLoad load_topology_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return TopologyLoad{std::nullopt, {"cannot open " + path + ": " + std::strerror(errno)}};
  std::string text;
  char buf[65536];
  std::size_t n = 0;
  bool too_big = false;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
    if (text.size() > kFileBytesMax) {
      too_big = true;
      break;
    }
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return TopologyLoad{std::nullopt, {"cannot read " + path}};
  if (too_big)
    return TopologyLoad{std::nullopt,
                        {path + ": larger than " + std::to_string(kFileBytesMax) + " bytes; is this a topology file?"}};
  return parse_topology(text, path);
}

std::string write_topology(const Topology& topology) {
  Topology t = topology;  // the knob tables bind to mutable fields
  std::string out = "# hapair topology '" + t.name + "': the effective configuration, every knob written out.\n";
  out += "# Format: docs/TOPOLOGY.md.\n";
  write_section(out, "[network]", network_knobs(t));
  write_section(out, "[sim]", sim_knobs(t.sim));
  for (FragmentSpec& f : t.fragments) {
    switch (f.kind) {
      case FragmentKind::source: write_section(out, "[source " + f.name + "]", source_knobs(f)); break;
      case FragmentKind::sink: write_section(out, "[sink " + f.name + "]", sink_knobs(f)); break;
      case FragmentKind::operators:
        write_section(out, "[fragment " + f.name + "]", fragment_knobs(f));
        for (OperatorSpec& o : f.operators) {
          std::string fragment = f.name;
          write_section(out, "[operator " + o.name + "]", operator_knobs(o, fragment, o.kind));
        }
        break;
    }
  }
  return out;
}

std::vector<std::string> apply_overrides(Topology& topology, const RunOverrides& overrides) {
  if (overrides.ha) {
    topology.settings.ha = *overrides.ha;
    for (FragmentSpec& f : topology.fragments)
      if (f.kind == FragmentKind::operators) f.ha.reset();
  }
  if (overrides.duration_s) topology.settings.duration_s = *overrides.duration_s;
  if (overrides.rate_tps)
    for (FragmentSpec& f : topology.fragments)
      if (f.kind == FragmentKind::source) f.source.rate_tps = *overrides.rate_tps;
  if (overrides.seed) topology.settings.seed = *overrides.seed;
  if (overrides.operator_cost_us_per_tuple) topology.settings.operator_cost_us_per_tuple = *overrides.operator_cost_us_per_tuple;
  if (overrides.detector) topology.settings.detector = *overrides.detector;
  std::vector<std::string> problems = validate(topology);
  const bool any = overrides.ha || overrides.duration_s || overrides.rate_tps || overrides.seed ||
                   overrides.operator_cost_us_per_tuple || overrides.detector;
  if (any)
    for (std::string& p : problems) p += " (after the command-line overrides)";
  return problems;
}

}  // namespace hapair
