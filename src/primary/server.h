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
// Roles (primary role in this layer; spare, passive and active standby in src/backup) drive a
// Server through its public functions. Server never decides *when* to take over; roles do.
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
#include "protocols/core.h"
#include "protocols/duplicate_filter.h"
#include "protocols/failure_detector.h"
#include "protocols/output_queue.h"
#include "protocols/plan.h"
#include "upstream_backup/restart_point_store.h"

namespace hapair {

enum class Role { primary, spare, passive_backup, active_backup, fenced, rejoining };
const char* to_string(Role);

// ReplayRequest::after_id meaning "send only tuples that are new from now on" (amnesia).
inline constexpr TupleId kReplayOnlyNew = ~TupleId{0};

// Who runs a fragment, as this node knows it.
struct Route {
  NodeId primary = kNoNode;
  NodeId standby = kNoNode;  // kNoNode once the standby took over (or the mode has none)
  Epoch epoch = 0;
  std::uint64_t standby_incarnation = 0;  // see Takeover::standby_incarnation
};

struct InputState {
  StreamId stream = kNoStream;
  FragmentId producer = kNoFragment;
  DuplicateFilter accepted;      // last accepted (queued) id
  TupleId processed = 0;         // last id handed to the workload
  bool eos_received = false;
  bool eos_processed = false;
  TupleId level0_sent = 0;
  TimeUs level0_sent_us = 0;
  std::size_t processed_since_ack = 0;
  std::size_t queued = 0;        // tuples of this stream waiting in the input queue
  bool replaying = false;        // receiving tuples flagged as replay
  std::uint64_t replayed_tuples = 0;
  // Conservative trimming only: processed (id, ts) within the retention horizon, and the last
  // id that fell out of it (everything up to there may be trimmed).
  std::deque<std::pair<TupleId, TimeUs>> horizon;
  TupleId beyond_horizon = 0;
  // Loss handling: accept the next batch whatever its prev_id (after asking for only new
  // tuples); when a gap was last asked to be filled; an ack is owed (duplicates arrived, so the
  // sender may have lost our ack); the end of stream was acknowledged.
  bool accept_any_prev = false;
  // Upstream backup: the newest restart-point generation the producer's primary says it holds
  // from us (TupleBatch.held_generation); reset when the producer's primary changes.
  std::uint64_t held_generation = 0;
  TimeUs gap_requested_us = -1'000'000'000;
  TupleId gap_requested_after = ~TupleId{0};
  // Batches that arrived beyond a lost one, by their prev_id, kept until the gap is filled
  // (bounded by the flow-control window: the sender cannot have more in flight).
  std::map<TupleId, TupleBatch> stash;
  std::size_t stash_tuples = 0;
  bool ack_owed = false;
  bool eos_acked = false;
  // After a takeover: we asked the producer to replay and have not heard from it since.
  bool awaiting_producer = false;
  TimeUs replay_requested_us = 0;
  TupleId replay_after = 0;
  std::uint64_t replay_generation = 0;
};

struct InputItem {
  StreamId stream = kNoStream;
  Tuple tuple;
  bool eos = false;  // end-of-stream marker instead of a tuple
};

struct ConsumerState {
  NodeId node = kNoNode;
  FragmentId fragment = kNoFragment;
  bool retention = false;  // trims on level-1 (its mode may ask for replay) instead of level-0
  bool sends = true;       // false for a consumer we only track (an active backup's view)
  bool ready = true;       // false until it told us where to resume (ReplayRequest)
  TupleId sent_up_to = 0;
  TupleId level0 = 0;
  TupleId replay_until = 0;  // ids <= this are sent flagged as replay
  bool eos_sent = false;
  bool eos_acked = false;
  std::uint32_t retransmits = 0;  // consecutive re-sends without progress (back-off)
  // When the consumer last made progress (an ack that moved, or a send with nothing in flight):
  // no progress for retransmit_timeout_ms with something unacknowledged means re-send.
  TimeUs progress_us = 0;
  // Upstream backup: a new restart-point generation arrived from this consumer; tell it we hold
  // it (held_generation), with an empty batch if no tuples go out.
  bool confirm_owed = false;
};

struct OutputState {
  StreamId stream = kNoStream;
  OutputQueue queue;
  std::vector<ConsumerState> consumers;
  // wire id = internal (operator) id + offset; non-zero after a takeover that rebased its ids.
  TupleId offset = 0;
  // Output is sent only up to here (held output: passive standby of an arbitrary fragment until
  // a covering checkpoint is acknowledged; active standby until the backup has the determinants).
  TupleId released_up_to = ~TupleId{0};
  // Restart points received from each consumer fragment (upstream backup), by fragment.
  std::map<FragmentId, RestartPointStore> restart_points;
  // The newest generation of each consumer's restart points that my own upstream holds too
  // (forwarded with a restart point of mine that every producer of mine confirmed holding).
  std::map<FragmentId, std::uint64_t> forwarded_confirmed;

