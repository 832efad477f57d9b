// The spare: a standby process that does no work until its primary fails. It serves two
// approaches.
//
// Paper: amnesia (gap recovery) restarts the failed fragment on a spare from empty state, and
// upstream servers send only new tuples (section 4); upstream backup restarts the failed
// fragment's operators on a recovery node from empty state and every upstream neighbour replays
// its retained output queue (section 4.3). Here the recovery node restarts at the newest restart
// point (composed cause functions) that every upstream still holds, so a deterministic
// fragment regenerates exactly the output ids it had produced, and installs what came with that
// point (its queues' start, its consumers' restart points), so a consumer that failed with it
// is recovered as precisely.
//
// Invariants: the spare takes over at most once; it announces its new epoch before asking
// for any replay; it processes nothing until every upstream offered its restart points (one
// per input stream); it answers a downstream recovery node only after it restarted (before, it
// holds nothing to offer); it claims exact ids only from a restart point whose output positions
// it knows (or from the start, when no upstream trimmed anything); the replay it asks for starts
// nowhere below what an upstream still holds. Each is checked where it can break
// (primary_failed, finish_upstream_backup_takeover, the offers' arrival). What the offers
// contain comes from peers and is never checked, only counted when it does not apply.
#pragma once

#include <map>

#include "primary/standby_role.h"

namespace hapair {

class SpareRole : public StandbyRole {
 public:
  explicit SpareRole(Server& server) : StandbyRole(server) {}
  void on_start(TimeUs now, Effects& eff) override;
  void on_tick(TimeUs now, Effects& eff) override;
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override;
  TimeUs next_wakeup_us() const override;

 private:
  // Takes over: amnesia restarts from empty state at once; upstream backup first collects every
  // upstream's restart points (finish_upstream_backup_takeover). Once only.
  void primary_failed(TimeUs now, Effects& eff, Detector detector) override;
  void finish_upstream_backup_takeover(TimeUs now, Effects& eff);
  // A spare that was an active standby until a live switch to upstream backup keeps that live
  // copy (node/server_node.cpp): while the restart point every upstream holds needs input they
  // trimmed for the earlier approach, the copy takes over instead (its replay after what it
  // accepted is still retained). True when it did.
  bool continue_live_copy(TimeUs now, Effects& eff, const std::vector<RestartPoints>& offers, std::uint64_t newest);
  void on_takeover_while_collecting(TimeUs now, const Takeover& t, Effects& eff);
  // The primary I found failed claimed the epoch I claimed (its live switch opened it, and its
  // announcement reached me after I found it failed): my claim is renewed in a newer epoch.
  void renew_claim_over_failed_primary(TimeUs now, const Takeover& t, Effects& eff);
  // My old primary, fenced by my claim, asks to rejoin while some neighbour still follows its
  // claim of the same epoch: mine is renewed in a newer epoch (see on_message).
  void on_rejoin_while_collecting(TimeUs now, NodeId from, const Rejoin& r, Effects& eff);

  bool collecting_ = false;
  TimeUs next_offer_request_us_ = kNever;
  NodeId failed_primary_ = kNoNode;
  std::map<StreamId, RestartPoints> offers_;
  // Takeovers of downstream fragments that arrived while I collected, answered once I restarted.
  std::map<FragmentId, Takeover> deferred_takeovers_;
  // A neighbour told me it follows another node's claim of the epoch I claimed (an epoch tie).
  bool epoch_tie_seen_ = false;
};

}  // namespace hapair
