#include "checkpoint/barrier_aligner.h"

#include <algorithm>
#include <string>

#include "protocols/check.h"

namespace hapair {

BarrierAligner::BarrierAligner(std::vector<StreamId> inputs) : inputs_(std::move(inputs)) {
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) HAPAIR_CHECK_MSG(inputs_[i] != inputs_[j], "input stream " << inputs_[i] << " twice");
}

BarrierAligner::Heard BarrierAligner::barrier(StreamId stream, CheckpointId id, TupleId after_id) {
  HAPAIR_CHECK_MSG(std::find(inputs_.begin(), inputs_.end(), stream) != inputs_.end(),
                   "a barrier on stream " << stream << ", which is not an input");
  if (id <= last_taken_ || id < newest_heard_ || id <= abandoned_id_) return Heard::stale;
  Heard heard = Heard::added;
  if (!aligning_ || id > *aligning_) {
    heard = aligning_ ? Heard::superseded : Heard::started;
    if (aligning_) ++abandoned_;
    aligning_ = id;
    barriers_.clear();
  }
  newest_heard_ = id;
  auto [it, inserted] = barriers_.emplace(stream, after_id);
  if (!inserted) {
    // The same barrier again (a repetition); a different position for the same checkpoint would
    // be a producer's bug.
    HAPAIR_CHECK_MSG(it->second == after_id, "checkpoint " << id << " on stream " << stream << ": barrier after "
                                                          << it->second << " and after " << after_id);
    return Heard::repeated;
  }
  return heard;
}

void BarrierAligner::abandon(CheckpointId id) {
  abandoned_id_ = std::max(abandoned_id_, id);
  newest_heard_ = std::max(newest_heard_, id);
  if (aligning_ && *aligning_ <= id) {
    aligning_.reset();
    barriers_.clear();
    ++abandoned_;
  }
}

void BarrierAligner::ended(StreamId stream, TupleId last_id) { ended_[stream] = last_id; }

TupleId BarrierAligner::limit(StreamId stream) const {
  auto it = barriers_.find(stream);
  return it == barriers_.end() ? kNoLimit : it->second;
}

std::optional<CheckpointId> BarrierAligner::ready(const std::map<StreamId, TupleId>& processed) const {
  if (!aligning_) return std::nullopt;
  for (StreamId s : inputs_) {
    auto p = processed.find(s);
    const TupleId done = p == processed.end() ? 0 : p->second;
    if (auto b = barriers_.find(s); b != barriers_.end()) {
      HAPAIR_CHECK_MSG(done <= b->second, "stream " << s << " processed to " << done << " beyond its barrier after "
                                                    << b->second << " of checkpoint " << *aligning_);
      if (done < b->second) return std::nullopt;
      continue;
    }
    auto e = ended_.find(s);
    if (e == ended_.end() || done < e->second) return std::nullopt;
  }
  return aligning_;
}

std::map<StreamId, TupleId> BarrierAligner::taken(CheckpointId id) {
  HAPAIR_CHECK_MSG(aligning_ == id, "snapshot of checkpoint " << id << " taken while aligning "
                                                              << (aligning_ ? std::to_string(*aligning_) : "none"));
  std::map<StreamId, TupleId> positions = barriers_;
  for (const auto& [s, last] : ended_)
    if (!positions.count(s)) positions[s] = last;
  last_taken_ = id;
  aligning_.reset();
  barriers_.clear();
  return positions;
}

}  // namespace hapair
