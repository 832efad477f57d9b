// The durable checkpoint store of real runs (docs/CHECKPOINT.md): a directory per checkpoint,
// `chk-<id>/`, holding one file per fragment's snapshot, `<fragment>.snapshot`, and the manifest
// `_manifest` (the id, each fragment's file and its size), written last. Every file is written
// to a temporary name, fsync'd, renamed into place and its directory fsync'd, so after a crash at
// any instant a file either is whole under its name or is not there. A checkpoint is complete
// when its manifest is there and every file it names is there with its size; anything else (a
// crash before the manifest's rename) does not exist for a reader, and the previous complete
// checkpoint stays the newest. Flink writes `chk-<id>/_metadata` last the same way.
//
// Local to the run by default (the run folder's `checkpoints/`), or a directory the hosts share.
// Failures of the file system are the environment's: they throw std::runtime_error naming the
// path and the error (the runtime is where those are caught).
//
// Invariants: those of CheckpointStore; a checkpoint's files are never changed once its manifest
// is in place; leftovers (temporary files, unfinished checkpoints older than the newest
// complete) are removed when a newer checkpoint completes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "primary/checkpoint_store.h"

namespace hapair {

class FileCheckpointStore final : public CheckpointStore {
 public:
  // Called with a file's final path after its temporary file was written and fsync'd, just
  // before the rename: a test kills the process there.
  using BeforeRename = std::function<void(const std::string& path)>;

  // fsync: every file and directory change is fsync'd (the coordinator's store: it must survive
  // the loss of power). page_cache: written and renamed the same way but not fsync'd (a host's
  // local snapshot copies: they serve a process's crash, which the page cache survives; the
  // copy of a host that lost power is gone with the host anyway).
  enum class Durability { fsync, page_cache };

  // Opens the store in `dir`, creating it when missing.
  explicit FileCheckpointStore(std::string dir, BeforeRename before_rename = {}, Durability durability = Durability::fsync);

  void put_snapshot(CheckpointId id, const std::string& fragment, const Bytes& snapshot) override;
  void complete(CheckpointId id, const std::vector<std::string>& fragments, std::size_t retained) override;
  std::vector<CheckpointId> completed() const override;
  std::optional<Bytes> snapshot(CheckpointId id, const std::string& fragment) const override;
  CheckpointId highest_started() const override;

  const std::string& dir() const { return dir_; }
  // The directory of checkpoint `id` and its manifest's path.
  std::string checkpoint_dir(CheckpointId id) const;
  static constexpr const char* kManifest = "_manifest";

 private:
  // Writes `data` to `path` durably (temporary file, fsync, rename, fsync of the directory).
  void write_durably(const std::string& path, const Bytes& data) const;
  // The fragments and sizes a checkpoint's manifest names, when it is complete.
  std::optional<std::vector<std::pair<std::string, std::uint64_t>>> manifest(CheckpointId id) const;

  std::string dir_;
  BeforeRename before_rename_;
  bool durable_;
  CheckpointId highest_started_ = 0;
};

// Local recovery on real processes (Settings::local_recovery): a host's copies of each
// fragment's snapshots in `<dir>/<host>/<fragment>/` (host "this-host" for a run on one machine),
// each a FileCheckpointStore without fsync. The hosts of a run each see their own directory: a
// replacement placed on another host finds no copy there and restores from the coordinator's.
class FileLocalSnapshots final : public LocalSnapshots {
 public:
  static constexpr const char* kThisHost = "this-host";
  explicit FileLocalSnapshots(std::string dir);
  CheckpointStore& of(const std::string& host, const std::string& fragment) override;

 private:
  std::string dir_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<FileCheckpointStore>> stores_;
};

}  // namespace hapair
