// Link emulation: what hapair's own transport adds to the messages one node sends to another
// (delay, jitter, loss, duplication, bandwidth), the same in the simulator and on real processes
// (docs/LINKS.md). The kernel of the machines this runs on has no netem, so the sender emulates
// the link: it holds each message in a bounded FIFO delay queue and its loop releases it when due.
//
// Paper: section 2's servers talk over a network; the paper measured on a LAN, section 6 of our
// design asks for WAN-like links ("link delay, jitter and loss are emulated in hapair's
// transport where the kernel cannot"). The protocols above already tolerate loss (retransmission
// after retransmit_timeout_ms), so a precise approach stays precise on a lossy link.
//
// Shape: `LinkModel` decides each message's fate from the link's settings and one seeded Rng
// (pure: time comes in); `LinkQueue<T>` holds the messages (a runtime frame, a simulator
// envelope) until their release time; `OutgoingLinks<T>` is one sender's emulated links by peer.
// The rest resolves a pair of nodes to its settings ([links] overlaid with every matching
// [[link]], in file order) and seeds each direction's Rng from the run's seed and the pair.
//
// Invariants (checked always): a link is FIFO, a message is released no earlier than the one
// handed to it before (jitter never reorders: TCP and so ZeroMQ do not, and the channels above
// are FIFO); no message is released before now + latency_ms; a queue never holds more than
// queue_messages_max messages or queue_bytes_max bytes (a message beyond either is dropped and
// counted, never queued); every draw comes from the link's own Rng in the order messages are
// handed to it, so a seed fixes every fate; a link whose settings change nothing is not built.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocols/check.h"
#include "protocols/core.h"
#include "protocols/plan.h"
#include "protocols/rng.h"

namespace hapair {

// What became of one message handed to a link.
enum class LinkFate : std::uint8_t {
  queued,    // waits in the delay queue until its release time (a copy too when duplicated)
  lost,      // dropped on the way (loss_ratio); it still took its time on the link's bandwidth
  overflow,  // dropped before the link: the delay queue was full
};
const char* to_string(LinkFate);

struct LinkDecision {
  LinkFate fate = LinkFate::queued;
  TimeUs release_us = 0;    // queued: when it leaves the sender
  bool duplicated = false;  // queued: a second copy leaves right after it (same release time)
};

// A link direction's counters, per message (a duplicated message counts once in queued).
struct LinkCounters {
  std::int64_t queued = 0;
  std::int64_t lost = 0;
  std::int64_t duplicated = 0;
  std::int64_t overflow = 0;
  std::int64_t released = 0;   // copies released (duplicates included)
  std::int64_t unsent = 0;     // copies still queued when the sender crashed or stopped
  TimeUs delay_us_total = 0;   // release - hand-over time, summed over released copies
  TimeUs late_us_total = 0;    // how long after its release time each copy really left, summed
};

// One direction of one link: the fate and release time of every message (no storage).
class LinkModel {
 public:
  LinkModel(const LinkSettings& settings, Rng rng);

  // The fate of a message of `bytes` bytes handed to the link at `now_us`, given how much the
  // delay queue holds now. Draws, in this order and only for the knobs that are set: loss, then
  // jitter, then duplication.
  LinkDecision decide(TimeUs now_us, std::size_t bytes, std::size_t queued_messages, std::size_t queued_bytes);

  const LinkSettings& settings() const { return settings_; }
  TimeUs latency_us() const { return latency_us_; }
  TimeUs jitter_us() const { return jitter_us_; }
  // Time to put `bytes` on the link at bandwidth_bytes_per_s (0 without a limit), rounded up.
  TimeUs transmission_us(std::size_t bytes) const;