  explicit OutputState(std::size_t tuples_max) : queue(tuples_max) {}
};

class Server {
 public:
  Server(std::shared_ptr<const Plan> plan, NodeId self);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // ---- identity -----------------------------------------------------------------------------
  const Plan& plan() const { return *plan_; }
  std::shared_ptr<const Plan> plan_ptr() const { return plan_; }
  const Settings& settings() const { return plan_->settings(); }
  NodeId self() const { return self_; }
  const std::string& name() const { return plan_->nodes[self_].name; }
  FragmentId fragment_id() const { return frag_; }
  const PlanFragment& fragment_plan() const { return plan_->fragments[frag_]; }
  HaMode mode() const { return fragment_plan().ha; }
  FragmentKind kind() const { return fragment_plan().kind; }
  Role role() const { return role_; }
  // Merge orders logged so far are tagged with the role they were chosen in before it changes.
  void set_role(Role r) {
    collect_merge_order();
    role_ = r;
  }
  // Becomes a standby of my fragment (a restarted node rejoining): a fresh fragment, and
  // consumers tracked but not sent to.
  void become_standby(Role r);
  // The standby role my fragment's HA mode uses.
  Role standby_role() const;
  Epoch epoch() const { return routes_[frag_].epoch; }
  NodeId partner() const;  // the standby if I am primary, the primary if I am the standby

  // ---- routes and epochs ----------------------------------------------------------------------
  const Route& route(FragmentId f) const { return routes_.at(f); }
  Route& route_mut(FragmentId f) { return routes_.at(f); }
  // The nodes that receive a fragment's input (its primary, and its active backup).
  std::vector<NodeId> input_nodes_of(FragmentId f) const;
  // Every node of the fragments next to mine (upstream and downstream), primary and standby.
  std::vector<NodeId> neighbour_nodes() const;
  // False (and counted) when the envelope comes from an older epoch of its sender's fragment.
  bool is_current(const Envelope& e);

  // ---- sending ------------------------------------------------------------------------------
  Envelope envelope(TimeUs now, Message body) const;
  void send(Effects& eff, TimeUs now, NodeId to, Message body);
  void trace(Effects& eff, TimeUs now, std::string event, std::string details = "");

  // ---- workload -----------------------------------------------------------------------------
  Fragment* fragment() { return fragment_.get(); }
  const Fragment* fragment() const { return fragment_.get(); }
  void reset_fragment();  // a fresh, empty fragment (amnesia, upstream-backup restart)

  // ---- input side ---------------------------------------------------------------------------
  std::map<StreamId, InputState>& inputs() { return inputs_; }
  const std::map<StreamId, InputState>& inputs() const { return inputs_; }
  // Accepts a batch from the current producer: drops duplicates and stale senders (counted),
  // queues the rest. Returns the number of tuples queued.
  std::size_t accept_batch(TimeUs now, NodeId from, const TupleBatch& batch, Effects& eff);
  // Runs queued input through the workload while output queues have room. Outputs go to the
  // output queues (and deliveries for sinks). Stops early under back-pressure.
  void process_input(TimeUs now, Effects& eff);
  bool input_blocked() const { return input_blocked_; }
  // Start::driver_watches_partner: the driver reports the partner's failure (PeerLost), so the
  // roles send no heartbeats of their own and their heartbeat detectors stay quiet.
  void set_driver_watches_partner(bool on) { driver_watches_partner_ = on; }
  bool own_heartbeats() const { return !driver_watches_partner_; }
  void set_processing_paused(bool paused) { processing_paused_ = paused; }
  bool processing_paused() const { return processing_paused_; }
  std::size_t input_queue_size() const { return input_queue_.size(); }
  // Level-0 acks for processed input (to the producer's primary and active backup), when due
  // (or always when force).
  void send_level0_acks(TimeUs now, Effects& eff, bool force);
  // Asks every input stream's producer to re-send after `after` (per stream), e.g. after a
  // takeover. A missing stream in the map means "after what I accepted".
  void request_replay(TimeUs now, Effects& eff, const std::map<StreamId, TupleId>& after,
                      std::uint64_t generation);
  bool all_inputs_ended() const;

