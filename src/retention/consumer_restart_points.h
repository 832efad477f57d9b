// What one output stream keeps for the consumer fragments it feeds, from their level-1 acks: each
// consumer fragment's restart points (RestartPointStore), how far my own upstream holds them too
// (they travel one hop further with my restart point), and the generation I tell each consumer I
// hold (TupleBatch.held_generation). The output channel (primary/output_channel.h) holds one and
// consults it for how far it may trim, for what it stamps on every batch and for what it offers
// a consumer's recovery node; the upstream-backup approach (forwarded_points.h) installs and
// confirms forwarded points through the channel. Which consumers recover by upstream backup,
// and which have several producers, is fixed by the plan when the stream is set up.
//
// Paper: upstream backup (section 4.3): an upstream server retains output until the level-1 acks
// of its downstream say it is no longer needed, and hands what it retained to the downstream's
// recovery node. hapair's additions (docs/FAULTS.md): the last two generations are kept, so a
// recovery node always finds one every producer holds; and a consumer with several producers is
// told a generation only once my own upstream holds it too, so a recovery of mine can still
// offer it.
//
// Invariants: generations, trim positions and confirmed generations never move backwards
// (checked in add and install; RestartPointStore checks its own); the generation told to a
// consumer with several producers (when I recover by exact upstream backup myself) never
// exceeds what my upstream confirmed holding, nor what I hold (checked in held_generation);
// what a stream forwards upstream always names the stream, so that a recovery node restarted
// from it can say where every queue begins (checked in forwarded).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "protocols/messages.h"
#include "protocols/plan.h"
#include "retention/restart_point_store.h"

namespace hapair {

class ConsumerRestartPoints {
 public:
  // A stream that keeps points without consulting the plan (every consumer one producer, none
  // recovered by upstream backup): what a channel built on its own, in a test, holds.
  ConsumerRestartPoints() = default;
  // What stream `stream` of fragment `producer` keeps, from the plan: which consumers recover by
  // upstream backup (they are offered my points at their takeover), which have several
  // producers, and whether I recover exactly by upstream backup myself (an operator fragment
  // with cause functions), so that their held generation waits for my upstream.
  static ConsumerRestartPoints for_stream(const Plan& plan, FragmentId producer, StreamId stream);
  // A live switch (docs/ARCHITECTURE.md "Live switching"): consumer d recovers from restart
  // points from now on, or no longer does (it is offered my points at its takeover only then).
  void follow_consumer_approach(FragmentId d, bool recovers_from_restart_points);
  // A live switch of my own fragment: whether I recover exactly from restart points now.
  void follow_own_approach(const Plan& plan, FragmentId producer, bool recovers_from_restart_points);

  // A level-1 ack from consumer fragment d; true when it brought a newer generation (its
  // sender is owed a batch that says I hold it).
  bool add(FragmentId d, const Level1Ack& ack);
  // Consumer d's points that my upstream forwarded to me (I am a recovery node restarted from
  // a restart point that carried them).
  void install(FragmentId d, const std::vector<StoredRestartPoint>& points);
  // My upstream holds `generation` of consumer d's points too; true when that is news.
  bool confirm_forwarded(FragmentId d, std::uint64_t generation);
  std::uint64_t forwarded_confirmed(FragmentId d) const;

  // How far the queue may be trimmed for consumer d (0 until it sent a restart point or a
  // passive standby's direct ack).
  TupleId trim_position(FragmentId d) const;
  // The generation reported to consumer d's nodes with every batch (0: none held).
  std::uint64_t held_generation(FragmentId d) const;
  // Whether consumer d has several producers (its held generation may wait for my upstream,
  // and it needs both stored points forwarded, to find one in common with its other producers).
  bool several_producers(FragmentId d) const { return several_producers_.count(d) > 0; }

  // What I offer consumer d's recovery node when d is taken over (nullopt: d does not recover
  // by upstream backup): my points for it and where my queue of `stream` begins.
  std::optional<RestartPoints> offer(FragmentId d, StreamId stream, TupleId trimmed_up_to) const;
  // What I forward upstream for `stream` with my own level-1 ack: per consumer that sent restart
  // points, its points without what they forwarded in turn; one entry without a consumer when
  // none did (it still says where my queue begins).
  std::vector<DownstreamRestartPoints> forwarded(StreamId stream, TupleId trimmed_up_to) const;
  // Every consumer fragment's store (a fragment appears once it sent a level-1 ack).
  const std::map<FragmentId, RestartPointStore>& stores() const { return stores_; }

 private:
  std::map<FragmentId, RestartPointStore> stores_;
  // The newest generation of each consumer's points that my own upstream holds too.
  std::map<FragmentId, std::uint64_t> forwarded_confirmed_;
  std::set<FragmentId> upstream_backup_consumers_;
  std::set<FragmentId> several_producers_;
  bool held_waits_for_upstream_ = false;
};

}  // namespace hapair
