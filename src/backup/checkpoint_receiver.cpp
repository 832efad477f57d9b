#include "backup/checkpoint_receiver.h"

#include "protocols/check.h"

namespace hapair {

std::uint64_t CheckpointReceiver::on_chunk(Server& server, TimeUs now, NodeId from, const Checkpoint& chunk, Effects& eff) {
  auto payload = assembler_.add(chunk);
  if (!payload) return 0;
  // Checked whole, unpacked only as far as needed: a full checkpoint stays packed until a
  // takeover needs its tuples (InstalledCheckpoint); a delta merges with the base tuple by tuple.
  // (The chunks say which it is; a payload that says otherwise is corrupt.)
  auto content = parse_checkpoint(*payload, chunk.delta ? TupleParsing::unpack : TupleParsing::check);
  if (!content || content->delta != chunk.delta) {
    server.count("corrupt_checkpoint_dropped");
    server.trace(eff, now, TraceKind::checkpoint_rejected)
        .with(TraceKey::checkpoint, chunk.checkpoint_id)
        .with(TraceKey::reason, TraceReason::corrupt);
    return 0;
  }
  const std::uint64_t id = content->id;
  Bytes packed = content->delta ? Bytes{} : std::move(*payload);
  if (!apply_checkpoint(server.node().plan(), server.node().fragment_id(), std::move(*content), installed_,
                        std::move(packed))) {
    server.count("unappliable_checkpoint_dropped");
    server.trace(eff, now, TraceKind::checkpoint_rejected)
        .with(TraceKey::checkpoint, id)
        .with(TraceKey::reason, TraceReason::does_not_apply);
    return 0;
  }
  // Acknowledged only once installed: what the ack lets the primary release and its upstream
  // trim is in my copy now, whole (a delta merged into a full one).
  HAPAIR_CHECK_MSG(installed_.id == id && installed_.full.id == id && !installed_.full.delta,
                   "checkpoint " << id << " acknowledged with " << installed_.id << " (full " << installed_.full.id
                                 << ", delta " << installed_.full.delta << ") installed");
  server.count("checkpoints_installed");
  server.trace(eff, now, TraceKind::checkpoint_installed).with(TraceKey::checkpoint, id);
  server.send(eff, now, from, CheckpointAck{id});
  return id;
}

const CheckpointContent& CheckpointReceiver::unpacked() {
  installed_.unpack();
  HAPAIR_CHECK_MSG(installed_.packed.empty() && installed_.full.id == installed_.id,
                   "checkpoint " << installed_.id << " still packed after unpacking");
  return installed_.full;
}

std::uint64_t CheckpointReceiver::install_into(Server& server, std::string& how) {
  how = "state=empty";
  if (installed_.id == 0) {
    server.workload().reset();
    return 0;
  }
  installed_.unpack();
  HAPAIR_CHECK_MSG(installed_.packed.empty() && installed_.full.id == installed_.id,
                   "checkpoint " << installed_.id << " still packed at takeover");
  if (!install_checkpoint(server, installed_.full)) {
    server.count("checkpoint_install_failed");
    how = "state=empty checkpoint_install_failed";
    return 0;
  }
  how = "from its last checkpoint";
  return installed_.id;
}

}  // namespace hapair
