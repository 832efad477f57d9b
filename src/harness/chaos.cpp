#include "harness/chaos.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/child_process.h"
#include "harness/csv.h"
#include "harness/disturbance.h"
#include "harness/merge_order.h"
#include "harness/plots.h"
#include "harness/reference.h"
#include "harness/topology_file.h"
#include "protocols/check.h"
#include "protocols/rng.h"
#include "harness/guarantee.h"
#include "harness/input_checks.h"
#include "sim/faults.h"
#include "sim/scenario.h"

namespace hapair {
namespace {

// ---- small helpers -----------------------------------------------------------------------

// The shortest text that reads back as exactly `v`, so reproduce commands and CSV rows are exact.
std::string exact(double v) { return shortest_text(v); }

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

bool contains(const std::vector<ChaosFault>& kinds, ChaosFault k) {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

std::vector<ChaosFault> effective_faults(const ChaosOptions& o) {
  return o.faults.empty() ? chaos_faults_for_driver(o.driver) : o.faults;
}

double effective_duration_s(const ChaosOptions& o) { return o.duration_s.value_or(o.driver == "real" ? 2.0 : 3.0); }

std::int64_t pick(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(hi - lo + 1)));
}

// A whole number of milliseconds in [lo_s, hi_s], as seconds: fault times print exactly.
double pick_ms(Rng& rng, double lo_s, double hi_s) {
  const auto lo = static_cast<std::int64_t>(std::ceil(lo_s * 1000.0));
  const auto hi = std::max(lo, static_cast<std::int64_t>(std::floor(hi_s * 1000.0)));
  return static_cast<double>(pick(rng, lo, hi)) / 1000.0;
}

// A sum of such times, back on the whole millisecond (1.225, not 1.2249999999999999).
double whole_ms(double s) { return std::round(s * 1000.0) / 1000.0; }

template <typename T>
const T& pick_one(Rng& rng, const std::vector<T>& items) {
  HAPAIR_CHECK(!items.empty());
  return items[rng.below(items.size())];
}

// ---- the case: settings ------------------------------------------------------------------

// Random legal variations of the network itself (swarm_case already picked the intervals, the
// simulated network and the source rates): keys, windows, filter constants, the aggregate
// function, the checkpoint mode and, for active standby, whether determinants are shipped.
void vary_network(Topology& t, Rng& rng, const std::string& driver) {
  static const std::int64_t kSlidesMs[] = {10, 20, 25, 50, 100};
  static const AggregateFunction kFunctions[] = {AggregateFunction::count, AggregateFunction::sum,
                                                 AggregateFunction::avg, AggregateFunction::min, AggregateFunction::max};
  for (auto& f : t.fragments) {
    if (f.kind == FragmentKind::source) f.source.key_count = pick(rng, 1, 32);
    for (auto& op : f.operators) switch (op.kind) {
        case OperatorKind::filter: op.filter_constant = static_cast<double>(pick(rng, 20, 90)); break;
        case OperatorKind::aggregate:
          op.slide_ms = kSlidesMs[rng.below(std::size(kSlidesMs))];
          op.window_ms = op.slide_ms * pick(rng, 1, 8);
          op.function = kFunctions[rng.below(std::size(kFunctions))];
          op.group_by_key = rng.chance(0.8);
          break;
        case OperatorKind::join: op.join_window_ms = pick(rng, 5, 50); break;
        case OperatorKind::map:
        case OperatorKind::union_op: break;
      }
  }
  Settings& s = t.settings;
  s.checkpoint_mode = rng.chance(0.4) ? CheckpointMode::delta : CheckpointMode::full;
  s.determinants = !(s.ha == HaMode::active && rng.chance(0.15));
  s.retransmit_timeout_ms = pick(rng, 50, 300);
  // A run that cannot finish (a crash without standby) waits this long after the sources stop.
  s.drain_timeout_s = 10.0;
  if (driver == "real") {
    // Real processes share two cores with everything else on the machine: timeouts of a few
    // heartbeats of 5 ms would make scheduling noise look like failures in most runs.
    s.heartbeat_interval_ms = pick(rng, 10, 20);
    s.failure_timeout_ms = s.heartbeat_interval_ms * pick(rng, 5, 10);
    s.checkpoint_interval_ms = pick(rng, 50, 200);
  }
}

// ---- the case: the fault schedule --------------------------------------------------------

// What the generator expects each operator fragment's nodes to be doing, so that "crash the
// primary" hits the node acting as primary after earlier faults. It only aims the faults; the
// classification reads what really happened from the run's events (beyond_guarantee).
struct PairGuess {
  std::string acting;
  std::string other;  // empty: no standby (ha none)
  bool acting_alive = true;
  bool other_alive = true;
  FragmentId fragment = kNoFragment;
  void swap_roles() {
    std::swap(acting, other);
    std::swap(acting_alive, other_alive);
  }
};

std::vector<FaultSpec> pick_schedule(const Plan& plan, Rng& rng, const std::vector<ChaosFault>& kinds, double duration_s) {
  std::vector<PairGuess> pairs;
  for (const auto& f : plan.fragments) {
    if (f.kind != FragmentKind::operators) continue;
    PairGuess g;
    g.acting = plan.nodes[f.primary].name;
    if (f.standby != kNoNode) g.other = plan.nodes[f.standby].name;
    g.fragment = f.id;
    pairs.push_back(g);
  }
  std::vector<ChaosFault> primitives;
  for (ChaosFault k : {ChaosFault::crash, ChaosFault::pause, ChaosFault::partition})
    if (contains(kinds, k)) primitives.push_back(k);
  std::vector<FaultSpec> faults;
  if (primitives.empty() || pairs.empty()) return faults;

  // A candidate joins the schedule only when the schedule stays valid (no pause of a crashed
  // node, no crash of a crashed one, everything inside the run).
  auto try_add = [&](const FaultSpec& f) {
    faults.push_back(f);
    if (validate_run_faults(plan, faults).empty()) return true;
    faults.pop_back();
    return false;
  };
  const double timeout_s = static_cast<double>(plan.settings().failure_timeout_ms) / 1000.0;
  // The acting primary of a neighbouring fragment, or the node of a source or sink.
  auto acting_of = [&](FragmentId id) {
    for (const auto& g : pairs)
      if (g.fragment == id) return g.acting;
    return plan.nodes[plan.fragments[id].primary].name;
  };

  const int count = rng.chance(0.5) ? 1 : (rng.chance(0.7) ? 2 : 3);
  double t = pick_ms(rng, 0.15 * duration_s, 0.4 * duration_s);
  for (int i = 0; i < count && t <= 0.8 * duration_s; ++i) {
    const ChaosFault kind = pick_one(rng, primitives);
    PairGuess& g = pairs[rng.below(pairs.size())];
    switch (kind) {
      case ChaosFault::crash: {
        const bool hit_acting = g.acting_alive || g.other.empty() || !g.other_alive;
        const std::string victim = hit_acting ? g.acting : g.other;
        if (!try_add({FaultKind::crash, victim, "", t, 0.0})) break;
        if (hit_acting) {
          g.acting_alive = false;
          if (!g.other.empty() && g.other_alive) g.swap_roles();  // the standby takes over
        } else {
          g.other_alive = false;
        }
        if (contains(kinds, ChaosFault::restart) && rng.chance(0.65)) {
          // The restarted node rejoins as the standby of whoever acts now.
          if (try_add({FaultKind::restart, victim, "", whole_ms(t + pick_ms(rng, 0.15, 0.6)), 0.0})) {
            if (victim == g.acting) g.acting_alive = true;
            else g.other_alive = true;
          }
        }
        break;
      }
      case ChaosFault::pause: {
        const bool standby = !g.other.empty() && g.other_alive && rng.chance(0.2);
        const std::string victim = standby ? g.other : g.acting;
        // Shorter than the failure timeout (only late), around it (either outcome must be
        // safe), or much longer (the standby takes over; the paused node must be fenced).
        const int length = static_cast<int>(rng.below(3));
        const double lo = length == 0 ? 0.2 : (length == 1 ? 0.8 : 2.0);
        const double hi = length == 0 ? 0.8 : (length == 1 ? 1.5 : 15.0);
        const double d = std::max(0.001, std::min(pick_ms(rng, lo * timeout_s, hi * timeout_s), 0.25 * duration_s));
        if (try_add({FaultKind::pause, victim, "", t, d}) && !standby && length == 2 && !g.other.empty() && g.other_alive)
          g.swap_roles();
        break;
      }
      case ChaosFault::partition: {
        const auto& f = plan.fragments[g.fragment];
        std::vector<std::string> peers;
        const int shape = static_cast<int>(rng.below(3));
        if (shape == 0 && !g.other.empty() && g.other_alive) peers.push_back(g.other);
        if (shape == 1 || peers.empty())
          for (FragmentId d : f.downstream) peers.push_back(acting_of(d));
        if (shape == 2)
          for (FragmentId u : f.upstream) peers.push_back(acting_of(u));
        if (peers.empty()) break;
        const std::string peer = pick_one(rng, peers);
        const double d = std::max(0.001, std::min(pick_ms(rng, 0.5 * timeout_s, 10.0 * timeout_s), 0.25 * duration_s));
        if (try_add({FaultKind::partition, g.acting, peer, t, d}) && peer == g.other && d > timeout_s) g.swap_roles();
        break;
      }
      case ChaosFault::restart:
      case ChaosFault::loss:
      case ChaosFault::duplication: break;
    }
    // The next fault comes during the recovery of this one (a few failure timeouts later) or
    // after it has settled.
    t = whole_ms(t + (rng.chance(0.4) ? pick_ms(rng, 0.2 * timeout_s, 3.0 * timeout_s) : pick_ms(rng, 0.15, 0.5)));
  }
  std::stable_sort(faults.begin(), faults.end(), [](const FaultSpec& a, const FaultSpec& b) { return a.at_s < b.at_s; });
  return faults;
}

std::string describe_case(const ChaosCase& c) {
  const Settings& s = c.topology.settings;
  const SimSettings& n = c.topology.sim;
  std::ostringstream d;
  d << "network=" << c.network << " ha=" << to_string(c.approach);
  if (c.approach == HaMode::active) d << " determinants=" << (s.determinants ? "on" : "off");
  d << " heartbeat_ms=" << s.heartbeat_interval_ms << " timeout_ms=" << s.failure_timeout_ms;
  if (c.approach == HaMode::passive)
    d << " checkpoint_ms=" << s.checkpoint_interval_ms << " " << to_string(s.checkpoint_mode);
  if (n.loss_ratio > 0) d << " loss=" << exact(std::round(n.loss_ratio * 1e4) / 1e4);
  if (n.duplication_ratio > 0) d << " dup=" << exact(std::round(n.duplication_ratio * 1e4) / 1e4);
  d << " faults:";
  if (c.faults.empty()) d << " none";
  for (std::size_t i = 0; i < c.faults.size(); ++i) d << (i == 0 ? " " : "; ") << describe(c.faults[i]);
  return d.str();
}

// ---- isolation: one run in a forked child --------------------------------------------------

// The child's answer is chaos_run_json(); its stderr (the last bytes) says why a run died.

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

ChaosRun died(const ChaosCase& c, const std::string& what) {
  ChaosRun r;
  r.c = c;
  r.verdict = "none";
  r.klass = ChaosClass::violation;
  r.reason = what;
  return r;
}

ChaosRun run_isolated(const ChaosOptions& options, const ChaosCase& c) {
  int result_pipe[2];
  int error_pipe[2];
  HAPAIR_CHECK_MSG(::pipe2(result_pipe, O_CLOEXEC) == 0, "pipe2: " << std::strerror(errno));
  HAPAIR_CHECK_MSG(::pipe2(error_pipe, O_CLOEXEC) == 0, "pipe2: " << std::strerror(errno));
  std::string fork_error;
  const pid_t parent = ::getpid();
  ChildProcess child = ChildProcess::fork_call(
      [&] {
        // The case dies with the campaign (kill -9 of `hapair chaos`), and its nodes with it.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) return 1;
        ::close(result_pipe[0]);
        ::close(error_pipe[0]);
        ::dup2(error_pipe[1], STDERR_FILENO);
        write_all(result_pipe[1], chaos_run_json(run_chaos_case(options, c)));
        return 0;
      },
      fork_error);
  HAPAIR_CHECK_MSG(child.running(), fork_error);
  ::close(result_pipe[1]);
  ::close(error_pipe[1]);
  std::string answer, errors;
  bool answer_done = false, errors_done = false, hung = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.run_timeout_s);
  // Until the child closed its answer pipe (it does so by exiting); its stderr is kept (the last
  // bytes) to say why a run died.
  while (!answer_done) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      hung = true;
      break;
    }
    pollfd fds[2] = {{result_pipe[0], POLLIN, 0}, {error_pipe[0], static_cast<short>(errors_done ? 0 : POLLIN), 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    char buf[4096];
    if (fds[0].revents != 0) {
      const ssize_t n = ::read(result_pipe[0], buf, sizeof buf);
      if (n > 0) answer.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) answer_done = true;
    }
    if (!errors_done && fds[1].revents != 0) {
      const ssize_t n = ::read(error_pipe[0], buf, sizeof buf);
      if (n > 0) {
        errors.append(buf, static_cast<std::size_t>(n));
        if (errors.size() > 8192) errors.erase(0, errors.size() - 4096);
      } else if (n == 0 || errno != EINTR) {
        errors_done = true;
      }
    }
  }
  const std::optional<ChildExit> exit = hung ? child.kill_and_wait() : child.wait();
  ::close(result_pipe[0]);
  ::close(error_pipe[0]);
  if (hung)
    return died(c, "the run hung: no answer after " + exact(options.run_timeout_s) + " s of wall-clock time");
  ChaosRun r;
  r.c = c;
  const std::string bad_answer = exit && exit->clean() ? read_chaos_run_json(answer, r) : std::string();
  if (!exit || !exit->clean() || !bad_answer.empty()) {
    std::string what = "the run died: " + (exit ? exit->describe() : std::string("its end was not seen"));
    if (!bad_answer.empty()) what += ", and its answer was unreadable (" + bad_answer + ")";
    const std::string last = last_line(errors);
    if (!last.empty()) what += ": " + last;
    return died(c, what);
  }
  return r;
}

