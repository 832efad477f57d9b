// Small NodeCores and hand-made plans for testing the simulator itself, independent of the
// real protocol cores: a scripted core that sends given messages at given times and records
// everything it is handed, and a source -> relays -> sink chain without acknowledgements.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocols/core.h"
#include "protocols/plan.h"
#include "sim/simulator.h"

namespace hapair::simtest {

// A plan with one fragment per node, all primaries, in the given order (node id = index).
inline std::shared_ptr<Plan> make_test_plan(const std::vector<std::pair<std::string, FragmentKind>>& nodes) {
  auto plan = std::make_shared<Plan>();
  plan->topology.name = "sim-test";
  plan->topology.settings.duration_s = 1.0;
  plan->topology.settings.drain_timeout_s = 1.0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    PlanNode n;
    n.id = static_cast<NodeId>(i);
    n.name = nodes[i].first;
    n.fragment = static_cast<FragmentId>(i);
    plan->nodes.push_back(n);
    PlanFragment f;
    f.id = static_cast<FragmentId>(i);
    f.name = nodes[i].first;
    f.kind = nodes[i].second;
    f.primary = n.id;
    plan->fragments.push_back(f);
  }
  return plan;
}

// A network with no randomness and no CPU cost, so times in tests are exact sums.
inline SimSettings exact_network(double latency_ms, double bandwidth_bytes_per_s) {
  SimSettings s;
  s.link_latency_ms = latency_ms;
  s.link_jitter_ms = 0.0;
  s.bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  s.cpu_us_per_message = 0.0;
  s.cpu_us_per_tuple = 0.0;
  return s;
}

inline Outgoing outgoing(TimeUs now, NodeId from, NodeId to, Message body) {
  Outgoing o;
  o.to = to;
  o.envelope.header.sender = from;
  o.envelope.header.sent_us = now;
  o.envelope.body = std::move(body);
  return o;
}

// ---- the scripted core ---------------------------------------------------------------------

enum class SeenKind { start, tick, received };

struct Seen {
  TimeUs now_us = 0;
  int incarnation = 0;  // 0 for the first core of the node, 1 after its first restart, ...
  SeenKind kind = SeenKind::start;
  std::optional<Envelope> envelope;
};

// What every scripted core was handed, kept across crashes and restarts.
struct Journal {
  std::map<std::string, std::vector<Seen>> seen;
  std::map<std::string, int> cores_made;

  std::vector<Seen> received(const std::string& node) const {
    std::vector<Seen> out;
    auto it = seen.find(node);
    if (it == seen.end()) return out;
    for (const auto& s : it->second)
      if (s.kind == SeenKind::received) out.push_back(s);
    return out;
  }
};

struct ScriptedSend {
  TimeUs at_us = 0;
  NodeId to = kNoNode;
  Message body;
};

struct Script {
  std::vector<ScriptedSend> sends;  // sent at their time (or at the first call after it)
  TimeUs tick_every_us = 0;         // > 0: also wake up periodically
  TimeUs heartbeat_every_us = 0;    // > 0: send a heartbeat to heartbeat_to on every period
  NodeId heartbeat_to = kNoNode;
  NodeId forward_to = kNoNode;      // forward every received message's body there
  TimeUs fatal_at_us = kNever;      // report a fatal error at the first call at or after this
};

class ScriptCore : public NodeCore {
 public:
  ScriptCore(std::shared_ptr<Journal> journal, std::string name, NodeId self, Script script, int incarnation)
      : journal_(std::move(journal)), name_(std::move(name)), self_(self), script_(std::move(script)),
        incarnation_(incarnation) {}

