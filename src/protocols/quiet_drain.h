// The quiet-drain rule that ends a run which cannot complete, shared by both drivers (the
// launcher of real processes and the simulator), so they end such runs at the same point.
//
// Not a paper concept: a run ends when every sink has seen the end of every input (ARCHITECTURE.md
// "End of run"). Without HA (or beyond what an approach survives) a crash means a sink never
// sees it, and waiting for drain_timeout_s only wastes time. So, once the sources' duration_s
// has passed, a run whose output went quiet ends as incomplete: no sink delivery, no change of
// any live node's output queues, and no fault event for drain_quiet_s — but never sooner than
// the longest retransmission back-off (a link that lost messages is retried only that often, so
// a quiet period shorter than that may still end with a re-send).
//
// Invariant: the rule never fires while a fault is still to come (a resume or a restart can
// revive the output) nor while a restarted node has not started yet (the caller says so through
// `pending`), and a node that is down does not hold it back.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "protocols/core.h"
#include "protocols/topology.h"

namespace hapair {

class QuietDrain {
 public:
  QuietDrain(const Settings& settings, std::size_t nodes)
      : duration_us_(static_cast<TimeUs>(settings.duration_s * 1e6)),
        window_us_(std::max(static_cast<TimeUs>(settings.drain_quiet_s * 1e6),
                            retransmit_backoff_max_ms(settings) * 1000)),
        nodes_(nodes) {}

  // The quiet period the rule waits for: drain_quiet_s, at least the longest retransmission
  // back-off.
  TimeUs window_us() const { return window_us_; }

  // A sink delivery or a fault event (crash, pause, resume, restart, partition, heal).
  void activity(TimeUs now) { last_activity_us_ = std::max(last_activity_us_, now); }

  // A node's counters as it reported them; only its output-queue gauges ("output_queue...")
  // matter. The first report counts as a change.
  void report(TimeUs now, NodeId node, const Metrics& counters) {
    Node& n = nodes_.at(node);
    std::vector<std::pair<std::string, std::int64_t>> queues;
    for (const auto& [name, value] : counters)
      if (name.rfind("output_queue", 0) == 0) queues.emplace_back(name, value);
    if (!n.reported || queues != n.queues) {
      n.reported = true;
      n.queues = std::move(queues);
      n.changed_us = now;
    }
  }

  // A crashed node does not hold the rule back; a restarted one does again (from its restart).
  void set_down(NodeId node, bool down) { nodes_.at(node).down = down; }

  // Whether the run should end as incomplete now; `pending`: something is still to come that
  // can revive the output (a fault action, a restarted node that has not started yet).
  bool quiet(TimeUs now, bool pending) const {
    if (pending || now < duration_us_ || now - last_activity_us_ < window_us_) return false;
    for (const Node& n : nodes_)
      if (!n.down && now - n.changed_us < window_us_) return false;
    return true;
  }

 private:
  struct Node {
    bool reported = false;
    bool down = false;
    std::vector<std::pair<std::string, std::int64_t>> queues;
    TimeUs changed_us = 0;
  };
  TimeUs duration_us_;
  TimeUs window_us_;
  TimeUs last_activity_us_ = 0;
  std::vector<Node> nodes_;
};

}  // namespace hapair
