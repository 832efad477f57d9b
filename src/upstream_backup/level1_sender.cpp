// Upstream backup at the primary: the level-1 rounds. Every ack interval the primary composes
// its operators' cause functions backwards from where its output queues begin to a restart
// point on every input stream, and sends each producer a level-1 ack up to it, in a new
// generation, with the restart point and what it holds for its own consumers (forwarded). A new
// generation starts only once every producer says it holds the current one (held_generation).
// Under the conservative rule the ack names a fixed horizon of event time instead.
//
// Paper: level-1 acknowledgements (section 4.3): an upstream server may trim input once the
// downstream's state and every output it contributed to no longer depend on it.
//
// Invariants: a round never acknowledges beyond what was processed (make_level1_round, and
// checked again here for every ack sent, the conservative horizon's included); while a producer
// lags, the current generation's acks are repeated every round and nothing newer is sent
// (checked: a repeated ack is of the current generation); a round that would repeat the last
// one goes out once more (producers trim to the older of their last two generations), and only
// then do rounds pause until something moves; cause bookkeeping is forgotten only up to the
// position the round composed from: the restart point just sent or, while a producer lags, the
// current position, which the next restart point starts from at the earliest. That last part
// assumes trim positions never move back; it is not checked (a rebase after a takeover moves
// the offset that internal positions are computed with).
#include "upstream_backup/approaches.h"
#include "upstream_backup/forwarded_points.h"
#include "retention/level1_round.h"
#include "protocols/check.h"

namespace hapair {

namespace {

class Level1Sender : public PrimarySide {
 public:
  Level1Sender(Server& server, const PrimaryOptions& options)
      : server_(server), generation_(options.first_generation - 1) {}

  void on_start(TimeUs now, const std::vector<NodeId>& /*standbys*/) override {
    next_round_us_ = now + ack_interval_us();
    // Without cause functions the rounds acknowledge a fixed horizon of event time, which every
    // input stream follows from now on.
    const Settings& settings = server_.node().settings();
    const TimeUs retention_us = us_from_ms(static_cast<double>(settings.conservative_retention_ms));
    if (settings.trimming == TrimmingRule::conservative && retention_us > 0) server_.inputs().keep_horizon(retention_us);
  }

  void on_tick(TimeUs now, Effects& eff) override {
    if (now < next_round_us_) return;
    round(now, eff);
    next_round_us_ = now + ack_interval_us();
  }

  // A restarted spare that rejoins holds nothing: it restarts from a restart point if needed.
  void on_standby_joined(TimeUs now, NodeId standby, Effects& eff) override {
    server_.trace(eff, now, TraceKind::pair_restored).with(TraceKey::standby, standby).with_text("spare: no state");
  }
  void on_standby_lost(NodeId) override {}
  TimeUs next_wakeup_us() const override { return next_round_us_; }

 private:
  TimeUs ack_interval_us() const { return us_from_ms(static_cast<double>(server_.node().settings().ack_interval_ms)); }