// ---- beyond the guarantee ----------------------------------------------------------------

// The value of "key=<number>" in a trace event's details.
std::optional<double> detail_number(const std::string& details, const std::string& key) {
  const auto at = details.find(key + "=");
  if (at == std::string::npos) return std::nullopt;
  const char* begin = details.data() + at + key.size() + 1;
  double v = 0;
  auto [end, ec] = std::from_chars(begin, details.data() + details.size(), v);
  if (ec != std::errc() || end == begin) return std::nullopt;
  return v;
}

// The node a "failure" event names: details "node=<name>" when present, else the event's node.
NodeId failed_node(const Plan& plan, const TraceEvent& e) {
  const auto at = e.details.find("node=");
  if (at != std::string::npos) {
    const auto end = e.details.find(' ', at);
    const NodeId id = plan.node_id(e.details.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5));
    if (id != kNoNode) return id;
  }
  return e.node;
}

}  // namespace

// ---- names -------------------------------------------------------------------------------

const char* to_string(ChaosFault k) {
  switch (k) {
    case ChaosFault::crash: return "crash";
    case ChaosFault::pause: return "pause";
    case ChaosFault::partition: return "partition";
    case ChaosFault::restart: return "restart";
    case ChaosFault::loss: return "loss";
    case ChaosFault::duplication: return "duplication";
  }
  return "?";
}