  // ---- output side --------------------------------------------------------------------------
  std::map<StreamId, OutputState>& outputs() { return outputs_; }
  const std::map<StreamId, OutputState>& outputs() const { return outputs_; }
  // Appends an operator output (internal id) to its stream's queue, applying the offset.
  void append_output(StreamId s, Tuple t);
  // Sends what credits and release limits allow to every ready consumer.
  void pump_outputs(TimeUs now, Effects& eff);
  // Trims every queue as far as the consumers' acknowledgements allow.
  void trim_outputs();
  // Lost messages: rewinds every consumer that made no progress for retransmit_timeout_ms to
  // its last acknowledged position, and repeats takeover announcements and replay requests that
  // got no answer. Returns when it next needs to look.
  TimeUs retransmit(TimeUs now, Effects& eff);
  // For each exported stream, the internal id up to which every consumer has level-0 acked.
  std::map<StreamId, TupleId> acked_outputs_internal() const;
  // For each exported stream, the internal id up to which its queue is trimmed: an upstream-
  // backup restart point is made here, so a recovery node regenerates everything this server
  // still holds (a downstream that fails with it may need any of it).
  std::map<StreamId, TupleId> trimmed_outputs_internal() const;
  // Upstream backup: what this server holds for its downstream, per output stream (its trim
  // position, and each consumer's restart points without what they forwarded in turn), sent
  // with its level-1 acks so its upstream keeps it with its restart point.
  std::vector<DownstreamRestartPoints> downstream_restart_points() const;
  // A recovery node restarted from a restart point installs what came with it: every output
  // queue holds nothing at or below the trim position, and the consumers' restart points are
  // back. false (nothing installed) when `forwarded` does not name every output stream: the
  // recovery node could not tell a downstream recovery node what it holds.
  bool install_downstream_restart_points(const std::vector<DownstreamRestartPoints>& forwarded);
  // Every producer of mine holds a restart point of mine that carried `forwarded`. A consumer
  // with several producers is told it is held (held_generation) only from then on: if it fails
  // together with me, its recovery node must find one generation in what my recovery node
  // installs and in what its other producers hold.
  void confirm_forwarded(const std::vector<DownstreamRestartPoints>& forwarded);
  // The held_generation I report to `consumer` for stream output `o`.
  std::uint64_t held_generation_for(const OutputState& o, FragmentId consumer) const;
  // Rebuilds the consumer list of every output stream from the current routes (after a
  // takeover of my own fragment): every consumer must first tell me where to resume.
  void reset_consumers_awaiting_replay_request();
  bool all_consumers_ready() const;
  // Rebase every output stream above the positions consumers reported (takeovers that cannot
  // regenerate identical ids): retained tuples and everything produced later get ids above the
  // highest id any consumer accepted.
  void rebase_outputs();

  // ---- determinants (active standby) ----------------------------------------------------------
  // Applies the primary's determinants to my following fragment; outputs go to my log.
  // Returns the number of the last record now applied for d.op_index (cumulative; 0: none).
  std::uint64_t apply_determinants(const Determinants& d);
  // At takeover: stop following and emit what waited for determinants, in arrival order.
  void release_determinant_buffers();

  // ---- merge order (for the checker) ---------------------------------------------------------
  // Takes what my fragment's Unions logged and tags it with my epoch and role now; called before
  // anything changes them (takeover, fencing, a fresh fragment) and at the end of every event.
  void collect_merge_order();
  // collect_merge_order(), then moves everything collected into `eff`.
  void report_merge_order(Effects& eff);

  // ---- restoring the pair ---------------------------------------------------------------------
  // An upstream adds `consumer` (a joining active standby) for `stream`, resuming after after_id.
  void on_redirect(TimeUs now, NodeId from, const Redirect& r, Effects& eff);
  // Tells `node` the current route of every fragment next to mine (a rejoining node starts with
  // the plan's routes, which may be stale).
  void send_routes_to(TimeUs now, Effects& eff, NodeId node);