  Effects handle(TimeUs now, const Event& event) override {
    Effects e;
    Seen s{now, incarnation_, SeenKind::start, std::nullopt};
    if (std::holds_alternative<Tick>(event)) s.kind = SeenKind::tick;
    if (const auto* r = std::get_if<Received>(&event)) {
      s.kind = SeenKind::received;
      s.envelope = r->envelope;
      ++received_;
      if (const auto* batch = std::get_if<TupleBatch>(&r->envelope.body)) {
        for (const auto& t : batch->tuples) e.deliveries.push_back(Delivery{now, batch->stream, t});
        if (batch->end_of_stream) e.finished = true;
      }
      if (script_.forward_to != kNoNode) e.sends.push_back(out(now, script_.forward_to, r->envelope.body));
    }
    journal_->seen[name_].push_back(std::move(s));
    while (next_send_ < script_.sends.size() && script_.sends[next_send_].at_us <= now) {
      const auto& send = script_.sends[next_send_++];
      e.sends.push_back(out(now, send.to, send.body));
    }
    if (next_send_ < script_.sends.size()) e.wake_at(script_.sends[next_send_].at_us);
    const TimeUs period = script_.heartbeat_every_us > 0 ? script_.heartbeat_every_us : script_.tick_every_us;
    if (period > 0) {
      if (now >= next_period_us_) {
        if (script_.heartbeat_every_us > 0) e.sends.push_back(out(now, script_.heartbeat_to, Heartbeat{++heartbeats_}));
        next_period_us_ = (now / period + 1) * period;
      }
      e.wake_at(next_period_us_);
    }
    if (now >= script_.fatal_at_us) e.fatal_error = "scripted fatal error";
    return e;
  }

  Metrics metrics() const override {
    return {{"received", received_}, {"output_queue_tuples", static_cast<std::int64_t>(next_send_)}};
  }

 private:
  Outgoing out(TimeUs now, NodeId to, Message body) const { return outgoing(now, self_, to, std::move(body)); }

  std::shared_ptr<Journal> journal_;
  std::string name_;
  NodeId self_;
  Script script_;
  int incarnation_;
  std::size_t next_send_ = 0;
  std::int64_t received_ = 0;
  std::uint64_t heartbeats_ = 0;
  TimeUs next_period_us_ = 0;
};

// Nodes without a script get an empty one (they only record).
inline CoreFactory script_factory(std::shared_ptr<Journal> journal, std::map<std::string, Script> scripts) {
  return [journal, scripts](std::shared_ptr<const Plan> plan, NodeId id) -> std::unique_ptr<NodeCore> {
    const std::string& name = plan->nodes.at(id).name;
    auto it = scripts.find(name);
    const int incarnation = journal->cores_made[name]++;
    return std::make_unique<ScriptCore>(journal, name, id, it == scripts.end() ? Script{} : it->second, incarnation);
  };
}

// Nodes "a", "b", "c" (ids 0, 1, 2) on the given network.
inline std::shared_ptr<Plan> three_nodes(const SimSettings& sim) {
  auto plan = make_test_plan({{"a", FragmentKind::operators}, {"b", FragmentKind::operators}, {"c", FragmentKind::operators}});
  plan->topology.sim = sim;
  return plan;
}

struct ScriptedRun {
  std::shared_ptr<Journal> journal = std::make_shared<Journal>();
  RunResult result;
};

// Runs scripted cores up to `until_us` of virtual time.
inline ScriptedRun run_scripted(std::shared_ptr<Plan> plan, std::map<std::string, Script> scripts, SimOptions options,
                                TimeUs until_us) {
  ScriptedRun r;
  Simulator sim(plan, std::move(options), script_factory(r.journal, std::move(scripts)));
  sim.run_until(until_us);
  r.result = sim.result();
  return r;
}

inline Checkpoint checkpoint_of_bytes(std::size_t payload_bytes) {
  Checkpoint c;
  c.checkpoint_id = 1;
  c.payload.assign(payload_bytes, 0x5a);
  return c;
}

// ---- a chain: source -> relay ... -> sink ---------------------------------------------------

