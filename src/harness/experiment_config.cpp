#include "harness/experiment_config.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/topology_file.h"
#include "protocols/plan.h"

namespace hapair {
namespace {

constexpr std::size_t kFileBytesMax = 1 << 20;
constexpr std::int64_t kSeedsMax = 100;
constexpr std::size_t kPointsMax = 64;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Comments start with '#' or ';' at the start of a line or after a space or tab, as in
// topology files (docs/TOPOLOGY.md), so a value never loses a character it needs.
std::string strip_comment(const std::string& line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if ((line[i] == '#' || line[i] == ';') && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t'))
      return line.substr(0, i);
  }
  return line;
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> items;
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) items.push_back(trim(item));
  return items;
}

std::optional<double> parse_number(const std::string& s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool valid_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool is_whole(double v) { return std::floor(v) == v && std::fabs(v) < 9e15; }

struct Entry {
  std::string key;
  std::string value;
  int line = 0;
};

// Reads the [experiment] entries into a section, reporting every problem with its line.
class SectionReader {
 public:
  SectionReader(std::string file, std::vector<std::string>& problems) : file_(std::move(file)), problems_(problems) {}

  ExperimentSection read(const std::vector<Entry>& entries) {
    ExperimentSection s;
    std::map<std::string, const Entry*> by_key;
    for (const Entry& e : entries) {
      auto [it, inserted] = by_key.emplace(e.key, &e);
      if (!inserted) problem(e.line, "duplicate key '" + e.key + "' (first at line " + std::to_string(it->second->line) + ")");
    }
    std::set<std::string> used;
    auto take = [&](const std::string& key) -> const Entry* {
      auto it = by_key.find(key);
      if (it == by_key.end()) return nullptr;
      used.insert(key);
      return it->second;
    };
    if (const Entry* e = take("approaches")) {
      for (const std::string& a : split_list(e->value)) {
        if (!known(approach_labels(), a)) problem(e->line, "unknown approach '" + a + "'; allowed: " + joined(approach_labels()));
        else s.approaches.push_back(a);
      }
    }
    if (const Entry* e = take("sweeps")) {
      for (const std::string& w : split_list(e->value)) {
        if (!known(sweep_names(), w)) problem(e->line, "unknown sweep '" + w + "'; allowed: " + joined(sweep_names()));
        else s.sweeps.push_back(w);
      }
    }
    for (const std::string& w : s.sweeps) {
      const Entry* pts = take(w + "_points");
      if (pts == nullptr) {
        problem(entries.empty() ? 0 : entries.front().line, "sweep '" + w + "' needs a key " + w + "_points");
        continue;
      }
      s.points[w] = numbers(*pts);
      if (const Entry* q = take(w + "_quick_points")) s.quick_points[w] = numbers(*q);
      else if (!s.points[w].empty()) s.quick_points[w] = {s.points[w].front(), s.points[w].back()};
    }
    if (const Entry* e = take("seeds")) {
      auto v = parse_number(e->value);
      if (!v || !is_whole(*v) || *v < 1 || *v > kSeedsMax)
        problem(e->line, "seeds must be a whole number from 1 to " + std::to_string(kSeedsMax) + ", got '" + e->value + "'");
      else s.seeds = static_cast<std::int64_t>(*v);
    }
    if (const Entry* e = take("victim")) s.victim = e->value;
    if (const Entry* e = take("fail_at_s")) s.fail_at_s = positive(*e);
    if (const Entry* e = take("fail_spread_s")) s.fail_spread_s = not_negative(*e).value_or(0.0);
    if (const Entry* e = take("quick_duration_s")) s.quick_duration_s = positive(*e).value_or(s.quick_duration_s);
    if (const Entry* e = take("quick_fail_at_s")) s.quick_fail_at_s = positive(*e).value_or(s.quick_fail_at_s);
    if (const Entry* e = take("quick_fail_spread_s")) s.quick_fail_spread_s = not_negative(*e).value_or(0.0);
    if (s.quick_fail_at_s + s.quick_fail_spread_s >= s.quick_duration_s)
      problem(0, "quick_fail_at_s + quick_fail_spread_s (" + number_text(s.quick_fail_at_s + s.quick_fail_spread_s) +
                     ") must be before quick_duration_s (" + number_text(s.quick_duration_s) + ")");
    if (const Entry* e = take("networks")) {
      for (const std::string& item : split_list(e->value)) {
        const auto at = item.find('@');
        if (at == std::string::npos || at == 0 || at + 1 == item.size())
          problem(e->line, "a network is FILE@VICTIM (e.g. chain.ini@filter), got '" + item + "'");
        else s.networks.push_back(ExperimentNetwork{trim(item.substr(0, at)), trim(item.substr(at + 1))});
      }
    }
    for (const Entry& e : entries)
      if (used.count(e.key) == 0 && by_key.at(e.key) == &e)
        problem(e.line, "unknown key '" + e.key + "' in [experiment]; allowed keys: approaches, sweeps, "
                        "<sweep>_points, <sweep>_quick_points, seeds, victim, fail_at_s, fail_spread_s, "
                        "quick_duration_s, quick_fail_at_s, quick_fail_spread_s, networks");
    return s;
  }

 private:
  static bool known(const std::vector<std::string>& names, const std::string& n) {
    for (const auto& x : names)
      if (x == n) return true;
    return false;
  }
  static std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  std::vector<double> numbers(const Entry& e) {
    std::vector<double> out;
    for (const std::string& item : split_list(e.value)) {
      auto v = parse_number(item);
      if (!v) problem(e.line, "'" + item + "' in " + e.key + " is not a number");
      else out.push_back(*v);
    }
    if (out.empty()) problem(e.line, e.key + " lists no value");
    if (out.size() > kPointsMax) problem(e.line, e.key + " lists more than " + std::to_string(kPointsMax) + " values");
    return out;
  }
  std::optional<double> not_negative(const Entry& e) {
    auto v = parse_number(e.value);
    if (!v || *v < 0) {
      problem(e.line, e.key + " must be a number of seconds >= 0, got '" + e.value + "'");
      return std::nullopt;
    }
    return v;
  }
  std::optional<double> positive(const Entry& e) {
    auto v = parse_number(e.value);
    if (!v || *v <= 0) {
      problem(e.line, e.key + " must be a positive number of seconds, got '" + e.value + "'");
      return std::nullopt;
    }
    return v;
  }
  void problem(int line, const std::string& what) {
    problems_.push_back(file_ + (line > 0 ? ":" + std::to_string(line) : "") + ": [experiment]: " + what);
  }

  std::string file_;
  std::vector<std::string>& problems_;
};

}  // namespace

std::string number_text(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::to_string(v);
}

ExperimentConfigLoad parse_experiment_config(const std::string& text, const std::string& file_name) {
  ExperimentConfigLoad load;
  std::vector<Entry> entries;
  std::string topology_text;
  bool in_experiment = false, seen = false;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = trim(strip_comment(raw));
    if (!line.empty() && line.front() == '[') {
      const bool header = line == "[experiment]";
      if (header && seen) load.problems.push_back(file_name + ":" + std::to_string(line_no) + ": duplicate section [experiment]");
      seen = seen || header;
      in_experiment = header;
    }
    if (!in_experiment) {
      topology_text += raw + "\n";
      continue;
    }
    // Blank lines keep the topology's line numbers where they are in the file.
    topology_text += "\n";
    if (line.empty() || line == "[experiment]") continue;
    const auto eq = line.find('=');
    const std::string key = eq == std::string::npos ? "" : trim(line.substr(0, eq));
    if (!valid_key(key)) {
      load.problems.push_back(file_name + ":" + std::to_string(line_no) + ": [experiment]: expected 'key = value', got '" +
                              line + "'");
      continue;
    }
    entries.push_back(Entry{key, trim(line.substr(eq + 1)), line_no});
  }
  ExperimentConfig config;
  config.path = file_name;
  config.experiment = SectionReader(file_name, load.problems).read(entries);
  TopologyLoad topology = parse_topology(topology_text, file_name);
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
  std::ifstream in(path, std::ios::binary);
  if (!in) return ExperimentConfigLoad{std::nullopt, {path + ": cannot be read"}};
  std::string text(kFileBytesMax + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kFileBytesMax)
    return ExperimentConfigLoad{std::nullopt, {path + ": larger than " + std::to_string(kFileBytesMax) + " bytes"}};
  return parse_experiment_config(text, path);
}

