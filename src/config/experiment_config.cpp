#include "config/experiment_config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "config/toml_file.h"
#include "config/topology_file.h"
#include "config/topology_toml.h"
#include "protocols/plan.h"

namespace hapair {
namespace {

constexpr std::int64_t kSeedsMax = 100;
constexpr std::size_t kPointsMax = 64;

bool is_whole(double v) { return std::floor(v) == v && std::fabs(v) < 9e15; }

std::optional<double> finite_number_of(const toml::node& n) {
  if (auto i = n.as_integer()) return static_cast<double>(i->get());
  if (auto f = n.as_floating_point())
    if (std::isfinite(f->get())) return f->get();
  return std::nullopt;
}

template <typename T>
bool known(const std::vector<T>& names, const T& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

const char* const kKeysAllowed =
    "approaches, sweeps, <sweep>_points, <sweep>_quick_points, seeds, victim, fail_at_s, fail_spread_s, "
    "quick_duration_s, quick_fail_at_s, quick_fail_spread_s, networks";

// Reads the [experiment] table into a section, reporting every problem with its line.
class SectionReader {
 public:
  explicit SectionReader(ConfigProblems& problems) : problems_(problems) {}

  ExperimentSection read(const toml::table& table) {
    ExperimentSection s;
    line_ = line_of(table);
    std::set<std::string> used;
    auto take = [&](const std::string& key) -> const toml::node* {
      const toml::node* n = table.get(key);
      if (n != nullptr) used.insert(key);
      return n;
    };
    if (const toml::node* n = take("approaches"))
      for (const std::string& a : strings(*n, "approaches", "[\"passive\", \"active\"]")) {
        if (!known(approach_labels(), a)) problem(*n, "unknown approach '" + a + "'; allowed: " + joined(approach_labels()));
        else s.approaches.push_back(a);
      }
    if (const toml::node* n = take("sweeps"))
      for (const std::string& w : strings(*n, "sweeps", "[\"interval_ms\"]")) {
        if (!known(sweep_names(), w)) problem(*n, "unknown sweep '" + w + "'; allowed: " + joined(sweep_names()));
        else if (known(s.sweeps, w)) problem(*n, "sweep '" + w + "' is listed twice");
        else s.sweeps.push_back(w);
      }
    for (const std::string& w : s.sweeps) {
      const toml::node* pts = take(w + "_points");
      if (pts == nullptr) {
        problem(line_, "sweep '" + w + "' needs a key " + w + "_points");
        continue;
      }
      s.points[w] = numbers(*pts, w + "_points");
      if (const toml::node* q = take(w + "_quick_points")) s.quick_points[w] = numbers(*q, w + "_quick_points");
      else if (!s.points[w].empty()) s.quick_points[w] = {s.points[w].front(), s.points[w].back()};
    }
    if (const toml::node* n = take("seeds")) {
      const toml::value<std::int64_t>* v = n->as_integer();
      if (v == nullptr || v->get() < 1 || v->get() > kSeedsMax)
        problem(*n, "seeds must be a whole number from 1 to " + std::to_string(kSeedsMax) + ", got " + toml_text(*n));
      else s.seeds = v->get();
    }
    if (const toml::node* n = take("victim")) {
      if (const toml::value<std::string>* v = n->as_string()) s.victim = v->get();
      else problem(*n, "victim must be a node name in quotes, like \"aggregate\", got " + toml_text(*n));
    }
    if (const toml::node* n = take("fail_at_s")) s.fail_at_s = positive(*n, "fail_at_s");
    if (const toml::node* n = take("fail_spread_s")) s.fail_spread_s = not_negative(*n, "fail_spread_s").value_or(0.0);
    if (const toml::node* n = take("quick_duration_s"))
      s.quick_duration_s = positive(*n, "quick_duration_s").value_or(s.quick_duration_s);
    if (const toml::node* n = take("quick_fail_at_s")) s.quick_fail_at_s = positive(*n, "quick_fail_at_s").value_or(s.quick_fail_at_s);
    if (const toml::node* n = take("quick_fail_spread_s"))
      s.quick_fail_spread_s = not_negative(*n, "quick_fail_spread_s").value_or(0.0);
    if (s.quick_fail_at_s + s.quick_fail_spread_s >= s.quick_duration_s)
      problem(line_, "quick_fail_at_s + quick_fail_spread_s (" + number_text(s.quick_fail_at_s + s.quick_fail_spread_s) +
                         ") must be before quick_duration_s (" + number_text(s.quick_duration_s) + ")");
    if (const toml::node* n = take("networks")) s.networks = networks(*n);
    for (auto&& [key, node] : table)
      if (used.count(std::string(key.str())) == 0)
        problem(line_of(key), "unknown key '" + std::string(key.str()) + "' in [experiment]; allowed keys: " + kKeysAllowed);
    return s;
  }

 private:
  std::vector<std::string> strings(const toml::node& n, const std::string& key, const std::string& example) {
    std::vector<std::string> out;
    const toml::array* a = n.as_array();
    bool ok = a != nullptr;
    if (a != nullptr)
      for (const toml::node& item : *a) {
        if (const toml::value<std::string>* v = item.as_string()) out.push_back(v->get());
        else ok = false;
      }
    if (!ok) problem(n, key + " must be a list of names in quotes, like " + example + ", got " + toml_text(n));
    return out;
  }
  std::vector<double> numbers(const toml::node& n, const std::string& key) {
    std::vector<double> out;
    const toml::array* a = n.as_array();
    if (a == nullptr) {
      problem(n, key + " must be a list of numbers, like [50, 100, 200], got " + toml_text(n));
      return out;
    }
    for (const toml::node& item : *a) {
      auto v = finite_number_of(item);
      if (!v) problem(n, toml_text(item) + " in " + key + " is not a number");
      else out.push_back(*v);
    }
    if (a->empty()) problem(n, key + " lists no value");
    if (out.size() > kPointsMax) problem(n, key + " lists more than " + std::to_string(kPointsMax) + " values");
    return out;
  }
  std::vector<ExperimentNetwork> networks(const toml::node& n) {
    std::vector<ExperimentNetwork> out;
    const std::string expected =
        "networks must be a list of {file = \"FILE\", victim = \"NODE\"}, like [{file = \"chain.toml\", victim = \"filter\"}]";
    const toml::array* a = n.as_array();
    if (a == nullptr) {
      problem(n, expected + ", got " + toml_text(n));
      return out;
    }
    for (const toml::node& item : *a) {
      const toml::table* t = item.as_table();
      const toml::node* file = t != nullptr ? t->get("file") : nullptr;
      const toml::node* victim = t != nullptr ? t->get("victim") : nullptr;
      const bool ok = t != nullptr && t->size() == 2 && file != nullptr && victim != nullptr && file->is_string() &&
                      victim->is_string() && !file->as_string()->get().empty() && !victim->as_string()->get().empty();
      if (!ok) problem(item.source().begin.line > 0 ? line_of(item) : line_of(n), expected + ", got " + toml_text(item));
      else out.push_back(ExperimentNetwork{file->as_string()->get(), victim->as_string()->get()});
    }
    return out;
  }
  std::optional<double> not_negative(const toml::node& n, const std::string& key) {
    auto v = finite_number_of(n);
    if (!v || *v < 0) {
      problem(n, key + " must be a number of seconds >= 0, got " + toml_text(n));
      return std::nullopt;
    }
    return v;
  }
  std::optional<double> positive(const toml::node& n, const std::string& key) {
    auto v = finite_number_of(n);
    if (!v || *v <= 0) {
      problem(n, key + " must be a positive number of seconds, got " + toml_text(n));
      return std::nullopt;
    }
    return v;
  }
  void problem(int line, const std::string& what) { problems_.add(line, "[experiment]: " + what); }
  void problem(const toml::node& n, const std::string& what) { problem(line_of(n), what); }

  ConfigProblems& problems_;
  int line_ = 0;
};


// chain_depth: the network becomes source -> stage1 -> ... -> stageN -> sink, every stage a copy of
// the first processing fragment (which must hold one operator with one input: a Filter or a Map),
// its operator reading the previous stage's output; streams s1..sN. The source, the sink and
// every knob stay.
std::string rebuild_chain(Topology& t, std::int64_t depth) {
  constexpr std::int64_t kChainDepthMax = 32;
  if (depth < 1 || depth > kChainDepthMax)
    return "chain_depth = " + std::to_string(depth) + ": must be from 1 to " + std::to_string(kChainDepthMax);
  const FragmentSpec* source = nullptr;
  const FragmentSpec* sink = nullptr;
  const FragmentSpec* stage = nullptr;
  std::size_t sources = 0, sinks = 0;
  for (const FragmentSpec& f : t.fragments) {
    if (f.kind == FragmentKind::source) {
      source = &f;
      ++sources;
    } else if (f.kind == FragmentKind::sink) {
      sink = &f;
      ++sinks;
    } else if (stage == nullptr) {
      stage = &f;
    }
  }
  if (sources != 1 || sinks != 1 || stage == nullptr)
    return "chain_depth: the network must have one source, one sink and a processing fragment to copy";
  if (stage->operators.size() != 1 || stage->operators[0].inputs.size() != 1 ||
      (stage->operators[0].kind != OperatorKind::map && stage->operators[0].kind != OperatorKind::filter))
    return "chain_depth: the first processing fragment, " + stage->name + ", must hold one Filter or Map to copy";
  std::vector<FragmentSpec> chain = {*source};
  std::string input = source->source.stream;
  for (std::int64_t i = 1; i <= depth; ++i) {
    FragmentSpec f = *stage;
    f.name = "stage" + std::to_string(i);
    f.operators[0].name = "op" + std::to_string(i);
    f.operators[0].inputs = {input};
    f.operators[0].output = "s" + std::to_string(i);
    input = f.operators[0].output;
    chain.push_back(std::move(f));
  }
  FragmentSpec end = *sink;
  end.sink_inputs = {input};
  chain.push_back(std::move(end));
  t.fragments = std::move(chain);
  return "";
}

}  // namespace

std::string number_text(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::to_string(v);
}

ExperimentConfigLoad parse_experiment_config(const std::string& text, const std::string& file_name) {
  ExperimentConfigLoad load;
  TomlText doc = parse_toml(text, file_name);
  if (!doc.table) {
    load.problems = doc.problems;
    return load;
  }
  ConfigProblems problems(file_name);
  ExperimentConfig config;
  config.path = file_name;
  if (const toml::node* n = doc.table->get("experiment")) {
    if (const toml::table* t = n->as_table()) config.experiment = SectionReader(problems).read(*t);
    else problems.add(*n, "'experiment' must be a table: write [experiment] and its keys below it");
  }
  load.problems = problems.take();
  TopologyLoad topology = read_topology(*doc.table, file_name, {"experiment"});
  for (auto& p : topology.problems) load.problems.push_back(std::move(p));
  if (topology.topology) {
    config.topology = *topology.topology;
    const ExperimentSection& s = config.experiment;
    if (s.fail_at_s && *s.fail_at_s + s.fail_spread_s >= config.topology.settings.duration_s)
      load.problems.push_back(file_name + ": [experiment]: fail_at_s + fail_spread_s (" +
                              number_text(*s.fail_at_s + s.fail_spread_s) + ") must be before the network's duration_s (" +
                              number_text(config.topology.settings.duration_s) + ")");
  }
  if (load.problems.empty()) load.config = std::move(config);
  return load;
}

ExperimentConfigLoad load_experiment_config(const std::string& path) {
  std::string problem;
  const auto text = read_config_file(path, problem);
  if (!text) return ExperimentConfigLoad{std::nullopt, {problem}};
  return parse_experiment_config(*text, path);
}

std::string write_experiment_section(const ExperimentSection& s) {
  auto numbers = [](const std::vector<double>& items) {
    std::string out = "[";
    for (double v : items) out += (out.size() > 1 ? ", " : "") + toml_number(v);
    return out + "]";
  };
  std::string out = "[experiment]\n";
  out += "approaches = " + toml_string_array(s.approaches) + "\n";
  out += "sweeps = " + toml_string_array(s.sweeps) + "\n";
  for (const std::string& w : s.sweeps) {
    auto p = s.points.find(w);
    auto q = s.quick_points.find(w);
    out += w + "_points = " + numbers(p == s.points.end() ? std::vector<double>{} : p->second) + "\n";
    out += w + "_quick_points = " + numbers(q == s.quick_points.end() ? std::vector<double>{} : q->second) + "\n";
  }
  out += "seeds = " + std::to_string(s.seeds) + "\n";
  out += "victim = " + toml_string(s.victim) + "\n";
  if (s.fail_at_s) out += "fail_at_s = " + toml_number(*s.fail_at_s) + "\n";
  out += "fail_spread_s = " + toml_number(s.fail_spread_s) + "\n";
  out += "quick_duration_s = " + toml_number(s.quick_duration_s) + "\n";
  out += "quick_fail_at_s = " + toml_number(s.quick_fail_at_s) + "\n";
  out += "quick_fail_spread_s = " + toml_number(s.quick_fail_spread_s) + "\n";
  out += "networks = [";
  for (std::size_t i = 0; i < s.networks.size(); ++i)
    out += std::string(i == 0 ? "" : ", ") + "{ file = " + toml_string(s.networks[i].file) +
           ", victim = " + toml_string(s.networks[i].victim) + " }";
  return out + "]\n";
}

const std::vector<std::string>& approach_labels() {
  // Every approach's name, each followed by its variants' labels (approach_traits.h).
  static const std::vector<std::string> labels = [] {
    std::vector<std::string> out;
    for (const ApproachTraits& a : ApproachCatalog::builtin().all()) {
      out.push_back(a.name);
      for (const ApproachVariant& v : a.variants) out.push_back(v.label);
    }
    return out;
  }();
  return labels;
}

std::string apply_approach(Topology& topology, const std::string& label) {
  RunOverrides o;
  HaMode variant_of = kNoHa;
  if (const ApproachVariant* v = ApproachCatalog::builtin().variant(label, &variant_of)) {
    o.ha = variant_of;
    v->apply(topology.settings);
  } else if (auto mode = parse_ha_mode(label)) {
    o.ha = *mode;
  } else {
    return "unknown approach '" + label + "'";
  }
  auto problems = apply_overrides(topology, o);
  return problems.empty() ? "" : problems.front();
}

const std::vector<std::string>& sweep_names() {
  static const std::vector<std::string> names = {"interval_ms", "checkpoint_interval_ms", "ack_interval_ms",
                                                 "window_ms",   "rate_tps",               "conservative_retention_ms",
                                                 "load",        "chain_depth",            "fail_offset_ms"};
  return names;
}

std::string apply_sweep(Topology& topology, const std::string& sweep, double value) {
  const bool whole = sweep != "rate_tps" && sweep != "load";
  // The failure's offset may be 0: the failure at fail_at_s itself.
  const bool zero_allowed = sweep == "fail_offset_ms";
  if (value < 0 || (value == 0 && !zero_allowed) || (whole && !is_whole(value)))
    return sweep + " = " + number_text(value) + ": must be a " + (zero_allowed ? "non-negative" : "positive") +
           (whole ? " whole number" : " number");
  const auto n = static_cast<std::int64_t>(value);
  Settings& s = topology.settings;
  if (sweep == "fail_offset_ms") {
    // Moves the failure (experiments.cpp), not a knob of the network.
    return "";
  } else if (sweep == "load") {
    if (value >= 1) return "load = " + number_text(value) + ": must be below 1 (a fragment busy all the time never catches up)";
    if (s.operator_cost_us_per_tuple <= 0)
      return "load: the network's operator_cost_us_per_tuple is 0, so no rate gives a load";
    for (FragmentSpec& f : topology.fragments)
      if (f.kind == FragmentKind::source) set_source_rate_setting(f.source, value * 1e6 / s.operator_cost_us_per_tuple);
  } else if (sweep == "chain_depth") {
    if (std::string problem = rebuild_chain(topology, n); !problem.empty()) return problem;
  } else if (sweep == "interval_ms") {
    s.checkpoint_interval_ms = n;
    s.ack_interval_ms = n;
  } else if (sweep == "checkpoint_interval_ms") {
    s.checkpoint_interval_ms = n;
  } else if (sweep == "ack_interval_ms") {
    s.ack_interval_ms = n;
  } else if (sweep == "conservative_retention_ms") {
    s.conservative_retention_ms = n;
  } else if (sweep == "window_ms") {
    bool any = false;
    for (FragmentSpec& f : topology.fragments)
      for (OperatorSpec& o : f.operators)
        if (o.kind == OperatorKind::aggregate) {
          if (n % o.slide_ms != 0)
            return "window_ms = " + std::to_string(n) + " is not a multiple of " + o.name + "'s slide_ms (" +
                   std::to_string(o.slide_ms) + ")";
          o.window_ms = n;
          any = true;
        }
    if (!any) return "window_ms: the network has no aggregate";
  } else if (sweep == "rate_tps") {
    for (FragmentSpec& f : topology.fragments)
      if (f.kind == FragmentKind::source) set_source_rate_setting(f.source, value);
  } else {
    return "unknown sweep '" + sweep + "'";
  }
  auto problems = validate(topology);
  return problems.empty() ? "" : problems.front();
}

}  // namespace hapair
