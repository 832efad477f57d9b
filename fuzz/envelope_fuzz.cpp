// Fuzz target: valid Cap'n Proto envelopes with absurd fields, sent to the role cores of a
// running network (every approach), interleaved with the network's own traffic.
//
// The decoder only proves bytes are a well-formed Envelope; whether a *well-formed* message with
// a huge count, an unknown node id, an epoch from the past or the future, or a checkpoint chunk
// out of order is harmless is up to the roles behind it (STYLE.md rule 3: stale, duplicate or
// malformed input from a peer is counted and dropped, never an assertion). So this target runs
// the built-in network (and one with a Union, so active standby ships determinants) in a small
// in-memory network under one of the approaches and, driven by the input, does any of:
//   - deliver a generated envelope (fuzz/envelope_generator.h) to any node, through the codec;
//   - let the network run for a while (virtual time, FIFO links with a fixed latency);
//   - deliver again one of the network's own recent messages — a duplicate, or late, or out of
//     order (checkpoint chunks included) — possibly with its bytes flipped, or its header's epoch
//     and sender replaced;
//   - crash a node (its partner learns it through PeerLost), restart a crashed one, or tell a
//     node that some peer is lost when it is not.
// Any invariant check that fires (HAPAIR_CHECK aborts), any sanitizer report, is a finding.
// Every message a core sends must also encode and decode (it is what the runtime would put on
// the wire).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include "node/node_factory.h"
#include "envelope_generator.h"
#include "fuzz_check.h"
#include "protocols/codec.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair::fuzz {
namespace {

void require(bool ok, const char* what) { hapair::fuzz::require(ok, "envelope_fuzz", what); }

// The built-in network; with `with_union` its filter fragment first merges a second source's
// stream through a Union (an arbitrary operator: determinants under active standby).
Topology network(bool with_union, HaMode ha, bool delta) {
  Topology t = default_topology();
  t.settings.ha = ha;
  t.settings.duration_s = 0.5;
  t.settings.checkpoint_interval_ms = 20;
  // Slower heartbeats than the default: fewer timer events per input, so more inputs per second.
  t.settings.heartbeat_interval_ms = 40;
  t.settings.failure_timeout_ms = 120;
  t.settings.checkpoint_mode = delta ? CheckpointMode::delta : CheckpointMode::full;
  // Small chunks, so a checkpoint comes in several chunks that can arrive out of order.
  t.settings.checkpoint_chunk_bytes = 1024;
  t.settings.output_queue_tuples_max = 2000;
  t.settings.input_queue_tuples_max = 2000;
  t.settings.inflight_tuples_max = 500;
  for (auto& f : t.fragments) {
    if (f.kind == FragmentKind::source) f.source.rate_tps = 400.0;
  }
  if (with_union) {
    FragmentSpec second = t.fragments.at(0);
    second.name = "source2";
    second.source.stream = "raw2";
    t.fragments.insert(t.fragments.begin() + 1, second);
    for (auto& f : t.fragments) {
      if (f.name != "filter") continue;
      OperatorSpec merge;
      merge.name = "merge";
      merge.kind = OperatorKind::union_op;
      merge.inputs = {"raw", "raw2"};
      merge.output = "merged";
      f.operators.at(0).inputs = {"merged"};
      f.operators.insert(f.operators.begin(), merge);
    }
  }
  return t;
}

class Network {
 public:
  explicit Network(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {
    for (const auto& n : plan_->nodes) cores_.push_back(make_node_core(plan_, n.id));
    wake_.assign(cores_.size(), kNever);
    for (NodeId n = 0; n < cores_.size(); ++n) push(0, n, Start{});
  }

  // Handles at most `events` queued events; false when nothing is left to do.
  bool run(int events) {
    for (int i = 0; i < events; ++i) {
      if (queue_.empty()) return false;
      auto [at, seq, node, event] = queue_.top();
      queue_.pop();
      now_ = at;
      if (crashed_.count(node)) continue;
      if (std::holds_alternative<Tick>(event) && wake_[node] != at) continue;  // superseded
      handle(node, event);
    }
    return !queue_.empty();
  }

  // Hands `envelope` to `node` now, as the runtime would after decoding it.
  void inject(NodeId node, Envelope envelope) {
    if (node >= cores_.size() || crashed_.count(node)) return;
    handle(node, Received{std::move(envelope)});
  }
  void peer_lost(NodeId node, NodeId peer, Detector detector) {
    if (node >= cores_.size() || crashed_.count(node)) return;
    handle(node, PeerLost{peer, detector});
  }
  void crash(NodeId node) {
    if (node >= cores_.size() || crashed_.count(node)) return;
    crashed_.insert(node);
    // Its pair partner sees the connection close, as with the connection detector.
    const auto& frag = plan_->fragments.at(plan_->nodes.at(node).fragment);
    std::vector<NodeId> partners{frag.primary};
    partners.insert(partners.end(), frag.standbys.begin(), frag.standbys.end());
    for (NodeId partner : partners)
      if (partner != node && partner != kNoNode) push(now_ + 1000, partner, PeerLost{node, Detector::connection});
  }
  void restart(NodeId node) {
    if (!crashed_.count(node)) return;
    crashed_.erase(node);
    cores_[node] = make_node_core(plan_, node);
    wake_[node] = kNever;
    push(now_ + 1, node, Start{true, false});
  }

  std::size_t nodes() const { return cores_.size(); }
  // The last messages the cores sent (destination and envelope), for re-delivery.
  const std::deque<Outgoing>& recent() const { return recent_; }
  TimeUs now() const { return now_; }

 private:
  using Item = std::tuple<TimeUs, std::uint64_t, NodeId, Event>;
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return std::tie(std::get<0>(a), std::get<1>(a)) > std::tie(std::get<0>(b), std::get<1>(b));
    }
  };
  static constexpr TimeUs kLatencyUs = 100;
  static constexpr std::size_t kRecentMax = 48;
  static constexpr std::size_t kQueueMax = 20000;

