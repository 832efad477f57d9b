#include "backup/bootstrap.h"

#include "protocols/check.h"

namespace hapair {

CheckpointContent send_bootstrap(Server& server, TimeUs now, NodeId standby, std::uint64_t id, Effects& eff) {
  HAPAIR_CHECK_MSG(standby != kNoNode && standby != server.node().self(),
                   "node " << server.node().self() << " bootstraps standby " << standby);
  CapturedCheckpoint captured = capture_checkpoint(server, id, nullptr,
                                                   static_cast<std::size_t>(server.node().settings().checkpoint_chunk_bytes));
  CheckpointContent state = std::move(captured.summary);
  HAPAIR_CHECK_MSG(state.id == id && !state.delta, "bootstrap checkpoint " << id << " captured as " << state.id
                                                                           << " delta " << state.delta);
  for (auto& c : checkpoint_messages(state.id, false, 0, std::move(captured.chunks)))
    server.send(eff, now, standby, std::move(c));
  server.count("bootstrap_checkpoint_bytes", static_cast<std::int64_t>(captured.payload_bytes));
  for (const auto& in : state.inputs) {
    const FragmentId producer = server.inputs().at(in.stream).producer();
    // Every node that sends me this stream (an active producer's standby tracks it too).
    for (NodeId n : server.routes().input_nodes_of(producer))
      server.send(eff, now, n, Redirect{in.stream, standby, true, in.processed});
  }
  return state;
}

void undo_redirection(Server& server, TimeUs now, NodeId standby, Effects& eff) {
  for (const auto& [s, in] : server.inputs())
    for (NodeId n : server.routes().input_nodes_of(in.producer()))
      server.send(eff, now, n, Redirect{s, standby, false, 0});
}

}  // namespace hapair
