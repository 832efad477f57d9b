#include "primary/checkpoint_store.h"

#include "protocols/check.h"

namespace hapair {

std::optional<CheckpointId> CheckpointStore::newest_complete() const {
  const std::vector<CheckpointId> ids = completed();
  if (ids.empty()) return std::nullopt;
  return ids.back();
}

void MemoryCheckpointStore::put_snapshot(CheckpointId id, const std::string& fragment, const Bytes& snapshot) {
  HAPAIR_CHECK_MSG(id > 0, "checkpoint ids start at 1");
  Entry& e = checkpoints_[id];
  HAPAIR_CHECK_MSG(!e.complete, "checkpoint " << id << " is complete: its snapshot of " << fragment << " cannot change");
  e.snapshots[fragment] = snapshot;
  if (id > highest_started_) highest_started_ = id;
}

void MemoryCheckpointStore::complete(CheckpointId id, const std::vector<std::string>& fragments, std::size_t retained) {
  HAPAIR_CHECK_MSG(retained >= 1, "retained=" << retained);
  auto it = checkpoints_.find(id);
  HAPAIR_CHECK_MSG(it != checkpoints_.end(), "checkpoint " << id << " completed before any snapshot was put");
  // The manifest names exactly these fragments: a snapshot put by another is not part of it.
  std::map<std::string, Bytes> named;
  for (const std::string& f : fragments) {
    auto s = it->second.snapshots.find(f);
    HAPAIR_CHECK_MSG(s != it->second.snapshots.end(), "checkpoint " << id << " completed without a snapshot of " << f);
    named[f] = std::move(s->second);
  }
  it->second.snapshots = std::move(named);
  it->second.complete = true;
  // Discard every unfinished checkpoint older than this one, then all but the newest `retained`.
  for (auto e = checkpoints_.begin(); e != checkpoints_.end();)
    e = (e->first < id && !e->second.complete) ? checkpoints_.erase(e) : std::next(e);
  std::vector<CheckpointId> done = completed();
  for (std::size_t i = 0; i + retained < done.size(); ++i) checkpoints_.erase(done[i]);
}

std::vector<CheckpointId> MemoryCheckpointStore::completed() const {
  std::vector<CheckpointId> out;
  for (const auto& [id, e] : checkpoints_)
    if (e.complete) out.push_back(id);
  return out;
}

std::optional<Bytes> MemoryCheckpointStore::snapshot(CheckpointId id, const std::string& fragment) const {
  auto it = checkpoints_.find(id);
  if (it == checkpoints_.end() || !it->second.complete) return std::nullopt;
  auto s = it->second.snapshots.find(fragment);
  if (s == it->second.snapshots.end()) return std::nullopt;
  return s->second;
}

CheckpointId MemoryCheckpointStore::highest_started() const { return highest_started_; }

}  // namespace hapair
