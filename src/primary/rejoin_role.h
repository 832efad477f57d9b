// The role of a node whose process was restarted after a crash: its state is gone and its
// fragment failed over without it. It asks the other node of its fragment — the primary now —
// to take it back as the standby (Rejoin, repeated until answered), and once the primary names
// it as standby in a new epoch, it becomes the standby the HA mode needs: a spare (amnesia,
// upstream backup), a passive standby (waiting for the primary's first full checkpoint), or an
// active standby (bootstrapped from a full checkpoint, then fed by upstream and determinants).
//
// docs/FAULTS.md, "Who may act as primary": restoring the pair after a failover, so a later failure is recovered as
// precisely as the first. Invariant: a rejoining node sends nothing but Rejoin until it is
// named standby; it never acts as primary.
#pragma once

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
  TimeUs next_wakeup_us() const override { return successor_ ? kNever : next_request_us_; }
  std::unique_ptr<RoleBehaviour> take_successor() override { return std::move(successor_); }

 private:
  void request(TimeUs now, Effects& eff);

  Server& server_;
  const Approach& approach_;
  NodeId partner_ = kNoNode;
  // This request's identity: the time it started (later for every restart or fencing).
  std::uint64_t incarnation_ = 0;
  TimeUs next_request_us_ = kNever;
  std::unique_ptr<RoleBehaviour> successor_;
};

}  // namespace hapair
