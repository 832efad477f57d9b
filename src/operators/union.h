// Union (paper section 2): merges N >= 2 input streams into one, emitting every input tuple as it
// arrives, numbered 1, 2, 3, ... (timestamp, key, value and lineage unchanged).
//
// Class: arbitrary. The output order depends on the arrival interleaving, so a recovered Union
// regenerates the same multiset of tuples but not necessarily the same ids. Active standby
// (section 4.2) makes the standby's copy reproduce the primary's order exactly: the primary
// records its interleaving as run-length determinants {port, count}; the standby, in follow
// mode, buffers its input per port and emits only as the determinants dictate.
//
// Cause function (section 4.3): for every output not yet forgotten the operator keeps (output id,
// port, input id). The input still needed on port p after output `acked` is everything after the
// largest input of p emitted at or before `acked`; inputs still buffered are always needed.
//
// Merge order (docs/FAULTS.md): every emission, leading or following, is also logged as
// runs (port, first input id, count) for the checker, which recomputes the reference of
// order-sensitive operators downstream from what the primary really chose; a reference run
// replays such a log (replay_merge_order).
//
// Invariants: each port's inputs are emitted in their arrival (id) order; output ids are
// consecutive; a recorded determinant sequence replayed in follow mode reproduces the output ids;
// the merge log describes every output id exactly once, in order.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "operators/operator.h"
#include "protocols/topology.h"

namespace hapair {

class UnionOperator final : public Operator {
 public:
  explicit UnionOperator(const OperatorSpec& spec);

  OperatorKind kind() const override { return OperatorKind::union_op; }
  OperatorClass operator_class() const override { return OperatorClass::arbitrary; }
  std::size_t input_count() const override { return port_count_; }

  void process(std::size_t port, const Tuple& t, Tuples& out) override;
  void end_of_stream(std::size_t port, Tuples& out) override;
  bool has_finished() const override;

  Bytes snapshot() const override;
  bool restore(const Bytes& snapshot) override;

  RestartPoint restart_point(TupleId acked_output) const override;
  bool restart_from(const RestartPoint& point) override;
  void forget_up_to(TupleId acked_output) override;

  bool is_nondeterministic() const override { return true; }
  std::vector<DeterminantRecord> take_determinants() override;
  // Switching follow mode off (a standby taking over) keeps the buffered input and the
  // determinants still pending: the next process() or end_of_stream() first honours the pending
  // determinants as far as possible, then emits the rest in arrival order (recording again).
  void set_follow_determinants(bool follow) override;
  void add_determinants(const std::vector<DeterminantRecord>& records, Tuples& out) override;
  std::size_t buffered_tuples() const override;
  // The smallest of the inputs' boundaries and the buffered tuples' timestamps.
  TimeUs output_boundary(const std::vector<TimeUs>& input_boundaries) const override;

  std::vector<MergeSegment> take_merge_order() override;
  bool replay_merge_order(const std::vector<MergeRun>& runs) override;
  std::uint64_t unmatched_merge_runs() const override { return unmatched_runs_; }

  // Determinant records refused because they name a port that does not exist, or ask for more
  // tuples of a port than it delivered before its end of stream (bad input from the primary).
  std::uint64_t rejected_determinant_records() const { return rejected_records_; }

 private:
  explicit UnionOperator(std::size_t port_count);

  struct Buffered {
    Tuple tuple;
    std::uint64_t arrival = 0;  // global arrival order, to flush buffered input in that order
  };
  struct Cause {
    TupleId output = 0;
    std::uint16_t port = 0;
    TupleId input = 0;
  };

  void emit(std::size_t port, const Tuple& t, Tuples& out);
  void log_emission(std::size_t port, TupleId input, TupleId output);
  // Reference replay: emits what the front runs allow; false while waiting for input.
  bool drain_replay(Tuples& out);
  // Emits what the pending determinants allow; when leading and none are pending, everything
  // still buffered, in arrival order.
  void drain(Tuples& out);

  std::size_t port_count_;
  bool follow_ = false;
  TupleId counter_ = 0;
  std::uint64_t arrival_seq_ = 0;
  std::vector<TupleId> last_seen_;          // per port: the last input id that arrived
  std::vector<bool> ended_;                 // per port
  std::vector<std::deque<Buffered>> buffered_;  // per port: arrived, not yet emitted
  // Cause bookkeeping, in output id order, for outputs after forgotten_up_to_.
  std::deque<Cause> causes_;
  TupleId forgotten_up_to_ = 0;
  std::vector<TupleId> forgotten_emitted_;  // per port: largest input emitted at or before forgotten_up_to_
  std::deque<DeterminantRecord> pending_;   // follow mode: records still to satisfy (front may be partial)
  std::vector<DeterminantRecord> recorded_; // leading: records made since take_determinants()
  std::uint64_t rejected_records_ = 0;
  // Merge log since take_merge_order() (a report: not in snapshots, kept across restore()).
  std::vector<MergeSegment> merge_log_;
  TupleId log_next_output_ = 0;  // the output id that continues the log's last run
  // Reference replay: runs still to honour (front may be partly done), and runs that did not fit.
  std::deque<MergeRun> replay_;
  bool replaying_ = false;
  std::uint64_t unmatched_runs_ = 0;
};

}  // namespace hapair
