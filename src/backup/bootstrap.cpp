#include "backup/bootstrap.h"

#include <utility>

#include "protocols/check.h"

namespace hapair {

Bootstrap capture_bootstrap(Server& server, std::uint64_t id) {
  CapturedCheckpoint captured = capture_checkpoint(server, id, nullptr,
                                                   static_cast<std::size_t>(server.node().settings().checkpoint_chunk_bytes));
  Bootstrap b;
  b.summary = std::move(captured.summary);
  HAPAIR_CHECK_MSG(b.summary.id == id && !b.summary.delta, "bootstrap checkpoint " << id << " captured as " << b.summary.id
                                                                                  << " delta " << b.summary.delta);
  b.chunks = checkpoint_messages(b.summary.id, false, 0, std::move(captured.chunks));
  HAPAIR_CHECK_MSG(!b.chunks.empty(), "bootstrap checkpoint " << id << " without chunks");
  server.count("bootstrap_checkpoint_bytes", static_cast<std::int64_t>(captured.payload_bytes));
  return b;
}

void send_bootstrap_chunks(Server& server, TimeUs now, NodeId standby, const Bootstrap& b, Effects& eff) {
  HAPAIR_CHECK_MSG(standby != kNoNode && standby != server.node().self(),
                   "node " << server.node().self() << " bootstraps standby " << standby);
  for (const Checkpoint& c : b.chunks) {
    HAPAIR_CHECK_MSG(c.checkpoint_id == b.summary.id && !c.delta,
                     "bootstrap chunk of checkpoint " << c.checkpoint_id << ", bootstrapping " << b.summary.id);
    server.send(eff, now, standby, Checkpoint(c));
  }
}

void redirect_inputs(Server& server, TimeUs now, NodeId standby, const Bootstrap& b, Effects& eff) {
  for (const auto& in : b.summary.inputs) {
    const FragmentId producer = server.inputs().at(in.stream).producer();
    // Every node that sends me this stream (an active producer's standby tracks it too).
    for (NodeId n : server.routes().input_nodes_of(producer))
      server.send(eff, now, n, Redirect{in.stream, standby, true, in.processed});
  }
}

CheckpointContent send_bootstrap(Server& server, TimeUs now, NodeId standby, std::uint64_t id, Effects& eff) {
  Bootstrap b = capture_bootstrap(server, id);
  send_bootstrap_chunks(server, now, standby, b, eff);
  redirect_inputs(server, now, standby, b, eff);
  return std::move(b.summary);
}

void undo_redirection(Server& server, TimeUs now, NodeId standby, Effects& eff) {
  for (const auto& [s, in] : server.inputs())
    for (NodeId n : server.routes().input_nodes_of(in.producer()))
      server.send(eff, now, n, Redirect{s, standby, false, 0});
}

}  // namespace hapair
