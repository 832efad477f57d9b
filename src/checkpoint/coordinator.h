// The checkpoint coordinator of global checkpoints (docs/CHECKPOINT.md; Flink's JobManager in
// role, its CheckpointCoordinator): triggers checkpoint c every interval at the sources, collects
// one snapshot per participating fragment (sources and operator fragments) into the checkpoint
// store, declares c complete when every participant's snapshot is in, keeps the newest N, and on
// a fragment's failure decides the rollback: to the newest complete checkpoint, of the fragments
// the failover mode names (regions.h).
//
// A pure core like every role: the driver calls it with `now` and an event and applies what it
// returns; the store is handed in (in memory in the simulator, files in real runs) and outlives
// the coordinator, so a restarted coordinator goes on from what the store holds.
//
// Invariants: at most one checkpoint is in flight (Flink's max-concurrent-checkpoints = 1);
// checkpoint ids only grow, across restarts of the coordinator too (they continue above the
// store's highest started id); a checkpoint completes only with a snapshot of every participant,
// all of that checkpoint; no checkpoint is triggered while a rollback is under way (its
// fragments have not all restored), and a failure abandons the checkpoint in flight.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "primary/checkpoint_store.h"
#include "protocols/ids.h"
#include "protocols/messages.h"

namespace hapair {

struct CoordinatorSettings {
  TimeUs interval_us = 100'000;      // checkpoint_interval_ms
  TimeUs timeout_us = 10'000'000;    // an unfinished checkpoint is abandoned after this long
  std::size_t checkpoints_retained = 2;
};

struct CheckpointParticipant {
  FragmentId fragment = kNoFragment;
  std::string name;  // its name in the store
};

// A rollback the coordinator decided is the message it sends: Rollback (protocols/messages.h).

// What one call decided, for the driver to send and trace.
struct CoordinatorOutput {
  std::vector<CheckpointId> triggered;  // to every source: inject barrier c now
  std::vector<CheckpointId> completed;  // to every participant: c is complete (level-1 acks up to it)
  std::vector<CheckpointId> abandoned;  // in flight, never to complete
  std::vector<Rollback> rollbacks;      // to every fragment it names (and its replacement)
};

class CheckpointCoordinator {
 public:
  // `rollback_sets`: for each participant that may fail, the fragments that roll back with it
  // (regions.h); `store` outlives the coordinator.
  CheckpointCoordinator(std::vector<CheckpointParticipant> participants,
                        std::map<FragmentId, std::vector<FragmentId>> rollback_sets, CoordinatorSettings settings,
                        CheckpointStore& store);

  // Reads the store (a restarted coordinator goes on from it); the first trigger is due one
  // interval later.
  void start(TimeUs now, CoordinatorOutput& out);
  // Triggers a checkpoint when one is due and none is in flight nor a rollback under way;
  // abandons the one in flight after the timeout.
  void tick(TimeUs now, CoordinatorOutput& out);
  // A participant's snapshot of checkpoint `id`. One of another checkpoint than the one in flight,
  // or a second one of the same fragment, is stale: counted and dropped.
  void snapshot(TimeUs now, FragmentId fragment, CheckpointId id, const Bytes& state, CoordinatorOutput& out);
  // A detector found `fragment` failed: abandon the checkpoint in flight, decide the rollback.
  void fragment_failed(TimeUs now, FragmentId fragment, CoordinatorOutput& out);
  // A rolled-back fragment (or its replacement) installed its snapshot of rollback `number`.
  void restored(TimeUs now, FragmentId fragment, std::uint64_t number, CoordinatorOutput& out);

  TimeUs next_wakeup_us() const;
  std::optional<CheckpointId> newest_complete() const { return newest_complete_; }
  std::optional<CheckpointId> in_flight() const { return in_flight_; }
  bool rolling_back() const { return !restoring_.empty(); }
  // Fragment `f` is named by the rollback under way and has not restored yet.
  bool restoring(FragmentId f) const { return restoring_.count(f) != 0; }
  std::uint64_t rollbacks() const { return rollbacks_; }
  std::uint64_t stale_snapshots() const { return stale_; }

 private:
  const CheckpointParticipant* participant(FragmentId f) const;
  void abandon(CoordinatorOutput& out);

  std::vector<CheckpointParticipant> participants_;
  std::map<FragmentId, std::vector<FragmentId>> rollback_sets_;
  CoordinatorSettings settings_;
  CheckpointStore& store_;
  bool started_ = false;
  CheckpointId next_id_ = 1;
  TimeUs next_trigger_us_ = kNever;
  std::optional<CheckpointId> in_flight_;
  TimeUs in_flight_since_us_ = 0;
  std::set<FragmentId> acked_;
  std::optional<CheckpointId> newest_complete_;
  std::uint64_t rollbacks_ = 0;
  std::set<FragmentId> restoring_;  // fragments of the current rollback not yet restored
  std::uint64_t stale_ = 0;
};

}  // namespace hapair
