#include "sim/faults.h"

#include "protocols/number_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>

namespace hapair {
namespace {

bool known_node(const Plan& plan, const std::string& name) {
  return std::any_of(plan.nodes.begin(), plan.nodes.end(), [&](const PlanNode& n) { return n.name == name; });
}

std::string seconds(double s) {
  std::ostringstream os;
  os << s << " s";
  return os.str();
}

}  // namespace

std::string describe(const FaultSpec& f) {
  std::ostringstream os;
  os << to_string(f.kind) << ' ' << (f.node.empty() ? "<no node>" : f.node);
  if (f.kind == FaultKind::partition) os << "<->" << (f.peer.empty() ? "<no peer>" : f.peer);
  os << " at " << seconds(f.at_s);
  if (f.kind == FaultKind::pause || f.kind == FaultKind::partition) os << " for " << seconds(f.duration_s);
  return os.str();
}

std::vector<std::string> validate_faults(const Plan& plan, const std::vector<FaultSpec>& faults,
                                         const FaultChecks& checks) {
  std::vector<std::string> problems;
  auto problem = [&](std::size_t i, const std::string& what) {
    problems.push_back("fault " + std::to_string(i + 1) + " (" + describe(faults[i]) + "): " + what);
  };

  std::vector<bool> well_formed(faults.size(), true);
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
    auto bad = [&](const std::string& what) {
      problem(i, what);
      well_formed[i] = false;
    };
    // A problem the caller reports itself (FaultChecks) still keeps the fault out of the replay.
    auto bad_here_or_left_to_caller = [&](bool checked_here, const std::string& what) {
      if (checked_here) bad(what);
      else well_formed[i] = false;
    };
    if (f.node.empty())
      bad("no node given");
    else if (!known_node(plan, f.node))
      bad_here_or_left_to_caller(checks.node_names, "unknown node '" + f.node + "'");
    if (!std::isfinite(f.at_s))
      bad_here_or_left_to_caller(checks.start_times, "the time is not a finite number");
    else if (f.at_s < 0.0)
      bad_here_or_left_to_caller(checks.start_times, "negative time " + seconds(f.at_s));
    const bool timed = f.kind == FaultKind::pause || f.kind == FaultKind::partition;
    if (timed) {
      if (!std::isfinite(f.duration_s))
        bad("the duration is not a finite number");
      else if (f.duration_s <= 0.0)
        bad("the duration must be positive, got " + seconds(f.duration_s));
    } else if (f.duration_s != 0.0) {
      bad(std::string("a ") + to_string(f.kind) + " takes no duration, got " + seconds(f.duration_s));
    }
    if (f.kind == FaultKind::partition) {
      if (f.peer.empty())
        bad("a partition needs a peer node");
      else if (!known_node(plan, f.peer))
        bad_here_or_left_to_caller(checks.node_names, "unknown peer node '" + f.peer + "'");
      else if (f.peer == f.node)
        bad("a node cannot be partitioned from itself");
    } else if (!f.peer.empty()) {
      bad(std::string("a ") + to_string(f.kind) + " takes no peer, got '" + f.peer + "'");
    }
  }

  // Replay the well-formed faults in time order (list order among equal times, as the simulator
  // injects them) to find restarts of running nodes, crashes of crashed ones and pauses that
  // cannot take effect.
  std::vector<std::size_t> order(faults.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return faults[a].at_s < faults[b].at_s; });
  std::map<std::string, double> crashed_since_s;
  std::map<std::string, double> paused_until_s;
  for (std::size_t i : order) {
    if (!well_formed[i]) continue;
    const FaultSpec& f = faults[i];
    auto crashed = crashed_since_s.find(f.node);
    switch (f.kind) {
      case FaultKind::crash:
        if (crashed != crashed_since_s.end())
          problem(i, "'" + f.node + "' is already crashed (since " + seconds(crashed->second) + ")");
        else
          crashed_since_s[f.node] = f.at_s;
        break;
      case FaultKind::restart:
        if (crashed == crashed_since_s.end())
          problem(i, "'" + f.node + "' is not crashed at that time, so it cannot be restarted");
        else
          crashed_since_s.erase(crashed);
        break;
      case FaultKind::pause: {
        auto paused = paused_until_s.find(f.node);
        if (crashed != crashed_since_s.end())
          problem(i, "'" + f.node + "' is crashed at that time (since " + seconds(crashed->second) + ")");
        else if (paused != paused_until_s.end() && paused->second > f.at_s)
          problem(i, "'" + f.node + "' is still paused until " + seconds(paused->second));
        else
          paused_until_s[f.node] = f.at_s + f.duration_s;
        break;
      }
      case FaultKind::partition:
        break;  // overlapping partitions of the same link nest: the link heals when all have ended
    }
  }
  return problems;
}

std::string exact_number(double v) { return shortest_text(v); }

std::string fault_options(const std::vector<FaultSpec>& faults) {
  std::string out;
  for (const FaultSpec& f : faults) {
    switch (f.kind) {
      case FaultKind::crash: out += " --fail " + f.node + "@" + exact_number(f.at_s); break;
      case FaultKind::restart: out += " --restart " + f.node + "@" + exact_number(f.at_s); break;
      case FaultKind::pause: out += " --pause " + f.node + "@" + exact_number(f.at_s) + "+" + exact_number(f.duration_s); break;
      case FaultKind::partition:
        out += " --partition " + f.node + "-" + f.peer + "@" + exact_number(f.at_s) + "+" + exact_number(f.duration_s);
        break;
    }
  }
  return out;
}

}  // namespace hapair
