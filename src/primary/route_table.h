// A node's view of who runs each fragment of the plan: the primary, the standby and the epoch of
// every fragment, the takeover announcement of its own fragment that neighbours have not all
// answered yet, and the fencing notices it sent.
//
// Paper: after a takeover upstream servers re-route to the new primary (section 4); hapair adds
// epochs so a paused or partitioned old primary is fenced (split brain, docs/FAULTS.md, "Who may act as primary").
//
// Invariant: a fragment's epoch never moves backwards; a Takeover is followed only when it
// names a newer epoch than the one followed (a repeat of the followed one is recognised, not
// followed again).
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "protocols/messages.h"
#include "protocols/plan.h"

namespace hapair {

// Who runs a fragment, as this node knows it.
struct Route {
  NodeId primary = kNoNode;
  // Empty once the standby took over or was lost (or the approach has none).
  std::vector<StandbyRef> standbys;
  Epoch epoch = 0;
  // The fragment's approach in this epoch: the plan's, until a live switch announced another
  // (Takeover::mode, docs/ARCHITECTURE.md "Live switching").
  HaMode mode = kNoHa;
  // The route's entry of node n, or null when n is not one of its standbys.
  const StandbyRef* standby(NodeId n) const {
    for (const StandbyRef& s : standbys)
      if (s.node == n) return &s;
    return nullptr;
  }
};

// How a Takeover relates to the route followed for its fragment.
enum class TakeoverNews {
  malformed,  // names no fragment, or a node of another fragment
  stale,      // an older epoch, or another claim of my own fragment's current epoch
  epoch_tie,  // another claim of a neighbour's current epoch (its first claim is followed)
  repeat,     // the followed announcement again (its answer may have been lost)
  newer,      // a newer epoch: follow it
};

class RouteTable {
 public:
  // The plan's routes, epoch 0 everywhere. `plan` outlives the table.
  RouteTable(const Plan& plan, NodeId self);

  const Route& route(FragmentId f) const;
  // My own fragment's epoch.
  Epoch epoch() const { return route(own_).epoch; }
  // What fragment f's approach is in the epoch I follow (its route's mode): what its producers
  // retain for it and whether its standbys get its input follow a live switch.
  const ApproachTraits& traits(FragmentId f) const;
  // The Takeover that states the route followed for fragment f.
  Takeover statement_of(FragmentId f) const;
  // The nodes that receive a fragment's input (its primary, and its standbys when they process
  // input: active standby).
  std::vector<NodeId> input_nodes_of(FragmentId f) const;
  // Every node of the fragments next to mine (upstream and downstream), primary and standby,
  // sorted.
  std::vector<NodeId> neighbour_nodes() const;
  // True when the envelope's sender is a node of the plan speaking from an epoch of its
  // fragment older than the one followed.
  bool is_stale(const Envelope& e) const;
  // A message from a newer epoch than I know of its fragment: the sender took over and its
  // Takeover did not reach me (lost, or not read yet); the Takeover it implies. From another
  // active fragment only what a primary alone sends implies one (its standby acks and asks too).
  std::optional<Takeover> implied_takeover(const Envelope& e) const;
  // A message from a newer epoch of another fragment that implies no takeover (an active
  // standby's ack, say): the route I follow for that fragment is out of date, and the sender
  // knows a newer one (PairSide::ask_route).
  bool newer_epoch_without_route(const Envelope& e) const;
  // A statement of my own fragment's route older than mine, from a node of another fragment:
  // that node follows an old route and is answered with mine (PairSide::answer_old_statement).
  bool old_statement_of_mine(const Envelope& e) const;

  TakeoverNews classify(const Takeover& t) const;
  // Follows a Takeover classified as newer.
  void follow(const Takeover& t);

  // ---- my own fragment: each change opens a new epoch -----------------------------------------
  // A standby takes over: it is the primary, with `followers` as its standbys (k standbys: the
  // other standbys it heard in the election; none with one standby).
  void claim_as_primary(const std::vector<StandbyRef>& followers = {});
  // A rejoined node becomes my standby (I am the primary); a standby that restarted is named again
  // with its new incarnation.
  void form_pair(NodeId standby, std::uint64_t incarnation);
  // My standby is gone: me as primary, no standby.
  void dissolve_pair();
  // One of my k standbys is gone, others remain: me as primary, the others as standbys.
  void drop_standby(NodeId standby);
  // Another node claimed my epoch after every neighbour followed mine: a newer one says so.
  void renew_claim();
  // A live switch of my fragment's approach (I am the primary): the same pair, in a new epoch
  // whose route names `mode`.
  void switch_approach(HaMode mode);
  // A standby about to take over with the copy it held before its primary's live switch (its
  // new approach's first state had not arrived): my route names that approach again, `mode`, so
  // the claim that follows announces the approach my copy and my primary's end belong to. The
  // epoch stays (the claim opens the next one).
  void resume_own_approach(HaMode mode);

  // ---- the announcement of my fragment's takeover ---------------------------------------------
  void announced(TimeUs now, NodeId old_primary);
  void reannounced(TimeUs now) { announced_us_ = now; }
  void announcement_answered() { announce_pending_ = false; }
  bool announcing() const { return announce_pending_; }
  TimeUs announced_us() const { return announced_us_; }
  NodeId announced_old_primary() const { return announce_old_primary_; }

  // ---- fencing --------------------------------------------------------------------------------
  // Whether node n is due a notice of the route I follow for its fragment (not its current
  // primary, at most once per `interval_us`); records it as sent when it is.
  bool fencing_notice_due(NodeId n, TimeUs now, TimeUs interval_us);
  // Whether node n is due a route query (asking) or an answer to its old statement of my
  // fragment's route (!asking), at most once per `interval_us` each; records it as sent when it is.
  bool route_exchange_due(NodeId n, bool asking, TimeUs now, TimeUs interval_us);

 private:
  void advance_own_epoch();
  // The standbys of fragment f that a message from node n in a newer epoch implies.
  std::vector<StandbyRef> implied_standbys(FragmentId f, NodeId n) const;

  const Plan* plan_;
  NodeId self_;
  FragmentId own_;
  std::vector<Route> routes_;
  bool announce_pending_ = false;  // a takeover some neighbour has not answered yet
  NodeId announce_old_primary_ = kNoNode;
  TimeUs announced_us_ = 0;
  std::map<NodeId, TimeUs> fencing_sent_us_;
  std::map<std::pair<NodeId, bool>, TimeUs> route_exchange_us_;
};

}  // namespace hapair
