#include "driver/link_model.h"

#include <set>

#include <cmath>

#include "protocols/number_text.h"

namespace hapair {

const char* to_string(LinkFate f) {
  switch (f) {
    case LinkFate::queued: return "queued";
    case LinkFate::lost: return "lost";
    case LinkFate::overflow: return "overflow";
  }
  return "?";
}

LinkModel::LinkModel(const LinkSettings& settings, Rng rng) : settings_(settings), rng_(rng) {
  HAPAIR_CHECK_MSG(settings.latency_ms >= 0.0 && settings.jitter_ms >= 0.0 && std::isfinite(settings.latency_ms) &&
                       std::isfinite(settings.jitter_ms),
                   "latency_ms=" << settings.latency_ms << " jitter_ms=" << settings.jitter_ms);
  HAPAIR_CHECK_MSG(settings.loss_ratio >= 0.0 && settings.loss_ratio <= 1.0 && settings.duplication_ratio >= 0.0 &&
                       settings.duplication_ratio <= 1.0,
                   "loss_ratio=" << settings.loss_ratio << " duplication_ratio=" << settings.duplication_ratio);
  HAPAIR_CHECK_MSG(settings.bandwidth_bytes_per_s >= 0.0 && std::isfinite(settings.bandwidth_bytes_per_s),
                   "bandwidth_bytes_per_s=" << settings.bandwidth_bytes_per_s);
  HAPAIR_CHECK_MSG(settings.queue_messages_max >= 1 && settings.queue_bytes_max >= 1,
                   "queue_messages_max=" << settings.queue_messages_max << " queue_bytes_max=" << settings.queue_bytes_max);
  latency_us_ = us_from_ms(settings.latency_ms);
  jitter_us_ = us_from_ms(settings.jitter_ms);
}

TimeUs LinkModel::transmission_us(std::size_t bytes) const {
  if (settings_.bandwidth_bytes_per_s <= 0.0) return 0;
  return static_cast<TimeUs>(std::ceil(static_cast<double>(bytes) * 1e6 / settings_.bandwidth_bytes_per_s));
}

LinkDecision LinkModel::decide(TimeUs now_us, std::size_t bytes, std::size_t queued_messages, std::size_t queued_bytes) {
  HAPAIR_CHECK_MSG(now_us >= last_now_us_, "link time went back: " << now_us << " after " << last_now_us_);
  last_now_us_ = now_us;
  LinkDecision d;
  // Tail drop: a message that finds the queue full never reaches the link, so it takes no
  // bandwidth and no draw.
  if (queued_messages + 1 > static_cast<std::size_t>(settings_.queue_messages_max) ||
      queued_bytes + bytes > static_cast<std::size_t>(settings_.queue_bytes_max)) {
    d.fate = LinkFate::overflow;
    return d;
  }
  // The link serialises bytes: this message goes on the wire when the one before it is done.
  const TimeUs tx_start_us = std::max(now_us, busy_until_us_);
  const TimeUs tx_end_us = tx_start_us + transmission_us(bytes);
  busy_until_us_ = tx_end_us;
  // A lost message vanished on the way, after it used the link (as in the simulated network).
  if (settings_.loss_ratio > 0.0 && rng_.chance(settings_.loss_ratio)) {
    d.fate = LinkFate::lost;
    return d;
  }
  TimeUs delay_us = latency_us_;
  if (jitter_us_ > 0) delay_us += static_cast<TimeUs>(rng_.uniform(0.0, static_cast<double>(jitter_us_)));
  // FIFO: jitter never lets a message overtake the one before it.
  d.release_us = std::max(tx_end_us + delay_us, last_release_us_);
  last_release_us_ = d.release_us;
  d.duplicated = settings_.duplication_ratio > 0.0 && rng_.chance(settings_.duplication_ratio);
  return d;
}

namespace {

// The host a node runs on (protocols/plan.h).
const std::string& pinned_host(const Plan& plan, const PlanNode& n) { return host_of(plan, n.id); }

bool names(const Plan& plan, const std::string& name, const PlanNode& n) {
  return n.name == name || (plan.runs_fragment(n.id) && plan.fragments.at(n.fragment).name == name);
}

bool matches(const Plan& plan, const LinkSpec& l, const PlanNode& from, const PlanNode& to) {
  if (!l.from.empty()) return names(plan, l.from, from) && names(plan, l.to, to);
  return !l.from_host.empty() && pinned_host(plan, from) == l.from_host && pinned_host(plan, to) == l.to_host;
}

}  // namespace

LinkSettings link_settings(const Plan& plan, NodeId from, NodeId to) {
  const LinkTable& table = plan.topology.links;
  LinkSettings s = table.defaults;
  if (table.links.empty()) return s;
  const PlanNode& a = plan.nodes.at(from);
  const PlanNode& b = plan.nodes.at(to);
  for (const LinkSpec& l : table.links)
    if (matches(plan, l, a, b) || (l.both_ways && matches(plan, l, b, a))) apply_link_override(s, l.settings);
  return s;
}

Rng link_rng(const Plan& plan, NodeId from, NodeId to) {
  return Rng::derive(plan.settings().seed, hash_name("link " + plan.nodes.at(from).name + " -> " + plan.nodes.at(to).name));
}

bool has_emulated_links(const Plan& plan) {
  const LinkTable& table = plan.topology.links;
  if (table.defaults.emulated()) return true;
  for (const PlanNode& a : plan.nodes)
    for (const PlanNode& b : plan.nodes)
      if (a.id != b.id && link_settings(plan, a.id, b.id).emulated()) return true;
  return false;
}

void add_link_metrics(const LinkCounters& c, Metrics& out) {
  out["link_queued"] = c.queued;
  out["link_lost"] = c.lost;
  out["link_duplicated"] = c.duplicated;
  out["link_overflow"] = c.overflow;
  out["link_released"] = c.released;
  out["link_unsent"] = c.unsent;
  out["link_delay_us_total"] = c.delay_us_total;
  out["link_late_us_total"] = c.late_us_total;
}

std::string describe_links(const Plan& plan) {
  if (!has_emulated_links(plan)) return "";
  const LinkTable& table = plan.topology.links;
  const LinkSettings& d = table.defaults;
  const LinkSettings none;
  std::string keys;
  auto key = [&](const char* name, double value, double unset) {
    if (value != unset) keys += std::string(keys.empty() ? "" : " ") + name + "=" + shortest_text(value);
  };
  key("latency_ms", d.latency_ms, none.latency_ms);
  key("jitter_ms", d.jitter_ms, none.jitter_ms);
  key("loss_ratio", d.loss_ratio, none.loss_ratio);
  key("duplication_ratio", d.duplication_ratio, none.duplication_ratio);
  key("bandwidth_bytes_per_s", d.bandwidth_bytes_per_s, none.bandwidth_bytes_per_s);
  key("queue_messages_max", static_cast<double>(d.queue_messages_max), static_cast<double>(none.queue_messages_max));
  key("queue_bytes_max", static_cast<double>(d.queue_bytes_max), static_cast<double>(none.queue_bytes_max));
  std::string text = "links: " + (keys.empty() ? std::string("none emulated by default") : keys + " on every link");
  if (!table.links.empty())
    text += ", " + std::to_string(table.links.size()) + (table.links.size() == 1 ? " link table" : " link tables") +
            " over it (docs/LINKS.md)";
  return text;
}

std::vector<std::string> link_warnings(const Plan& plan) {
  std::vector<std::string> out;
  // A table by host that matches no node here: nothing pinned or placed there (on one machine
  // without pins; with --hosts the launcher's [placement] makes it match).
  std::set<std::string> hosts;
  for (const PlanNode& n : plan.nodes)
    if (!pinned_host(plan, n).empty()) hosts.insert(pinned_host(plan, n));
  for (const LinkSpec& l : plan.topology.links.links)
    if (!l.from_host.empty() && (hosts.count(l.from_host) == 0 || hosts.count(l.to_host) == 0))
      out.push_back("[[link]] host '" + l.from_host + "' -> host '" + l.to_host +
                    "': no node is pinned to these hosts, so it emulates nothing here; with --hosts it applies to the "
                    "nodes the placement puts there");
  const Settings& st = plan.settings();
  const double timeout_ms = static_cast<double>(st.failure_timeout_ms);
  for (const PlanFragment& f : plan.fragments) {
    const std::vector<NodeId> replicas = f.replicas();
    for (NodeId a : replicas)
      for (NodeId b : replicas) {
        if (a == b) continue;
        const LinkSettings s = link_settings(plan, a, b);
        if (!s.emulated()) continue;
        const std::string pair = "link " + plan.nodes.at(a).name + " -> " + plan.nodes.at(b).name;
        const std::string who = " (detector = heartbeat, and every simulated run: the standby suspects a live primary; "
                                "real runs with detector = connection+heartbeat use ZMTP heartbeats the emulation does not delay)";
        if (s.latency_ms + s.jitter_ms >= timeout_ms)
          out.push_back(pair + ": latency_ms + jitter_ms = " + shortest_text(s.latency_ms + s.jitter_ms) +
                        " ms >= failure_timeout_ms (" + shortest_text(timeout_ms) + " ms): heartbeats arrive too late" + who);
        else if (static_cast<double>(st.heartbeat_interval_ms) + s.jitter_ms >= timeout_ms)
          out.push_back(pair + ": heartbeat_interval_ms + jitter_ms = " +
                        shortest_text(static_cast<double>(st.heartbeat_interval_ms) + s.jitter_ms) +
                        " ms >= failure_timeout_ms (" + shortest_text(timeout_ms) + " ms): heartbeats may arrive too far apart" + who);
      }
  }
  return out;
}

}  // namespace hapair
