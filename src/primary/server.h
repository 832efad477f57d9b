// The processing node every approach plugs into: the composition of its parts, whatever its role
// and its fragment's HA mode.
//
//   - NodeIdentity: who the node is (plan, node, fragment, HA mode); fixed.
//   - Outbox (outbox.h): every message it sends (stamped with its node and epoch), every trace
//     event, its counters.
//   - PairSide (pair_side.h): who runs each fragment (the RouteTable), the changes of its own
//     fragment's route and their announcement, fencing notices, who watches the partner.
//   - InputSide (input_side.h): an InputChannel per input stream and the input queue.
//   - OutputSide (output_side.h): an OutputChannel per output stream (the output queues).
//   - Workload (workload.h): the source, operator fragment or sink between them.
//
// Paper: every server keeps input and output queues per stream; output queues are logs trimmed
// by queue-trimming acknowledgements (section 2, 4.3); after a takeover, upstream servers re-send
// what they retained and downstream servers drop duplicates by tuple id (section 4).
//
// Roles (the primary role in this layer, each approach's standby role in its own folder) drive a
// Server through its parts' named operations: no accessor hands out a channel, a queue, the route
// table or the fragment to change (they are visible read-only); each part holds, by reference,
// only the other parts it consults, set up here. What needs several parts at once is here: a
// role change, learning of a takeover, retransmission, and the end of every event. Server never
// decides *when* to take over; roles do. Nothing here names an approach: what an approach keeps
// at the node (the restart points its consumers sent, a trim margin, held output) is a small type
// or setting the parts consult (primary/approach.h, "The approach interface" in
// docs/ARCHITECTURE.md).
//
// Invariants: those of its parts; and the role is stored once, here, and a role change first
// collects the merge order chosen under the old one and clears the old role's trim margin.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "primary/checkpoint_store.h"
#include "primary/input_side.h"
#include "primary/node_identity.h"
#include "primary/outbox.h"
#include "primary/output_side.h"
#include "primary/pair_side.h"
#include "primary/route_table.h"
#include "primary/workload.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {

class Server {
 public:
  // `local_snapshots`: my host's store of my fragment's own snapshot copies under local recovery
  // (primary/checkpoint_store.h), outliving me; null when the run keeps none.
  Server(std::shared_ptr<const Plan> plan, NodeId self, CheckpointStore* local_snapshots = nullptr);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // ---- who I am, and who runs each fragment as I know it ---------------------------------------
  const NodeIdentity& node() const { return node_; }
  const RouteTable& routes() const { return routes_; }
  // The role is stored here only (the role objects read it; each role's on_start sets it).
  Role role() const { return role_; }

  // ---- the outbox: what every part, role and approach says goes through it ----------------------
  void send(Effects& eff, TimeUs now, NodeId to, Message body) { outbox_.send(eff, now, to, std::move(body)); }
  // Records a typed trace event (protocols/trace.h) and returns it for its details:
  //   server.trace(eff, now, TraceKind::detection).with(TraceKey::failed, p);
  // A data-plane kind is recorded only at trace_level data (the returned event is then dropped).
  TraceEvent& trace(Effects& eff, TimeUs now, TraceKind kind) { return outbox_.trace(eff, now, kind); }
  void count(const std::string& name, std::int64_t n = 1) { outbox_.count(name, n); }

  // ---- the parts, each changed only through its own named operations -----------------------------
  PairSide& pair() { return pair_; }
  InputSide& inputs() { return inputs_; }
  const InputSide& inputs() const { return inputs_; }
  OutputSide& outputs() { return outputs_; }
  const OutputSide& outputs() const { return outputs_; }
  Workload& workload() { return workload_; }
  const Workload& workload() const { return workload_; }
  // My host's copies of my fragment's snapshots (local recovery); null without.
  CheckpointStore* local_snapshots() const { return local_snapshots_; }

  // ---- what needs several parts ------------------------------------------------------------------
  // A new role: merge orders logged so far are tagged with the role they were chosen in, and a
  // trim margin the old role kept goes with it.
  void set_role(Role r);
  // Becomes a standby of my fragment (a restarted node rejoining): a fresh fragment, nothing
  // accepted or queued, and consumers tracked but not sent to.
  void become_standby(Role r);
  // A neighbouring fragment (or my own, if I am being fenced) was taken over. Returns true if it
  // was my own fragment and I must stop acting as its primary. A newer epoch of a consumer moves
  // my output to its new nodes; the answer goes to its new primary: my restart points for it (as
  // its upstream-backup upstream) and replay requests (as a producer's consumer). A repeated
  // Takeover (same epoch, same primary) is answered again (its first answer may have been lost).
  // answer=false: only learn the route (a standby still installing its primary's state has no
  // input positions to answer with; its primary subscribes it).
  bool on_takeover(TimeUs now, const Takeover& t, Effects& eff, bool answer = true);
  // A live switch of my fragment's approach (docs/ARCHITECTURE.md "Live switching"). As its
  // primary: a new epoch whose route names `mode` (the caller announces it). As a standby that
  // learned such an epoch: my identity follows the route's mode. Either way what my output
  // queues keep for my own recovery follows the new approach.
  void switch_approach(HaMode mode);
  // The undoing of switch_approach at a standby: my primary failed before my new approach's first
  // state arrived, and I take over with the copy I held before the switch, as the standby
  // `role` of approach `mode` I was (docs/ARCHITECTURE.md "The window after a switch"). My route,
  // my identity and my output queues name that approach again until the new primary switches.
  void resume_approach(HaMode mode, Role role);
  // Lost messages: rewinds every consumer that made no progress for retransmit_timeout_ms to its
  // last acknowledged position, and repeats takeover announcements (a primary's) and replay
  // requests (a primary's or an active standby's) that got no answer. Returns when it next needs
  // to look.
  TimeUs retransmit(TimeUs now, Effects& eff);
  // Called once at the end of every event: the trims of this event (one `trimmed` trace per
  // stream), a `role` trace when my role changed, what my fragment's Unions logged (tagged with
  // my epoch and role), and what the event did: the work done, whether I finished, a fatal error.
  void end_event(TimeUs now, Effects& eff);
  Metrics metrics() const;

 private:
  void answer_takeover(TimeUs now, const Takeover& t, Effects& eff);
  bool finished() const;

  NodeIdentity node_;
  Role role_;
  Role reported_role_;
  RouteTable routes_;  // changed only through pair_
  Outbox outbox_;
  PairSide pair_;
  InputSide inputs_;
  OutputSide outputs_;
  Workload workload_;
  CheckpointStore* local_snapshots_;
  // The work counters as the last end_event reported them.
  std::uint64_t work_reported_ = 0;
  std::uint64_t operator_work_reported_ = 0;
};

}  // namespace hapair
