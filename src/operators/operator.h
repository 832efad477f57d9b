// The operator interface (Aurora's "boxes"), as pure state machines over tuples.
//
// Paper: operators are Filter, Map, Union, windowed Aggregate and Join (section 2). Each belongs
// to a class (section 3) that bounds the recovery an approach can give; each can snapshot and
// restore its state (passive standby checkpoints, section 4.1); each exposes its cause function
// (upstream backup, section 4.3): for a position in its output, the oldest input per input
// stream still needed to regenerate that output.
//
// Invariants: output tuple ids on an operator's output are strictly increasing; Filter and Map
// keep their input's id (so their cause function is the identity); the other operators number
// their outputs 1, 2, 3, ... An operator is fed tuples of one port in increasing id and
// timestamp order.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "protocols/bytes.h"
#include "protocols/messages.h"
#include "protocols/topology.h"
#include "protocols/tuple.h"

namespace hapair {

// Where to restart an operator from empty state so that it regenerates exactly the output
// tuples (same ids, same contents, same order) after a given output position, and reaches the
// same state: replay every input port p from id replay_after[p] + 1 on, after restart_from().
// `resume` is operator specific (e.g. the output counter to continue from and which windows are
// known incomplete and must not be emitted).
struct RestartPoint {
  std::vector<TupleId> replay_after;  // one per input port
  Bytes resume;
  friend bool operator==(const RestartPoint&, const RestartPoint&) = default;
};

// Outputs first_output, first_output + 1, ... of a non-deterministic operator, emitted while it
// followed determinants (`following`) or led, as runs of consecutive inputs of one port.
struct MergeSegment {
  TupleId first_output = 0;
  bool following = false;
  std::vector<MergeRun> runs;
  friend bool operator==(const MergeSegment&, const MergeSegment&) = default;
};

class Operator {
 public:
  virtual ~Operator() = default;

  virtual OperatorKind kind() const = 0;
  virtual OperatorClass operator_class() const = 0;
  virtual std::size_t input_count() const = 0;

  // Processes one tuple arriving on `port`; appends the outputs it produces (ids assigned) to `out`.
  virtual void process(std::size_t port, const Tuple& t, Tuples& out) = 0;
  // Processes tuples[0 .. count) of `port` in order, exactly as process() on each would, and
  // stops after the first of them that leaves `out` holding `out_max` tuples or more (the caller's
  // room before an output queue may be full); returns how many it took (all when it never
  // stopped). The default calls process(); a stateless operator runs one tight loop.
  virtual std::size_t process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                                  std::size_t out_max);
  // End of stream on `port`. Once every port has ended, the operator emits what it still holds
  // (open windows close) and has_finished() becomes true.
  virtual void end_of_stream(std::size_t port, Tuples& out) = 0;
  virtual bool has_finished() const = 0;

  // The whole state (including output id counters and cause bookkeeping); restore() on a freshly
  // constructed operator continues exactly as the snapshotted one would. false: corrupt blob.
  virtual Bytes snapshot() const = 0;
  virtual bool restore(const Bytes& snapshot) = 0;

  // Delta checkpoints: every change bumps state_version(); snapshot_delta(v) holds what changed
  // since version v, and apply_delta() applies it to a state restored at version v. Operators
  // without small deltas return a full snapshot (supports_delta() false).
  virtual bool supports_delta() const { return false; }
  virtual std::uint64_t state_version() const { return 0; }
  virtual Bytes snapshot_delta(std::uint64_t /*since_version*/) const { return snapshot(); }
  virtual bool apply_delta(const Bytes& delta) { return restore(delta); }

  // Cause function, as a restart point: after the outputs up to id `acked_output` are no longer
  // needed, which inputs (per port) are still needed to regenerate every later output and the
  // current state, and how to restart. Must be >= the previous answer for a larger acked_output.
  virtual RestartPoint restart_point(TupleId acked_output) const = 0;
  // Called on a freshly constructed operator; afterwards inputs with id <= replay_after[p] are
  // ignored by the caller. false: corrupt resume blob.
  virtual bool restart_from(const RestartPoint& point) = 0;
  // Outputs up to `acked_output` will never be asked for again: drop their cause bookkeeping.
  virtual void forget_up_to(TupleId acked_output) = 0;

  // Boundaries (punctuation; Borealis's SUnion): every later input of `port` has ts >= boundary_us.
  // An operator that waits for its inputs' progress (the serializing Union) may emit now; the
  // others need not hear of it (the fragment keeps every port's boundary).
  virtual void advance_boundary(std::size_t /*port*/, TimeUs /*boundary_us*/, Tuples& /*out*/) {}
  // Every later output has ts >= the returned boundary, given that every later input of port p
  // has ts >= input_boundaries[p] (the larger of its announced boundary and its last input's ts,
  // for ordered inputs). The default is a stateless operator's: the smallest input boundary.
  virtual TimeUs output_boundary(const std::vector<TimeUs>& input_boundaries) const;

  // Non-determinism (Union). A recording operator remembers the interleaving it chose;
  // take_determinants() returns the records made since the last call. A following operator
  // (set_follow_determinants(true), an active standby's) buffers its input and emits only in the
  // order the records it is given dictate.
  virtual bool is_nondeterministic() const { return false; }
  virtual std::vector<DeterminantRecord> take_determinants() { return {}; }
  virtual void set_follow_determinants(bool /*follow*/) {}
  virtual void add_determinants(const std::vector<DeterminantRecord>& /*records*/, Tuples& /*out*/) {}
  // Tuples buffered waiting for determinants (bounded by the node's input queue limit).
  virtual std::size_t buffered_tuples() const { return 0; }

  // The merge order for the checker (docs/FAULTS.md). Every output a non-deterministic
  // operator emits, whether it led or followed, is logged as runs; take_merge_order() returns
  // what was logged since the last call. The log is a report, not state: snapshots do not carry
  // it and restoring one does not clear it.
  virtual std::vector<MergeSegment> take_merge_order() { return {}; }
  // Reference runs only: before any input, make the operator emit in the order `runs` recorded.
  // A run (port, first_input, count) emits the port's inputs up to id first_input + count - 1
  // (inputs below first_input that were never emitted go first: they were never recorded;
  // inputs already emitted are not emitted again). Once the runs are used up, the operator
  // leads again in arrival order. false: the operator has no merge order.
  virtual bool replay_merge_order(const std::vector<MergeRun>& /*runs*/) { return false; }
  // Runs that named inputs their port never delivered (a recorded order that does not fit).
  virtual std::uint64_t unmatched_merge_runs() const { return 0; }
};

// Builds an operator from its spec; `salt` makes lineages of different operators distinct.
std::unique_ptr<Operator> make_operator(const OperatorSpec& spec);

}  // namespace hapair
