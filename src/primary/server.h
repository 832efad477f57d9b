// The state and mechanisms every node of a plan shares, whatever its role: its view of who runs
// each neighbouring fragment (routes and epochs), its input streams with duplicate elimination
// and level-0 acknowledgements, its output queues with per-consumer cursors, flow-control
// credits, replay and queue trimming, and its workload (a source generator, a fragment of
// operators, or a sink).
//
// Paper: every server keeps input and output queues per stream; output queues are logs trimmed
// by queue-trimming acknowledgements (section 2, 4.3); after a takeover, upstream servers re-send
// what they retained and downstream servers drop duplicates by tuple id (section 4).
//
// Server is the composition of small pure types that own their invariants: an InputChannel per
// input stream, an OutputChannel per output stream and a RouteTable. Roles (primary role in this
// layer; spare, passive and active standby in src/backup) drive a Server through operations
// named after what they do; no accessor hands out a mutable channel or route. Server never
// decides *when* to take over; roles do.
//
// Invariants: a consumer is never sent an id at or below its cursor, nor more than
// inflight_tuples_max tuples beyond its last level-0 ack; a queue is trimmed only up to what
// every consumer's acknowledgement allows (level-1 for consumers whose HA mode may ask for a
// replay, level-0 otherwise); output ids on a stream strictly grow across takeovers.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "operators/fragment.h"
#include "primary/input_channel.h"
#include "primary/node_identity.h"
#include "primary/output_channel.h"
#include "primary/route_table.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair {

struct CheckpointContent;

class Server {
 public:
  Server(std::shared_ptr<const Plan> plan, NodeId self);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Who I am (fixed), and who runs each fragment as I know it.
  const NodeIdentity& node() const { return node_; }
  const RouteTable& routes() const { return routes_; }

  // ---- role (stored here only; the role objects read it) --------------------------------------
  Role role() const { return role_; }
  // Merge orders logged so far are tagged with the role they were chosen in before it changes.
  void set_role(Role r);
  // Becomes a standby of my fragment (a restarted node rejoining): a fresh fragment, and
  // consumers tracked but not sent to.
  void become_standby(Role r);

  // ---- routes and epochs ----------------------------------------------------------------------
  // False (and counted) when the envelope comes from an older epoch of its sender's fragment
  // (or from no node of the plan); a stale sender is told who the primary is now (at most once
  // per retransmit timeout per sender), so a paused or partitioned old primary learns it is
  // fenced.
  bool is_current(TimeUs now, const Envelope& e, Effects& eff);
  // Changes of my own fragment's route, each in a new epoch: a standby takes over (it becomes
  // the primary, without a standby); a rejoined node becomes my standby; my standby is gone; my
  // claim is renewed over another one. A takeover and a new pair first collect what my Unions
  // chose, under the epoch that ends (a dissolution or a renewal leaves the primary in charge,
  // and its choices are collected at the end of the event as they always were).
  void claim_own_fragment();
  void form_pair(NodeId standby, std::uint64_t incarnation);
  void dissolve_pair() { routes_.dissolve_pair(); }
  void renew_claim() { routes_.renew_claim(); }

  // ---- sending ------------------------------------------------------------------------------
  void send(Effects& eff, TimeUs now, NodeId to, Message body);
  // Records a typed trace event (protocols/trace.h) and returns it for its details:
  //   server.trace(eff, now, TraceKind::detection).with(TraceKey::failed, p);
  // A data-plane kind is recorded only at trace_level data (the returned event is then dropped).
  TraceEvent& trace(Effects& eff, TimeUs now, TraceKind kind);
  // Adds to a counter, saturating at the int64 range: a peer's absurd ids (a ReplayRequest after
  // id 3 when 2^62 were sent) must not overflow a count (found by fuzz/envelope_fuzz).
  void count(const std::string& name, std::int64_t n = 1);
  // A count of tuples between two ids (b above a), for count(): at most INT64_MAX.
  static std::int64_t tuples_between(TupleId a, TupleId b);

  // ---- workload -----------------------------------------------------------------------------
  Fragment* fragment() { return fragment_.get(); }
  const Fragment* fragment() const { return fragment_.get(); }
  void reset_fragment();  // a fresh, empty fragment (amnesia, upstream-backup restart)
  // Start::driver_watches_partner: the driver reports the partner's failure (PeerLost), so the
  // roles send no heartbeats of their own and their heartbeat detectors stay quiet.
  void set_driver_watches_partner(bool on) { driver_watches_partner_ = on; }
  bool own_heartbeats() const { return !driver_watches_partner_; }
  void set_processing_paused(bool paused) { processing_paused_ = paused; }
  bool processing_paused() const { return processing_paused_; }

