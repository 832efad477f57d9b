// A minimal in-memory network for role tests: every node's core in one process, messages
// delivered in FIFO order after a fixed latency, crashes at given times, virtual time.
// (The full simulator in src/sim has latency distributions, bandwidth, loss and partitions;
// this one exists so the role cores can be tested without it.) Effects are applied by the driver
// kit (driver/effects.h), with its wake rule, as in the runtime and the simulator.
#pragma once

#include <map>
#include <memory>
#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include "node/node_factory.h"
#include "driver/effects.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair::test {

class LoopNetwork {
 public:
  explicit LoopNetwork(std::shared_ptr<const Plan> plan, TimeUs latency_us = 100) : plan_(plan), latency_us_(latency_us) {
    for (const auto& n : plan->nodes) {
      cores_.push_back(make_node_core(plan, n.id));
      appliers_.emplace_back(n.id);
    }
    for (NodeId n = 0; n < cores_.size(); ++n) push(0, n, Start{});
  }

  void crash_at(const std::string& node, TimeUs at) { crashes_.emplace(at, plan_->node_id(node)); }
  // Drop every message of this kind (by name, e.g. "checkpoint_ack") sent in [from, to).
  void drop_kind(const std::string& kind, TimeUs from, TimeUs to) { drops_.push_back({kind, from, to}); }

  // Runs until every sink finished or `limit_us` passes. Returns true if the sinks finished.
  bool run(TimeUs limit_us) {
    while (!queue_.empty()) {
      auto [at, seq, node, event] = queue_.top();
      if (at > limit_us) break;
      while (!crashes_.empty() && crashes_.begin()->first <= at) {
        crashed_.insert(crashes_.begin()->second);
        crash_times_[crashes_.begin()->second] = crashes_.begin()->first;
        crashes_.erase(crashes_.begin());
      }
      queue_.pop();
      now_ = at;
      if (crashed_.count(node)) continue;
      if (std::holds_alternative<Tick>(event) && !appliers_[node].wake().take(at)) continue;  // superseded
      NodeEffects effects(*this, node, at);
      appliers_[node].apply(at, cores_[node]->handle(at, event), effects);
      if (sinks_finished()) return true;
    }
    return sinks_finished();
  }

  bool sinks_finished() {
    for (const auto& f : plan_->fragments)
      if (f.kind == FragmentKind::sink) {
        bool done = false;
        for (const auto& t : traces_) done |= t.node == f.primary && t.kind == TraceKind::end_of_output;
        if (!done) return false;
      }
    return true;
  }

  const std::vector<Delivery>& deliveries() const { return deliveries_; }
  const std::vector<TraceEvent>& traces() const { return traces_; }
  bool has_trace(const std::string& event) const {
    for (const auto& t : traces_)
      if (to_string(t.kind) == event) return true;
    return false;
  }
  Metrics metrics(const std::string& node) const { return cores_[plan_->node_id(node)]->metrics(); }
  std::int64_t sent(const std::string& kind) const {
    auto it = sent_by_kind_.find(kind);
    return it == sent_by_kind_.end() ? 0 : it->second;
  }
  const std::string& fatal() const { return fatal_; }
  TimeUs now() const { return now_; }

 private:
  using Item = std::tuple<TimeUs, std::uint64_t, NodeId, Event>;
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return std::tie(std::get<0>(a), std::get<1>(a)) > std::tie(std::get<0>(b), std::get<1>(b));
    }
  };
  struct Drop {
    std::string kind;
    TimeUs from, to;
  };
  void push(TimeUs at, NodeId n, Event e) { queue_.emplace(at, seq_++, n, std::move(e)); }

  // This network's side of the effects (driver/effects.h) of one node at one time.
  struct NodeEffects final : EffectsDriver {
    LoopNetwork& net;
    NodeId node;
    TimeUs at;
    NodeEffects(LoopNetwork& n, NodeId id, TimeUs t) : net(n), node(id), at(t) {}
    void send(Outgoing&& out) override {
      const std::string kind = message_kind_name(out.envelope.body);
      bool drop = false;
      for (const auto& d : net.drops_) drop |= d.kind == kind && at >= d.from && at < d.to;
      if (drop) {
        ++net.dropped_;
        return;
      }
      ++net.sent_by_kind_[kind];
      TimeUs deliver = std::max(at + net.latency_us_, net.link_free_[{node, out.to}]);
      net.link_free_[{node, out.to}] = deliver;
      net.push(deliver, out.to, Received{std::move(out.envelope)});
    }
    void deliver(std::vector<Delivery>& batch) override {
      net.deliveries_.insert(net.deliveries_.end(), batch.begin(), batch.end());
    }
    void record_trace(TraceEvent&& t) override { net.traces_.push_back(std::move(t)); }
    void record_merge_order(MergeOrder&&) override {}
    void schedule_wake(TimeUs wake_us) override { net.push(wake_us, node, Tick{}); }
    void finished() override {}
    void fatal_error(std::string&& message) override { net.fatal_ = std::move(message); }
  };

  std::shared_ptr<const Plan> plan_;
  TimeUs latency_us_;
  std::vector<std::unique_ptr<NodeCore>> cores_;
  std::vector<EffectsApplier> appliers_;
  std::priority_queue<Item, std::vector<Item>, Later> queue_;
  std::uint64_t seq_ = 0;
  std::multimap<TimeUs, NodeId> crashes_;
  std::set<NodeId> crashed_;
  std::map<NodeId, TimeUs> crash_times_;
  std::map<std::pair<NodeId, NodeId>, TimeUs> link_free_;
  std::vector<Drop> drops_;
  std::vector<Delivery> deliveries_;
  std::vector<TraceEvent> traces_;
  std::map<std::string, std::int64_t> sent_by_kind_;
  std::int64_t dropped_ = 0;
  std::string fatal_;
  TimeUs now_ = 0;
};

}  // namespace hapair::test