std::string write_experiment_section(const ExperimentSection& s) {
  auto list = [](const auto& items, auto text) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + text(i);
    return out;
  };
  auto same = [](const std::string& x) { return x; };
  std::string out = "[experiment]\n";
  out += "approaches = " + list(s.approaches, same) + "\n";
  out += "sweeps = " + list(s.sweeps, same) + "\n";
  for (const std::string& w : s.sweeps) {
    auto p = s.points.find(w);
    auto q = s.quick_points.find(w);
    out += w + "_points = " + (p == s.points.end() ? "" : list(p->second, number_text)) + "\n";
    out += w + "_quick_points = " + (q == s.quick_points.end() ? "" : list(q->second, number_text)) + "\n";
  }
  out += "seeds = " + std::to_string(s.seeds) + "\n";
  out += "victim = " + s.victim + "\n";
  if (s.fail_at_s) out += "fail_at_s = " + number_text(*s.fail_at_s) + "\n";
  out += "fail_spread_s = " + number_text(s.fail_spread_s) + "\n";
  out += "quick_duration_s = " + number_text(s.quick_duration_s) + "\n";
  out += "quick_fail_at_s = " + number_text(s.quick_fail_at_s) + "\n";
  out += "quick_fail_spread_s = " + number_text(s.quick_fail_spread_s) + "\n";
  out += "networks = " + list(s.networks, [](const ExperimentNetwork& n) { return n.file + "@" + n.victim; }) + "\n";
  return out;
}

const std::vector<std::string>& approach_labels() {
  static const std::vector<std::string> labels = {"none",   "amnesia",      "upstream",       "upstream_exact",
                                                  "upstream_conservative", "passive", "active", "active_nodet"};
  return labels;
}

std::string apply_approach(Topology& topology, const std::string& label) {
  RunOverrides o;
  if (label == "active_nodet") {
    o.ha = HaMode::active;
    topology.settings.determinants = false;
  } else if (label == "upstream_exact" || label == "upstream_conservative") {
    o.ha = HaMode::upstream;
    topology.settings.trimming = label == "upstream_exact" ? TrimmingRule::exact : TrimmingRule::conservative;
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
                                                 "window_ms",   "rate_tps",               "conservative_retention_ms"};
  return names;
}

std::string apply_sweep(Topology& topology, const std::string& sweep, double value) {
  const bool whole = sweep != "rate_tps";
  if (value <= 0 || (whole && !is_whole(value)))
    return sweep + " = " + number_text(value) + ": must be a positive" + (whole ? " whole number" : " number");
  const auto n = static_cast<std::int64_t>(value);
  Settings& s = topology.settings;
  if (sweep == "interval_ms") {
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
      if (f.kind == FragmentKind::source) f.source.rate_tps = value;
  } else {
    return "unknown sweep '" + sweep + "'";
  }
  auto problems = validate(topology);
  return problems.empty() ? "" : problems.front();
}

}  // namespace hapair
