#include "checkpoint/global_snapshot.h"

namespace hapair {

GlobalSnapshot global_snapshot(const DueSnapshot& due, Bytes fragment_state) {
  return GlobalSnapshot{due.id, std::move(fragment_state), due.inputs, due.outputs};
}

Bytes encode_global_snapshot(const GlobalSnapshot& s) {
  CheckpointContent c;
  c.id = s.id;
  c.fragment_state = s.fragment_state;
  for (const auto& [stream, processed] : s.inputs) c.inputs.push_back(CheckpointInput{stream, processed, false});
  for (const auto& [stream, produced] : s.outputs) {
    CheckpointOutput o;
    o.stream = stream;
    o.trimmed_up_to = produced;
    o.last_id = produced;
    c.outputs.push_back(std::move(o));
  }
  return serialize_checkpoint(c);
}

std::optional<GlobalSnapshot> decode_global_snapshot(const Bytes& payload) {
  const std::optional<CheckpointContent> c = parse_checkpoint(payload);
  if (!c || c->delta) return std::nullopt;
  GlobalSnapshot s;
  s.id = c->id;
  s.fragment_state = c->fragment_state;
  for (const CheckpointInput& i : c->inputs) {
    if (!s.inputs.emplace(i.stream, i.processed).second) return std::nullopt;
  }
  for (const CheckpointOutput& o : c->outputs) {
    if (!o.tuples.empty() || o.trimmed_up_to != o.last_id || !s.outputs.emplace(o.stream, o.last_id).second) return std::nullopt;
  }
  return s;
}

}  // namespace hapair