  // ---- messages every role handles the same way -----------------------------------------------
  void on_level0_ack(TimeUs now, NodeId from, const Level0Ack& ack);
  void on_level1_ack(TimeUs now, NodeId from, const Level1Ack& ack);
  void on_replay_request(TimeUs now, NodeId from, const ReplayRequest& req, Effects& eff);
  // A neighbouring fragment (or my own, if I am being fenced) was taken over. Returns true if it
  // was my own fragment and I must stop acting as its primary. A repeated Takeover (same epoch,
  // same primary) is answered again (its first answer may have been lost).
  // answer=false: only learn the route (a standby still installing its primary's state has no
  // input positions to answer with; its primary subscribes it).
  bool on_takeover(TimeUs now, const Takeover& t, Effects& eff, bool answer = true);
  // A message from an older epoch of its fragment: tells the sender who the primary is now
  // (at most once per retransmit timeout per sender), so a paused or partitioned old primary
  // learns it is fenced.
  void answer_stale_sender(TimeUs now, const Envelope& e, Effects& eff);
  // Tells node n the route I follow for its fragment (a fencing notice), at most once per
  // retransmit timeout per node. Also sent to the claimant of an epoch whose first claim I
  // follow (two nodes of a fragment claimed the same epoch: a primary dissolved its pair while
  // its standby took over, PrimaryRole::on_standby_lost), and to a node of a producer that sends
  // as its primary when it is not.
  void tell_route(TimeUs now, NodeId n, Effects& eff);
  // A message from a newer epoch than I know of its fragment: the sender took over and its
  // Takeover did not reach me (lost); returns the Takeover it implies.
  std::optional<Takeover> implied_takeover(const Envelope& e) const;
  // Sends Takeover for my fragment (I am its new primary at epoch()) to every neighbour and to
  // the old primary.
  void announce_takeover(TimeUs now, Effects& eff, NodeId old_primary);
  bool announcing() const { return announce_pending_; }
  TimeUs retransmit_us() const;

  // ---- sources ------------------------------------------------------------------------------
  // Emits every source tuple due at `now` (as far as the output queue allows); returns the time
  // the next one is due (kNever at the end).
  TimeUs emit_source_tuples(TimeUs now, Effects& eff);

  // ---- timers and metrics -------------------------------------------------------------------
  TimeUs next_ack_due_us() const;
  bool finished() const;
  Metrics metrics() const;
  Metrics& counters() { return counters_; }
  std::uint64_t tuples_processed_total() const { return hot_.tuples_processed + hot_.tuples_emitted; }
  std::uint64_t operator_tuples_total() const { return hot_.operator_tuples; }
  void count(const std::string& name, std::int64_t n = 1) { counters_[name] += n; }

  // Fatal, configured errors (queue full under policy "error") are reported once.
  const std::string& fatal_error() const { return fatal_error_; }

 private:
  void consume(TimeUs now, const InputItem& item, Effects& eff);
  std::size_t accept_in_order(TimeUs now, InputState& in, const TupleBatch& batch, Effects& eff);
  void clear_stash(InputState& in);
  void send_gap_fill(TimeUs now, OutputState& o, ConsumerState& c, TupleId after, TupleId up_to, Effects& eff);
  void answer_takeover(TimeUs now, const Takeover& t, Effects& eff);

  void handle_fragment_outputs(FragmentOutputs& outs);
  bool any_output_full(std::string* which) const;
  ConsumerState make_consumer(NodeId node, FragmentId consumer_fragment) const;
  std::size_t inflight(const OutputState& o, const ConsumerState& c) const;

  std::shared_ptr<const Plan> plan_;
  NodeId self_;
  FragmentId frag_;
  Role role_ = Role::primary;
  std::vector<Route> routes_;

  std::map<StreamId, InputState> inputs_;
  std::deque<InputItem> input_queue_;
  TimeUs conservative_retention_us_ = 0;  // > 0: trimming = conservative (upstream backup)
  bool announce_pending_ = false;         // a takeover some neighbour has not answered yet
  NodeId announce_old_primary_ = kNoNode;
  TimeUs announced_us_ = 0;
  std::map<NodeId, TimeUs> stale_answered_us_;
  bool input_blocked_ = false;
  bool processing_paused_ = false;
  bool driver_watches_partner_ = false;

  std::map<StreamId, OutputState> outputs_;

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
};

}  // namespace hapair
