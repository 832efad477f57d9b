#include "checkpoint/fragment_checkpointer.h"

#include <algorithm>

#include "protocols/check.h"

namespace hapair {

FragmentCheckpointer::FragmentCheckpointer(std::vector<StreamId> inputs, std::vector<StreamId> source_inputs)
    : source_inputs_(std::move(source_inputs)), aligner_(inputs) {
  for (StreamId s : source_inputs_)
    HAPAIR_CHECK_MSG(std::find(inputs.begin(), inputs.end(), s) != inputs.end(), "source input " << s << " is not an input");
}

bool FragmentCheckpointer::trigger(CheckpointId id, const std::map<StreamId, TupleId>& accepted) {
  if (id <= last_trigger_ || id <= aligner_.last_taken()) return false;
  last_trigger_ = id;
  for (StreamId s : source_inputs_) {
    auto it = accepted.find(s);
    aligner_.barrier(s, id, it == accepted.end() ? 0 : it->second);
  }
  return true;
}

BarrierAligner::Heard FragmentCheckpointer::barrier(StreamId stream, CheckpointId id, TupleId after_id) {
  HAPAIR_CHECK_MSG(std::find(source_inputs_.begin(), source_inputs_.end(), stream) == source_inputs_.end(),
                   "a barrier from a producer on source stream " << stream << " (the trigger sets those)");
  return aligner_.barrier(stream, id, after_id);
}

std::optional<DueSnapshot> FragmentCheckpointer::due(const std::map<StreamId, TupleId>& processed,
                                                     const std::map<StreamId, TupleId>& produced) {
  const std::optional<CheckpointId> id = aligner_.ready(processed);
  if (!id) return std::nullopt;
  DueSnapshot s;
  s.id = *id;
  s.inputs = aligner_.taken(*id);
  s.outputs = produced;
  taken_[s.id] = s.inputs;
  while (taken_.size() > kTakenMax) taken_.erase(taken_.begin());
  return s;
}

std::optional<std::map<StreamId, TupleId>> FragmentCheckpointer::completed(CheckpointId id) {
  if (id <= last_complete_) return std::nullopt;
  auto it = taken_.find(id);
  if (it == taken_.end()) return std::nullopt;
  std::map<StreamId, TupleId> positions = std::move(it->second);
  last_complete_ = id;
  taken_.erase(taken_.begin(), std::next(it));
  return positions;
}

}  // namespace hapair
