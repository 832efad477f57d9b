#include "upstream_backup/forwarded_points.h"

#include <algorithm>
#include <set>

#include "protocols/check.h"

namespace hapair {

std::vector<DownstreamRestartPoints> downstream_restart_points(const Server& server) {
  std::vector<DownstreamRestartPoints> out;
  for (const auto& [s, o] : server.outputs()) {
    auto forwarded = o.restart_points().forwarded(s, o.queue().trimmed_up_to());
    // Read back by a recovery node of mine, which installs only a list naming every output
    // stream (install_downstream_restart_points): each stream names itself at least once.
    HAPAIR_CHECK_MSG(!forwarded.empty() && forwarded.front().stream == s, "stream " << s << " forwards nothing");
    out.insert(out.end(), std::make_move_iterator(forwarded.begin()), std::make_move_iterator(forwarded.end()));
  }
  return out;
}

bool install_downstream_restart_points(Server& server, const std::vector<DownstreamRestartPoints>& forwarded) {
  const Plan& plan = server.node().plan();
  std::set<StreamId> named;
  for (const auto& f : forwarded) {
    if (server.outputs().find(f.stream) == server.outputs().end()) {
      server.count("bad_downstream_restart_points_dropped");
      return false;
    }
    if (f.consumer != kNoFragment) {
      const auto& consumers = plan.streams[f.stream].consumers;
      if (std::find(consumers.begin(), consumers.end(), f.consumer) == consumers.end()) {
        server.count("bad_downstream_restart_points_dropped");
        return false;
      }
    }
    named.insert(f.stream);
  }
  if (named.size() != server.outputs().size()) return false;
  // Installed only when every output stream is named (and only mine are): from here on each of
  // my queues says where it begins.
  HAPAIR_CHECK(std::all_of(server.outputs().begin(), server.outputs().end(),
                           [&](const auto& entry) { return named.count(entry.first) == 1; }));
  for (const auto& f : forwarded) {
    server.outputs().install_forwarded(f);
    if (f.consumer != kNoFragment)
      server.count("downstream_restart_points_installed", static_cast<std::int64_t>(f.points.size()));
  }
  confirm_forwarded(server, forwarded);  // they came from my upstream: it holds them
  return true;
}

void confirm_forwarded(Server& server, const std::vector<DownstreamRestartPoints>& forwarded) {
  for (const auto& f : forwarded) {
    if (server.outputs().find(f.stream) == server.outputs().end() || f.consumer == kNoFragment) continue;
    std::uint64_t newest = 0;
    for (const auto& p : f.points) newest = std::max(newest, p.generation);
    const std::uint64_t before = server.outputs().at(f.stream).restart_points().forwarded_confirmed(f.consumer);
    server.outputs().confirm_forwarded(f.stream, f.consumer, newest);
    // A confirmation never lowers a generation (an old list repeated is no news).
    const std::uint64_t after = server.outputs().at(f.stream).restart_points().forwarded_confirmed(f.consumer);
    HAPAIR_CHECK_MSG(after == std::max(before, newest), "stream " << f.stream << " consumer " << f.consumer << " confirmed "
                                                                  << before << " -> " << after << " given " << newest);
  }
}

}  // namespace hapair
