// A fragment: the operators of one node wired into a small DAG (paper: the part of the query
// network one server runs). It routes tuples between its operators, exports the streams other
// fragments read, and composes its operators' snapshots, cause functions (restart points) and
// determinants into fragment-level ones.
//
// Invariants: processing is depth-first and deterministic (an output is handed to internal
// consumers in operator order before the next input); each exported stream's ids are strictly
// increasing; after restart_from(), every operator port ignores inputs at or below its own
// replay position, so a replay from the fragment-level (minimum) position is harmless.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "operators/operator.h"
#include "protocols/plan.h"

namespace hapair {

struct FragmentOutput {
  StreamId stream = kNoStream;  // an exported (plan) stream
  Tuple tuple;
};
using FragmentOutputs = std::vector<FragmentOutput>;

class Fragment {
 public:
  Fragment(const Plan& plan, FragmentId id);
  ~Fragment();
  Fragment(const Fragment&) = delete;
  Fragment& operator=(const Fragment&) = delete;

  FragmentId id() const { return id_; }
  OperatorClass klass() const;
  const std::vector<StreamId>& inputs() const { return inputs_; }    // plan streams read
  const std::vector<StreamId>& outputs() const { return outputs_; }  // plan streams exported

  void process(StreamId input, const Tuple& t, FragmentOutputs& out);
  // Processes tuples[0 .. count) of `input` in order, exactly as process() on each would, and
  // stops after the first of them that leaves `outputs_max` or more new outputs in `out` (the room
  // before an output queue may be full); returns how many it took (all when it never stopped).
  // A run into one stateless operator whose output is exported goes through the operator in one
  // loop (Operator::process_run); other shapes take their tuples one at a time.
  std::size_t process_run(StreamId input, const Tuple* tuples, std::size_t count, FragmentOutputs& out,
                          std::size_t outputs_max);
  void end_of_stream(StreamId input, FragmentOutputs& out);
  // Boundaries (Borealis's punctuation; only in a plan with a Union in timestamp order,
  // uses_boundaries()): every later tuple of `input` has ts >= boundary_us. A serializing Union
  // may emit on it. output_boundary(s): every later tuple of exported stream s has ts >= it (0:
  // nothing known, or the fragment uses none).
  void advance_boundary(StreamId input, TimeUs boundary_us, FragmentOutputs& out);
  TimeUs output_boundary(StreamId output) const;
  bool uses_boundaries() const;
  // The producing operator of an exported stream has finished (no more tuples will come).
  bool output_ended(StreamId output) const;
  bool has_finished() const;

  Bytes snapshot() const;
  bool restore(const Bytes& snapshot);
  // Delta checkpoints: one state version per operator (in operator order). snapshot_delta(v)
  // holds, per operator, what changed since v[i] (a full operator snapshot for operators
  // without deltas) plus the fragment's own small state; apply_delta() applies it to a fragment
  // restored at versions v. false: corrupt blob or another base; the fragment may then be
  // partly updated and must be restored from a full snapshot.
  std::vector<std::uint64_t> state_versions() const;
  bool supports_delta() const;
  Bytes snapshot_delta(const std::vector<std::uint64_t>& since_versions) const;
  bool apply_delta(const Bytes& delta);

  // Composes the operators' cause functions backwards from every exported stream (acked up to
  // acked_outputs[s]; absent means nothing acked, 0) to every fragment input. The blob holds, per
  // fragment input stream, the last input id no longer needed, and every operator's restart point.
  Bytes restart_point(const std::map<StreamId, TupleId>& acked_outputs) const;
  // The per-input replay positions inside a restart point blob; nullopt when corrupt.
  static std::optional<std::map<StreamId, TupleId>> replay_positions(const Bytes& restart_point);
  // On a freshly constructed fragment. false: corrupt blob.
  bool restart_from(const Bytes& restart_point);
  void forget_up_to(const std::map<StreamId, TupleId>& acked_outputs);

  // Determinants of the fragment's non-deterministic operators (Union).
  bool is_nondeterministic() const;
  std::vector<Determinants> take_determinants();
  void set_follow_determinants(bool follow);
  void add_determinants(const Determinants& d, FragmentOutputs& out);
  // The number of the last determinant record applied to operator `op_index` (0: none). Records
  // after a gap are not applied, so this is what a standby may acknowledge.
  std::uint64_t determinants_applied(std::uint16_t op_index) const;
  // A following fragment whose leader is gone (takeover): stop following, apply the records
  // still pending, and emit what waited for determinants in arrival order.
  void release_buffered(FragmentOutputs& out);
  std::size_t buffered_tuples() const;

  // The merge order of the fragment's non-deterministic operators since the last call, per
  // operator index (Operator::take_merge_order).
  std::vector<std::pair<std::uint16_t, MergeSegment>> take_merge_order();
  // Reference runs: operator `op_index` replays a recorded merge order
  // (Operator::replay_merge_order). false: no such non-deterministic operator.
  bool replay_merge_order(std::uint16_t op_index, const std::vector<MergeRun>& runs);
  // Replayed runs, over all operators, that named inputs their port never delivered.
  std::uint64_t unmatched_merge_runs() const;

  // Inputs refused as bad input from peers (counted, never asserted): tuples of streams the
  // fragment does not read or that already ended, end-of-stream marks of streams it does not
  // read (a repeated end of stream is harmless and ignored), and determinant records for a
  // missing or deterministic operator, with a gap in their numbering, or already applied.
  std::uint64_t dropped_inputs() const;

 private:
  struct Impl;
  FragmentId id_;
  std::vector<StreamId> inputs_;
  std::vector<StreamId> outputs_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hapair