  void push(TimeUs at, NodeId n, Event e) {
    if (queue_.size() >= kQueueMax) return;  // a runaway input: stop feeding it
    queue_.emplace(at, seq_++, n, std::move(e));
  }

  void handle(NodeId node, const Event& event) {
    Effects eff = cores_[node]->handle(now_, event);
    for (auto& out : eff.sends) {
      // Every 16th message goes through the codec, as the runtime would send it.
      if (seq_ % 16 == 0) {
        DecodeStats stats;
        if (!decode(encode(out.envelope), stats).has_value())
          std::fprintf(stderr, "envelope_fuzz: node %u sent %s that does not decode: %s\n", unsigned(node),
                       message_kind_name(out.envelope.body), stats.last_error.c_str());
        require(stats.dropped == 0, "a core sent a message that does not decode");
      }
      if (out.to >= cores_.size()) continue;  // counted by the core as unknown, nothing to deliver
      recent_.push_back(out);
      if (recent_.size() > kRecentMax) recent_.pop_front();
      push(now_ + kLatencyUs, out.to, Received{std::move(out.envelope)});
    }
    if (eff.wake_at_us != kNever) {
      const TimeUs w = std::max(eff.wake_at_us, now_ + 1);
      if (w != wake_[node]) {
        wake_[node] = w;
        push(w, node, Tick{});
      }
    }
  }

  std::shared_ptr<const Plan> plan_;
  std::vector<std::unique_ptr<NodeCore>> cores_;
  std::vector<TimeUs> wake_;
  std::priority_queue<Item, std::vector<Item>, Later> queue_;
  std::uint64_t seq_ = 0;
  std::set<NodeId> crashed_;
  std::deque<Outgoing> recent_;
  TimeUs now_ = 0;
};

// Encodes and decodes `envelope` (so only what a peer could really deliver gets through);
// with `flips`, first flips that many bytes of the encoding at fuzzed positions.
std::optional<Envelope> through_the_wire(const Envelope& envelope, FuzzedDataProvider& in, int flips) {
  Bytes bytes = encode(envelope);
  for (int i = 0; i < flips && !bytes.empty(); ++i) {
    const std::size_t at = in.ConsumeIntegralInRange<std::size_t>(0, bytes.size() - 1);
    bytes[at] ^= in.ConsumeIntegralInRange<std::uint8_t>(1, 255);
  }
  DecodeStats stats;
  auto decoded = decode(bytes, stats);
  if (flips == 0) {
    // A generated envelope may be refused only for the decoder's documented reasons (a chunk
    // index outside its count, ...); when accepted, it must survive the trip unchanged.
    if (decoded) require(encode(*decoded) == bytes, "an envelope changed on its way through the codec");
  }
  return decoded;
}

}  // namespace
}  // namespace hapair::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hapair;
  using namespace hapair::fuzz;
  FuzzedDataProvider in(data, size);
  const bool with_union = in.ConsumeBool();
  const bool delta = in.ConsumeBool();
  const auto ha = static_cast<HaMode>(in.ConsumeIntegralInRange<int>(0, 4));
  auto plan = std::make_shared<const Plan>(make_plan(network(with_union, ha, delta)));
  Network net(plan);
  EnvelopeGenerator gen(in, plan->nodes.size(), plan->streams.size(), plan->fragments.size());
  // Let the pairs form and the first checkpoints flow before the first injection.
  net.run(in.ConsumeIntegralInRange<int>(0, 300));

  for (int step = 0; step < 48 && in.remaining_bytes() > 0; ++step) {
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:
      case 1: {  // a generated envelope, to a real node
        const NodeId to = in.ConsumeIntegralInRange<NodeId>(0, static_cast<NodeId>(net.nodes() - 1));
        if (auto e = through_the_wire(gen.envelope(), in, 0)) net.inject(to, std::move(*e));
        break;
      }
      case 2:
      case 3:  // the network's own traffic
        net.run(in.ConsumeIntegralInRange<int>(1, 100));
        break;
      case 4: {  // one of its recent messages again: late, duplicated, out of order, altered
        if (net.recent().empty()) break;
        Outgoing out = net.recent().at(in.ConsumeIntegralInRange<std::size_t>(0, net.recent().size() - 1));
        switch (in.ConsumeIntegralInRange<int>(0, 3)) {
          case 0: break;                                         // as it was
          case 1: out.envelope.header.epoch = gen.epoch(); break;  // an old or a future epoch
          case 2: out.envelope.header.sender = gen.node(); break;  // from someone else
          default: out.to = gen.node(); break;                     // to someone else
        }
        const int flips = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int>(1, 4);
        if (auto e = through_the_wire(out.envelope, in, flips)) net.inject(out.to, std::move(*e));
        break;
      }
      case 5: {  // a detector report, true or not
        const NodeId to = in.ConsumeIntegralInRange<NodeId>(0, static_cast<NodeId>(net.nodes() - 1));
        net.peer_lost(to, gen.node(), in.ConsumeBool() ? Detector::connection : Detector::heartbeat);
        break;
      }
      case 6:
        net.crash(in.ConsumeIntegralInRange<NodeId>(0, static_cast<NodeId>(net.nodes() - 1)));
        break;
      default:
        net.restart(in.ConsumeIntegralInRange<NodeId>(0, static_cast<NodeId>(net.nodes() - 1)));
        break;
    }
  }
  // Whatever was injected, the network must keep working through its own messages.
  net.run(300);
  return 0;
}