  void round(TimeUs now, Effects& eff) {
    const Fragment* fragment = server_.workload().fragment();
    if (!fragment || server_.workload().paused()) return;
    const auto acked = acked_positions(server_);
    std::map<StreamId, TupleId> processed;
    for (const auto& [s, in] : server_.inputs()) processed[s] = in.processed();
  const bool exact_trimming = server_.node().settings().trimming != TrimmingRule::conservative;
  // Upstream backup restarts a recovery node where this server's output queues begin, not where
  // its consumers' level-0 acks are: if a consumer fails together with this server, its recovery
  // node asks the recovery node of this server for everything its restart point needs, which is
  // everything this server still holds. So the restart point (and what the upstream may trim)
  // is composed from the trim positions, and what this server holds for its consumers travels
  // with it (forwarded). Two adjacent fragments that fail at once are then recovered as one
  // crash each (docs/FAULTS.md).
  std::map<StreamId, TupleId> position = acked;
  if (exact_trimming)
    for (const auto& [s, o] : server_.outputs()) position[s] = o.trimmed_internal();
  if (exact_trimming && !generation_acks_.empty()) {
    bool lagging = false;
    for (const auto& [s, ack] : generation_acks_) lagging |= server_.inputs().at(s).held_generation() < ack.generation;
    if (!lagging) confirm_forwarded(server_, generation_acks_.begin()->second.forwarded);
    if (lagging) {
      // Every round: a lagging upstream may be a new primary that holds none of our restart
      // points yet, and until it does a failure of this fragment could not be recovered.
      server_.count("level1_rounds_held");
      for (const auto& [s, ack] : generation_acks_) {
        // Only the current generation is repeated: nothing newer goes out while a producer lags.
        HAPAIR_CHECK_MSG(ack.generation == generation_, "stream " << s << " repeats generation " << ack.generation
                                                                  << " of " << generation_);
        if (server_.inputs().at(s).held_generation() >= ack.generation) continue;
        const FragmentId producer = server_.inputs().at(s).producer();
        for (NodeId n : server_.routes().input_nodes_of(producer)) server_.send(eff, now, n, ack);
        server_.count("level1_acks_repeated");
      }
      server_.workload().forget_causes_up_to(position);
      return;
    }
  }
  std::vector<DownstreamRestartPoints> forwarded;
  if (exact_trimming) forwarded = downstream_restart_points(server_);
  // A producer trims only to the older of the last two generations it holds (RestartPointStore),
  // so a round that would repeat the last one still goes out once: it makes the last one the
  // older one, and the producer trims as far as it allows. Only then do the rounds stop. Without
  // it, once nothing here moves any more (my producer blocked on its full output queue, my
  // aggregate waiting for the input that closes its window) the producer keeps for ever what my
  // last round released, and stays blocked on it: the chain bench's stall (docs/PERFORMANCE.md).
  const bool repeats = position == last_position_ && processed == last_processed_ && forwarded == last_forwarded_;
  if (repeats && repeated_) return;
  repeated_ = repeats;
  Level1Round round;
  if (server_.node().settings().trimming == TrimmingRule::conservative) {
    std::map<StreamId, TupleId> horizon;
    for (const auto& [s, in] : server_.inputs()) horizon[s] = in.beyond_horizon();
    round = make_conservative_level1_round(horizon);
  } else {
    round = make_level1_round(*fragment, position, processed);
  }
  ++generation_;
  generation_acks_.clear();
  for (const auto& [s, up_to] : round.up_to) {
    // Written by make_level1_round (or the horizon), read here where it leaves: a level-1 ack
    // never names input I have not processed, or my producer would trim what no restart point
    // of mine can do without.
    auto done = processed.find(s);
    HAPAIR_CHECK_MSG(done != processed.end() && up_to <= done->second,
                     "level-1 ack on stream " << s << " up to " << up_to << " beyond processed "
                                              << (done == processed.end() ? 0 : done->second));
    const FragmentId producer = server_.inputs().at(s).producer();
    const Level1Ack ack{s, up_to, generation_, round.restart_point, forwarded};
    if (exact_trimming) generation_acks_[s] = ack;
    for (NodeId n : server_.routes().input_nodes_of(producer)) server_.send(eff, now, n, ack);
  }
  server_.workload().forget_causes_up_to(position);
  last_position_ = position;
  last_processed_ = processed;
  last_forwarded_ = std::move(forwarded);
  server_.count("level1_rounds");
  if (repeats) server_.count("level1_rounds_repeated");
  }

  Server& server_;
  TimeUs next_round_us_ = kNever;
  std::uint64_t generation_;
  // The current generation's level-1 acks, by input stream. A new generation starts only when
  // every upstream says it holds this one (held_generation); until then the acks go again,
  // every round, to those that do not, so an upstream cut off for a while (or a new upstream
  // primary) cannot end up with no generation in common with its siblings.
  std::map<StreamId, Level1Ack> generation_acks_;
  std::map<StreamId, TupleId> last_position_;
  std::map<StreamId, TupleId> last_processed_;
  std::vector<DownstreamRestartPoints> last_forwarded_;
  // The last round repeated the one before (same positions, processed ids and forwarded
  // points): the producers trim as far as it allows, and no round is due until something moves.
  bool repeated_ = false;
};

}  // namespace

std::unique_ptr<PrimarySide> make_level1_sender(Server& server, const PrimaryOptions& options) {
  return std::make_unique<Level1Sender>(server, options);
}

}  // namespace hapair
