// The simulated network: one FIFO link per ordered pair of nodes, with latency, jitter,
// bandwidth, loss, duplication, reordering, partitions and per-kind drop rules.
//
// docs/ARCHITECTURE.md (the simulator) and section 6 (partitions, beyond the paper's fail-stop
// model). The paper's experiments run over a LAN where a checkpoint's size costs transmission
// time; here a message starts transmitting when the previous one on its link has finished, so
// big checkpoints delay what follows them, exactly as on a real socket.
//
// Invariants: every random choice comes from the one Rng handed in, drawn in an order that
// depends only on the sequence of send() calls, so a seed fixes every fate; a message sent on a
// cut link, or in flight when the link is cut, never arrives; a link's transmissions never
// overlap; without reorder_ratio a link delivers in send order (jitter never overtakes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "protocols/ids.h"
#include "protocols/rng.h"
#include "protocols/topology.h"

namespace hapair::sim {

// Drops every message of one kind on the matching links while from_us <= send time < until_us
// (scripted scenarios use it to knock out, say, every checkpoint ack). kNoNode matches any node.
struct KindDropRule {
  std::size_t kind_index = 0;  // index into kMessageKindNames
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  TimeUs from_us = 0;
  TimeUs until_us = kNever;
};

enum class DropReason { none, loss, partition, rule };
const char* to_string(DropReason);

// What the network decided for one message.
struct Transmission {
  DropReason dropped = DropReason::none;
  TimeUs tx_start_us = 0;   // when its first byte goes on the link
  TimeUs arrival_us = 0;    // when the receiver gets it
  bool duplicated = false;  // a second copy arrives at duplicate_arrival_us
  TimeUs duplicate_arrival_us = 0;
  std::uint64_t cut_generation = 0;  // for arrives(): the link's cut count at send time
};

class Network {
 public:
  Network(const SimSettings& settings, std::size_t node_count, Rng rng);

  // Decides the fate and timing of a message of `bytes` bytes handed to the link at `now_us`.
  Transmission send(TimeUs now_us, NodeId from, NodeId to, std::size_t kind_index, std::size_t bytes);
  // Whether a message sent with `cut_generation` survives to its arrival (the link was not cut
  // in between).
  bool arrives(NodeId from, NodeId to, std::uint64_t cut_generation) const;

  // Cuts both directions between a and b until as many heal() calls; nested cuts count.
  void cut(NodeId a, NodeId b);
  void heal(NodeId a, NodeId b);
  bool is_cut(NodeId from, NodeId to) const;

  void add_drop_rule(const KindDropRule& rule) { rules_.push_back(rule); }

  // The sender crashed at `at_us`: what it had queued behind the transmission in progress on
  // each of its links never leaves, so those links are free again once that transmission ends.
  // The caller drops the messages themselves (their tx_start_us is after at_us).
  void sender_crashed(NodeId from, TimeUs at_us);

  // Time to put `bytes` on a link, rounded up to whole microseconds.
  TimeUs transmission_us(std::size_t bytes) const;
  TimeUs latency_us() const { return latency_us_; }
  // The upper bound of the extra delay a reordered message gets.
  TimeUs reorder_delay_max_us() const { return reorder_delay_max_us_; }

 private:
  struct Link {
    TimeUs busy_until_us = 0;
    TimeUs last_arrival_us = 0;  // of the last message not held back by reordering
    int cuts = 0;
    std::uint64_t cut_generation = 0;
    // Transmissions not yet finished, as (start, end), oldest first; needed to undo queued ones
    // when the sender crashes. Bounded by what flow control lets a sender queue.
    std::deque<std::pair<TimeUs, TimeUs>> pending;
  };
  Link& link(NodeId from, NodeId to);
  const Link* find_link(NodeId from, NodeId to) const;
  bool rule_drops(TimeUs now_us, NodeId from, NodeId to, std::size_t kind_index) const;
  TimeUs one_way_delay_us();

  SimSettings settings_;
  Rng rng_;
  TimeUs latency_us_ = 0;
  TimeUs jitter_us_ = 0;
  TimeUs reorder_delay_max_us_ = 0;
  // Links are created on first use; most pairs of a plan never talk.
  std::vector<std::map<NodeId, Link>> links_;
  std::vector<KindDropRule> rules_;
};

}  // namespace hapair::sim
