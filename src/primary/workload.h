// The workload of a node: what runs between its input side and its output side. A source
// generator emits its tuples as they fall due; an operator fragment processes queued input and
// appends what its operators produce to the output queues; a sink delivers. It applies the
// queue-full policy (back-pressure or a fatal error), and it collects the merge order its
// Unions chose, tagged with the epoch and role they were chosen in, for the checker.
//
// Paper: the query fragment a server runs (section 2); its output queues are bounded, and a
// full one stops the server taking input, so its upstream stops too (back-pressure).
//
// Invariants: input is taken only while no output queue is full (a queue exceeds its bound by at
// most the outputs of the one input being processed); only a primary or an active standby
// processes; everything the fragment emits, whatever made it emit, goes to the output queues;
// the merge order is collected before the epoch or the role it is tagged with changes (the pair
// side and the Server call collect_merge_order first).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "operators/fragment.h"
#include "operators/source_generator.h"
#include "primary/input_side.h"
#include "primary/node_identity.h"
#include "primary/outbox.h"
#include "primary/output_side.h"
#include "primary/route_table.h"

namespace hapair {

class Workload {
 public:
  // Every argument outlives the workload (they are the Server's); `role` and `routes` are read
  // for the tags of the merge order and to know whether this node processes.
  Workload(const NodeIdentity& node, const Role& role, const RouteTable& routes, Outbox& outbox, InputSide& inputs,
           OutputSide& outputs);

  // The operator fragment (null for a source or a sink).
  const Fragment* fragment() const { return fragment_.get(); }

  // Runs what is due: a source emits every tuple due at `now` (as far as its output queue
  // allows), then queued input is processed while the output queues have room. Returns when a
  // source's next tuple is due (kNever for others, and at a source's end).
  TimeUs run(TimeUs now, Effects& eff);
  // A paused workload takes no input (a primary waiting for its consumers before it rebases).
  void set_paused(bool paused) { paused_ = paused; }
  bool paused() const { return paused_; }

  // ---- the fragment's state --------------------------------------------------------------------
  // A fresh, empty fragment (an operator fragment's only: amnesia, upstream-backup restart, a
  // rejoining standby).
  void reset();
  // Installs a checkpoint's fragment state on a fresh fragment; false (and a fresh fragment) when
  // the state does not restore. A source or a sink has none: true.
  bool restore(const Bytes& state);
  // Cause bookkeeping of outputs acknowledged up to `acked_outputs` is never needed again.
  void forget_causes_up_to(const std::map<StreamId, TupleId>& acked_outputs);
  // Lets an approach act on the fragment between inputs (restart it from a restart point, take
  // or follow determinants, release what waited for them); whatever it emits meanwhile goes to
  // the output queues, as processed output does. false (nothing done) without a fragment.
  bool act_on_fragment(const std::function<void(Fragment&, FragmentOutputs&)>& act);

  // ---- what the checker and the metrics read ---------------------------------------------------
  // Takes what my fragment's Unions logged and tags it with my epoch and role now; called before
  // anything changes them (takeover, fencing, a fresh fragment) and at the end of every event.
  void collect_merge_order();
  // Moves what was collected into `eff` (once per event).
  void report_merge_orders(Effects& eff);
  // A fatal, configured error (queue full under policy "error"), reported once.
  const std::string& fatal_error() const { return fatal_error_; }
  // Tuples processed or emitted so far, and those of them an operator fragment took.
  std::uint64_t work_done() const { return tuples_processed_ + tuples_emitted_; }
  std::uint64_t operator_work_done() const { return operator_tuples_; }
  // The smallest timestamp of the input tuples an operator fragment processed since the last
  // call (kNever: none), and forgets it: how old the input was when it got its turn.
  TimeUs take_oldest_processed_ts() {
    const TimeUs t = oldest_processed_ts_;
    oldest_processed_ts_ = kNever;
    return t;
  }
  void add_metrics(Metrics& m) const;

 private:
  TimeUs emit_source_tuples(TimeUs now, Effects& eff);
  void process_input(TimeUs now, Effects& eff);
  // An end of stream taken from the input queue.
  void end_of_stream(TimeUs now, StreamId stream, Effects& eff);
  void append_outputs(FragmentOutputs& outs);
  // Boundaries (a plan with a Union in timestamp order): an input's reaches the fragment once
  // the tuples before it were processed; the fragment's output boundaries go to the output side.
  void apply_boundary(StreamId stream, TimeUs boundary_us);
  void publish_boundaries();
  // Queue full: a fatal error under policy "error", back-pressure otherwise.
  void on_queue_full(TimeUs now, Effects& eff, const std::string& what, const std::string& stream);

  const NodeIdentity& node_;
  const Role& role_;
  const RouteTable& routes_;
  Outbox& outbox_;
  InputSide& inputs_;
  OutputSide& outputs_;

  std::unique_ptr<Fragment> fragment_;
  FragmentOutputs outs_;  // one input's outputs, reused (empty between inputs)
  bool paused_ = false;
  bool input_blocked_ = false;
  std::string fatal_error_;
  std::vector<MergeOrder> merge_collected_;  // collected, not yet reported (one event's worth)
  // sources
  std::optional<SourceGenerator> source_;  // a source's schedule
  TupleId next_source_id_ = 1;
  TupleId source_count_ = 0;
  // sinks
  bool end_of_output_traced_ = false;
  // Per-tuple counters live in plain integers (a map lookup per tuple is too slow for the
  // simulator's million-tuple runs) and are merged into the metrics when asked.
  std::uint64_t tuples_processed_ = 0;
  std::uint64_t operator_tuples_ = 0;  // of tuples_processed_, those an operator fragment took
  TimeUs oldest_processed_ts_ = kNever;  // take_oldest_processed_ts()
  std::uint64_t tuples_delivered_ = 0;
  std::uint64_t tuples_emitted_ = 0;
};

}  // namespace hapair
