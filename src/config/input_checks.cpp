#include "config/input_checks.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace hapair {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string seconds(double s) {
  std::ostringstream os;
  os << s << " s";
  return os.str();
}

// Why `name` looks like a standby but is none of this plan's nodes: "aggregate.backup" under ha
// none, or the other suffix of the fragment's standby. Empty when it does not look like one.
std::string standby_hint(const Plan& plan, const std::string& name) {
  // The standby suffixes of the plan's approaches, each with the approaches that use it:
  // ".spare" -> "amnesia and upstream".
  std::vector<std::pair<std::string, std::vector<std::string>>> suffixes;
  for (const ApproachTraits& a : plan.approaches.all()) {
    if (!a.has_standby()) continue;
    auto it = std::find_if(suffixes.begin(), suffixes.end(), [&](const auto& p) { return p.first == a.standby_suffix; });
    if (it == suffixes.end()) it = suffixes.insert(suffixes.end(), {a.standby_suffix, {}});
    it->second.push_back(a.name);
  }
  for (const auto& [s, users] : suffixes) {
    if (name.size() <= s.size() || name.compare(name.size() - s.size(), s.size(), s) != 0) continue;
    const FragmentId f = plan.fragment_id(name.substr(0, name.size() - s.size()));
    if (f == kNoFragment || plan.fragments[f].kind != FragmentKind::operators) return "";
    const PlanFragment& pf = plan.fragments[f];
    const std::string ha = plan.traits(f).name;
    if (!pf.has_standby()) {
      std::string which;
      for (std::size_t i = 0; i < suffixes.size(); ++i) {
        const auto& [suffix, names] = suffixes[i];
        which += (i == 0 ? "a " : ", a ") + suffix + " under ";
        for (std::size_t j = 0; j < names.size(); ++j)
          which += (j == 0 ? "" : j + 1 == names.size() ? " and " : ", ") + names[j];
      }
      return "fragment " + pf.name + " runs ha " + ha + ", which has no standby: " + which;
    }
    std::string standbys;
    for (NodeId n : pf.standbys) standbys += (standbys.empty() ? "" : ", ") + plan.nodes[n].name;
    return "the standby of fragment " + pf.name + " (ha " + ha + ") is " + standbys;
  }
  return "";
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // d[i][j]: the distance of a's first i and b's first j characters (optimal string alignment).
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::optional<std::string> close_match(const std::string& given, const std::vector<std::string>& choices) {
  if (given.empty()) return std::nullopt;
  const std::string g = lower(given);
  for (const auto& c : choices)
    if (lower(c) == g) return c;
  // A prefix of three characters or more ("agg") names the only choice it starts.
  std::vector<std::string> prefixed;
  for (const auto& c : choices)
    if (g.size() >= 3 && lower(c).rfind(g, 0) == 0) prefixed.push_back(c);
  if (prefixed.size() == 1) return prefixed.front();
  const std::size_t limit = std::max<std::size_t>(1, given.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  bool tie = false;
  for (const auto& c : choices) {
    const std::size_t d = edit_distance(g, lower(c));
    if (d < best_distance) {
      best = c;
      best_distance = d;
      tie = false;
    } else if (d == best_distance && best) {
      tie = true;
    }
  }
  if (!best || tie) return std::nullopt;
  return best;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string unknown_choice(const std::string& what, const std::string& given, const std::string& kind,
                           const std::vector<std::string>& choices) {
  std::string out = what + " '" + given + "' is not " + kind;
  if (auto m = close_match(given, choices)) out += " (did you mean '" + *m + "'?)";
  return out + "; the choices are: " + join_names(choices);
}

std::vector<std::string> node_names(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& n : plan.nodes) out.push_back(n.name);
  return out;
}

std::vector<std::string> victim_names(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& f : plan.fragments)
    if (f.kind == FragmentKind::operators) out.push_back(plan.nodes[f.primary].name);
  return out;
}

std::vector<std::string> check_victim(const Plan& plan, const std::string& name, const std::string& option) {
  const std::vector<std::string> victims = victim_names(plan);
  if (std::find(victims.begin(), victims.end(), name) != victims.end()) return {};
  const std::string valid = "; the victim must be the primary of an operator fragment: " + join_names(victims);
  const NodeId id = plan.node_id(name);
  if (id != kNoNode) {
    const PlanNode& n = plan.nodes[id];
    const PlanFragment& f = plan.fragments[n.fragment];
    if (n.standby)
      return {option + " '" + name + "' is the standby of fragment " + f.name + "; name its primary '" +
              plan.nodes[f.primary].name + "'" + valid};
    const char* what = f.kind == FragmentKind::source ? "a source" : "a sink";
    return {option + " '" + name + "' is " + what + ", which no approach protects" + valid};
  }
  std::string problem = option + " '" + name + "' is not a node of this network";
  if (auto m = close_match(name, victims)) problem += " (did you mean '" + *m + "'?)";
  else if (auto hint = standby_hint(plan, name); !hint.empty()) problem += " (" + hint + ")";
  return {problem + valid};
}

std::optional<std::string> fault_time_problem(const Plan& plan, double at_s) {
  const double duration_s = plan.settings().duration_s;
  if (std::isfinite(at_s) && at_s > 0.0 && at_s < duration_s) return std::nullopt;
  std::string what = std::isfinite(at_s) ? "at " + seconds(at_s) : "the time is not a finite number";
  return what + ": a fault must come after the start and before the sources stop, 0 < SECONDS < " +
         seconds(duration_s) + " (duration_s)";
}

std::vector<std::string> fault_node_problems(const Plan& plan, const FaultSpec& fault) {
  std::vector<std::string> problems;
  const std::vector<std::string> names = node_names(plan);
  auto check = [&](const std::string& name, const char* role) {
    if (name.empty() || plan.node_id(name) != kNoNode) return;
    std::string problem = std::string("unknown ") + role + " '" + name + "'";
    if (auto m = close_match(name, names)) problem += " (did you mean '" + *m + "'?)";
    else if (auto hint = standby_hint(plan, name); !hint.empty()) problem += " (" + hint + ")";
    problems.push_back(problem + "; the nodes of this run are: " + join_names(names));
  };
  check(fault.node, "node");
  if (fault.kind == FaultKind::partition) check(fault.peer, "peer node");
  return problems;
}

}  // namespace hapair
