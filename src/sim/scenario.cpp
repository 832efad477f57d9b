#include "sim/scenario.h"

#include <cmath>
#include <sstream>
#include <utility>

#include "protocols/check.h"
#include "protocols/rng.h"
#include "sim/message_size.h"

namespace hapair {
Scenario::Scenario(std::shared_ptr<const Plan> plan, CoreFactory factory)
    : plan_(std::move(plan)), factory_(std::move(factory)) {
  HAPAIR_CHECK(plan_ != nullptr);
  HAPAIR_CHECK(factory_ != nullptr);
}

Scenario::~Scenario() = default;

NodeId Scenario::checked_node(const std::string& name) const {
  if (name == kAnyNode) return kNoNode;
  for (const auto& n : plan_->nodes)
    if (n.name == name) return n.id;
  HAPAIR_CHECK_MSG(false, "scenario names unknown node '" << name << "'");
  return kNoNode;
}

Scenario& Scenario::seed(std::uint64_t seed) {
  HAPAIR_CHECK_MSG(sim_ == nullptr, "script the scenario before running it");
  options_.seed = seed;
  return *this;
}

Scenario& Scenario::fault(const FaultSpec& fault) {
  HAPAIR_CHECK_MSG(sim_ == nullptr, "script the scenario before running it");
  options_.faults.push_back(fault);
  return *this;
}

Scenario& Scenario::crash(const std::string& node, double at_s) { return fault({FaultKind::crash, node, "", at_s, 0.0}); }

Scenario& Scenario::pause(const std::string& node, double at_s, double duration_s) {
  return fault({FaultKind::pause, node, "", at_s, duration_s});
}

Scenario& Scenario::restart(const std::string& node, double at_s) {
  return fault({FaultKind::restart, node, "", at_s, 0.0});
}

Scenario& Scenario::partition(const std::string& a, const std::string& b, double from_s, double until_s) {
  return fault({FaultKind::partition, a, b, from_s, until_s - from_s});
}

Scenario& Scenario::drop_kind(const std::string& kind, const std::string& from, const std::string& to, double from_s,
                              double until_s) {
  HAPAIR_CHECK_MSG(sim_ == nullptr, "script the scenario before running it");
  checked_node(from);
  checked_node(to);
  options_.kind_drops.push_back(KindDrop{kind, from == kAnyNode ? "" : from, to == kAnyNode ? "" : to, from_s, until_s});
  return *this;
}

Scenario& Scenario::observe(SendObserver observer) {
  HAPAIR_CHECK_MSG(sim_ == nullptr, "script the scenario before running it");
  observers_.push_back(std::move(observer));
  return *this;
}

Scenario& Scenario::log(std::function<void(const std::string&)> log) {
  HAPAIR_CHECK_MSG(sim_ == nullptr, "script the scenario before running it");
  options_.log = std::move(log);
  return *this;
}

SimOptions& Scenario::options() {
  HAPAIR_CHECK_MSG(sim_ == nullptr, "script the scenario before running it");
  return options_;
}

void Scenario::start_if_needed() {
  if (sim_) return;
  SimOptions o = options_;
  auto user = std::move(o.on_send);
  o.on_send = [this, user](const SentMessage& m) {
    ++sent_[{m.envelope->body.index(), m.from, m.to}];
    for (const auto& observer : observers_) observer(m);
    if (user) user(m);
  };
  sim_ = std::make_unique<Simulator>(plan_, std::move(o), factory_);
}

const RunResult& Scenario::run_until_quiet() {
  start_if_needed();
  sim_->run_until_quiet();
  result_ = sim_->result();
  return result_;
}

const RunResult& Scenario::run_until(double t_s) {
  start_if_needed();
  sim_->run_until(static_cast<TimeUs>(std::llround(t_s * 1e6)));
  result_ = sim_->result();
  return result_;
}

const RunResult& Scenario::result() const { return result_; }

Metrics Scenario::metrics(const std::string& node) const {
  HAPAIR_CHECK_MSG(sim_ != nullptr, "run the scenario before asking for metrics");
  return sim_->node_metrics(node);
}

std::int64_t Scenario::sent_count(const std::string& kind, const std::string& from, const std::string& to) const {
  const std::size_t k = sim::message_kind_index(kind);
  HAPAIR_CHECK_MSG(k < sim::kMessageKindCount, "unknown message kind '" << kind << "'");
  const NodeId f = checked_node(from);
  const NodeId t = checked_node(to);
  std::int64_t n = 0;
  for (const auto& [key, count] : sent_) {
    const auto& [kind_index, sender, receiver] = key;
    if (kind_index == k && (f == kNoNode || sender == f) && (t == kNoNode || receiver == t)) n += count;
  }
  return n;
}

std::uint64_t Scenario::effective_seed() const { return options_.seed.value_or(plan_->settings().seed); }

Simulator& Scenario::simulator() {
  start_if_needed();
  return *sim_;
}

// ---- swarm mode --------------------------------------------------------------------------

namespace {

// Integers and milliseconds in closed ranges, from the swarm's own generator.
std::int64_t pick(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(hi - lo + 1)));
}
double pick(Rng& rng, double lo, double hi) { return rng.uniform(lo, hi); }
double pick_log(Rng& rng, double lo, double hi) { return std::exp(rng.uniform(std::log(lo), std::log(hi))); }

}  // namespace

