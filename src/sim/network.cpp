#include "sim/network.h"

#include <algorithm>
#include <cmath>

#include "protocols/check.h"

namespace hapair::sim {

const char* to_string(DropReason r) {
  switch (r) {
    case DropReason::none: return "none";
    case DropReason::loss: return "loss";
    case DropReason::partition: return "partition";
    case DropReason::rule: return "rule";
  }
  return "?";
}

Network::Network(const SimSettings& settings, std::size_t node_count, Rng rng)
    : settings_(settings), rng_(rng), links_(node_count) {
  HAPAIR_CHECK_MSG(settings.bandwidth_bytes_per_s > 0.0, "bandwidth_bytes_per_s=" << settings.bandwidth_bytes_per_s);
  HAPAIR_CHECK_MSG(settings.link_latency_ms >= 0.0 && settings.link_jitter_ms >= 0.0,
                   "link_latency_ms=" << settings.link_latency_ms << " link_jitter_ms=" << settings.link_jitter_ms);
  latency_us_ = us_from_ms(settings.link_latency_ms);
  jitter_us_ = us_from_ms(settings.link_jitter_ms);
  // A reordered message is held back by up to ten mean one-way delays (at least a millisecond),
  // which is enough for the messages sent right after it to overtake it.
  reorder_delay_max_us_ = std::max<TimeUs>(10 * (latency_us_ + jitter_us_), 1000);
}

Network::Link& Network::link(NodeId from, NodeId to) {
  HAPAIR_CHECK_MSG(from < links_.size() && to < links_.size(),
                   "link " << from << "->" << to << " outside " << links_.size() << " nodes");
  return links_[from][to];
}

const Network::Link* Network::find_link(NodeId from, NodeId to) const {
  if (from >= links_.size()) return nullptr;
  auto it = links_[from].find(to);
  return it == links_[from].end() ? nullptr : &it->second;
}

TimeUs Network::transmission_us(std::size_t bytes) const {
  return static_cast<TimeUs>(std::ceil(static_cast<double>(bytes) * 1e6 / settings_.bandwidth_bytes_per_s));
}

bool Network::rule_drops(TimeUs now_us, NodeId from, NodeId to, std::size_t kind_index) const {
  for (const auto& r : rules_) {
    if (r.kind_index != kind_index || now_us < r.from_us || now_us >= r.until_us) continue;
    if (r.from != kNoNode && r.from != from) continue;
    if (r.to != kNoNode && r.to != to) continue;
    return true;
  }
  return false;
}

TimeUs Network::one_way_delay_us() {
  TimeUs d = latency_us_;
  if (jitter_us_ > 0) d += static_cast<TimeUs>(rng_.uniform(0.0, static_cast<double>(jitter_us_)));
  return d;
}

Transmission Network::send(TimeUs now_us, NodeId from, NodeId to, std::size_t kind_index, std::size_t bytes) {
  Link& l = link(from, to);
  Transmission t;
  t.cut_generation = l.cut_generation;
  if (l.cuts > 0) {
    t.dropped = DropReason::partition;
    return t;
  }
  if (rule_drops(now_us, from, to, kind_index)) {
    t.dropped = DropReason::rule;
    return t;
  }
  // The link is FIFO: this message starts when the one before it has been put on the wire.
  while (!l.pending.empty() && l.pending.front().second <= now_us) l.pending.pop_front();
  t.tx_start_us = std::max(now_us, l.busy_until_us);
  const TimeUs tx_end_us = t.tx_start_us + transmission_us(bytes);
  l.busy_until_us = tx_end_us;
  if (tx_end_us > now_us) l.pending.emplace_back(t.tx_start_us, tx_end_us);

  // A lost message still occupied the link: it was sent and vanished on the way.
  if (settings_.loss_ratio > 0.0 && rng_.chance(settings_.loss_ratio)) {
    t.dropped = DropReason::loss;
    return t;
  }
  // Jitter alone never reorders a link (TCP, and so ZeroMQ, deliver a connection in order): a
  // message arrives no earlier than the one sent before it.
  t.arrival_us = std::max(tx_end_us + one_way_delay_us(), l.last_arrival_us);
  l.last_arrival_us = t.arrival_us;
  // A reordered message is held back without holding back the ones behind it.
  if (settings_.reorder_ratio > 0.0 && rng_.chance(settings_.reorder_ratio))
    t.arrival_us += static_cast<TimeUs>(rng_.uniform(0.0, static_cast<double>(reorder_delay_max_us_)));
  if (settings_.duplication_ratio > 0.0 && rng_.chance(settings_.duplication_ratio)) {
    t.duplicated = true;
    t.duplicate_arrival_us = std::max(tx_end_us + one_way_delay_us(), t.arrival_us);
  }
  return t;
}

bool Network::arrives(NodeId from, NodeId to, std::uint64_t cut_generation) const {
  const Link* l = find_link(from, to);
  HAPAIR_CHECK_MSG(l != nullptr, "arrival on link " << from << "->" << to << " that never carried a message");
  return l->cuts == 0 && l->cut_generation == cut_generation;
}

void Network::cut(NodeId a, NodeId b) {
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    Link& l = link(from, to);
    if (l.cuts++ == 0) ++l.cut_generation;
  }
}

void Network::heal(NodeId a, NodeId b) {
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    Link& l = link(from, to);
    HAPAIR_CHECK_MSG(l.cuts > 0, "heal of link " << from << "->" << to << " that is not cut");
    --l.cuts;
  }
}

bool Network::is_cut(NodeId from, NodeId to) const {
  const Link* l = find_link(from, to);
  return l != nullptr && l->cuts > 0;
}

void Network::sender_crashed(NodeId from, TimeUs at_us) {
  HAPAIR_CHECK(from < links_.size());
  for (auto& [to, l] : links_[from]) {
    (void)to;
    TimeUs free_at_us = at_us;
    while (!l.pending.empty() && l.pending.back().first > at_us) l.pending.pop_back();
    if (!l.pending.empty()) free_at_us = std::max(free_at_us, l.pending.back().second);
    l.busy_until_us = std::min(l.busy_until_us, free_at_us);
  }
}

}  // namespace hapair::sim