  // ---- input side ---------------------------------------------------------------------------
  const std::map<StreamId, InputChannel>& inputs() const { return inputs_; }
  // Accepts a batch from the current producer: drops duplicates and stale senders (counted),
  // queues the rest. Returns the number of tuples queued.
  std::size_t accept_batch(TimeUs now, NodeId from, const TupleBatch& batch, Effects& eff);
  // Runs queued input through the workload while output queues have room. Outputs go to the
  // output queues (and deliveries for sinks). Stops early under back-pressure.
  void process_input(TimeUs now, Effects& eff);
  // Level-0 acks for processed input (to the producer's primary and active backup), when due
  // (or always when force).
  void send_level0_acks(TimeUs now, Effects& eff, bool force);
  // Asks every input stream's producer to re-send after `after` (per stream), e.g. after a
  // takeover. A missing stream in the map means "after what I accepted".
  void request_replay(TimeUs now, Effects& eff, const std::map<StreamId, TupleId>& after,
                      std::uint64_t generation);

  // ---- output side --------------------------------------------------------------------------
  const std::map<StreamId, OutputChannel>& outputs() const { return outputs_; }
  // Sends what credits and release gates allow to every ready consumer.
  void pump_outputs(TimeUs now, Effects& eff);
  // Lost messages: rewinds every consumer that made no progress for retransmit_timeout_ms to
  // its last acknowledged position, and repeats takeover announcements and replay requests that
  // got no answer. Returns when it next needs to look.
  TimeUs retransmit(TimeUs now, Effects& eff);
  // Rebuilds the consumer list of every output stream from the current routes (after a
  // takeover of my own fragment): every consumer must first tell me where to resume.
  void reset_consumers_awaiting_replay_request();
  // A standby installed its primary's state: it tracks its consumers' acks and sends nothing.
  void track_consumers_without_sending();
  // Rebase every output stream above the positions consumers reported (takeovers that cannot
  // regenerate identical ids): retained tuples and everything produced later get ids above the
  // highest id any consumer accepted.
  void rebase_outputs();
  // The release gates: hold every output after what it has now (a standby that must confirm
  // what output depends on appeared), release one stream up to a wire id, or release all that
  // is held (nobody can reproduce it any more); returns the tuples released.
  void hold_outputs();
  void release_output(StreamId s, TupleId up_to);
  std::size_t release_held_outputs();
  // Installs a checkpoint's input positions and output queues (the fragment is restored by the
  // caller).
  void install_positions(const CheckpointContent& full);

  // ---- upstream backup ------------------------------------------------------------------------
  // What this server holds for its downstream, per output stream (its trim position, and each
  // consumer's restart points without what they forwarded in turn), sent with its level-1 acks
  // so its upstream keeps it with its restart point.
  std::vector<DownstreamRestartPoints> downstream_restart_points() const;
  // A recovery node restarted from a restart point installs what came with it: every output
  // queue holds nothing at or below the trim position, and the consumers' restart points are
  // back. false (nothing installed) when `forwarded` does not name every output stream.
  bool install_downstream_restart_points(const std::vector<DownstreamRestartPoints>& forwarded);
  // Every producer of mine holds a restart point of mine that carried `forwarded`. A consumer
  // with several producers is told it is held (held_generation) only from then on.
  void confirm_forwarded(const std::vector<DownstreamRestartPoints>& forwarded);

  // ---- determinants (active standby) ----------------------------------------------------------
  // Applies the primary's determinants to my following fragment; outputs go to my log.
  // Returns the number of the last record now applied for d.op_index (cumulative; 0: none).
  std::uint64_t apply_determinants(const Determinants& d);
  // At takeover: stop following and emit what waited for determinants, in arrival order.
  void release_determinant_buffers();

  // ---- the end of every event ------------------------------------------------------------------
  // Called once at the end of every event: moves into `eff` what my fragment's Unions logged
  // (tagged with my epoch and role; collected before anything changes the tags), the trims of
  // this event (one `trimmed` trace per stream) and a `role` trace when my role changed.
  void end_event(TimeUs now, Effects& eff);

  // ---- messages every role handles the same way -----------------------------------------------
  void on_level0_ack(TimeUs now, NodeId from, const Level0Ack& ack);
  void on_level1_ack(TimeUs now, NodeId from, const Level1Ack& ack);
  void on_replay_request(TimeUs now, NodeId from, const ReplayRequest& req, Effects& eff);
  // An upstream adds `consumer` (a joining active standby) for `stream`, resuming after after_id.
  void on_redirect(TimeUs now, NodeId from, const Redirect& r, Effects& eff);
  // A neighbouring fragment (or my own, if I am being fenced) was taken over. Returns true if it
  // was my own fragment and I must stop acting as its primary. A repeated Takeover (same epoch,
  // same primary) is answered again (its first answer may have been lost).
  // answer=false: only learn the route (a standby still installing its primary's state has no
  // input positions to answer with; its primary subscribes it).
  bool on_takeover(TimeUs now, const Takeover& t, Effects& eff, bool answer = true);
  // Sends Takeover for my fragment (I am its new primary at epoch()) to every neighbour and to
  // the old primary.
  void announce_takeover(TimeUs now, Effects& eff, NodeId old_primary);
  // Tells `node` the current route of every fragment next to mine (a rejoining node starts with
  // the plan's routes, which may be stale).
  void send_routes_to(TimeUs now, Effects& eff, NodeId node);

