// The topology file format (docs/TOPOLOGY.md): TOML, parsed by toml++ (config/toml_file.h), read
// through knob tables that the writer shares, so that every key written is a key read back and
// the round trip is exact.
#include "config/topology_file.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <system_error>
#include <tuple>

#include "config/builtin_networks.h"
#include "config/topology_toml.h"
#include "config/toml_file.h"
#include "protocols/plan.h"

namespace hapair {
namespace {

// ---- values ---------------------------------------------------------------------------------

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// A whole string as a double; a leading '+' is allowed. Locale-independent (unlike strtod).
std::optional<double> parse_double(const std::string& s) {
  double v{};
  const char* first = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr != last || first == last) return std::nullopt;
  return v;
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

std::optional<double> number_of(const toml::node& n) {
  if (auto i = n.as_integer()) return static_cast<double>(i->get());
  if (auto f = n.as_floating_point()) return f->get();
  return std::nullopt;
}
std::optional<std::string> string_of(const toml::node& n) {
  if (auto s = n.as_string()) return s->get();
  return std::nullopt;
}

// ---- knobs: one key of a table, how to read it and how to write it -------------------------

using SetResult = std::optional<std::string>;  // nullopt: accepted; else what was expected

struct Knob {
  std::string key;
  std::function<std::optional<std::string>()> get;  // TOML text of the value; nullopt: not written
  std::function<SetResult(const toml::node&)> set;
};

template <typename T, typename Read, typename Format>
Knob make_knob(std::string key, T& field, Read read, Format format, std::string expected) {
  return Knob{std::move(key), [&field, format] { return std::optional<std::string>(format(field)); },
              [&field, read, expected](const toml::node& n) -> SetResult {
                auto v = read(n);
                if (!v) return expected;
                field = *v;
                return std::nullopt;
              }};
}

Knob int_knob(std::string key, std::int64_t& field) {
  return make_knob(
      std::move(key), field,
      [](const toml::node& n) -> std::optional<std::int64_t> {
        if (auto i = n.as_integer()) return i->get();
        return std::nullopt;
      },
      [](std::int64_t v) { return std::to_string(v); }, "expected a whole number, like 100");
}
// TOML integers stop at 2^63-1; a larger value (a chaos case's seed) is a quoted string of digits.
Knob uint_knob(std::string key, std::uint64_t& field) {
  return make_knob(
      std::move(key), field,
      [](const toml::node& n) -> std::optional<std::uint64_t> {
        if (auto i = n.as_integer()) {
          if (i->get() < 0) return std::nullopt;
          return static_cast<std::uint64_t>(i->get());
        }
        const auto s = string_of(n);
        if (!s || s->empty() || !std::all_of(s->begin(), s->end(), [](char c) { return c >= '0' && c <= '9'; }))
          return std::nullopt;
        std::uint64_t v = 0;
        auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
        if (ec != std::errc() || ptr != s->data() + s->size()) return std::nullopt;
        return v;
      },
      [](std::uint64_t v) {
        const std::string digits = std::to_string(v);
        return v > static_cast<std::uint64_t>(INT64_MAX) ? toml_string(digits) : digits;
      },
      "expected a whole number from 0 to 2^64-1, like 42 (above 2^63-1 in quotes: \"18446744073709551615\")");
}
Knob double_knob(std::string key, double& field) {
  return make_knob(std::move(key), field, number_of, toml_number, "expected a number, like 2000, 0.5 or 1.25e9");
}
Knob bool_knob(std::string key, bool& field) {
  return make_knob(
      std::move(key), field,
      [](const toml::node& n) -> std::optional<bool> {
        if (auto b = n.as_boolean()) return b->get();
        return std::nullopt;
      },
      [](bool v) { return std::string(v ? "true" : "false"); }, "expected true or false");
}
Knob text_knob(std::string key, std::string& field) {
  return make_knob(std::move(key), field, string_of, [](const std::string& s) { return toml_string(s); },
                   "expected a string in quotes, like \"text\"");
}
template <typename E>
Knob enum_knob(std::string key, E& field, std::optional<E> (*parse)(const std::string&), const std::string& allowed) {
  return make_knob(
      std::move(key), field,
      [parse](const toml::node& n) -> std::optional<E> {
        auto s = string_of(n);
        if (!s) return std::nullopt;
        return parse(*s);
      },
      [](E v) { return toml_string(to_string(v)); }, "unknown value; allowed values: " + allowed);
}

// `ha` of a processing fragment: "default" leaves it to the network's `ha`.
Knob fragment_ha_knob(std::optional<HaMode>& field) {
  auto get = [&field]() -> std::optional<std::string> { return toml_string(field ? to_string(*field) : "default"); };
  auto set = [&field](const toml::node& n) -> SetResult {
    const auto s = string_of(n);
    if (s && *s == "default") {
      field.reset();
      return std::nullopt;
    }
    const auto mode = s ? parse_ha_mode(*s) : std::nullopt;
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
    return toml_string(to_string(*field));
  };
  return k;
}
Knob unless_empty(Knob k) {
  auto get = k.get;
  k.get = [get]() -> std::optional<std::string> {
    auto v = get();
    if (v && *v == "\"\"") return std::nullopt;
    return v;
  };
  return k;
}

// A knob written only while `written()` holds (reading it is always allowed).
Knob written_if(Knob k, std::function<bool()> written) {
  auto get = k.get;
  k.get = [get, written]() -> std::optional<std::string> {
    if (!written()) return std::nullopt;
    return get();
  };
  return k;
}

// spike_every_s, spike_length_s, spike_factor, spike_first_s: written only when a source has
// spikes, so every other source's file reads as it did.
std::vector<Knob> spike_knobs(RateSpikes& sp) {
  auto on = [&sp] { return sp != RateSpikes{}; };
  return {written_if(double_knob("spike_every_s", sp.every_s), on), written_if(double_knob("spike_length_s", sp.length_s), on),
          written_if(double_knob("spike_factor", sp.factor), on), written_if(double_knob("spike_first_s", sp.first_s), on)};
}

// input = "s" for one stream, inputs = ["a", "b"] for several; both read into the same list.
std::vector<Knob> input_knobs(std::vector<std::string>& field) {
  auto one = [&field](const toml::node& n) -> SetResult {
    auto s = string_of(n);
    if (!s || s->empty()) return std::string("expected a stream name in quotes, like \"raw\"");
    field = {*s};
    return std::nullopt;
  };
  auto many = [&field](const toml::node& n) -> SetResult {
    const std::string expected = "expected a list of stream names, like [\"a\", \"b\"]";
    const toml::array* a = n.as_array();
    if (a == nullptr || a->empty()) return expected;
    std::vector<std::string> items;
    for (const toml::node& item : *a) {
      auto s = string_of(item);
      if (!s || s->empty()) return expected;
      items.push_back(*s);
    }
    field = items;
    return std::nullopt;
  };
  return {Knob{"input",
               [&field]() -> std::optional<std::string> {
                 if (field.size() != 1) return std::nullopt;
                 return toml_string(field.front());
               },
               one},
          Knob{"inputs",
               [&field]() -> std::optional<std::string> {
                 if (field.size() == 1) return std::nullopt;
                 return toml_string_array(field);
               },
               many}};
}

Knob values_knob(ValueDistribution& field) {
  const std::string expected = "expected \"uniform(MIN, MAX)\", \"normal(MEAN, STDDEV)\" or \"exponential(MEAN)\"";
  auto get = [&field]() -> std::optional<std::string> {
    std::string out = std::string(to_string(field.kind)) + "(" + toml_number(field.a);
    if (field.kind != DistributionKind::exponential) out += ", " + toml_number(field.b);
    return toml_string(out + ")");
  };
  auto set = [&field, expected](const toml::node& n) -> SetResult {
    const auto text = string_of(n);
    if (!text) return expected;
    const std::string s = trim(*text);
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

// where = "FIELD OP NUMBER", e.g. "value < 80".
Knob filter_where_knob(OperatorSpec& o) {
  auto get = [&o]() -> std::optional<std::string> {
    const std::string modulo = o.filter_modulo > 0 ? " % " + std::to_string(o.filter_modulo) : "";
    return toml_string(std::string(to_string(o.filter_field)) + modulo + " " + to_string(o.filter_op) + " " +
                       toml_number(o.filter_constant));
  };
  auto set = [&o](const toml::node& n) -> SetResult {
    const std::string expected = "expected \"FIELD OP NUMBER\" or \"FIELD % WHOLE OP NUMBER\", like \"value < 80\" or "
                                 "\"key % 123 == 0\" (fields: " + allowed_fields() + "; operators: " + allowed_compare_ops() + ")";
    const auto text = string_of(n);
    if (!text) return expected;
    const std::string s = trim(*text);
    std::size_t i = 0;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    const std::string field_text = s.substr(0, i);
    std::size_t j = i;
    while (j < s.size() && s[j] == ' ') ++j;
    std::int64_t modulo = 0;
    if (j < s.size() && s[j] == '%') {
      ++j;
      while (j < s.size() && s[j] == ' ') ++j;
      std::size_t m = j;
      while (m < s.size() && std::isdigit(static_cast<unsigned char>(s[m]))) ++m;
      const auto value = parse_double(s.substr(j, m - j));
      if (!value || *value < 1 || *value > 1e15) return "the modulo '" + s.substr(j, m - j) + "' is not a whole number >= 1; " + expected;
      modulo = static_cast<std::int64_t>(*value);
      j = m;
      while (j < s.size() && s[j] == ' ') ++j;
    }
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
    o.filter_modulo = modulo;
    return std::nullopt;
  };
  return Knob{"where", get, set};
}

Knob group_by_knob(bool& group_by_key) {
  return make_knob(
      "group_by", group_by_key,
      [](const toml::node& n) -> std::optional<bool> {
        const auto s = string_of(n);
        if (s && *s == "key") return true;
        if (s && *s == "none") return false;
        return std::nullopt;
      },
      [](bool v) { return toml_string(v ? "key" : "none"); }, "unknown value; allowed values: key, none");
}

// A setting only some approaches read (their traits name it) is written out when the network or
// a fragment uses one of them, or when it is not its default (so it reads back the same), and
// otherwise not: the other networks' files stay as they were.
Knob approach_only(const Topology& t, Knob k, std::function<bool()> is_default) {
  const std::string key = k.key;
  auto used = [&t, key] {
    const ApproachCatalog& c = ApproachCatalog::builtin();
    auto reads = [&](HaMode m) { return c.find(m) != nullptr && c.of(m).reads_setting(key); };
    if (reads(t.settings.ha)) return true;
    for (const FragmentSpec& f : t.fragments)
      if (f.ha && reads(*f.ha)) return true;
    return false;
  };
  k.get = [get = k.get, used, is_default]() -> std::optional<std::string> {
    if (is_default() && !used()) return std::nullopt;
    return get();
  };
  return k;
}

Knob approach_knob(const Topology& t, std::string key, std::int64_t& field, std::int64_t default_value) {
  return approach_only(t, int_knob(key, field), [&field, default_value] { return field == default_value; });
}

std::vector<Knob> network_knobs(Topology& t) {
  Settings& s = t.settings;
  return {text_knob("name", t.name),
          uint_knob("seed", s.seed),
          double_knob("duration_s", s.duration_s),
          enum_knob("ha", s.ha, parse_ha_mode, allowed_ha_modes()),
          // Written only when not 1, so the files of one standby per fragment read as they did.
          written_if(int_knob("standbys", s.standbys), [&s] { return s.standbys != Settings{}.standbys; }),
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
          int_knob("retransmit_timeout_ms", s.retransmit_timeout_ms),
          int_knob("boundary_interval_ms", s.boundary_interval_ms),
          enum_knob("trace_level", s.trace_level, parse_trace_level, allowed_trace_levels()),
          approach_knob(t, "hybrid_stall_ms", s.hybrid_stall_ms, Settings{}.hybrid_stall_ms),
          approach_knob(t, "hybrid_input_queue_tuples", s.hybrid_input_queue_tuples, Settings{}.hybrid_input_queue_tuples),
          approach_knob(t, "hybrid_latency_ms", s.hybrid_latency_ms, Settings{}.hybrid_latency_ms),
          approach_knob(t, "hybrid_calm_ms", s.hybrid_calm_ms, Settings{}.hybrid_calm_ms),
          approach_knob(t, "hybrid_switch_at_ms", s.hybrid_switch_at_ms, Settings{}.hybrid_switch_at_ms),
          approach_knob(t, "checkpoints_retained", s.checkpoints_retained, Settings{}.checkpoints_retained),
          approach_only(t, enum_knob("failover", s.failover, parse_failover_mode, allowed_failover_modes()),
                        [&s] { return s.failover == Settings{}.failover; }),
          approach_only(t,
                        enum_knob("checkpoint_alignment", s.checkpoint_alignment, parse_checkpoint_alignment,
                                  allowed_checkpoint_alignments()),
                        [&s] { return s.checkpoint_alignment == Settings{}.checkpoint_alignment; }),
          approach_only(t, bool_knob("local_recovery", s.local_recovery),
                        [&s] { return s.local_recovery == Settings{}.local_recovery; })};
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

// [links]: the emulated links' defaults (docs/LINKS.md).
std::vector<Knob> link_knobs(LinkSettings& s) {
  return {double_knob("latency_ms", s.latency_ms),
          double_knob("jitter_ms", s.jitter_ms),
          double_knob("loss_ratio", s.loss_ratio),
          double_knob("duplication_ratio", s.duplication_ratio),
          double_knob("bandwidth_bytes_per_s", s.bandwidth_bytes_per_s),
          int_knob("queue_messages_max", s.queue_messages_max),
          int_knob("queue_bytes_max", s.queue_bytes_max)};
}

// A key of a [[link]] that keeps the earlier value when not given, and is written only when given.
template <typename T>
Knob optional_knob(Knob (*plain)(std::string, T&), std::string key, std::optional<T>& field) {
  auto scratch = std::make_shared<T>();
  Knob inner = plain(key, *scratch);
  Knob k;
  k.key = std::move(key);
  k.get = [&field, scratch, get = inner.get]() -> std::optional<std::string> {
    if (!field) return std::nullopt;
    *scratch = *field;
    return get();
  };
  k.set = [&field, scratch, set = inner.set](const toml::node& n) -> SetResult {
    if (auto error = set(n)) return error;
    field = *scratch;
    return std::nullopt;
  };
  return k;
}

// both_ways = false is written; the default true is not.
Knob both_ways_knob(bool& field) {
  Knob k = bool_knob("both_ways", field);
  k.get = [&field]() -> std::optional<std::string> {
    if (field) return std::nullopt;
    return std::string("false");
  };
  return k;
}

// [[link]]: which messages, and the keys it overrides.
std::vector<Knob> link_spec_knobs(LinkSpec& l) {
  LinkOverride& o = l.settings;
  return {unless_empty(text_knob("from", l.from)),
          unless_empty(text_knob("to", l.to)),
          unless_empty(text_knob("from_host", l.from_host)),
          unless_empty(text_knob("to_host", l.to_host)),
          both_ways_knob(l.both_ways),
          optional_knob(double_knob, "latency_ms", o.latency_ms),
          optional_knob(double_knob, "jitter_ms", o.jitter_ms),
          optional_knob(double_knob, "loss_ratio", o.loss_ratio),
          optional_knob(double_knob, "duplication_ratio", o.duplication_ratio),
          optional_knob(double_knob, "bandwidth_bytes_per_s", o.bandwidth_bytes_per_s),
          optional_knob(int_knob, "queue_messages_max", o.queue_messages_max),
          optional_knob(int_knob, "queue_bytes_max", o.queue_bytes_max)};
}

// [[switch]]: a live switch of a fragment's approach (docs/TOPOLOGY.md "Live switching").
std::vector<Knob> switch_knobs(SwitchSpec& w) {
  return {text_knob("fragment", w.fragment), enum_knob("to", w.to, parse_ha_mode, allowed_ha_modes()),
          double_knob("at_s", w.at_s)};
}

// generator = "nexmark" | "ysb"; a uniform source (the default) does not write it, so the files
// written before there were generators stay as they were.
Knob generator_knob(SourceGeneratorKind& field) {
  Knob k = enum_knob("generator", field, parse_source_generator_kind, allowed_source_generator_kinds());
  auto get = k.get;
  k.get = [&field, get]() -> std::optional<std::string> {
    if (field == SourceGeneratorKind::uniform) return std::nullopt;
    return get();
  };
  return k;
}

// fields = "KEY,VALUE": the two event fields projected into (key, value). Which names a
// generator offers is validate()'s to check, with the allowed ones of the source's event kind.
Knob fields_knob(std::string& key_field, std::string& value_field) {
  auto get = [&key_field, &value_field]() -> std::optional<std::string> { return toml_string(key_field + "," + value_field); };
  auto set = [&key_field, &value_field](const toml::node& n) -> SetResult {
    const std::string expected = "expected \"KEY_FIELD,VALUE_FIELD\", two field names, like \"auction,price\"";
    const auto text = string_of(n);
    if (!text) return expected;
    auto items = parse_list(*text);
    if (!items || items->size() != 2) return expected;
    key_field = (*items)[0];
    value_field = (*items)[1];
    return std::nullopt;
  };
  return Knob{"fields", get, set};
}

// host = "h1", standby_host = "h2": pins for runs on several hosts (docs/HOSTS.md); written only
// when set, so the effective config of a run on one host reads as it always did.
std::vector<Knob> host_knobs(FragmentSpec& f) {
  return {unless_empty(text_knob("host", f.host)), unless_empty(text_knob("standby_host", f.standby_host))};
}

constexpr SourceGeneratorKind kAllGenerators[] = {SourceGeneratorKind::uniform, SourceGeneratorKind::nexmark,
                                                  SourceGeneratorKind::ysb};

// The keys of a source with the given generator: the uniform source's keys in their historical
// order (generator last but the node's keys), a nexmark or ysb source's with generator first.
std::vector<Knob> source_knobs(FragmentSpec& f, SourceGeneratorKind generator) {
  SourceSpec& s = f.source;
  std::vector<Knob> k{text_knob("name", f.name), text_knob("stream", s.stream)};
  switch (generator) {
    case SourceGeneratorKind::uniform:
      k.push_back(double_knob("rate_tps", s.rate_tps));
      k.push_back(int_knob("key_count", s.key_count));
      k.push_back(values_knob(s.values));
      k.push_back(bool_knob("integer_values", s.integer_values));
      k.push_back(generator_knob(s.generator));
      for (Knob& x : spike_knobs(s.spikes)) k.push_back(std::move(x));
      break;
    case SourceGeneratorKind::nexmark: {
      NexmarkSpec& n = s.nexmark;
      k.push_back(generator_knob(s.generator));
      k.push_back(double_knob("events_per_s", n.events_per_s));
      k.push_back(enum_knob("event", n.event, parse_nexmark_event, allowed_nexmark_events()));
      k.push_back(fields_knob(n.key_field, n.value_field));
      k.push_back(int_knob("hot_auction_ratio", n.hot_auction_ratio));
      k.push_back(int_knob("hot_sellers_ratio", n.hot_sellers_ratio));
      k.push_back(int_knob("hot_bidders_ratio", n.hot_bidders_ratio));
      k.push_back(int_knob("num_in_flight_auctions", n.num_in_flight_auctions));
      k.push_back(int_knob("num_active_people", n.num_active_people));
      break;
    }
    case SourceGeneratorKind::ysb:
      k.push_back(generator_knob(s.generator));
      k.push_back(double_knob("rate_tps", s.rate_tps));
      k.push_back(int_knob("campaigns", s.ysb.campaigns));
      k.push_back(int_knob("ads_per_campaign", s.ysb.ads_per_campaign));
      k.push_back(uint_knob("campaign_seed", s.ysb.campaign_seed));
      k.push_back(fields_knob(s.ysb.key_field, s.ysb.value_field));
      for (Knob& x : spike_knobs(s.spikes)) k.push_back(std::move(x));
      break;
  }
  k.push_back(text_knob("endpoint", f.endpoint));
  k.push_back(edge_ha_knob(f.ha));
  k.push_back(unless_empty(text_knob("standby_endpoint", f.standby_endpoint)));
  for (Knob& h : host_knobs(f)) k.push_back(std::move(h));
  return k;
}

// The operators of a fragment are its [[fragment.operator]] tables, read apart (kOperatorsKey).
constexpr const char* kOperatorsKey = "operator";

std::vector<Knob> fragment_knobs(FragmentSpec& f) {
  std::vector<Knob> k{text_knob("name", f.name), fragment_ha_knob(f.ha), text_knob("endpoint", f.endpoint),
                      text_knob("standby_endpoint", f.standby_endpoint),
                      written_if(int_knob("standbys", f.standbys), [&f] { return f.standbys != 0; })};
  for (Knob& h : host_knobs(f)) k.push_back(std::move(h));
  return k;
}

std::vector<Knob> sink_knobs(FragmentSpec& f) {
  std::vector<Knob> k{text_knob("name", f.name)};
  for (Knob& i : input_knobs(f.sink_inputs)) k.push_back(std::move(i));
  k.push_back(text_knob("endpoint", f.endpoint));
  k.push_back(edge_ha_knob(f.ha));
  k.push_back(unless_empty(text_knob("standby_endpoint", f.standby_endpoint)));
  for (Knob& h : host_knobs(f)) k.push_back(std::move(h));
  return k;
}

// A knob an operator type declares in its traits (OperatorParam), kept in OperatorSpec::params: a
// name among its choices, or a number (whole where it must be). Range checks are validate()'s.
Knob param_knob(OperatorSpec& o, const OperatorParam& p) {
  auto get = [&o, p]() -> std::optional<std::string> {
    const auto it = o.params.find(p.name);
    const double v = it != o.params.end() ? it->second : p.default_value;
    if (!p.choices.empty()) {
      const auto i = static_cast<std::size_t>(v);
      return toml_string(i < p.choices.size() ? p.choices[i] : "?");
    }
    return p.whole ? std::to_string(static_cast<std::int64_t>(v)) : toml_number(v);
  };
  auto set = [&o, p](const toml::node& n) -> SetResult {
    if (!p.choices.empty()) {
      const auto text = string_of(n);
      for (std::size_t i = 0; text && i < p.choices.size(); ++i)
        if (*text == p.choices[i]) {
          o.params[p.name] = static_cast<double>(i);
          return std::nullopt;
        }
      return "unknown value; allowed values: " + format_list(p.choices);
    }
    if (p.whole) {
      const auto i = n.as_integer();
      if (!i) return std::string("expected a whole number, like 10");
      o.params[p.name] = static_cast<double>(i->get());
      return std::nullopt;
    }
    const auto v = number_of(n);
    if (!v) return std::string("expected a number, like 2000, 0.5 or 1.25e9");
    o.params[p.name] = *v;
    return std::nullopt;
  };
  return Knob{p.name, get, set};
}

std::vector<Knob> operator_type_knobs(OperatorSpec& o, OperatorKind kind) {
  // Operator types that declare their knobs in their traits need no code here.
  if (const OperatorTraits* t = OperatorCatalog::builtin().find(kind); t != nullptr && !t->params.empty()) {
    std::vector<Knob> knobs;
    for (const OperatorParam& p : t->params) knobs.push_back(param_knob(o, p));
    return knobs;
  }
  switch (kind) {
    case OperatorKind::filter: return {filter_where_knob(o)};
    case OperatorKind::map:
      return {double_knob("scale", o.map_scale), double_knob("offset", o.map_offset),
              int_knob("key_modulo", o.map_key_modulo)};
    case OperatorKind::union_op: return {enum_knob("order", o.union_order, parse_union_order, allowed_union_orders())};
    case OperatorKind::aggregate:
      return {enum_knob("function", o.function, parse_aggregate_function, allowed_aggregate_functions()),
              int_knob("window_ms", o.window_ms), int_knob("slide_ms", o.slide_ms), group_by_knob(o.group_by_key)};
    case OperatorKind::join:
      return {int_knob("window_ms", o.join_window_ms),
              enum_knob("combine", o.combine, parse_join_combine, allowed_join_combines())};
    default: return {};  // no knobs of its own
  }
}

// The common keys of an operator, then those of its type.
std::vector<Knob> operator_knobs(OperatorSpec& o, std::optional<OperatorKind> kind) {
  std::vector<Knob> k{text_knob("name", o.name), enum_knob("type", o.kind, parse_operator_kind, allowed_operator_kinds())};
  for (Knob& i : input_knobs(o.inputs)) k.push_back(std::move(i));
  k.push_back(text_knob("output", o.output));
  if (kind)
    for (Knob& i : operator_type_knobs(o, *kind)) k.push_back(std::move(i));
  return k;
}


std::string key_list(const std::vector<Knob>& knobs) {
  std::vector<std::string> keys;
  for (const Knob& k : knobs) keys.push_back(k.key);
  return format_list(keys);
}

// ---- the reader -----------------------------------------------------------------------------

const char* const kTablesAllowed =
    "[network], [sim], [links], [[link]], [[source]], [[fragment]] (with its [[fragment.operator]]), [[sink]], [[switch]], "
    "[placement] (written by the launcher)";

class Reader {
 public:
  explicit Reader(ConfigProblems& problems) : problems_(problems) {}

  Topology read(const toml::table& doc, const std::vector<std::string>& read_elsewhere) {
    Topology t;
    t.source_file = problems_.file();
    t.settings.where = problems_.file();
    t.sim.where = problems_.file();
    t.links.where = problems_.file();
    std::vector<std::pair<int, FragmentSpec>> fragments;  // with their lines: the file's order
    for (auto&& [key, node] : doc) {
      const std::string k(key.str());
      if (k == "links") {
        const toml::table* table = node.as_table();
        if (table == nullptr) {
          problems_.add(line_of(key), "'links' must be a table: write [links] and its keys below it (one link's own keys go in [[link]])");
          continue;
        }
        t.links.where = problems_.at(*table);
        apply(*table, "[links]", link_knobs(t.links.defaults));
      } else if (k == "link") {
        for (const toml::table* table : tables_of(key, node, k)) {
          LinkSpec& l = t.links.links.emplace_back();
          l.where = problems_.at(*table);
          apply(*table, "[[link]]", link_spec_knobs(l));
        }
      } else if (k == "switch") {
        for (const toml::table* table : tables_of(key, node, k)) {
          SwitchSpec& w = t.switches.emplace_back();
          w.where = problems_.at(*table);
          apply(*table, "[[switch]]", switch_knobs(w));
        }
      } else if (k == "placement") {
        // Written by the launcher of a run on several hosts: node = "host" (docs/HOSTS.md).
        const toml::table* table = node.as_table();
        if (table == nullptr) {
          problems_.add(line_of(key), "'placement' must be a table: write [placement] and NODE = \"HOST\" below it");
          continue;
        }
        for (auto&& [name, host] : *table) {
          if (const auto text = host.value<std::string>()) t.placement[std::string(name.str())] = *text;
          else problems_.add(line_of(name), "placement of '" + std::string(name.str()) + "' must be a host name in quotes");
        }
      } else if (k == "network" || k == "sim") {
        const toml::table* table = node.as_table();
        if (table == nullptr) {
          problems_.add(line_of(key), "'" + k + "' must be a table: write [" + k + "] and its keys below it");
          continue;
        }
        if (k == "network") {
          t.settings.where = problems_.at(*table);
          apply(*table, "[network]", network_knobs(t));
        } else {
          t.sim.where = problems_.at(*table);
          apply(*table, "[sim]", sim_knobs(t.sim));
        }
      } else if (k == "source" || k == "fragment" || k == "sink") {
        const FragmentKind kind = k == "source" ? FragmentKind::source : k == "sink" ? FragmentKind::sink : FragmentKind::operators;
        for (const toml::table* table : tables_of(key, node, k))
          fragments.emplace_back(line_of(*table), fragment(*table, kind));
      } else if (std::find(read_elsewhere.begin(), read_elsewhere.end(), k) == read_elsewhere.end()) {
        problems_.add(line_of(key), std::string(node.is_table() || node.is_array_of_tables() ? "unknown table '" : "unknown key '") +
                                        k + "' at the top of the file; allowed tables: " + kTablesAllowed +
                                        (k == "experiment" ? " (an experiment file runs with hapair experiment NAME --config FILE)" : ""));
      }
    }
    // Fragments keep the order in which they are written, whatever their kind.
    std::stable_sort(fragments.begin(), fragments.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& f : fragments) t.fragments.push_back(std::move(f.second));
    return t;
  }

 private:
  // The tables of an array of tables ([[k]]); anything else is reported.
  std::vector<const toml::table*> tables_of(const toml::key& key, const toml::node& node, const std::string& k) {
    std::vector<const toml::table*> out;
    const toml::array* array = node.as_array();
    if (array != nullptr)
      for (const toml::node& item : *array)
        if (const toml::table* table = item.as_table()) out.push_back(table);
    if (array == nullptr || out.size() != array->size())
      problems_.add(line_of(key), "'" + k + "' must be an array of tables: write each one as [[" + k + "]] and its keys below it");
    return out;
  }

  // Applies a table's keys to its knobs; `unknown` reports a key no knob takes.
  void apply(const toml::table& table, const std::string& label, const std::vector<Knob>& knobs,
             const std::function<void(const std::string&, int)>& unknown) {
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      const Knob* knob = nullptr;
      for (const Knob& candidate : knobs)
        if (candidate.key == k) knob = &candidate;
      if (knob == nullptr) {
        unknown(k, line_of(key));
        continue;
      }
      if (auto error = knob->set(node)) problems_.add(line_of(key), label + " " + k + " = " + toml_text(node) + ": " + *error);
    }
  }
  void apply(const toml::table& table, const std::string& label, const std::vector<Knob>& knobs) {
    apply(table, label, knobs, [&](const std::string& k, int line) {
      problems_.add(line, "unknown key '" + k + "' in " + label + "; allowed keys: " + key_list(knobs));
    });
  }

  void require(const toml::table& table, const std::string& label, const std::vector<const char*>& any_of) {
    for (const char* k : any_of)
      if (table.contains(k)) return;
    std::string keys;
    for (const char* k : any_of) keys += std::string(keys.empty() ? "'" : " or '") + k + "'";
    problems_.add(table, label + " is missing the key " + keys);
  }

  void inputs_once(const toml::table& table, const std::string& label) {
    const toml::node* one = table.get("input");
    const toml::node* many = table.get("inputs");
    if (one && many) problems_.add(std::max(line_of(*one), line_of(*many)), label + ": give either 'input' or 'inputs', not both");
  }

  // "source 's'", or "[[source]]" (with its line) while the name is unknown.
  static std::string label_of(const toml::table& table, const std::string& kind) {
    const toml::node* n = table.get("name");
    const auto name = n != nullptr ? string_of(*n) : std::nullopt;
    if (!name || name->empty()) return kind == "operator" ? "[[fragment.operator]]" : "[[" + kind + "]]";
    return kind + " '" + *name + "'";
  }

  FragmentSpec fragment(const toml::table& table, FragmentKind kind) {
    FragmentSpec f;
    f.kind = kind;
    f.where = problems_.at(table);
    const std::string label = label_of(table, kind == FragmentKind::operators ? "fragment" : to_string(kind));
    require(table, label, {"name"});
    switch (kind) {
      case FragmentKind::source:
        source_table(table, label, f);
        break;
      case FragmentKind::sink:
        apply(table, label, sink_knobs(f));
        require(table, label, {"input", "inputs"});
        inputs_once(table, label);
        break;
      case FragmentKind::operators: {
        const std::vector<Knob> knobs = fragment_knobs(f);
        apply(table, label, knobs, [&](const std::string& k, int line) {
          if (k == kOperatorsKey) return;
          problems_.add(line, "unknown key '" + k + "' in " + label + "; allowed keys: " + key_list(knobs) +
                                  ", and its operators as [[fragment.operator]]");
        });
        if (const toml::node* ops = table.get(kOperatorsKey)) {
          const toml::key& key = table.find(kOperatorsKey)->first;
          for (const toml::table* op : tables_of(key, *ops, "fragment.operator")) f.operators.push_back(operator_table(*op));
        }
        break;
      }
    }
    return f;
  }

  // A source's keys depend on its generator, read first (as an operator's on its type): a key of
  // another generator is refused naming this one's keys; with an unknown generator only the
  // generator is reported.
  void source_table(const toml::table& table, const std::string& label, FragmentSpec& f) {
    std::optional<SourceGeneratorKind> generator = SourceGeneratorKind::uniform;
    if (const toml::node* g = table.get("generator")) {
      const auto s = string_of(*g);
      generator = s ? parse_source_generator_kind(*s) : std::nullopt;
    }
    const SourceGeneratorKind kind = generator.value_or(SourceGeneratorKind::uniform);
    const std::vector<Knob> knobs = source_knobs(f, kind);
    const std::vector<std::string> generator_keys = all_source_keys();
    const std::string kind_text = std::string("a ") + to_string(kind) + " source";
    // A nexmark source that does not name its fields (or names them wrongly, which is reported)
    // projects its event kind's usual ones.
    if (kind == SourceGeneratorKind::nexmark) {
      NexmarkEvent event = f.source.nexmark.event;
      if (const toml::node* e = table.get("event"))
        if (const auto s = string_of(*e))
          if (const auto parsed = parse_nexmark_event(*s)) event = *parsed;
      std::tie(f.source.nexmark.key_field, f.source.nexmark.value_field) = nexmark_default_fields(event);
    }
    apply(table, label, knobs, [&](const std::string& k, int line) {
      const bool some_generator_takes_it = std::find(generator_keys.begin(), generator_keys.end(), k) != generator_keys.end();
      if (!generator && some_generator_takes_it) return;
      if (some_generator_takes_it) {
        problems_.add(line, "key '" + k + "' in " + label + " does not apply to " + kind_text + " (generator = \"" +
                                to_string(kind) + "\"); allowed keys for " + kind_text + ": " + key_list(knobs));
        return;
      }
      problems_.add(line, "unknown key '" + k + "' in " + label + "; allowed keys: " + key_list(knobs));
    });
    require(table, label, {"stream"});
  }

  // Every key some generator's source accepts, each once.
  static std::vector<std::string> all_source_keys() {
    FragmentSpec scratch;
    std::vector<std::string> keys;
    for (SourceGeneratorKind g : kAllGenerators)
      for (const Knob& k : source_knobs(scratch, g))
        if (std::find(keys.begin(), keys.end(), k.key) == keys.end()) keys.push_back(k.key);
    return keys;
  }

  OperatorSpec operator_table(const toml::table& table) {
    OperatorSpec spec;
    spec.where = problems_.at(table);
    const std::string label = label_of(table, "operator");
    std::optional<OperatorKind> kind;
    if (const toml::node* type = table.get("type")) {
      if (auto s = string_of(*type)) kind = parse_operator_kind(*s);
      if (kind) spec.kind = *kind;
    }
    const std::vector<Knob> knobs = operator_knobs(spec, kind);
    const std::vector<std::string> typed_keys = all_operator_keys();
    apply(table, label, knobs, [&](const std::string& k, int line) {
      const bool some_type_takes_it = std::find(typed_keys.begin(), typed_keys.end(), k) != typed_keys.end();
      if (!kind && some_type_takes_it) return;  // without a valid type only the type is reported
      if (kind && some_type_takes_it) {
        problems_.add(line, "key '" + k + "' in " + label + " does not apply to a " + to_string(*kind) +
                                " operator; allowed keys for a " + to_string(*kind) + ": " + key_list(knobs));
        return;
      }
      problems_.add(line, "unknown key '" + k + "' in " + label + "; allowed keys: " +
                              (kind ? key_list(knobs) : format_list(typed_keys)));
    });
    require(table, label, {"name"});
    require(table, label, {"type"});
    require(table, label, {"input", "inputs"});
    require(table, label, {"output"});
    inputs_once(table, label);
    if (kind == OperatorKind::filter) require(table, label, {"where"});
    return spec;
  }

  // Every key some operator type accepts, common keys first, each once.
  static std::vector<std::string> all_operator_keys() {
    OperatorSpec scratch;
    std::vector<std::string> keys;
    auto note = [&](const std::vector<Knob>& knobs) {
      for (const Knob& k : knobs)
        if (std::find(keys.begin(), keys.end(), k.key) == keys.end()) keys.push_back(k.key);
    };
    note(operator_knobs(scratch, std::nullopt));
    for (const OperatorTraits& t : OperatorCatalog::builtin().all()) note(operator_type_knobs(scratch, t.kind));
    return keys;
  }

  ConfigProblems& problems_;
};

void write_table(std::string& out, const std::string& header, const std::vector<Knob>& knobs) {
  out += "\n" + header + "\n";
  for (const Knob& k : knobs)
    if (auto v = k.get()) out += k.key + " = " + *v + "\n";
}

}  // namespace

TopologyLoad read_topology(const toml::table& doc, const std::string& file_name,
                           const std::vector<std::string>& tables_read_elsewhere) {
  ConfigProblems problems(file_name);
  Topology t = Reader(problems).read(doc, tables_read_elsewhere);
  TopologyLoad load;
  load.problems = problems.take();
  for (std::string& p : validate(t)) load.problems.push_back(std::move(p));
  if (load.problems.empty()) load.topology = std::move(t);
  return load;
}

TopologyLoad parse_topology(const std::string& text, const std::string& file_name) {
  TomlText doc = parse_toml(text, file_name);
  if (!doc.table) return TopologyLoad{std::nullopt, doc.problems};
  return read_topology(*doc.table, file_name, {});
}

TopologyLoad load_topology_file(const std::string& path) {
  std::string problem;
  // A built-in network by name ("ysb", "nexmark:q5"), unless a file of that name exists.
  if (path.find('/') == std::string::npos && path.find(".toml") == std::string::npos) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      if (const auto text = builtin_network_text(path)) return parse_topology(std::string(*text), "built-in network " + path);
  }
  const auto text = read_config_file(path, problem);
  if (!text) {
    if (path.find('/') == std::string::npos && path.find(".toml") == std::string::npos)
      problem += " (and no built-in network is called '" + path + "'; built in: " + builtin_network_names() + ")";
    return TopologyLoad{std::nullopt, {problem}};
  }
  return parse_topology(*text, path);
}

std::string write_topology(const Topology& topology) {
  Topology t = topology;  // the knob tables bind to mutable fields
  std::string out = "# hapair topology '" + t.name + "': the effective configuration, every knob written out.\n";
  out += "# Format: docs/TOPOLOGY.md.\n";
  write_table(out, "[network]", network_knobs(t));
  write_table(out, "[sim]", sim_knobs(t.sim));
  // Written only when used, so the effective config of a run without emulation reads as before.
  if (t.links.defaults != LinkSettings{}) write_table(out, "[links]", link_knobs(t.links.defaults));
  for (LinkSpec& l : t.links.links) write_table(out, "[[link]]", link_spec_knobs(l));
  for (SwitchSpec& w : t.switches) write_table(out, "[[switch]]", switch_knobs(w));
  if (!t.placement.empty()) {
    out += "\n[placement]\n";
    for (const auto& [node, host] : t.placement) out += "\"" + node + "\" = \"" + host + "\"\n";
  }
  for (FragmentSpec& f : t.fragments) {
    switch (f.kind) {
      case FragmentKind::source: write_table(out, "[[source]]", source_knobs(f, f.source.generator)); break;
      case FragmentKind::sink: write_table(out, "[[sink]]", sink_knobs(f)); break;
      case FragmentKind::operators:
        write_table(out, "[[fragment]]", fragment_knobs(f));
        for (OperatorSpec& o : f.operators) write_table(out, "[[fragment.operator]]", operator_knobs(o, o.kind));
        break;
    }
  }
  return out;
}

std::vector<std::string> parse_links_option(const std::string& text, LinkSettings& defaults) {
  const std::string label = "--links";
  std::string lines;
  for (char c : text) lines += c == ',' ? '\n' : c;
  TomlText doc = parse_toml(lines, label);
  if (!doc.table)
    return {label + " '" + text + "': expected KEY=VALUE pairs separated by commas, like latency_ms=20,jitter_ms=5,loss_ratio=0.01"};
  std::vector<std::string> problems;
  const std::vector<Knob> knobs = link_knobs(defaults);
  for (auto&& [key, node] : *doc.table) {
    const std::string k(key.str());
    const Knob* knob = nullptr;
    for (const Knob& candidate : knobs)
      if (candidate.key == k) knob = &candidate;
    if (knob == nullptr)
      problems.push_back(label + ": unknown key '" + k + "'; allowed keys: " + key_list(knobs));
    else if (auto error = knob->set(node))
      problems.push_back(label + " " + k + " = " + toml_text(node) + ": " + *error);
  }
  return problems;
}

std::optional<SwitchSpec> parse_switch_option(const std::string& text, std::string& error) {
  const std::string shape = "'" + text + "' is not NODE=APPROACH@SECONDS (e.g. aggregate=active@2.5)";
  const auto eq = text.find('=');
  const auto at = text.rfind('@');
  if (eq == std::string::npos || at == std::string::npos || eq == 0 || at < eq + 2 || at + 1 >= text.size()) {
    error = shape;
    return std::nullopt;
  }
  SwitchSpec s;
  s.fragment = text.substr(0, eq);
  s.where = "--switch " + text;
  const std::string approach = text.substr(eq + 1, at - eq - 1);
  const auto mode = parse_ha_mode(approach);
  if (!mode) {
    error = "'" + text + "': unknown approach '" + approach + "'; live switching allows: " +
            switchable_mode_names(ApproachCatalog::builtin());
    return std::nullopt;
  }
  s.to = *mode;
  const std::string seconds = text.substr(at + 1);
  const char* first = seconds.data();
  const char* last = first + seconds.size();
  const auto [end, ec] = std::from_chars(first, last, s.at_s);
  if (ec != std::errc() || end != last || !std::isfinite(s.at_s)) {
    error = shape;
    return std::nullopt;
  }
  return s;
}

std::vector<std::string> apply_overrides(Topology& topology, const RunOverrides& overrides) {
  if (overrides.links) {
    std::vector<std::string> problems = parse_links_option(*overrides.links, topology.links.defaults);
    if (!problems.empty()) return problems;
  }
  if (overrides.ha) {
    topology.settings.ha = *overrides.ha;
    for (FragmentSpec& f : topology.fragments)
      if (f.kind == FragmentKind::operators) f.ha.reset();
  }
  if (overrides.duration_s) topology.settings.duration_s = *overrides.duration_s;
  if (overrides.rate_tps)
    for (FragmentSpec& f : topology.fragments)
      if (f.kind == FragmentKind::source) set_source_rate_setting(f.source, *overrides.rate_tps);
  if (overrides.seed) topology.settings.seed = *overrides.seed;
  if (overrides.operator_cost_us_per_tuple) topology.settings.operator_cost_us_per_tuple = *overrides.operator_cost_us_per_tuple;
  if (overrides.detector) topology.settings.detector = *overrides.detector;
  if (overrides.trace_level) topology.settings.trace_level = *overrides.trace_level;
  if (overrides.standbys) {
    topology.settings.standbys = *overrides.standbys;
    for (FragmentSpec& f : topology.fragments) f.standbys = 0;
  }
  for (const SwitchSpec& s : overrides.switches) topology.switches.push_back(s);
  std::vector<std::string> problems = validate(topology);
  const bool any = overrides.ha || overrides.duration_s || overrides.rate_tps || overrides.seed ||
                   overrides.operator_cost_us_per_tuple || overrides.detector || overrides.trace_level ||
                   overrides.links || overrides.standbys || !overrides.switches.empty();
  if (any)
    for (std::string& p : problems) p += " (after the command-line overrides)";
  return problems;
}

}  // namespace hapair
