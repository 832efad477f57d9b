// The output side of a node: one OutputChannel per output stream of its fragment. It sends what
// flow-control credits and release gates allow to every consumer node, takes their level-0 and
// level-1 acks and trims its queues as far as they allow, serves their replay requests, follows
// a consumer fragment's takeover (its new primary, a joining active standby), and holds output
// back while a role or an approach says so (release gates, a trim margin).
//
// Paper: every server keeps an output queue per stream; output queues double as logs for
// recovery, trimmed by queue-trimming acknowledgements (sections 2, 4.3); after a takeover they
// are re-sent, and downstream drops duplicates by id (section 4).
//
// Invariants: a consumer is never sent an id at or below its cursor, nor more than
// inflight_tuples_max tuples beyond its last level-0 ack (OutputChannel); a queue is trimmed only
// as far as every consumer's acknowledgement allows (level-1 for consumers whose HA mode may ask
// for a replay, level-0 otherwise), less the trim margin; only the node's primary sends to a
// consumer that joins (a standby tracks it); output ids on a stream strictly grow across
// takeovers (rebase).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "operators/fragment.h"
#include "primary/checkpoint.h"
#include "primary/node_identity.h"
#include "primary/outbox.h"
#include "primary/output_channel.h"
#include "primary/pair_side.h"

namespace hapair {

class OutputSide {
 public:
  using Channels = std::map<StreamId, OutputChannel>;

  // One channel per output stream of my fragment, its consumers from the routes (sent to when
  // `role` is primary, only tracked otherwise). Every argument outlives the side; `role` is the
  // Server's, read whenever a consumer joins.
  OutputSide(const NodeIdentity& node, const Role& role, Outbox& outbox, PairSide& pair);

  // ---- what it holds (read-only) -----------------------------------------------------------------
  Channels::const_iterator begin() const { return channels_.begin(); }
  Channels::const_iterator end() const { return channels_.end(); }
  Channels::const_iterator find(StreamId s) const { return channels_.find(s); }
  const OutputChannel& at(StreamId s) const { return channels_.at(s); }
  std::size_t size() const { return channels_.size(); }
  // Every consumer told me where it resumes.
  bool all_ready() const;
  // Every stream ended and every consumer acknowledged its end.
  bool all_acked_to_end() const;
  // Some queue is at output_queue_tuples_max (`which`: the first such stream's name).
  bool any_full(std::string* which) const;
  // The smallest room before a queue is full (OutputQueue::room; 0 when one is): fewer appends
  // than this, spread over the streams in any way, leave every queue short of full.
  std::size_t room() const;
  std::uint64_t tuples_sent() const { return tuples_sent_; }
  std::uint64_t tuples_trimmed() const { return tuples_trimmed_; }

  // ---- the workload's output ---------------------------------------------------------------------
  // Appends an operator output (internal id) to stream s.
  void append(StreamId s, const Tuple& t);
  // Appends a fragment's outputs in their order (each to its stream, as append() would).
  void append(const FragmentOutputs& outs);
  // A source's stream s: appends its tuples up to id `last` (its queue recomputes them).
  void extend_source(StreamId s, TupleId last);
  // Stream s will have no more tuples (its end of stream follows the last one).
  void end_stream(StreamId s);
  // Every tuple appended to stream s from now on has ts >= boundary_us (a plan with a Union in
  // timestamp order: OutputChannel::set_boundary).
  void set_boundary(StreamId s, TimeUs boundary_us);

  // ---- the data plane ----------------------------------------------------------------------------
  // Sends what credits and release gates allow to every ready consumer.
  void pump(TimeUs now, Effects& eff);
  void on_level0_ack(TimeUs now, NodeId from, const Level0Ack& ack);
  void on_level1_ack(TimeUs now, NodeId from, const Level1Ack& ack);
  // A consumer says where to resume (after a takeover, or to confirm my epoch), or asks to fill
  // a gap a lost batch left.
  void on_replay_request(TimeUs now, NodeId from, const ReplayRequest& req, Effects& eff);
  // A consumer fragment's primary (un)subscribes its joining active standby.
  void on_redirect(TimeUs now, NodeId from, const Redirect& r, Effects& eff);
  // Rewinds every consumer that made no progress for its back-off to its last acknowledged
  // position (lost messages); returns when to look again.
  TimeUs retransmit(TimeUs now);