  // ---- sources ------------------------------------------------------------------------------
  // Emits every source tuple due at `now` (as far as the output queue allows); returns the time
  // the next one is due (kNever at the end).
  TimeUs emit_source_tuples(TimeUs now, Effects& eff);

  // ---- timers and metrics -------------------------------------------------------------------
  TimeUs next_ack_due_us() const;
  bool finished() const;
  Metrics metrics() const;
  std::uint64_t tuples_processed_total() const { return hot_.tuples_processed + hot_.tuples_emitted; }
  std::uint64_t operator_tuples_total() const { return hot_.operator_tuples; }
  // Fatal, configured errors (queue full under policy "error") are reported once.
  const std::string& fatal_error() const { return fatal_error_; }

 private:
  // Takes what my fragment's Unions logged and tags it with my epoch and role now; called before
  // anything changes them (takeover, fencing, a fresh fragment) and at the end of every event.
  void collect_merge_order();
  const Plan& plan() const { return node_.plan(); }
  const Settings& settings() const { return node_.settings(); }
  const std::string& name() const { return node_.name(); }
  HaMode mode() const { return node_.mode(); }
  FragmentKind kind() const { return node_.kind(); }
  const Route& route(FragmentId f) const { return routes_.route(f); }
  Epoch epoch() const { return routes_.epoch(); }
  std::vector<NodeId> input_nodes_of(FragmentId f) const { return routes_.input_nodes_of(f); }
  TimeUs retransmit_us() const { return node_.retransmit_us(); }
  void consume(TimeUs now, const InputItem& item, Effects& eff);
  // The data-plane trace of a message I send (batches, acks) and my replay requests.
  void trace_sent(Effects& eff, TimeUs now, NodeId to, const Message& body);
  void answer_takeover(TimeUs now, const Takeover& t, Effects& eff);
  // Tells node n the route I follow for its fragment (a fencing notice), at most once per
  // retransmit timeout per node. Also sent to the claimant of an epoch whose first claim I
  // follow (two nodes of a fragment claimed the same epoch: a primary dissolved its pair while
  // its standby took over, PrimaryRole::on_standby_lost), and to a node of a producer that sends
  // as its primary when it is not.
  void tell_route(TimeUs now, NodeId n, Effects& eff);
  // The held_generation I report to `consumer` for stream output `o`.
  std::uint64_t held_generation_for(const OutputChannel& o, FragmentId consumer) const;
  void trim_outputs();
  void trim_output(OutputChannel& o);
  void trace_replay_gap(Effects& eff, TimeUs now, StreamId s, NodeId asker, TupleId after, TupleId trimmed,
                        const char* what);
  void handle_fragment_outputs(FragmentOutputs& outs);
  void append_output(StreamId s, Tuple t);
  bool any_output_full(std::string* which) const;
  // Queue full: a fatal error under policy "error", back-pressure otherwise.
  void on_queue_full(TimeUs now, Effects& eff, const std::string& what, const std::string& stream);
  bool all_inputs_ended() const;
  ConsumerState make_consumer(NodeId node, FragmentId consumer_fragment) const;
  InputLimits input_limits() const;

  NodeIdentity node_;
  const Plan* plan_;  // node_.plan(), for brevity
  NodeId self_;
  FragmentId frag_;
  Role role_ = Role::primary;
  RouteTable routes_;

  std::map<StreamId, InputChannel> inputs_;
  std::deque<InputItem> input_queue_;
  TimeUs conservative_retention_us_ = 0;  // > 0: trimming = conservative (upstream backup)
  bool input_blocked_ = false;
  bool processing_paused_ = false;
  bool driver_watches_partner_ = false;

  std::map<StreamId, OutputChannel> outputs_;

  std::unique_ptr<Fragment> fragment_;
  std::vector<MergeOrder> merge_collected_;  // collected, not yet reported (one event's worth)
  // sources
  TupleId next_source_id_ = 1;
  TupleId source_count_ = 0;
  // sinks
  bool end_of_output_traced_ = false;

  Metrics counters_;
  struct HotCounters {
    std::uint64_t duplicates_dropped = 0;
    std::uint64_t tuples_processed = 0;
    std::uint64_t operator_tuples = 0;  // of tuples_processed, those an operator fragment took
    std::uint64_t tuples_delivered = 0;
    std::uint64_t tuples_emitted = 0;
    std::uint64_t tuples_sent = 0;
    std::uint64_t tuples_trimmed = 0;
  } hot_;
  std::string fatal_error_;
  bool trace_data_plane_ = false;
  Role reported_role_;
  struct PendingTrim {
    TupleId position = 0;
    std::uint64_t count = 0;
  };
  std::map<StreamId, PendingTrim> trims_this_event_;
  TraceEvent not_recorded_;  // where data-plane details go at trace_level control
};

}  // namespace hapair
