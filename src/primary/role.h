// A role is the step function a node currently runs (etcd/raft style: a role change swaps the
// step function, the state stays in Server, which also stores which role it is: Server::role(),
// set by each role's on_start). The primary role is here; the standby roles
// (spare, passive standby, active standby) are in src/backup and hand over to a primary role
// when they take over.
#pragma once

#include <memory>
#include <optional>

#include "primary/server.h"

namespace hapair {

struct Approach;
class RoleBehaviour;

// The standby role a live switch replaced, kept by its successor (the new approach's standby)
// until the new approach's first state (checkpoint or bootstrap) is installed, so that a failure
// of the primary in between finds a node that can take over (docs/ARCHITECTURE.md "The window
// after a switch").
struct PredecessorStandby {
  std::unique_ptr<RoleBehaviour> role;  // null: none kept
  HaMode mode{};                        // the approach it is a standby of
  Role node_role{};                     // the node's role under it (Server::role)
};

class RoleBehaviour {
 public:
  virtual ~RoleBehaviour() = default;
  // Called once when the role begins (at the node's start, or at a takeover).
  virtual void on_start(TimeUs now, Effects& eff) = 0;
  virtual void on_tick(TimeUs now, Effects& eff) = 0;
  // Called only for envelopes from the sender's current epoch (Server::is_current).
  virtual void on_message(TimeUs now, const Envelope& env, Effects& eff) = 0;
  // The driver's detector reports that the partner failed (core.h PeerLost). The default: not
  // this role's concern (a fenced or rejoining node, a primary without a standby).
  virtual void on_peer_lost(TimeUs /*now*/, const PeerLost& /*lost*/, Effects& /*eff*/) {}
  virtual TimeUs next_wakeup_us() const = 0;
  // A role that hands over (a standby that took over) returns its successor once.
  virtual std::unique_ptr<RoleBehaviour> take_successor() { return nullptr; }
  // Taken right after take_successor: a loss of the partner this role learned and its successor
  // must act on (the driver reports a loss once; an orphaned rejoining node hands its partner's
  // loss to the standby role it becomes). Given to the successor's on_peer_lost after its on_start.
  virtual std::optional<PeerLost> take_partner_loss() { return std::nullopt; }
  // A live switch of my fragment's approach to `to` (docs/ARCHITECTURE.md "Live switching"): the
  // primary changes its end in a new epoch and gives its standbys the new approach's state.
  // False: this role does not switch (a standby follows its primary's announcement instead).
  virtual bool switch_approach(TimeUs /*now*/, const Approach& /*to*/, Effects& /*eff*/) { return false; }
  // A live switch replaces this standby role with one that holds no state of its own (a spare
  // that restarts from upstream's retained input): leave in the node the copy I could take over
  // with, for the spare to continue while upstream servers still lack what its restart point
  // needs (they retained for my approach). Default: my copy is the node's already, or I have none.
  virtual void leave_copy_in_node() {}
  // Whether this role could take over now with a state of its own (a standby that holds what its
  // approach takes over with; a spare, whose state is what upstream retains). False for a standby
  // still awaiting its first state, and for every role that is no standby.
  virtual bool holds_takeover_state() const { return false; }
  // A live switch made this role (the new approach's standby, rejoined) succeed `predecessor`:
  // true when it keeps it until its own first state is installed (a standby does; the node's
  // copy then stays as it was), false when it was dropped (the node then starts afresh).
  virtual bool keep_predecessor(PredecessorStandby /*predecessor*/) { return false; }
  // The predecessor this role keeps, handed out once (a second switch came before this role's
  // first state: the predecessor is still the copy to take over with). Default: none.
  virtual PredecessorStandby take_predecessor() { return {}; }
};

}  // namespace hapair