  // ---- consumers and takeovers -------------------------------------------------------------------
  // A consumer fragment was taken over: its old nodes no longer consume; the new ones tell me
  // where to resume (they hold trimming back until then).
  void follow_consumer_takeover(const Takeover& t);
  // My fragment's approach changed (a live switch; NodeIdentity::mode is the new one).
  void follow_own_approach();
  // After the route of consumer fragment d changed: a replay request refused since its last
  // change, from the node it now names primary (its claim was refused, then won in a newer
  // epoch), is served now; the other requests refused from d's nodes are forgotten.
  void serve_refused_replay_requests(TimeUs now, FragmentId d, Effects& eff);
  // Offers the restart points I hold for a consumer fragment that recovers by upstream backup to
  // its new primary (ConsumerRestartPoints::offer).
  void offer_restart_points(TimeUs now, const Takeover& t, Effects& eff);
  // Rebuilds every stream's consumers from the current routes (after a takeover of my own
  // fragment, or a lost standby): each must first tell me where to resume.
  void reset_consumers_awaiting_replay_request();
  // A standby installed its primary's state: it tracks its consumers' acks and sends nothing.
  void track_consumers_without_sending();
  // A fresh standby's view: empty queues, consumers tracked and not sent to.
  // A recovery node that restarts from a restart point although its node held a copy (kept across
  // a live switch): its logs start empty, as a spare's (consumers unchanged).
  void clear_logs();
  void reset_for_standby();
  // A standby whose consumers do not acknowledge it (hybrid standby) trims stream s's log up to
  // where its primary's log began at a checkpoint: every consumer acknowledged what came before.
  void trim_log_up_to(StreamId s, TupleId up_to);

  // ---- holding output back -----------------------------------------------------------------------
  // The release gates: hold every output after what it has now (a standby that must confirm
  // what output depends on appeared), release one stream up to a wire id, or release all that
  // is held (nobody can reproduce it any more; returns the tuples released).
  void hold_all();
  // Holds every stream whose gate is open from where its log begins (what every consumer
  // acknowledged): a new primary whose log only it can reproduce yet (active standby's winner
  // among k standbys, before its followers have its state). A held gate stays where it is.
  void hold_from_log_start();
  void release(StreamId s, TupleId up_to);
  std::size_t release_all_held();
  // Keeps `tuples` more in every queue than acknowledgements allow (an active standby whose ids
  // may name other tuples than its primary's). A role's setting: a role change clears it.
  void set_trim_margin(TupleId tuples) { trim_margin_ = tuples; }
  TupleId trim_margin() const { return trim_margin_; }
  // Rebases every stream above the positions consumers reported (takeovers that cannot
  // regenerate identical ids).
  void rebase_all();

  // ---- state transfer ----------------------------------------------------------------------------
  // Installs a checkpoint's output queues (their gates open).
  void restore(const std::vector<CheckpointOutput>& queues);
  // A recovery node restarted from a restart point installs what its upstream forwarded with it
  // for one stream (OutputChannel::install).
  void install_forwarded(const DownstreamRestartPoints& forwarded);
  // My upstream holds `generation` of consumer d's points on stream s too; a consumer with
  // several producers is told (its held generation may rise). False when that is no news.
  bool confirm_forwarded(StreamId s, FragmentId d, std::uint64_t generation);

  // ---- the end of an event -------------------------------------------------------------------------
  // One `trimmed` trace per stream trimmed during the event (trace_level data).
  void trace_trims(TimeUs now, Effects& eff);

 private:
  ConsumerState make_consumer(NodeId node, FragmentId consumer_fragment) const;
  OutputChannel& channel(StreamId s);
  void trim_all();
  void trace_replay_gap(Effects& eff, TimeUs now, StreamId s, NodeId asker, TupleId after, TupleId trimmed,
                        const char* what);

  const NodeIdentity& node_;
  const Role& role_;
  Outbox& outbox_;
  PairSide& pair_;
  Channels channels_;
  // Replay requests (not gap fills) refused because their node was no consumer node I followed,
  // by node and stream, until its fragment's next route change; at most one per node and stream.
  std::map<NodeId, std::map<StreamId, ReplayRequest>> refused_replay_requests_;
  TupleId trim_margin_ = 0;
  std::uint64_t tuples_sent_ = 0;
  std::uint64_t tuples_trimmed_ = 0;
  struct PendingTrim {
    TupleId position = 0;
    std::uint64_t count = 0;
  };
  std::map<StreamId, PendingTrim> trims_this_event_;
  std::vector<OutgoingBatch> pumped_;  // pump()'s batches of one channel, reused (empty between calls)
};

}  // namespace hapair
