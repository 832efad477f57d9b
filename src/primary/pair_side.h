// The pair side of a node: who runs each fragment as the node knows it (RouteTable: primaries,
// standbys, epochs), the changes of its own fragment's route (a takeover, a new pair, a lost
// standby, a renewed claim), the announcement of such a change to every neighbour until each
// answered, the routes it tells others (fencing notices to stale senders, echoes, a rejoining
// node's catch-up) and who watches the pair's partner (the roles' heartbeats, or the driver).
//
// Paper: after a takeover upstream servers re-route to the new primary (section 4); hapair adds
// epochs, so a paused or partitioned old primary is fenced (docs/FAULTS.md, "Who may act as
// primary").
//
// Invariants: a fragment's epoch never moves backwards (RouteTable); every change of my own
// fragment's epoch that ends what my Unions chose (a takeover, a new pair, a newer Takeover of my
// fragment) first lets the node collect those choices under the epoch that ends; a node is told
// the route at most once per retransmit timeout.
#pragma once

#include <functional>

#include "primary/node_identity.h"
#include "primary/outbox.h"
#include "primary/route_table.h"

namespace hapair {

class PairSide {
 public:
  // `routes` is the Server's table, changed only through this side. `before_epoch_ends` runs
  // before my own fragment's epoch changes in a way that ends what my Unions chose so far (the
  // node collects their merge order, tagged with the epoch that ends).
  PairSide(const NodeIdentity& node, RouteTable& routes, Outbox& outbox, std::function<void()> before_epoch_ends);

  const RouteTable& routes() const { return routes_; }

  // False (and counted) when the envelope comes from an older epoch of its sender's fragment
  // (or from no node of the plan); a stale sender is told who the primary is now (tell_route),
  // so a paused or partitioned old primary learns it is fenced.
  bool is_current(TimeUs now, const Envelope& e, Effects& eff);
  // False (and counted as unknown_sender_dropped) when the sender is no node of the plan or is
  // this node itself: no node sends to itself, so such an envelope is forged or corrupt, and
  // answering it would address a node that does not exist (or loop back).
  bool from_a_peer(const Envelope& e);
  // Tells node n the route I follow for its fragment (a fencing notice), at most once per
  // retransmit timeout per node. Sent to a stale sender, to a node of a producer or consumer
  // that acts as its fragment's primary when it is not, and to the claimant of an epoch whose
  // first claim I follow (two nodes of a fragment claimed the same epoch: a primary dissolved
  // its pair while its standby took over, PrimaryRole::on_standby_lost).
  void tell_route(TimeUs now, NodeId n, Effects& eff);
  // Echoes to `to` the route I follow for its fragment: proof, sent only after its request
  // reached me, that I serve it in that epoch.
  void echo_route(TimeUs now, NodeId to, Effects& eff);
  // The envelope's sender knows a newer epoch of its fragment than I do, and its message does
  // not say who is primary (RouteTable::newer_epoch_without_route): I send it the route I follow
  // for its fragment, and it answers with its own (answer_old_statement). Once per retransmit
  // timeout per node.
  void ask_route(TimeUs now, const Envelope& e, Effects& eff);
  // A node of another fragment told me an older route of my own fragment than mine (it asks,
  // or it echoes what it follows): I tell it mine. Once per retransmit timeout per node.
  void answer_old_statement(TimeUs now, const Envelope& e, Effects& eff);

  // How a Takeover relates to what I follow: counted; a newer one is followed. answer_ties:
  // another claim of a neighbour's current epoch is answered with a fencing notice (a node that
  // is rejoining or fenced follows, and tells nobody).
  TakeoverNews learn(TimeUs now, const Takeover& t, Effects& eff, bool answer_ties);

  // ---- my own fragment: each change opens a new epoch --------------------------------------------
  // A standby takes over: it is the primary, with `followers` as its standbys (the other
  // standbys it heard in an election among k standbys; none with one standby).
  void claim_own_fragment(const std::vector<StandbyRef>& followers = {});
  // A rejoined node becomes my standby (I am the primary).
  void form_pair(NodeId standby, std::uint64_t incarnation);
  // My standby is gone: me as primary, no standby. (The primary stays in charge: what my Unions
  // chose is collected at the end of the event, in the new epoch, as it always was.)
  void dissolve_pair();
  // One of my k standbys is gone, others remain (a new epoch without it).
  void drop_standby(NodeId standby);
  // Another node claimed my epoch after every neighbour followed mine: a newer one says so.
  void renew_claim();
  // A live switch of my fragment's approach (I am the primary): the same pair, in a new epoch
  // whose route names `mode` (announced like a takeover, announce_takeover).
  void switch_approach(HaMode mode);
  // A standby takes over with the copy it held before such a switch: my route names that copy's
  // approach again (RouteTable::resume_own_approach; the claim announces it).
  void resume_approach(HaMode mode) { routes_.resume_own_approach(mode); }

  // Sends Takeover for my fragment (my route in my epoch) to every neighbour and to the other
  // node of my fragment, and repeats it (repeat_announcement) until every neighbour answered.
  void announce_takeover(TimeUs now, Effects& eff, NodeId old_primary);
  // The announcement is answered (`answered`: every consumer said where it resumes and every
  // producer answered my replay request), or is sent again once a retransmit timeout passed.
  // Returns when to look again (kNever: nothing announced).
  TimeUs repeat_announcement(TimeUs now, Effects& eff, bool answered);
  // Tells `node` the current route of every fragment next to mine (a rejoining node starts with
  // the plan's routes, which may be stale).
  void send_routes_to(TimeUs now, Effects& eff, NodeId node);

  // ---- who watches the partner ---------------------------------------------------------------------
  // Start::driver_watches_partner: the driver reports the partner's failure (PeerLost), so the
  // roles send no heartbeats of their own and their heartbeat detectors stay quiet.
  void set_driver_watches_partner(bool on) { driver_watches_partner_ = on; }
  bool own_heartbeats() const { return !driver_watches_partner_; }

 private:
  void exchange_route(TimeUs now, NodeId n, bool asking, Effects& eff);
  // Sends `t` to every node of my fragment but me and `old_primary` (k standbys).
  void send_to_other_standbys(TimeUs now, Effects& eff, const Takeover& t, NodeId old_primary);

  const NodeIdentity& node_;
  RouteTable& routes_;
  Outbox& outbox_;
  std::function<void()> before_epoch_ends_;
  bool driver_watches_partner_ = false;
};

}  // namespace hapair