 private:
  LinkSettings settings_;
  Rng rng_;
  TimeUs latency_us_ = 0;
  TimeUs jitter_us_ = 0;
  TimeUs busy_until_us_ = 0;    // the link serialises bytes: when it has put the last one on
  TimeUs last_release_us_ = 0;  // FIFO: nothing leaves before its predecessor
  TimeUs last_now_us_ = 0;
};

// One direction of one link with its delay queue of messages of type T (a ZeroMQ frame on real
// processes, an envelope in the simulator).
template <typename T>
class LinkQueue {
 public:
  LinkQueue(const LinkSettings& settings, Rng rng) : model_(settings, rng) {}

  // Hands a message to the link. `copy(item)` makes the duplicate when the link duplicates it.
  template <typename Copy>
  LinkFate push(TimeUs now_us, std::size_t bytes, T item, Copy copy) {
    const LinkDecision d = model_.decide(now_us, bytes, queue_.size(), bytes_);
    switch (d.fate) {
      case LinkFate::lost: ++counters_.lost; return d.fate;
      case LinkFate::overflow: ++counters_.overflow; return d.fate;
      case LinkFate::queued: break;
    }
    HAPAIR_CHECK_MSG(queue_.empty() || queue_.back().release_us <= d.release_us,
                     "link released out of order: " << queue_.back().release_us << " then " << d.release_us);
    HAPAIR_CHECK_MSG(d.release_us >= now_us + model_.latency_us(),
                     "release at " << d.release_us << " before now " << now_us << " + latency " << model_.latency_us());
    ++counters_.queued;
    const bool room_for_copy = queue_.size() + 2 <= bound_messages() && bytes_ + 2 * bytes <= bound_bytes();
    if (d.duplicated) {
      ++counters_.duplicated;
      if (room_for_copy) {
        T twin = copy(item);
        hold(now_us, d.release_us, bytes, std::move(item));
        hold(now_us, d.release_us, bytes, std::move(twin));
        return d.fate;
      }
      ++counters_.overflow;  // the copy found no room: dropped at the queue, like any overflow
    }
    hold(now_us, d.release_us, bytes, std::move(item));
    return d.fate;
  }

  // When the oldest message is due; kNever when none waits.
  TimeUs next_release_us() const { return queue_.empty() ? kNever : queue_.front().release_us; }
  // When the newest message is due (the one just pushed); kNever when none waits.
  TimeUs last_release_us() const { return queue_.empty() ? kNever : queue_.back().release_us; }
  // The oldest message, when its release time has come.
  std::optional<T> pop_due(TimeUs now_us) {
    if (queue_.empty() || queue_.front().release_us > now_us) return std::nullopt;
    Held h = std::move(queue_.front());
    queue_.pop_front();
    HAPAIR_CHECK_MSG(bytes_ >= h.bytes, "link queue bytes " << bytes_ << " below a message's " << h.bytes);
    bytes_ -= h.bytes;
    ++counters_.released;
    counters_.delay_us_total += h.release_us - h.handed_us;
    counters_.late_us_total += now_us - h.release_us;
    return std::optional<T>(std::move(h.item));
  }
  // Drops what waits (the sender crashed or stopped: a process's delay queue dies with it).
  std::size_t clear() {
    const std::size_t n = queue_.size();
    counters_.unsent += static_cast<std::int64_t>(n);
    queue_.clear();
    bytes_ = 0;
    return n;
  }

  std::size_t messages() const { return queue_.size(); }
  std::size_t bytes() const { return bytes_; }
  const LinkCounters& counters() const { return counters_; }
  const LinkModel& model() const { return model_; }

 private:
  struct Held {
    TimeUs handed_us = 0;
    TimeUs release_us = 0;
    std::size_t bytes = 0;
    T item;
  };
  void hold(TimeUs now_us, TimeUs release_us, std::size_t bytes, T item) {
    queue_.push_back(Held{now_us, release_us, bytes, std::move(item)});
    bytes_ += bytes;
    HAPAIR_CHECK_MSG(queue_.size() <= bound_messages() && bytes_ <= bound_bytes(),
                     "link queue over its bounds: " << queue_.size() << " messages, " << bytes_ << " bytes");
  }
  std::size_t bound_messages() const { return static_cast<std::size_t>(model_.settings().queue_messages_max); }
  std::size_t bound_bytes() const { return static_cast<std::size_t>(model_.settings().queue_bytes_max); }

