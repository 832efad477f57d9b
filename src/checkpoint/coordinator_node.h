// The coordinator of global checkpoints as a node core (docs/CHECKPOINT.md; Flink's JobManager in
// role): the node of no fragment a plan gets when an approach needs one (ApproachTraits::
// coordinator, protocols/plan.h kCoordinatorNodeName). It wraps CheckpointCoordinator, the
// decisions, and turns them into messages and trace events:
//   - a trigger becomes a CheckpointTrigger to every coordinated fragment that reads a source
//     stream (sources are outside the checkpoint: the fragment reading one records its offset);
//   - a fragment's snapshot arrives as Checkpoint chunks (a GlobalSnapshot payload) from the
//     fragment's acting node; once every chunk of the checkpoint in flight is in, it goes to the
//     store;
//   - a completion becomes a CheckpointComplete to every coordinated fragment;
//   - a failure, found by the detectors the pairs use (the driver's PeerLost for a lost
//     connection, or the coordinator's own heartbeat detector: any message of a fragment's acting
//     node counts as a heartbeat), abandons the checkpoint in flight and becomes a Rollback to
//     every node of every fragment the failover mode names (the replacement of the failed node,
//     a spare or a restarted process, is one of them);
//   - a Restored from a node makes it the fragment's acting node and watches it again.
//
// A pure core like every role: the store is handed in and outlives the core (the simulator keeps
// a MemoryCheckpointStore for the run, so a restarted coordinator goes on from what it holds).
//
// Invariants: only the acting node of a coordinated fragment is heard (others are counted and
// dropped); a fragment under rollback is not watched until it restored; at most one snapshot is
// being reassembled per fragment, always of the checkpoint in flight, with at most
// kSnapshotChunksMax chunks.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "checkpoint/coordinator.h"
#include "checkpoint/regions.h"
#include "protocols/core.h"
#include "protocols/failure_detector.h"
#include "protocols/plan.h"

namespace hapair {

struct CoordinatorNodeOptions {
  CoordinatorSettings checkpoints;  // checkpoint_interval_ms, the timeout, checkpoints_retained
  FailoverMode failover = FailoverMode::full;
};

// The operator fragments whose approach needs a coordinator, ascending.
std::vector<FragmentId> coordinated_fragments(const Plan& plan);
// Those of `fragments` that read a stream a source produces: the coordinator's trigger goes to them.
std::vector<FragmentId> source_readers(const Plan& plan, const std::vector<FragmentId>& fragments);

class CoordinatorNode final : public NodeCore {
 public:
  static constexpr std::uint32_t kSnapshotChunksMax = 1u << 16;

  CoordinatorNode(std::shared_ptr<const Plan> plan, NodeId self, CoordinatorNodeOptions options, CheckpointStore& store);

  Effects handle(TimeUs now, const Event& event) override;
  Metrics metrics() const override { return counters_; }

  const CheckpointCoordinator& decisions() const { return coordinator_; }
  // The node acting for fragment `f` as far as the coordinator knows.
  NodeId acting(FragmentId f) const;

 private:
  struct Watched {
    NodeId acting = kNoNode;
    FailureDetector detector;
    bool restoring = false;
  };
  struct Reassembly {
    CheckpointId id = 0;
    std::uint32_t count = 0;
    std::map<std::uint32_t, Bytes> chunks;
  };

  void on_start(TimeUs now, const Start& start, Effects& eff);
  void on_message(TimeUs now, const Envelope& env, Effects& eff);
  void on_chunk(TimeUs now, FragmentId f, const Checkpoint& chunk, CoordinatorOutput& out);
  void failed(TimeUs now, FragmentId f, NodeId node, Detector detector, CoordinatorOutput& out, Effects& eff);
  void apply(TimeUs now, const CoordinatorOutput& out, Effects& eff);
  void send(TimeUs now, NodeId to, Message body, Effects& eff);
  // Sends fragment f's nodes the rollback order, its snapshot first to those that install it
  // (under local recovery not with the `first` order to those whose host holds a copy).
  void order_rollback(TimeUs now, FragmentId f, const Rollback& r, bool first, Effects& eff);
  // Repeats the orders of fragments that have not restored yet, every retransmit_timeout_ms.
  void repeat_rollbacks(TimeUs now, Effects& eff);
  // A fragment's snapshot from the store, as Checkpoint chunks of checkpoint_chunk_bytes.
  void send_snapshot(TimeUs now, NodeId to, CheckpointId id, const Bytes& snapshot, Effects& eff);
  void count_bytes(const std::string& name, std::size_t n) { counters_[name] += static_cast<std::int64_t>(n); }
  TraceEvent& trace(Effects& eff, TimeUs now, TraceKind kind);
  void count(const std::string& name, std::int64_t by = 1) { counters_[name] += by; }
  FragmentId coordinated_fragment_of(NodeId n) const;

  std::shared_ptr<const Plan> plan_;
  NodeId self_;
  CoordinatorNodeOptions options_;
  std::vector<FragmentId> fragments_;
  std::vector<FragmentId> source_readers_;
  CheckpointCoordinator coordinator_;
  CheckpointStore& store_;
  std::map<FragmentId, Watched> watched_;
  std::map<FragmentId, Reassembly> reassembly_;
  std::map<FragmentId, NodeId> failed_node_;  // for the rollback's trace
  std::map<FragmentId, Rollback> pending_rollbacks_;  // ordered, not yet restored
  TimeUs rollback_resend_us_ = kNever;
  bool started_ = false;
  Metrics counters_;
};

}  // namespace hapair