std::optional<ChaosFault> parse_chaos_fault(const std::string& s) {
  for (ChaosFault k : kChaosFaults)
    if (s == to_string(k)) return k;
  return std::nullopt;
}

std::string allowed_chaos_faults() {
  std::vector<std::string> names;
  for (ChaosFault k : kChaosFaults) names.push_back(to_string(k));
  return join(names, ", ");
}

std::vector<ChaosFault> chaos_faults_for_driver(const std::string& driver) {
  if (driver == "real") return {ChaosFault::crash, ChaosFault::pause, ChaosFault::restart};
  return {std::begin(kChaosFaults), std::end(kChaosFaults)};
}

const char* to_string(ChaosClass k) {
  switch (k) {
    case ChaosClass::ok: return "ok";
    case ChaosClass::beyond: return "beyond";
    case ChaosClass::violation: return "violation";
  }
  return "?";
}

// ---- options and networks ----------------------------------------------------------------

std::vector<std::string> validate_chaos_options(const ChaosOptions& o) {
  std::vector<std::string> problems;
  if (o.driver != "sim" && o.driver != "real") problems.push_back(unknown_choice("driver", o.driver, "a driver", {"sim", "real"}));
  if (o.approaches.empty()) problems.push_back("no approach to run (allowed: " + allowed_ha_modes() + ")");
  if (o.networks.empty()) problems.push_back("no network to run");
  for (const auto& n : o.networks) {
    const bool known = std::find(std::begin(kChaosNetworks), std::end(kChaosNetworks), n) != std::end(kChaosNetworks);
    if (!known && o.networks_dir.empty())
      problems.push_back(unknown_choice("network", n, "an example network", {std::begin(kChaosNetworks), std::end(kChaosNetworks)}));
  }
  const auto possible = chaos_faults_for_driver(o.driver);
  for (ChaosFault k : o.faults)
    if (!contains(possible, k))
      problems.push_back(std::string("fault kind ") + to_string(k) + " cannot be injected with --driver " + o.driver);
  if (o.duration_s && !(*o.duration_s >= 0.5 && *o.duration_s <= 600.0))
    problems.push_back("--duration-s " + exact(*o.duration_s) + ": must be from 0.5 to 600 s (faults fall in its middle)");
  if (!o.only_case && (o.runs == 0 || o.runs > kChaosRunsMax))
    problems.push_back("--runs " + std::to_string(o.runs) + ": must be from 1 to " + std::to_string(kChaosRunsMax));
  if (!(o.run_timeout_s > 0.0 && o.run_timeout_s <= 86'400.0))
    problems.push_back("--run-timeout-s " + exact(o.run_timeout_s) + ": must be > 0 and <= 86400 s");
  return problems;
}

std::map<std::string, Topology> load_chaos_networks(const ChaosOptions& options, std::vector<std::string>& problems) {
  std::map<std::string, Topology> out;
  const std::string dir = options.networks_dir.empty() ? source_dir() + "/experiments/networks" : options.networks_dir;
  for (const auto& name : options.networks) {
    if (out.count(name) != 0) continue;
    if (name == "default") {
      out[name] = default_topology();
      continue;
    }
    TopologyLoad load = load_topology_file(dir + "/" + name + ".toml");
    if (!load.topology) {
      for (const auto& p : load.problems) problems.push_back("network '" + name + "': " + p);
      continue;
    }
    out[name] = *load.topology;
  }
  return out;
}

// ---- the case ----------------------------------------------------------------------------

ChaosCase chaos_case(const ChaosOptions& options, const std::map<std::string, Topology>& networks, std::size_t index) {
  HAPAIR_CHECK(!options.approaches.empty() && !options.networks.empty());
  ChaosCase c;
  c.index = index;
  c.seed = mix64(options.seed, static_cast<std::uint64_t>(index));
  Rng rng = Rng::derive(c.seed, hash_name("chaos.case"));
  c.network = pick_one(rng, options.networks);
  c.approach = options.random_approach ? pick_one(rng, options.approaches)
                                       : options.approaches[index % options.approaches.size()];
  const auto kinds = effective_faults(options);
  const double duration_s = effective_duration_s(options);
  const bool sim = options.driver == "sim";

  const auto network = networks.find(c.network);
  HAPAIR_CHECK_MSG(network != networks.end(), "network '" << c.network << "' was not loaded");
  SwarmOptions swarm;
  swarm.base = network->second;
  swarm.ha_modes = {c.approach};
  swarm.duration_s = duration_s;
  swarm.crash = false;  // the schedule is ours
  swarm.loss_ratio_max = sim && contains(kinds, ChaosFault::loss) && rng.chance(0.5) ? 0.05 : 0.0;
  swarm.duplication_ratio_max = sim && contains(kinds, ChaosFault::duplication) && rng.chance(0.5) ? 0.05 : 0.0;
  c.topology = swarm_case(c.seed, swarm).topology;
  vary_network(c.topology, rng, options.driver);
  const auto problems = validate(c.topology);
  HAPAIR_CHECK_MSG(problems.empty(), "chaos case " << index << " picked an invalid topology: " << problems.front());

  const Plan plan = make_plan(c.topology);
  c.faults = pick_schedule(plan, rng, kinds, duration_s);
  c.description = describe_case(c);
  return c;
}

// ---- classification ----------------------------------------------------------------------

std::vector<StreamId> unjudged_streams(const Plan& plan) { return order_dependent_streams(plan); }

std::optional<std::string> beyond_guarantee(const Plan& plan, const RunResult& result) {
  struct Pair {
    NodeId acting = kNoNode;
    bool acting_alive = true;
    bool paired = false;  // a live standby holds (or can rebuild) the fragment's state
    bool has_standby = false;
  };
  std::map<FragmentId, Pair> pairs;
  for (const auto& f : plan.fragments) {
    if (f.kind != FragmentKind::operators) continue;
    Pair p;
    p.acting = f.primary;
    p.has_standby = f.standby != kNoNode;
    p.paired = p.has_standby;
    pairs[f.id] = p;
  }
  auto name = [&](NodeId id) { return id < plan.nodes.size() ? plan.nodes[id].name : std::to_string(id); };
  auto at = [](const TraceEvent& e) { return exact(static_cast<double>(e.at_us) / 1e6) + " s"; };

  // Upstream backup recovers two adjacent fragments that lose their primaries together: the
  // upstream one's recovery node restarts from its producer's log and brings the downstream
  // one's restart points with it. A third fragment in the row is beyond that: when fragment U
  // went down while its upstream W was still recovering, U's recovery node got U's restart
  // points from W's recovery node, which has them only as forwarded by W (without what U held
  // for its own consumers); if U's consumer F goes down before U's recovery settled, F's
  // recovery node finds no restart point. A fragment is "recovering" from the moment its primary
  // stopped (the crash, or last heard before a detection) until its takeover plus the time for
  // its neighbours' level-1 acks to reach the new primary again (settle_us).
  struct Recovery {
    bool down = false;
    TimeUs down_us = 0;
    TimeUs settled_us = 0;
    bool behind_recovering = false;  // it went down while an upstream fragment was recovering
  };
  std::map<FragmentId, Recovery> recovering;
  const Settings& settings = plan.settings();
  const TimeUs settle_us =
      us_from_ms(static_cast<double>(2 * settings.retransmit_timeout_ms + 4 * settings.ack_interval_ms));
  auto upstream_backup = [&](FragmentId f) {
    return f < plan.fragments.size() && plan.fragments[f].kind == FragmentKind::operators &&
           plan.fragments[f].ha == HaMode::upstream && settings.trimming != TrimmingRule::conservative;
  };
  auto is_recovering = [&](FragmentId f, TimeUs t) {
    auto it = recovering.find(f);
    return it != recovering.end() && it->second.down && t >= it->second.down_us && t < it->second.settled_us;
  };
  // Returns the reason when this is the third fragment in a row.
  auto went_down = [&](FragmentId f, TimeUs t, const std::string& what) -> std::optional<std::string> {
    if (!upstream_backup(f)) return std::nullopt;
    auto known = recovering.find(f);
    if (known != recovering.end() && known->second.down && known->second.settled_us == kNever) {
      // The detection of a crash already seen: it went down when it was last heard, if earlier.
      known->second.down_us = std::min(known->second.down_us, t);
      return std::nullopt;
    }
    if (is_recovering(f, t)) return std::nullopt;
    bool behind = false;
    for (FragmentId u : plan.fragments[f].upstream) {
      if (!upstream_backup(u) || !is_recovering(u, t)) continue;
      if (recovering[u].behind_recovering) {
        std::string w;
        for (FragmentId x : plan.fragments[u].upstream)
          if (upstream_backup(x) && recovering.count(x) && recovering[x].down_us <= recovering[u].down_us)
            w = plan.fragments[x].name;
        return what + ": fragments " + w + ", " + plan.fragments[u].name + " and " + plan.fragments[f].name +
               " (three in a row) were recovering at once; upstream backup recovers two adjacent fragments, and " +
               plan.fragments[f].name + "'s recovery node finds no restart point (its ids are rebased)";
      }
      behind = true;
    }
    recovering[f] = Recovery{true, t, kNever, behind};
    return std::nullopt;
  };

  for (const TraceEvent& e : result.events) {
    const bool crash = e.event == "failure" && e.details.find("kind=crash") != std::string::npos;
    // A standby acts from its detection on (a takeover of upstream backup is traced only once
    // every restart point arrived); a fenced node no longer acts, and rejoins as the standby.
    const bool takes_over = e.event == "takeover" || e.event == "detection";
    if (!crash && !takes_over && e.event != "fenced" && e.event != "pair_restored" && e.event != "standby_lost") continue;
    const NodeId node = crash ? failed_node(plan, e) : e.node;
    if (node >= plan.nodes.size()) continue;
    auto it = pairs.find(plan.nodes[node].fragment);
    if (it == pairs.end()) continue;
    Pair& p = it->second;
    const std::string fragment = plan.fragments[plan.nodes[node].fragment].name;
    const FragmentId fid = plan.nodes[node].fragment;
    std::optional<std::string> row;
    if (crash && node == p.acting) {
      row = went_down(fid, e.at_us, "crash of " + name(node) + " at " + at(e));
    } else if (e.event == "detection") {
      const double silent_ms = detail_number(e.details, "silent_ms").value_or(static_cast<double>(settings.failure_timeout_ms));
      row = went_down(fid, e.at_us - us_from_ms(silent_ms), "detection by " + name(node) + " at " + at(e));
    } else if (e.event == "takeover" && recovering.count(fid) && recovering[fid].settled_us == kNever) {
      recovering[fid].settled_us = e.at_us + settle_us;
    } else if (e.event == "fenced" && recovering.count(fid) && recovering[fid].settled_us == kNever) {
      recovering[fid].settled_us = e.at_us;  // a detection that lost its epoch tie: the primary acts on
    }
    if (row) return row;
    if (takes_over) {
      p.acting = node;
      p.acting_alive = true;
      p.paired = false;  // the partner is dead or fenced until it rejoins
    } else if (e.event == "fenced") {
      p.paired = false;
      // A node that took over and then was fenced by its primary's renewed claim (the primary
      // dissolved the pair first, PrimaryRole::on_competing_claim) stops acting: its partner acts.
      if (node == p.acting) {
        const PlanFragment& pf = plan.fragments[plan.nodes[node].fragment];
        p.acting = node == pf.primary ? pf.standby : pf.primary;
      }
    } else if (e.event == "standby_lost") {
      p.paired = false;  // the primary runs unprotected until a standby rejoins
    } else if (e.event == "pair_restored") {
      p.acting = node;
      p.acting_alive = true;
      p.paired = true;
    } else if (!p.has_standby) {
      return "crash of " + name(node) + " at " + at(e) + ": fragment " + fragment + " has no standby (ha none)";
    } else if (node == p.acting) {
      if (!p.paired)
        return "crash of " + name(node) + " at " + at(e) + ", the acting primary of " + fragment +
               ", before its pair was restored (no standby held its state)";
      p.paired = false;
      p.acting_alive = false;
    } else {
      if (!p.acting_alive)
        return "crash of " + name(node) + " at " + at(e) + " while the primary of " + fragment +
               " was down and not yet replaced (both nodes of the pair lost)";
      p.paired = false;
    }
  }
  return std::nullopt;
}

ChaosJudgement classify_chaos_run(HaMode approach, bool determinants, bool arbitrary_network,
                                  const SemanticsReport& s, bool completed, const std::vector<std::string>& errors,
                                  const std::optional<std::string>& beyond) {
  if (beyond) return {ChaosClass::beyond, *beyond};
  if (approach == HaMode::none) return {ChaosClass::ok, "no guarantee (ha none)"};
  if (!completed || !errors.empty()) {
    std::string why = completed ? "the run reported an error" : "the run did not complete";
    if (!errors.empty()) why += ": " + errors.front();
    return {ChaosClass::violation, why + " (" + to_string(approach) + " should have recovered)"};
  }
  const std::string counts = " (lost " + std::to_string(s.lost) + ", duplicates " + std::to_string(s.duplicates) +
                             ", differing " + std::to_string(s.differing) + ")";
  switch (approach) {
    case HaMode::none: break;
    case HaMode::amnesia:
      return {ChaosClass::ok, s.lost > 0 ? "gap expected (amnesia)" : "amnesia lost nothing this time"};
    case HaMode::upstream:
      if (s.lost > 0) return {ChaosClass::violation, "upstream backup lost output" + counts};
      if (!arbitrary_network && s.verdict != "precise")
        return {ChaosClass::violation, "upstream backup on a deterministic network gave " + s.verdict + counts};
      return {ChaosClass::ok, arbitrary_network && s.verdict != "precise" ? "rollback expected (arbitrary network)" : ""};
    case HaMode::passive:
      if (s.verdict != "precise") return {ChaosClass::violation, "passive standby gave " + s.verdict + counts};
      return {ChaosClass::ok, ""};
    case HaMode::active:
      if (!determinants && arbitrary_network) {
        if (s.lost > 0) return {ChaosClass::violation, "active standby without determinants lost output" + counts};
        return {ChaosClass::ok, s.verdict != "precise" ? "rollback expected (no determinants)" : ""};
      }
      if (s.verdict != "precise") return {ChaosClass::violation, "active standby gave " + s.verdict + counts};
      return {ChaosClass::ok, ""};
  }
  return {ChaosClass::ok, ""};
}

// ---- the campaign ------------------------------------------------------------------------

std::size_t ChaosReport::violations() const {
  return static_cast<std::size_t>(
      std::count_if(runs.begin(), runs.end(), [](const ChaosRun& r) { return r.klass == ChaosClass::violation; }));
}

ChaosRun run_chaos_case(const ChaosOptions& options, const ChaosCase& c) {
  auto plan = std::make_shared<const Plan>(make_plan(c.topology));
  const Reference reference = compute_reference(*plan);
  RunRequest request;
  request.driver = options.driver;
  request.faults = c.faults;
  request.hapair_binary = options.hapair_binary;
  if (options.only_case && !options.out_dir.empty())
    request.out_dir = options.out_dir + "/case-" + std::to_string(c.index);
  RunOutcome outcome = run_once(plan, request, reference);
  if (options.tamper) options.tamper(c, outcome);
  ChaosRun r;
  r.c = c;
  // The verdict on the streams that can be judged (all of them, unless a Union's merge order is
  // unknown), again after a tamper changed the outcome.
  const SemanticsReport s = options.tamper ? judge_run(judge_against(*plan, reference, outcome.result), reference)
                                           : outcome.semantics;
  for (const NotJudged& n : s.not_judged) r.unjudged.push_back(n.stream);
  if (!s.not_judged.empty()) r.unjudged_reason = s.not_judged.front().reason;
  r.verdict = s.verdict;
  r.lost = s.lost;
  r.duplicates = s.duplicates;
  r.differing = s.differing;
  r.delivered = s.delivered_tuples;
  r.reference = s.reference_tuples;
  r.completed = outcome.result.completed;
  if (!outcome.result.errors.empty()) r.first_error = outcome.result.errors.front();
  for (const auto& e : outcome.result.events) r.takeovers += e.event == "takeover";
  if (outcome.metrics.recovery) r.restore_ms = outcome.metrics.recovery->restore_ms;
  r.disturbed = outcome.metrics.disturbance.disturbed();
  r.disturbance = describe_disturbances(outcome.metrics.disturbance);
  std::map<std::string, std::size_t> detectors;
  for (const DetectionSeen& d : outcome.metrics.disturbance.detections) ++detectors[d.detector];
  for (const auto& [name, n] : detectors)
    r.detectors += (r.detectors.empty() ? "" : " ") + name + "=" + std::to_string(n);
  const ChaosJudgement j =
      classify_chaos_run(c.approach, c.topology.settings.determinants, !reference.arbitrary_operators.empty(), s,
                         outcome.result.completed, outcome.result.errors, beyond_guarantee(*plan, outcome.result));
  r.klass = j.klass;
  r.reason = j.reason;
  // A failure of a node, a driver or the harness (anything but the line that says the output
  // stopped) is a violation whatever the approach promised, ha none and beyond included.
  const std::vector<std::string> failures = harness_errors(outcome.result);
  if (r.klass != ChaosClass::violation && !failures.empty()) {
    r.klass = ChaosClass::violation;
    r.reason = "the harness failed: " + failures.front();
  }
  return r;
}

std::string chaos_run_json(const ChaosRun& r) {
  nlohmann::ordered_json j;
  j["verdict"] = r.verdict;
  j["lost"] = r.lost;
  j["duplicates"] = r.duplicates;
  j["differing"] = r.differing;
  j["delivered"] = r.delivered;
  j["reference"] = r.reference;
  j["unjudged"] = r.unjudged;
  j["unjudged_reason"] = r.unjudged_reason;
  j["completed"] = r.completed;
  j["first_error"] = r.first_error;
  j["takeovers"] = r.takeovers;
  j["restore_ms"] = r.restore_ms ? nlohmann::ordered_json(*r.restore_ms) : nlohmann::ordered_json(nullptr);
  j["disturbed"] = r.disturbed;
  j["disturbance"] = r.disturbance;
  j["detectors"] = r.detectors;
  j["class"] = to_string(r.klass);
  j["reason"] = r.reason;
  return j.dump();
}

std::string read_chaos_run_json(const std::string& text, ChaosRun& r) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return "not JSON";
  if (!j.is_object()) return "not a JSON object";
  // Each field present with its type, or the name of the first that is not.
  std::string wrong;
  auto get = [&](const char* key, auto& out) {
    using T = std::decay_t<decltype(out)>;
    const auto it = j.find(key);
    bool ok = it != j.end();
    if (ok) {
      if constexpr (std::is_same_v<T, bool>) ok = it->is_boolean();
      else if constexpr (std::is_same_v<T, std::string>) ok = it->is_string();
      else if constexpr (std::is_integral_v<T>) ok = it->is_number_unsigned() || (it->is_number_integer() && *it >= 0);
      else if constexpr (std::is_same_v<T, std::vector<std::string>>)
        ok = it->is_array() && std::all_of(it->begin(), it->end(), [](const auto& e) { return e.is_string(); });
      else if constexpr (std::is_same_v<T, std::optional<double>>) ok = it->is_null() || it->is_number();
    }
    if (!ok) {
      if (wrong.empty()) wrong = std::string("field ") + key + (it == j.end() ? " missing" : " of the wrong type");
      return;
    }
    if constexpr (std::is_same_v<T, std::optional<double>>) {
      out = it->is_null() ? std::nullopt : std::optional<double>(it->template get<double>());
    } else {
      out = it->template get<T>();
    }
  };
  ChaosRun got = r;
  std::string klass;
  get("verdict", got.verdict);
  get("lost", got.lost);
  get("duplicates", got.duplicates);
  get("differing", got.differing);
  get("delivered", got.delivered);
  get("reference", got.reference);
  get("unjudged", got.unjudged);
  get("unjudged_reason", got.unjudged_reason);
  get("completed", got.completed);
  get("first_error", got.first_error);
  get("takeovers", got.takeovers);
  get("restore_ms", got.restore_ms);
  get("disturbed", got.disturbed);
  get("disturbance", got.disturbance);
  get("detectors", got.detectors);
  get("class", klass);
  get("reason", got.reason);
  if (!wrong.empty()) return wrong;
  bool known = false;
  for (ChaosClass k : {ChaosClass::ok, ChaosClass::beyond, ChaosClass::violation}) {
    if (klass == to_string(k)) {
      got.klass = k;
      known = true;
    }
  }
  if (!known) return "unknown class " + klass;
  r = std::move(got);
  return {};
}

ChaosReport run_chaos(const ChaosOptions& options) {
  ChaosReport report;
  report.options = options;
  report.problems = validate_chaos_options(options);
  if (!report.problems.empty()) return report;
  const auto networks = load_chaos_networks(options, report.problems);
  if (!report.problems.empty()) return report;

  std::vector<std::size_t> indexes;
  if (options.only_case) indexes.push_back(*options.only_case);
  else
    for (std::size_t i = 0; i < options.runs; ++i) indexes.push_back(i);
  for (std::size_t k = 0; k < indexes.size(); ++k) {
    const ChaosCase c = chaos_case(options, networks, indexes[k]);
    if (options.on_case) options.on_case(k, indexes.size(), c);
    ChaosRun r = options.isolate ? run_isolated(options, c) : run_chaos_case(options, c);
    if (options.on_run) options.on_run(r);
    report.runs.push_back(std::move(r));
  }

  if (!options.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.out_dir + "/cases", ec);
    // The topology of every violating case, so that `hapair run --topology` can repeat it.
    for (const auto& r : report.runs)
      if (r.klass == ChaosClass::violation)
        std::ofstream(options.out_dir + "/cases/case-" + std::to_string(r.c.index) + ".toml") << write_topology(r.c.topology);
    std::ofstream(options.out_dir + "/chaos.csv") << chaos_csv(report);
    std::ofstream(options.out_dir + "/chaos.txt") << chaos_table(report);
  }
  return report;
}