SwarmCase swarm_case(std::uint64_t seed, const SwarmOptions& options) {
  HAPAIR_CHECK_MSG(options.duration_s > 0.0, "duration_s=" << options.duration_s);
  Rng rng = Rng::derive(seed, hash_name("sim.swarm"));
  SwarmCase c;
  c.seed = seed;
  c.topology = options.base;
  Settings& s = c.topology.settings;
  SimSettings& n = c.topology.sim;
  s.seed = seed;
  s.duration_s = options.duration_s;

  if (!options.ha_modes.empty()) {
    s.ha = options.ha_modes[rng.below(options.ha_modes.size())];
    for (auto& f : c.topology.fragments) f.ha.reset();
  }
  s.batch_tuples = pick(rng, std::int64_t{10}, std::int64_t{200});
  s.batch_flush_ms = pick(rng, std::int64_t{1}, std::int64_t{5});
  s.heartbeat_interval_ms = pick(rng, std::int64_t{5}, std::int64_t{20});
  s.failure_timeout_ms = s.heartbeat_interval_ms * pick(rng, std::int64_t{3}, std::int64_t{6});
  s.ack_interval_ms = pick(rng, std::int64_t{5}, std::int64_t{40});
  s.checkpoint_interval_ms = pick(rng, std::int64_t{20}, std::int64_t{200});

  n.link_latency_ms = pick(rng, 0.05, 2.0);
  n.link_jitter_ms = pick(rng, 0.0, n.link_latency_ms / 2.0);
  n.bandwidth_bytes_per_s = pick_log(rng, 1e7, 1.25e9);
  n.cpu_us_per_tuple = pick(rng, 0.5, 4.0);
  n.cpu_us_per_message = pick(rng, 2.0, 20.0);
  n.loss_ratio = options.loss_ratio_max > 0.0 ? pick(rng, 0.0, options.loss_ratio_max) : 0.0;
  n.duplication_ratio = options.duplication_ratio_max > 0.0 ? pick(rng, 0.0, options.duplication_ratio_max) : 0.0;
  n.reorder_ratio = options.reorder_ratio_max > 0.0 ? pick(rng, 0.0, options.reorder_ratio_max) : 0.0;

  for (auto& f : c.topology.fragments)
    if (f.kind == FragmentKind::source) f.source.rate_tps = static_cast<double>(pick(rng, std::int64_t{500}, std::int64_t{4000}));

  std::ostringstream d;
  d << "swarm seed=" << seed << " ha=" << to_string(s.ha) << " batch_tuples=" << s.batch_tuples
    << " batch_flush_ms=" << s.batch_flush_ms << " heartbeat_interval_ms=" << s.heartbeat_interval_ms
    << " failure_timeout_ms=" << s.failure_timeout_ms << " ack_interval_ms=" << s.ack_interval_ms
    << " checkpoint_interval_ms=" << s.checkpoint_interval_ms << " link_latency_ms=" << n.link_latency_ms
    << " link_jitter_ms=" << n.link_jitter_ms << " bandwidth_bytes_per_s=" << n.bandwidth_bytes_per_s
    << " cpu_us_per_tuple=" << n.cpu_us_per_tuple << " cpu_us_per_message=" << n.cpu_us_per_message
    << " loss_ratio=" << n.loss_ratio << " duplication_ratio=" << n.duplication_ratio
    << " reorder_ratio=" << n.reorder_ratio;

  if (options.crash) {
    // A primary of an operator fragment is named like its fragment (docs/ARCHITECTURE.md).
    std::vector<std::string> candidates;
    for (const auto& f : c.topology.fragments)
      if (f.kind == FragmentKind::operators) candidates.push_back(f.name);
    if (!candidates.empty()) {
      FaultSpec crash;
      crash.kind = FaultKind::crash;
      crash.node = candidates[rng.below(candidates.size())];
      // The middle 60% of the run, on a whole millisecond.
      const auto from_ms = static_cast<std::int64_t>(std::ceil(options.duration_s * 200.0));
      const auto until_ms = static_cast<std::int64_t>(std::floor(options.duration_s * 800.0));
      crash.at_s = static_cast<double>(pick(rng, from_ms, std::max(from_ms, until_ms))) / 1000.0;
      c.faults.push_back(crash);
      d << " crash=" << crash.node << "@" << crash.at_s << "s";
    }
  }
  c.description = d.str();
  return c;
}

}  // namespace hapair
