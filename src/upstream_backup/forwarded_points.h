// Upstream backup's forwarding of restart points one hop upstream, at the node: what a server
// holds for its downstream travels with its own level-1 acks (downstream_restart_points), a
// recovery node restarted from a restart point installs what came with it
// (install_downstream_restart_points), and a server learns that its upstream holds what it
// forwarded (confirm_forwarded). They act on the node's output side only through its named
// operations (OutputSide::install_forwarded, OutputSide::confirm_forwarded); what each stream
// keeps is a ConsumerRestartPoints (consumer_restart_points.h).
//
// Paper: upstream backup (section 4.3). hapair's addition (docs/FAULTS.md, "two adjacent
// failures"): a server's restart point carries what it held for its consumers, so that when a
// server and its consumer fail together, the consumer's recovery node still finds its restart
// points at the server's recovery node.
//
// Invariants: a recovery node installs forwarded points only when they name every one of its
// output streams (otherwise it cannot say where its queues begin, and installs nothing), and
// what a server forwards always names every one (checked on both sides); a confirmation never
// lowers a generation (checked in confirm_forwarded). The points' contents come from peers and
// are counted when they do not fit, never checked.
#pragma once

#include <vector>

#include "primary/server.h"

namespace hapair {

// What this server holds for its downstream, per output stream (its trim position, and each
// consumer's restart points without what they forwarded in turn), sent with its level-1 acks so
// its upstream keeps it with its restart point.
std::vector<DownstreamRestartPoints> downstream_restart_points(const Server& server);

// A recovery node restarted from a restart point installs what came with it: every output
// queue holds nothing at or below the trim position, and the consumers' restart points are
// back (held by my upstream, which forwarded them: confirmed). false (nothing installed) when
// `forwarded` does not name every output stream, or names a stream or consumer that is not mine
// (counted).
bool install_downstream_restart_points(Server& server, const std::vector<DownstreamRestartPoints>& forwarded);

// Every producer of mine holds a restart point of mine that carried `forwarded`. A consumer
// with several producers is told it is held (held_generation) only from then on.
void confirm_forwarded(Server& server, const std::vector<DownstreamRestartPoints>& forwarded);

}  // namespace hapair
