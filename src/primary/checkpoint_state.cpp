#include "primary/checkpoint_state.h"

#include <algorithm>
#include <utility>

namespace hapair {

CheckpointContent capture_checkpoint(const Server& server, std::uint64_t id, const CheckpointBase* delta_base) {
  CheckpointContent c;
  c.id = id;
  c.epoch = server.routes().epoch();
  const Fragment* fragment = server.workload().fragment();
  const bool delta = delta_base != nullptr && fragment != nullptr;
  c.delta = delta;
  c.base_id = delta ? delta_base->id : 0;
  if (fragment) c.fragment_state = delta ? fragment->snapshot_delta(delta_base->fragment_versions) : fragment->snapshot();
  for (const auto& [s, in] : server.inputs()) c.inputs.push_back(CheckpointInput{s, in.processed(), in.eos_processed()});
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
    out.tuples.reserve(q.size());
    q.copy_to(q.index_after(after), q.size(), out.tuples);
    c.outputs.push_back(std::move(out));
  }
  return c;
}

CheckpointBase base_of(const CheckpointContent& captured, std::vector<std::uint64_t> versions) {
  CheckpointBase b;
  b.id = captured.id;
  b.fragment_versions = std::move(versions);
  for (const auto& o : captured.outputs) b.output_last_ids[o.stream] = o.last_id;
  return b;
}

bool apply_checkpoint(const Plan& plan, FragmentId fragment, CheckpointContent received,
                      InstalledCheckpoint& current) {
  CheckpointContent next;
  if (!received.delta) {
    if (plan.fragments[fragment].kind == FragmentKind::operators) {
      Fragment probe(plan, fragment);
      if (!probe.restore(received.fragment_state)) return false;
    }
    next = std::move(received);
  } else {
    if (current.id == 0 || received.base_id != current.id) return false;
    next = std::move(received);
    next.delta = false;
    next.base_id = 0;
    Fragment f(plan, fragment);
    if (!f.restore(current.full.fragment_state) || !f.apply_delta(next.fragment_state)) return false;
    next.fragment_state = f.snapshot();
    // Output queues: the base's retained tuples, trimmed, plus what was appended since.
    for (auto& out : next.outputs) {
      const CheckpointOutput* old = nullptr;
      for (const auto& o : current.full.outputs)
        if (o.stream == out.stream) old = &o;
      if (!old) return false;
      Tuples merged;
      for (const Tuple& t : old->tuples)
        if (t.id > out.trimmed_up_to) merged.push_back(t);
      for (const Tuple& t : out.tuples) {
        if (!merged.empty() && t.id <= merged.back().id) return false;
        merged.push_back(t);
      }
      out.tuples = std::move(merged);
    }
  }
  current.id = next.id;
  current.full = std::move(next);
  return true;
}

bool install_checkpoint(Server& server, const CheckpointContent& full) {
  if (!server.workload().restore(full.fragment_state)) return false;
  server.inputs().restore(full.inputs);
  server.outputs().restore(full.outputs);
  return true;
}

}  // namespace hapair
