// The approach interface: what an HA approach adds to the processing node, at both ends of its
// process pair. Each approach lives in one folder and registers one Approach record
// (src/node/approaches.cpp); the node core, the primary role and the rejoin role reach the
// approach only through that record, so the processing node (src/primary) never names one.
//
// Paper: the three approaches of section 4 differ only in what the primary does for its backup
// (nothing but retain output: upstream backup; send checkpoints: passive standby; send
// determinants: active standby) and in what the backup does until and at a takeover.
//
//   - PrimarySide: the primary's end. The primary role (primary_role.h) owns one for the whole
//     time it is primary, and calls it at fixed points of every event: on_start, on_tick (after
//     heartbeats, before processing), on_message (the messages only this approach sends to a
//     primary), after_processing (after the fragment ran, before outputs go out), retransmit,
//     and when a standby joins or is lost and when held output is released.
//   - standby_role: the standby's end, a RoleBehaviour that watches the primary and, when it
//     fails, hands over to a PrimaryRole (takeover.h has the steps every standby shares).
//
// Invariants: a PrimarySide sends only through the Server it was given (every message carries
// my epoch); it never changes routes (pairs are formed and dissolved by the primary role); what
// it holds for a standby is dropped in on_standby_lost.
#pragma once

#include <cstdint>
#include <memory>

#include "primary/checkpoint_store.h"
#include "primary/server.h"

namespace hapair {

class RoleBehaviour;

struct PrimaryOptions {
  // This primary took over its fragment (it is not the plan's original primary).
  bool took_over = false;
  // Keep processing paused until every consumer sent its ReplayRequest, then rebase ids.
  bool rebase_when_consumers_ready = false;
  // Generations of level-1 acks continue above what upstreams already hold.
  std::uint64_t first_generation = 1;
  // This end began at a live switch of the fragment's approach: each standby keeps the copy it
  // held under the previous approach until this end's first state is installed there
  // (docs/ARCHITECTURE.md "The window after a switch"), so what the producers retain for that
  // copy must last until then too.
  bool switched = false;
};

class PrimarySide {
 public:
  virtual ~PrimarySide() = default;
  // The primary role begins; `standbys` are its live standbys (none, e.g. after a takeover).
  virtual void on_start(TimeUs now, const std::vector<NodeId>& standbys) = 0;
  // Every event that reaches the role's tick, after heartbeats and failure detection.
  virtual void on_tick(TimeUs now, Effects& eff) = 0;
  // A message this approach sends to a primary (checkpoint and determinant acks). false: not
  // one of mine (the role counts it as unexpected).
  virtual bool on_message(TimeUs /*now*/, NodeId /*from*/, const Message& /*m*/, Effects& /*eff*/) { return false; }
  // A message of this approach from a node that is not my standby: a producer's or consumer's
  // primary, or the plan's node of no fragment (the coordinator of global checkpoints, whose
  // messages skip the epoch checks: it has no fragment epoch). false: not one I take.
  virtual bool on_neighbour_message(TimeUs /*now*/, NodeId /*from*/, const Message& /*m*/, Effects& /*eff*/) { return false; }
  // After the fragment processed what was queued, before outputs are pumped.
  virtual void after_processing(TimeUs /*now*/, Effects& /*eff*/) {}
  // Lost messages of this approach: re-sends what got no answer; returns when to look again.
  virtual TimeUs retransmit(TimeUs /*now*/, Effects& /*eff*/) { return kNever; }
  // A restarted node became my standby (the new pair's epoch is announced): give it my state.
  virtual void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) = 0;
  // One of my standbys is gone: stop sending it anything (and waiting for it).
  virtual void on_standby_lost(NodeId standby) = 0;
  // What was held for a lost standby went out: nobody else can reproduce it.
  virtual void on_held_output_released(TimeUs /*now*/) {}
  virtual TimeUs next_wakeup_us() const = 0;
  // Output this end holds back waits for my standby (it is released when the last standby is
  // lost, as nobody else can reproduce it then). false: it waits for something else and stays
  // held (global checkpoints: a complete checkpoint covering it).
  virtual bool output_held_for_standby() const { return true; }
};

// One approach's registration: its HA mode and the factories of its two ends. What the rest of
// the system asks of the approach is its traits record (protocols/approach_traits.h), found by
// the same mode in the plan's catalog.
struct Approach {
  HaMode mode;
  // The primary's end, for an operator fragment of this mode.
  std::unique_ptr<PrimarySide> (*primary_side)(Server& server, const PrimaryOptions& options);
  // The standby's end (the role a planned standby starts in; rejoined: a restarted node named
  // the standby again, which installs fresh state from its primary). Null: no standby.
  std::unique_ptr<RoleBehaviour> (*standby_role)(Server& server, bool rejoined);
  // The core of the plan's node of no fragment, its coordinator, for an approach whose traits
  // ask for one (ApproachTraits::coordinator: global checkpoints). `store` is the run's
  // checkpoint store and outlives the core (a restarted coordinator reads what its predecessor
  // wrote). Null: the approach has no coordinator.
  std::unique_ptr<NodeCore> (*coordinator)(std::shared_ptr<const Plan> plan, NodeId self, CheckpointStore& store) = nullptr;
};

// The primary's end that only forgets cause bookkeeping every consumer acknowledged and, when a
// standby rejoins, has no state to give it (no HA, amnesia). Other sides build on it.
class StatelessPrimarySide : public PrimarySide {
 public:
  explicit StatelessPrimarySide(Server& server) : server_(server) {}
  void on_start(TimeUs now, const std::vector<NodeId>& standbys) override;
  void on_tick(TimeUs now, Effects& eff) override;
  void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) override;
  void on_standby_lost(NodeId) override {}
  TimeUs next_wakeup_us() const override { return next_forget_us_; }

 protected:
  Server& server_;
  TimeUs next_forget_us_ = kNever;
};

// For each output stream, the internal id up to which every consumer has level-0 acked.
std::map<StreamId, TupleId> acked_positions(const Server& server);

// The processing node without HA (a primary and nothing else), and amnesia's primary end.
std::unique_ptr<PrimarySide> make_stateless_primary_side(Server& server, const PrimaryOptions& options);

}  // namespace hapair