// ---- reports -----------------------------------------------------------------------------

std::string chaos_reproduce_command(const ChaosOptions& o, std::size_t index) {
  std::vector<std::string> approaches, faults;
  for (HaMode m : o.approaches) approaches.push_back(to_string(m));
  for (ChaosFault k : o.faults) faults.push_back(to_string(k));
  std::string cmd = "hapair chaos --runs 1 --seed " + std::to_string(o.seed) + " --case " + std::to_string(index) +
                    " --driver " + o.driver + " --approaches " + join(approaches, ",");
  if (o.random_approach) cmd += " --pick random";
  if (!faults.empty()) cmd += " --faults " + join(faults, ",");
  if (o.networks != std::vector<std::string>(std::begin(kChaosNetworks), std::end(kChaosNetworks)))
    cmd += " --networks " + join(o.networks, ",");
  if (!o.networks_dir.empty()) cmd += " --networks-dir " + o.networks_dir;
  if (o.duration_s) cmd += " --duration-s " + exact(*o.duration_s);
  return cmd;
}

std::string chaos_run_command(const ChaosCase& c, const std::string& driver, const std::string& topology_path) {
  return "hapair run --topology " + topology_path + " --driver " + driver + fault_options(c.faults);
}

namespace {

struct Tally {
  std::size_t runs = 0;
  std::map<std::string, std::size_t> faults;  // kind -> injected
  std::size_t precise = 0, rollback = 0, gap = 0, incomplete = 0, violations = 0;
  std::uint64_t lost = 0, duplicates = 0;
  std::vector<double> restore_ms;

