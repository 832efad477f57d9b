// The role of a node whose process was restarted after a crash: its state is gone and its
// fragment failed over without it. It asks the other node of its fragment — the primary now —
// to take it back as the standby (Rejoin, repeated until answered), and once the primary names
// it as standby in a new epoch, it becomes the standby the HA mode needs: a spare (amnesia,
// upstream backup), a passive standby (waiting for the primary's first full checkpoint), or an
// active standby (bootstrapped from a full checkpoint, then fed by upstream and determinants).
//
// docs/FAULTS.md, "Who may act as primary": restoring the pair after a failover, so a later failure is recovered as
// precisely as the first.
//
// Orphaned: when the partner is lost too (the driver reports it, or it asks me to rejoin because
// it restarted as well and I am the plan's primary of the pair), nobody would ever answer. If
// the approach's standby holds no state of its primary (ApproachTraits::standby_holds_state false:
// amnesia, upstream backup), I learn my fragment's current route from my neighbours (a
// Heartbeat in my old epoch makes each that knows a newer one answer with it, PairSide::tell_route),
// wait one retransmit timeout for the answers, and then become the standby role: it finds the
// primary it watches lost (I hand it my partner's loss) and takes over in an epoch above every
// one my neighbours told me.
// With a state-holding standby (passive, active) both copies of the state are gone: I stay
// rejoining (counted), as the fail-stop model of one failure per pair allows.
//
// Invariant: a rejoining node sends nothing but Rejoin (and, orphaned, the route queries) until
// it is a standby; it never acts as primary directly.
#pragma once

#include <algorithm>
#include <optional>
#include <utility>

#include "primary/approach.h"
#include "primary/role.h"

namespace hapair {

class RejoiningRole : public RoleBehaviour {
 public:
  // `approach`: my fragment's, whose standby role I become once named.
  RejoiningRole(Server& server, const Approach& approach);
  void on_start(TimeUs now, Effects& eff) override;
  void on_tick(TimeUs now, Effects& eff) override;
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override;
  void on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) override;
  TimeUs next_wakeup_us() const override { return successor_ ? kNever : std::min(next_request_us_, orphan_claim_us_); }
  std::unique_ptr<RoleBehaviour> take_successor() override { return std::move(successor_); }
  std::optional<PeerLost> take_partner_loss() override { return std::exchange(partner_loss_, std::nullopt); }

 private:
  void request(TimeUs now, Effects& eff);
  // My partner cannot answer (lost, or rejoining itself): ask the neighbours for my route.
  void orphaned(TimeUs now, Effects& eff, const char* why, PeerLost loss);
  void become_standby(TimeUs now, Effects& eff, NodeId primary, std::uint64_t epoch, bool orphan);

  Server& server_;
  const Approach& approach_;
  NodeId partner_ = kNoNode;
  // This request's identity: the time it started (later for every restart or fencing).
  std::uint64_t incarnation_ = 0;
  TimeUs next_request_us_ = kNever;
  // Orphaned: when I become the standby role and let it take over (kNever: not orphaned).
  TimeUs orphan_claim_us_ = kNever;
  // Orphaned: my partner's loss, for the standby role I become (it would never hear it again:
  // the driver reports a loss once, and a rejoining partner sends no heartbeats).
  std::optional<PeerLost> partner_loss_;
  std::unique_ptr<RoleBehaviour> successor_;
};

}  // namespace hapair