struct ChainSpec {
  std::uint64_t tuples_total = 1000;
  std::size_t batch_tuples = 100;
  TimeUs batch_interval_us = 1000;
};

// Node 0 emits tuples_total tuples in batches to node 1, one batch per interval, the last batch
// marked end_of_stream; every middle node forwards what it gets to the next; the last node
// delivers and finishes at end of stream. No acks, no flow control: enough to load the network.
class ChainCore : public NodeCore {
 public:
  ChainCore(ChainSpec spec, NodeId self, NodeId last) : spec_(spec), self_(self), last_(last) {}

  Effects handle(TimeUs now, const Event& event) override {
    Effects e;
    if (self_ == 0) {
      if (!std::holds_alternative<Received>(event) && now >= next_batch_us_ && emitted_ < spec_.tuples_total) {
        TupleBatch b;
        b.stream = 0;
        const std::uint64_t n = std::min<std::uint64_t>(spec_.batch_tuples, spec_.tuples_total - emitted_);
        b.tuples.reserve(n);
        for (std::uint64_t i = 0; i < n; ++i) {
          ++emitted_;
          b.tuples.push_back(Tuple{emitted_, now, static_cast<std::int64_t>(emitted_ % 8), static_cast<double>(emitted_ % 100), emitted_});
        }
        b.end_of_stream = emitted_ == spec_.tuples_total;
        processed_ += static_cast<std::int64_t>(n);
        e.tuples_processed += n;
        e.sends.push_back(out(now, 1, std::move(b)));
        next_batch_us_ = now + spec_.batch_interval_us;
      }
      if (emitted_ < spec_.tuples_total) e.wake_at(next_batch_us_);
      return e;
    }
    const auto* r = std::get_if<Received>(&event);
    if (r == nullptr) return e;
    const auto* batch = std::get_if<TupleBatch>(&r->envelope.body);
    if (batch == nullptr) return e;
    processed_ += static_cast<std::int64_t>(batch->tuples.size());
    e.tuples_processed += batch->tuples.size();
    if (self_ == last_) {
      e.deliveries.reserve(batch->tuples.size());
      for (const auto& t : batch->tuples) e.deliveries.push_back(Delivery{now, batch->stream, t});
      if (batch->end_of_stream) e.finished = true;
    } else {
      e.sends.push_back(out(now, static_cast<NodeId>(self_ + 1), *batch));
    }
    return e;
  }

  Metrics metrics() const override {
    return {{"tuples_processed", processed_}, {"retained_tuples", processed_ % 1000}};
  }

 private:
  Outgoing out(TimeUs now, NodeId to, TupleBatch b) const { return outgoing(now, self_, to, std::move(b)); }

  ChainSpec spec_;
  NodeId self_;
  NodeId last_;
  std::uint64_t emitted_ = 0;
  TimeUs next_batch_us_ = 0;
  std::int64_t processed_ = 0;
};

// A plan "n0" (source) -> "n1" ... -> "n<count-1>" (sink).
inline std::shared_ptr<Plan> make_chain_plan(std::size_t count) {
  std::vector<std::pair<std::string, FragmentKind>> nodes;
  for (std::size_t i = 0; i < count; ++i) {
    // Built with append: g++ 12 warns falsely (-Wrestrict) on "n" + std::to_string(i).
    std::string name = "n";
    name.append(std::to_string(i));
    nodes.emplace_back(std::move(name),
                       i == 0 ? FragmentKind::source : (i + 1 == count ? FragmentKind::sink : FragmentKind::operators));
  }
  return make_test_plan(nodes);
}

inline CoreFactory chain_factory(ChainSpec spec) {
  return [spec](std::shared_ptr<const Plan> plan, NodeId id) -> std::unique_ptr<NodeCore> {
    return std::make_unique<ChainCore>(spec, id, static_cast<NodeId>(plan->nodes.size() - 1));
  };
}

}  // namespace hapair::simtest