  void add(const ChaosRun& r) {
    ++runs;
    for (const auto& f : r.c.faults) ++faults[to_string(f.kind)];
    if (r.c.topology.sim.loss_ratio > 0) ++faults["loss"];
    if (r.c.topology.sim.duplication_ratio > 0) ++faults["duplication"];
    if (r.verdict == "precise") ++precise;
    else if (r.verdict == "rollback") ++rollback;
    else if (r.verdict == "gap") ++gap;
    if (!r.completed) ++incomplete;
    violations += r.klass == ChaosClass::violation;
    lost += r.lost;
    duplicates += r.duplicates;
    if (r.restore_ms) restore_ms.push_back(*r.restore_ms);
  }
  std::string restore() const {
    if (restore_ms.empty()) return "-";
    double sum = 0;
    for (double v : restore_ms) sum += v;
    return fmt::format("{:.1f}", sum / static_cast<double>(restore_ms.size()));
  }
};

std::string tally_line(const std::string& name, const Tally& t, bool with_violations) {
  auto f = [&](const char* k) {
    auto it = t.faults.find(k);
    return it == t.faults.end() ? std::size_t{0} : it->second;
  };
  std::string out = fmt::format("{:<9} {:>5} {:>6} {:>6} {:>6} {:>6} {:>5} {:>5} {:>8} {:>8} {:>5} {:>6} {:>8} {:>8} {:>10}",
                                name, t.runs, f("crash"), f("pause"), f("partition"), f("restart"), f("loss"),
                                f("duplication"), t.precise, t.rollback, t.gap, t.incomplete, t.lost, t.duplicates,
                                t.restore());
  if (with_violations) out += "  " + std::to_string(t.violations);
  return out + "\n";
}

std::string tally_header(bool with_violations) {
  return fmt::format("{:<9} {:>5} {:>6} {:>6} {:>6} {:>6} {:>5} {:>5} {:>8} {:>8} {:>5} {:>6} {:>8} {:>8} {:>10}",
                     "approach", "runs", "crash", "pause", "part.", "restrt", "loss", "dup", "precise", "rollback", "gap",
                     "incomp", "lost", "dups", "restore ms") +
         (with_violations ? "  violations" : "") + "\n";
}

}  // namespace

