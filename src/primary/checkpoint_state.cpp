#include "primary/checkpoint_state.h"

#include <algorithm>
#include <utility>

#include "protocols/check.h"

namespace hapair {

CapturedCheckpoint capture_checkpoint(const Server& server, std::uint64_t id, const CheckpointBase* delta_base,
                                      std::size_t chunk_bytes) {
  CapturedCheckpoint captured;
  CheckpointContent& c = captured.summary;
  c.id = id;
  c.epoch = server.routes().epoch();
  const Fragment* fragment = server.workload().fragment();
  const bool delta = delta_base != nullptr && fragment != nullptr;
  c.delta = delta;
  c.base_id = delta ? delta_base->id : 0;
  if (fragment) c.fragment_state = delta ? fragment->snapshot_delta(delta_base->fragment_versions) : fragment->snapshot();
  for (const auto& [s, in] : server.inputs()) c.inputs.push_back(CheckpointInput{s, in.processed(), in.eos_processed()});
  std::vector<const OutputQueue*> queues;
  std::vector<std::size_t> firsts;
  for (const auto& [s, o] : server.outputs()) {
    CheckpointOutput out;
    out.stream = s;
    out.offset = o.offset();
    const OutputQueue& q = o.queue();
    out.trimmed_up_to = q.trimmed_up_to();
    out.last_id = q.last_id();
    out.ended = q.ended();
    TupleId after = 0;
    if (delta) {
      auto it = delta_base->output_last_ids.find(s);
      if (it != delta_base->output_last_ids.end()) after = it->second;
    }
    c.outputs.push_back(std::move(out));
    queues.push_back(&q);
    firsts.push_back(q.index_after(after));
  }
  CheckpointPayloadWriter w(chunk_bytes);
  w.head(c);
  for (std::size_t i = 0; i < c.outputs.size(); ++i) {
    const OutputQueue& q = *queues[i];
    w.output_head(c.outputs[i], q.size() - firsts[i]);
    q.for_each_run(firsts[i], q.size(), [&w](const Tuple* first, std::size_t n) { w.tuples(first, n); });
  }
  captured.payload_bytes = w.bytes();
  captured.chunks = w.take_chunks();
  c.fragment_state.clear();
  return captured;
}

CheckpointBase base_of(const CheckpointContent& captured, std::vector<std::uint64_t> versions) {
  CheckpointBase b;
  b.id = captured.id;
  b.fragment_versions = std::move(versions);
  for (const auto& o : captured.outputs) b.output_last_ids[o.stream] = o.last_id;
  return b;
}

void InstalledCheckpoint::unpack() {
  if (packed.empty()) return;
  std::optional<CheckpointContent> whole = parse_checkpoint(packed);
  HAPAIR_CHECK_MSG(whole && whole->id == id && whole->outputs.size() == full.outputs.size(),
                   "installed checkpoint " << id << " no longer parses");
  for (std::size_t i = 0; i < full.outputs.size(); ++i) full.outputs[i].tuples = std::move(whole->outputs[i].tuples);
  packed = Bytes{};
}

bool apply_checkpoint(const Plan& plan, FragmentId fragment, CheckpointContent received,
                      InstalledCheckpoint& current, Bytes packed) {
  HAPAIR_CHECK_MSG(packed.empty() || !received.delta, "a delta checkpoint is applied unpacked");
  CheckpointContent next;
  if (!received.delta) {
    if (plan.fragments[fragment].kind == FragmentKind::operators) {
      Fragment probe(plan, fragment);
      if (!probe.restore(received.fragment_state)) return false;
    }
    next = std::move(received);
  } else {
    if (current.id == 0 || received.base_id != current.id) return false;
    current.unpack();
    Fragment f(plan, fragment);
    if (!f.restore(current.full.fragment_state) || !f.apply_delta(received.fragment_state)) return false;
    // Output queues: the base's retained tuples, trimmed, plus what was appended since. Every
    // stream is checked before any is changed, so a delta that does not apply leaves `current`
    // as it was.
    std::vector<CheckpointOutput*> olds;
    for (const auto& out : received.outputs) {
      CheckpointOutput* old = nullptr;
      for (auto& o : current.full.outputs)
        if (o.stream == out.stream) old = &o;
      if (!old || std::find(olds.begin(), olds.end(), old) != olds.end()) return false;
      // The ids after the trim point must grow: the base's kept tuples, then the delta's.
      const bool kept = !old->tuples.empty() && old->tuples.back().id > out.trimmed_up_to;
      const Tuple* last = kept ? &old->tuples.back() : nullptr;
      for (const Tuple& t : out.tuples) {
        if (last != nullptr && t.id <= last->id) return false;
        last = &t;
      }
      olds.push_back(old);
    }
    next = std::move(received);
    next.delta = false;
    next.base_id = 0;
    next.fragment_state = f.snapshot();
    for (std::size_t i = 0; i < next.outputs.size(); ++i) {
      CheckpointOutput& out = next.outputs[i];
      Tuples merged = std::move(olds[i]->tuples);
      const TupleId trimmed = out.trimmed_up_to;
      merged.erase(merged.begin(), std::partition_point(merged.begin(), merged.end(),
                                                        [trimmed](const Tuple& t) { return t.id <= trimmed; }));
      merged.insert(merged.end(), out.tuples.begin(), out.tuples.end());
      out.tuples = std::move(merged);
    }
  }
  current.id = next.id;
  current.full = std::move(next);
  current.packed = std::move(packed);
  return true;
}

bool install_checkpoint(Server& server, const CheckpointContent& full) {
  if (!server.workload().restore(full.fragment_state)) return false;
  server.inputs().restore(full.inputs);
  server.outputs().restore(full.outputs);
  return true;
}

}  // namespace hapair