  LinkModel model_;
  std::deque<Held> queue_;
  std::size_t bytes_ = 0;
  LinkCounters counters_;
};

// The settings of the messages from node `from` to node `to`: [links], then every [[link]] that
// matches the pair (in either direction when both_ways), in file order, each overriding the
// keys it gives.
LinkSettings link_settings(const Plan& plan, NodeId from, NodeId to);
// The link's own generator: from the run's seed and the two node names, so a run's links draw
// the same in the simulator and on real processes, and a restarted sender draws as its first
// incarnation did.
Rng link_rng(const Plan& plan, NodeId from, NodeId to);
// Whether any pair of the plan's nodes has an emulated link.
bool has_emulated_links(const Plan& plan);

// One sender's emulated links, by peer; a peer whose link emulates nothing has none (its
// messages go straight to the network, at no cost).
template <typename T>
class OutgoingLinks {
 public:
  OutgoingLinks() = default;
  OutgoingLinks(const Plan& plan, NodeId self) {
    for (const PlanNode& n : plan.nodes) {
      if (n.id == self) continue;
      const LinkSettings s = link_settings(plan, self, n.id);
      if (s.emulated()) links_.emplace(n.id, LinkQueue<T>(s, link_rng(plan, self, n.id)));
    }
  }
  bool empty() const { return links_.empty(); }
  LinkQueue<T>* find(NodeId peer) {
    auto it = links_.find(peer);
    return it == links_.end() ? nullptr : &it->second;
  }
  // The earliest release time over every link; kNever when nothing waits.
  TimeUs next_release_us() const {
    TimeUs at = kNever;
    for (const auto& entry : links_) at = std::min(at, entry.second.next_release_us());
    return at;
  }
  // Calls release(peer, item) for every message due at now_us, each link in FIFO order, links in
  // peer order; returns how many.
  template <typename Release>
  std::size_t release_due(TimeUs now_us, Release release) {
    std::size_t n = 0;
    for (auto& entry : links_)
      while (std::optional<T> item = entry.second.pop_due(now_us)) {
        release(entry.first, std::move(*item));
        ++n;
      }
    return n;
  }
  std::size_t clear() {
    std::size_t n = 0;
    for (auto& entry : links_) n += entry.second.clear();
    return n;
  }
  const std::map<NodeId, LinkQueue<T>>& links() const { return links_; }

 private:
  std::map<NodeId, LinkQueue<T>> links_;
};

// Sums the counters of one sender's links (onto `sum`).
template <typename T>
LinkCounters total_counters(const OutgoingLinks<T>& links, LinkCounters sum = {}) {
  for (const auto& entry : links.links()) {
    const LinkCounters& c = entry.second.counters();
    sum.queued += c.queued;
    sum.lost += c.lost;
    sum.duplicated += c.duplicated;
    sum.overflow += c.overflow;
    sum.released += c.released;
    sum.unsent += c.unsent;
    sum.delay_us_total += c.delay_us_total;
    sum.late_us_total += c.late_us_total;
  }
  return sum;
}
// Adds link_queued, link_lost, link_duplicated, link_overflow, link_released, link_unsent and
// link_delay_us_total, link_late_us_total to `out` (only for a sender with emulated links: no keys otherwise).
void add_link_metrics(const LinkCounters& c, Metrics& out);

// One line that says what is emulated ("links: latency_ms=15 jitter_ms=10 on every link, 1 link
// table"), for the commands' logs; empty when nothing is.
std::string describe_links(const Plan& plan);

// Warnings about links that make the heartbeat detector suspect a live partner: a pair's
// heartbeats delayed by latency_ms + jitter_ms at or beyond failure_timeout_ms, or arriving
// heartbeat_interval_ms + jitter_ms apart at or beyond it. Empty when nothing is emulated.
std::vector<std::string> link_warnings(const Plan& plan);

}  // namespace hapair