std::string chaos_table(const ChaosReport& report) {
  const ChaosOptions& o = report.options;
  std::string out;
  if (!report.problems.empty()) {
    for (const auto& p : report.problems) out += "problem: " + p + "\n";
    return out;
  }
  out += "chaos campaign: seed " + std::to_string(o.seed) + ", driver " + o.driver + ", " +
         std::to_string(report.runs.size()) + " run(s)\n";
  std::map<HaMode, Tally> within, beyond;
  Tally all;
  for (const auto& r : report.runs) {
    (r.klass == ChaosClass::beyond ? beyond : within)[r.c.approach].add(r);
    if (r.klass != ChaosClass::beyond) all.add(r);
  }
  out += "\nwithin the guarantee (faults injected by kind; restore ms: mean time to restore the pair)\n";
  out += tally_header(true);
  for (HaMode m : o.approaches)
    if (within.count(m)) out += tally_line(to_string(m), within[m], true);
  out += tally_line("all", all, true);
  std::map<std::string, std::pair<std::size_t, std::string>> unjudged;  // runs, the first reason
  for (const auto& r : report.runs)
    for (const auto& n : r.unjudged) {
      auto& [runs, reason] = unjudged[r.c.network + "/" + n];
      if (runs++ == 0) reason = r.unjudged_reason;
    }
  for (const auto& [stream, u] : unjudged)
    out += "not judged: stream " + stream + " in " + std::to_string(u.first) +
           " run(s) (the merge order it depends on is unknown; first: " + u.second + ")\n";
  if (!beyond.empty()) {
    out += "\nbeyond the guarantee (a fragment lost every node holding its state; reported, never violations)\n";
    out += tally_header(false);
    for (HaMode m : o.approaches)
      if (beyond.count(m)) out += tally_line(to_string(m), beyond[m], false);
  }
  // Disturbances: takeovers or detections no fault asked for (a false detection; a lost
  // heartbeat under message loss), and which detectors fired.
  std::size_t disturbed = 0;
  std::map<std::string, std::size_t> detector_runs;
  for (const auto& r : report.runs) {
    disturbed += r.disturbed;
    std::istringstream names(r.detectors);
    for (std::string item; names >> item;) ++detector_runs[item.substr(0, item.find('='))];
  }
  out += "\ndisturbed runs (a takeover or detection no fault asked for): " + std::to_string(disturbed) + " of " +
         std::to_string(report.runs.size());
  std::size_t shown = 0;
  for (const auto& r : report.runs)
    if (r.disturbed && shown++ < 3) out += "\n  run " + std::to_string(r.c.index) + ": " + r.disturbance;
  if (disturbed > shown) out += "\n  ... (chaos.csv, column disturbance)";
  out += "\ndetectors that fired:";
  if (detector_runs.empty()) out += " none";
  for (const auto& [name, n] : detector_runs) out += " " + name + " in " + std::to_string(n) + " run(s)";
  out += "\n";
  const std::size_t v = report.violations();
  out += "\nviolations: " + std::to_string(v) + "\n";
  for (const auto& r : report.runs) {
    if (r.klass != ChaosClass::violation) continue;
    out += "  run " + std::to_string(r.c.index) + ": " + r.reason + "\n    case: " + r.c.description +
           "\n    reproduce: " + chaos_reproduce_command(o, r.c.index) + "\n";
    if (!o.out_dir.empty())
      out += "    or: " + chaos_run_command(r.c, o.driver, o.out_dir + "/cases/case-" + std::to_string(r.c.index) + ".toml") + "\n";
  }
  return out;
}

