// The checkpoint store of global checkpoints (docs/CHECKPOINT.md): where every fragment's
// snapshot of checkpoint c is kept, and which checkpoints are complete. An interface with two
// implementations: MemoryCheckpointStore here (pure: the simulator and the tests) and the durable
// file store of real runs (runtime/checkpoint_file_store.h).
//
// Flink: a checkpoint is complete once its metadata is written, after every task's state; only
// complete checkpoints are restored; `state.checkpoints.num-retained` keep the newest N.
//
// Invariants: a checkpoint is complete only after every snapshot it names was put; a reader sees
// only complete checkpoints (a started, unfinished one does not exist for snapshot() and
// completed()); completed() is ascending and holds at most the `retained` newest; the highest id
// ever started is remembered as long as any of its files is, so new ids continue above it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocols/bytes.h"

namespace hapair {

using CheckpointId = std::uint64_t;

class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;
  // Keeps `fragment`'s snapshot of checkpoint `id` (durably, for a store that can). Starts `id`.
  virtual void put_snapshot(CheckpointId id, const std::string& fragment, const Bytes& snapshot) = 0;
  // Marks `id` complete, naming its fragments (each must have been put: checked), then discards
  // every complete checkpoint but the newest `retained` and every unfinished one older than `id`.
  virtual void complete(CheckpointId id, const std::vector<std::string>& fragments, std::size_t retained) = 0;
  // The complete checkpoints, oldest first.
  virtual std::vector<CheckpointId> completed() const = 0;
  // A fragment's snapshot in a complete checkpoint; nullopt when `id` is not complete or does not
  // name the fragment.
  virtual std::optional<Bytes> snapshot(CheckpointId id, const std::string& fragment) const = 0;
  // The highest id ever started, complete or not (0: none).
  virtual CheckpointId highest_started() const = 0;

  std::optional<CheckpointId> newest_complete() const;
};

// The store in memory: outlives the cores that use it (the simulator keeps it for the run, so a
// restarted coordinator reads what its predecessor wrote).
class MemoryCheckpointStore final : public CheckpointStore {
 public:
  void put_snapshot(CheckpointId id, const std::string& fragment, const Bytes& snapshot) override;
  void complete(CheckpointId id, const std::vector<std::string>& fragments, std::size_t retained) override;
  std::vector<CheckpointId> completed() const override;
  std::optional<Bytes> snapshot(CheckpointId id, const std::string& fragment) const override;
  CheckpointId highest_started() const override;

 private:
  struct Entry {
    std::map<std::string, Bytes> snapshots;
    bool complete = false;
  };
  std::map<CheckpointId, Entry> checkpoints_;
  CheckpointId highest_started_ = 0;
};

// Local recovery (Settings::local_recovery; Flink's state.backend.local-recovery): each host's own
// copies of the snapshots its fragments took, a store per (host, fragment). A fragment's node puts
// its snapshot there when it takes it and completes it when the coordinator declares the
// checkpoint complete; a replacement on the same host restores from it. Host "" is the one machine
// of a run that places nothing. Copies survive a process's crash (they are the host's, not the
// process's), not the loss of the host. Implementations: MemoryLocalSnapshots (the simulator's)
// and the runtime's files beside the run (runtime/checkpoint_file_store.h).
class LocalSnapshots {
 public:
  virtual ~LocalSnapshots() = default;
  // The store of `fragment`'s copies on `host`; the same one for the same pair, outliving the cores.
  virtual CheckpointStore& of(const std::string& host, const std::string& fragment) = 0;
};

class MemoryLocalSnapshots final : public LocalSnapshots {
 public:
  CheckpointStore& of(const std::string& host, const std::string& fragment) override { return stores_[{host, fragment}]; }

 private:
  std::map<std::pair<std::string, std::string>, MemoryCheckpointStore> stores_;
};

}  // namespace hapair
