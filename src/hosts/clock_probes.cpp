#include "hosts/clock_probes.h"

#include <algorithm>
#include <cstdlib>

#include "protocols/check.h"

namespace hapair {

ClockProbes::ClockProbes(std::vector<std::size_t> target_host, std::size_t hosts, ClockProbesConfig config)
    : hosts_(hosts), config_(config) {
  HAPAIR_CHECK_MSG(config_.probes_per_target >= 1 && config_.reply_timeout_us > 0,
                   "probes_per_target=" << config_.probes_per_target << " reply_timeout_us=" << config_.reply_timeout_us);
  for (std::size_t host : target_host) {
    HAPAIR_CHECK_MSG(host < hosts_, "host=" << host << " hosts=" << hosts_);
    Target t;
    t.host = host;
    targets_.push_back(t);
  }
}

void ClockProbes::begin_round(std::int64_t now_us) {
  HAPAIR_CHECK_MSG(!under_way_, "a clock round began while one is under way");
  under_way_ = true;
  ClockRound round;
  round.began_us = now_us;
  round.hosts.resize(hosts_);
  rounds_.push_back(std::move(round));
  estimators_.clear();
  for (std::size_t h = 0; h < hosts_; ++h) {
    const std::size_t on_host = static_cast<std::size_t>(
        std::count_if(targets_.begin(), targets_.end(), [h](const Target& t) { return t.host == h; }));
    estimators_.emplace_back(std::max<std::size_t>(1, on_host * config_.probes_per_target));
  }
  for (Target& t : targets_) {
    t.sent = 0;
    t.outstanding.reset();
  }
}

void ClockProbes::set_reachable(std::size_t target, bool reachable) {
  Target& t = targets_.at(target);
  t.reachable = reachable;
  if (!reachable && t.outstanding) {
    t.outstanding.reset();
    if (under_way_) ++rounds_.back().hosts[t.host].lost;
  }
}

std::vector<ClockProbes::Send> ClockProbes::due(std::int64_t now_us) {
  std::vector<Send> out;
  if (!under_way_) return out;
  bool left = false;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    Target& t = targets_[i];
    if (t.outstanding && now_us - t.outstanding_since_us >= config_.reply_timeout_us) {
      t.outstanding.reset();
      ++rounds_.back().hosts[t.host].lost;
    }
    if (t.outstanding) {
      left = true;
      continue;
    }
    if (!t.reachable || t.sent >= config_.probes_per_target) continue;
    t.outstanding = next_sequence_++;
    t.outstanding_since_us = now_us;
    ++t.sent;
    left = true;
    out.push_back(Send{i, ClockRequest{*t.outstanding, now_us}});
  }
  if (!left) finish_round();
  return out;
}

void ClockProbes::on_reply(std::size_t target, const ClockReply& reply, std::int64_t t4_us) {
  if (target >= targets_.size()) {
    ++stray_;
    return;
  }
  Target& t = targets_[target];
  if (!under_way_ || !t.outstanding || *t.outstanding != reply.sequence) {
    ++stray_;
    return;
  }
  t.outstanding.reset();
  HostClockRound& host = rounds_.back().hosts[t.host];
  const ClockProbe probe{reply.t1_us, reply.t2_us, reply.t3_us, t4_us};
  if (estimators_[t.host].add(probe)) ++host.used;
  else ++host.dropped;
  host.estimate = estimators_[t.host].best();
}

void ClockProbes::finish_round() {
  under_way_ = false;
  for (Target& t : targets_) t.outstanding.reset();
}

HostClockSummary ClockProbes::host_summary(std::size_t host) const {
  HAPAIR_CHECK_MSG(host < hosts_, "host=" << host << " hosts=" << hosts_);
  HostClockSummary s;
  if (!rounds_.empty()) s.first = rounds_.front().hosts[host].estimate;
  s.correction_us = s.first && !s.first->admits(0) ? s.first->offset_us() : 0;
  for (const ClockRound& r : rounds_) {
    const std::optional<ClockOffset>& e = r.hosts[host].estimate;
    if (!e) continue;
    const std::int64_t error = std::llabs(e->offset_us() - s.correction_us) + e->error_bound_us();
    s.error_bound_us = std::max(s.error_bound_us.value_or(0), error);
  }
  return s;
}

std::optional<std::int64_t> ClockProbes::run_error_bound_us() const {
  std::vector<std::int64_t> bounds;
  for (std::size_t h = 0; h < hosts_; ++h) {
    // A host that runs no node has no times to correct.
    if (std::none_of(targets_.begin(), targets_.end(), [h](const Target& t) { return t.host == h; })) continue;
    const std::optional<std::int64_t> b = host_summary(h).error_bound_us;
    if (!b) return std::nullopt;
    bounds.push_back(*b);
  }
  if (bounds.empty()) return std::nullopt;
  std::sort(bounds.rbegin(), bounds.rend());
  return bounds.size() == 1 ? bounds[0] : bounds[0] + bounds[1];
}

}  // namespace hapair