std::string chaos_csv(const ChaosReport& report) {
  std::string out =
      "index,seed,network,approach,faults,loss_ratio,duplication_ratio,verdict,lost,duplicates,differing,delivered,"
      "reference,unjudged_streams,completed,takeovers,restore_ms,class,violation,reason,error,disturbed,detectors,"
      "disturbance,description\n";
  for (const auto& r : report.runs) {
    std::vector<std::string> faults;
    for (const auto& f : r.c.faults) faults.push_back(describe(f));
    CsvRow row;
    row.number(r.c.index).number(r.c.seed).field(r.c.network).field(to_string(r.c.approach)).field(join(faults, "; "));
    row.exact(r.c.topology.sim.loss_ratio).exact(r.c.topology.sim.duplication_ratio).field(r.verdict);
    row.number(r.lost).number(r.duplicates).number(r.differing).number(r.delivered).number(r.reference);
    row.field(join(r.unjudged, " ")).flag(r.completed).number(r.takeovers);
    if (r.restore_ms) row.exact(*r.restore_ms);
    else row.empty();
    row.field(to_string(r.klass)).flag(r.klass == ChaosClass::violation).field(r.reason).field(r.first_error);
    row.flag(r.disturbed).field(r.detectors).field(r.disturbance).field(r.c.description);
    out += row.line();
  }
  return out;
}

}  // namespace hapair
