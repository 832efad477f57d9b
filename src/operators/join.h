// Windowed equi-Join (paper section 2): a left tuple l (port 0) and a right tuple r (port 1)
// match when l.key == r.key and |l.ts - r.ts| <= join_window. Each match emits id = ++counter,
// ts = max(l.ts, r.ts), the key, combine(l.value, r.value) and lineage = hash(l.lineage, r.lineage).
//
// Class: deterministic (section 3). The output must not depend on how the two inputs interleave
// on arrival, so the join processes tuples in merge order by (ts, port, id): a tuple of port p
// with ts t waits in a buffer until the other port q has seen a later ts (or the same ts with
// q > p) or has ended. Processing a tuple x evicts from both sides every tuple older than
// x.ts - window, matches x against the other side in the partner's (ts, id) order, and then keeps
// x in its own side.
//
// Cause function (section 4.3): every processing step that emitted output remembers x's merge
// key, its output id range and, per port, the oldest input still held after its eviction. To
// regenerate the outputs after `acked`, restart at the first step with an output after `acked`:
// replay each port from that step's oldest held input, process silently (no output, no ids)
// every tuple before x's merge key, and continue numbering from the step's first output id.
//
// Invariants: outputs leave in merge order of their later input; given each port's input
// sequence (in ts order), the output is the same for every arrival interleaving. Inputs whose ts
// goes backwards on a port are still joined (with an explicit window check), but the result then
// depends on arrival order.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <utility>

#include "operators/operator.h"
#include "operators/sorted_run.h"
#include "protocols/topology.h"

namespace hapair {

class Join final : public Operator {
 public:
  explicit Join(const OperatorSpec& spec);

  OperatorKind kind() const override { return OperatorKind::join; }
  OperatorClass operator_class() const override { return OperatorClass::deterministic; }
  std::size_t input_count() const override { return 2; }

  void process(std::size_t port, const Tuple& t, Tuples& out) override;
  void end_of_stream(std::size_t port, Tuples& out) override;
  bool has_finished() const override;

  Bytes snapshot() const override;
  bool restore(const Bytes& snapshot) override;

  RestartPoint restart_point(TupleId acked_output) const override;
  bool restart_from(const RestartPoint& point) override;
  void forget_up_to(TupleId acked_output) override;

  // Tuples waiting for the other port to make them processable in merge order.
  std::size_t buffered_tuples() const override;
  // An output's ts is its later input's: the smallest of the inputs' boundaries and the buffered
  // tuples' timestamps bounds every later one.
  TimeUs output_boundary(const std::vector<TimeUs>& input_boundaries) const override;
  // Tuples held in the join state (both sides), for matching later tuples.
  std::size_t state_tuples() const;

  double combine(double left, double right) const;

 private:
  Join(TimeUs window_us, JoinCombine combine);

  struct MergeKey {
    TimeUs ts_us = 0;
    std::uint8_t port = 0;
    TupleId id = 0;
    friend auto operator<=>(const MergeKey&, const MergeKey&) = default;
  };
  using TimeKey = std::pair<TimeUs, TupleId>;
  struct ByTime {
    bool operator()(const Tuple& a, const Tuple& b) const { return TimeKey{a.ts_us, a.id} < TimeKey{b.ts_us, b.id}; }
  };
  using TupleRun = SortedRun<Tuple, ByTime>;
  // One port's held tuples. They are kept in the order they are processed, which is (ts, id)
  // order unless the port's ts goes backwards, so each run below is appended to and taken from
  // its front (sorted_run.h), where trees cost three nodes a tuple.
  struct Side {
    TupleRun by_time;                         // eviction order and the snapshot's
    std::map<std::int64_t, TupleRun> by_key;  // matching index: per key, in (ts, id) order
    SortedRun<TupleId, std::less<TupleId>> ids;  // the oldest held input first
    void insert(const Tuple& t);
    void evict_before(TimeUs bound_us);
  };
  struct Step {
    MergeKey key;                       // of the processed tuple x
    TupleId first_output_id = 0;
    TupleId last_output_id = 0;
    std::array<TupleId, 2> oldest_needed{};  // per port, after eviction, before x was kept
  };

  void run(Tuples& out);
  void process_one(std::size_t port, const Tuple& x, Tuples& out);
  bool processable(std::size_t port, TimeUs ts_us) const;
  RestartPoint make_point(const std::array<TupleId, 2>& replay_after, bool has_silent, const MergeKey& silent_through,
                          TupleId counter) const;

  TimeUs window_us_;
  JoinCombine combine_;

  TupleId counter_ = 0;
  std::array<Side, 2> sides_;
  std::array<std::map<TimeKey, Tuple>, 2> buffers_;
  std::array<TupleId, 2> last_seen_id_{};
  std::array<bool, 2> has_seen_{};
  std::array<TimeUs, 2> max_seen_ts_us_{};
  std::array<TupleId, 2> last_processed_id_{};
  std::array<bool, 2> ended_{};
  bool has_processed_ = false;
  MergeKey last_processed_;
  // After restart_from: tuples up to this merge key are processed without emitting.
  bool has_silent_ = false;
  MergeKey silent_through_;
  std::deque<Step> steps_;  // cause bookkeeping, in output order, until forgotten
};

}  // namespace hapair
