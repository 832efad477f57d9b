#include "primary/standby_role.h"

#include <algorithm>
#include <variant>

#include "primary/takeover.h"
#include "protocols/check.h"

namespace hapair {

namespace {

TimeUs failure_timeout_us(const Server& server) {
  return us_from_ms(static_cast<double>(server.node().settings().failure_timeout_ms));
}

}  // namespace

bool StandbyRole::watch_primary(TimeUs now, Effects& eff, bool detect) {
  if (successor_) return false;
  watch_.send_heartbeat(now, eff);
  if (election_.is_open() && awaited_winner_ == kNoNode && election_.refused_now(now) &&
      watch_.last_heard_us() > election_opened_us_) {
    // The primary spoke after I found it failed, and another standby says it hears it (I was
    // paused, or cut off for a while): it lives. I stop standing and watch it again.
    election_.abandon();
    next_candidacy_us_ = kNever;
    watch_.start(now);
    server_.count("elections_abandoned");
    return false;
  }
  if (election_.is_open() || awaited_winner_ != kNoNode) {
    if (now >= next_candidacy_us_ && election_.is_open() && awaited_winner_ == kNoNode) send_candidacy(now, eff);
    if (awaited_winner_ != kNoNode && now >= winner_due_us_) {
      // The winner never took over (it failed before its Takeover reached me): the most advanced
      // of the rest wins, once they heard of it too.
      give_up_awaited_winner(now);
      send_candidacy(now, eff);
    }
    return decide(now, eff);
  }
  if (!detect || !watch_.check(now, eff)) return false;
  return primary_suspected(now, eff, Detector::heartbeat);
}

void StandbyRole::on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) {
  const Route& r = server_.routes().route(server_.node().fragment_id());
  if (successor_ || lost.peer == server_.node().self()) return;
  if (lost.peer == r.primary) {
    primary_suspected(now, eff, lost.detector);
    return;
  }
  if (r.standby(lost.peer) == nullptr) return;
  // Another standby of my fragment is gone: the election does not wait for it.
  election_.suspect(lost.peer);
  if (lost.peer == awaited_winner_) give_up_awaited_winner(now);
  decide(now, eff);
}

std::optional<PeerLost> StandbyRole::take_partner_loss() {
  std::optional<PeerLost> loss = partner_loss_;
  partner_loss_.reset();
  return loss;
}

bool StandbyRole::keep_predecessor(PredecessorStandby predecessor) {
  HAPAIR_CHECK_MSG(!predecessor_.role, "standby " << server_.node().self() << " keeps two predecessors");
  // Switched again before the predecessor's successor had its first state: the copy to take over
  // with is still the one that successor kept.
  if (predecessor.role && !predecessor.role->holds_takeover_state()) predecessor = predecessor.role->take_predecessor();
  if (!predecessor.role) return false;
  predecessor_ = std::move(predecessor);
  server_.count("predecessors_kept");
  return true;
}

void StandbyRole::first_state_installed() {
  if (!predecessor_.role) return;
  predecessor_ = PredecessorStandby{};
  server_.become_standby(server_.role());
  server_.count("predecessors_released");
}

void StandbyRole::cannot_take_over(TimeUs now, Effects& eff, Detector detector, const char* counter, const char* why) {
  if (predecessor_.role) {
    HAPAIR_CHECK_MSG(!successor_, "standby " << server_.node().self() << " hands back after handing over");
    const Route& r = server_.routes().route(server_.node().fragment_id());
    server_.count("takeovers_by_predecessor");
    server_.trace(eff, now, TraceKind::approach_switch)
        .with(TraceKey::ha, predecessor_.mode)
        .with(TraceKey::from_ha, server_.node().mode())
        .with(TraceKey::epoch, r.epoch)
        .with(TraceKey::fragment_primary, r.primary)
        .with_text("back: the primary failed before the new approach's first state; the copy of before takes over");
    partner_loss_ = PeerLost{r.primary, detector};
    server_.resume_approach(predecessor_.mode, predecessor_.node_role);
    successor_ = std::move(predecessor_.role);
    predecessor_ = PredecessorStandby{};
    return;
  }
  server_.count(counter);
  server_.trace(eff, now, TraceKind::detection)
      .with(TraceKey::failed, server_.routes().route(server_.node().fragment_id()).primary)
      .with(TraceKey::detector, detector)
      .with(TraceKey::silent_us, watch_.silence_us(now, detector))
      .with_text(why);
}

void StandbyRole::give_up_awaited_winner(TimeUs now) {
  server_.count("election_winners_suspected");
  election_.suspect(awaited_winner_);
  awaited_winner_ = kNoNode;
  winner_due_us_ = kNever;
  winner_lost_ = true;
  election_.extend(now + failure_timeout_us(server_));
  deadline_passed_ = false;
}

bool StandbyRole::primary_suspected(TimeUs now, Effects& eff, Detector detector) {
  const Route& r = server_.routes().route(server_.node().fragment_id());
  std::vector<NodeId> others;
  for (const StandbyRef& s : r.standbys)
    if (s.node != server_.node().self()) others.push_back(s.node);
  if (others.empty()) {
    // The only standby: it takes over at once, as a process pair's backup does.
    primary_failed(now, eff, detector);
    return true;
  }
  if (election_.is_open() || awaited_winner_ != kNoNode) return false;
  detector_ = detector;
  const Election::Candidate me{server_.node().self(), server_.routes().epoch(), election_position(),
                               server_.node().fragment_plan().replica_index(server_.node().self())};
  election_.open(r.primary, me, others, now + failure_timeout_us(server_), failure_timeout_us(server_));
  election_opened_us_ = now;
  deadline_passed_ = false;
  server_.count("candidacies");
  server_.trace(eff, now, TraceKind::candidacy)
      .with(TraceKey::failed, r.primary)
      .with(TraceKey::epoch, me.epoch)
      .with(TraceKey::position, me.position)
      .with(TraceKey::detector, detector);
  send_candidacy(now, eff);
  return decide(now, eff);
}

void StandbyRole::send_candidacy(TimeUs now, Effects& eff) {
  const Route& r = server_.routes().route(server_.node().fragment_id());
  const Candidacy c{server_.node().fragment_id(), election_.failed(), election_.me().position};
  for (const StandbyRef& s : r.standbys)
    if (s.node != server_.node().self()) server_.send(eff, now, s.node, c);
  // Often enough that a lost one is repeated before the election's deadline (a failure timeout).
  next_candidacy_us_ = now + us_from_ms(static_cast<double>(server_.node().settings().heartbeat_interval_ms));
}

bool StandbyRole::decide(TimeUs now, Effects& eff) {
  if (successor_ || !election_.is_open() || awaited_winner_ != kNoNode) return false;
  // Past the deadline a refusal may still hold: the candidacies' repetition wakes me from then on
  // (a deadline in the past would wake me at once, again and again).
  deadline_passed_ = now >= election_.deadline_us();
  const NodeId winner = election_.winner(now);
  if (winner == kNoNode) return false;
  if (winner != server_.node().self()) {
    // Lost: the winner's Takeover will name me as its standby (I follow it, learn_takeover).
    awaited_winner_ = winner;
    winner_due_us_ = now + failure_timeout_us(server_);
    return false;
  }
  const std::vector<Election::Candidate> others = election_.others_heard();
  if (winner_lost_) {
    // An earlier winner failed before I heard its Takeover: it may have claimed the next epoch
    // already, and neighbours that followed it would take my claim of the same epoch for a tie.
    // I claim the one after it.
    server_.pair().renew_claim();
    server_.count("epochs_skipped_for_lost_winner");
  }
  server_.count("elections_won");
  server_.trace(eff, now, TraceKind::elected)
      .with(TraceKey::failed, election_.failed())
      .with(TraceKey::epoch, election_.me().epoch)
      .with(TraceKey::position, election_.me().position)
      .with(TraceKey::count, others.size() + 1);
  primary_failed(now, eff, detector_);
  election_.close();
  return true;
}

bool StandbyRole::on_election_message(TimeUs now, const Envelope& env, Effects& eff) {
  const auto* c = std::get_if<Candidacy>(&env.body);
  if (c == nullptr) return false;
  const NodeId from = env.header.sender;
  const Route& r = server_.routes().route(server_.node().fragment_id());
  if (successor_ || c->fragment != server_.node().fragment_id() || r.standby(from) == nullptr || from == server_.node().self()) {
    server_.count("stale_candidacy_dropped");
    return true;
  }
  if (c->failed == kNoNode) {
    // A refusal: that standby still hears our primary, so I may be the one cut off from it (or
    // was paused): nobody wins while it says so. Should I hear the primary again, I stop
    // standing (watch_primary); if the primary cannot reach me either, it drops me in a new
    // epoch and I rejoin.
    election_.refused(from, now);
    server_.count("candidacy_refusals_received");
    return true;
  }
  // Only a candidacy about my current primary counts; one about a primary I no longer follow is
  // of an election already decided.
  if (c->failed != r.primary || c->failed == server_.node().self()) {
    server_.count("stale_candidacy_dropped");
    return true;
  }
  election_.heard(c->failed, Election::Candidate{from, env.header.epoch, c->position,
                                                 server_.node().fragment_plan().replica_index(from)});
  if (!election_.is_open() && awaited_winner_ == kNoNode) {
    // I still hear the primary (my detector has not fired): I refuse, so that a standby cut off
    // from a live primary does not take over (Raft's pre-vote). If the primary did fail, my own
    // detector fires soon and my candidacy replaces the refusal.
    server_.count("candidacies_refused");
    server_.send(eff, now, from, Candidacy{server_.node().fragment_id(), kNoNode, 0});
    return true;
  }
  decide(now, eff);
  return true;
}

std::unique_ptr<RoleBehaviour> StandbyRole::learn_takeover(TimeUs now, const Takeover& t, Effects& eff, bool answer) {
  const FragmentId own = server_.node().fragment_id();
  const NodeId primary_before = server_.routes().route(own).primary;
  const Epoch epoch_before = server_.routes().epoch();
  if (auto next = standby_learns_takeover(server_, now, t, eff, answer)) return next;
  const Route& r = server_.routes().route(own);
  if (t.fragment != own || r.epoch == epoch_before || r.primary == primary_before || r.standby(server_.node().self()) == nullptr)
    return nullptr;
  // A new primary names me as its standby: the winner of the election (or a standby that took
  // over alone). My state stays what it was until the new primary's first checkpoint replaces
  // it, so I can still take over should the winner fail before.
  election_.close();
  awaited_winner_ = kNoNode;
  winner_due_us_ = kNever;
  winner_lost_ = false;
  next_candidacy_us_ = kNever;
  watch_.start(now);
  server_.count("elections_followed");
  server_.trace(eff, now, TraceKind::follows)
      .with(TraceKey::fragment_primary, r.primary)
      .with(TraceKey::epoch, r.epoch)
      .with(TraceKey::position, election_position());
  on_followed(now, eff);
  return nullptr;
}

std::vector<StandbyRef> StandbyRole::followers() const {
  std::vector<StandbyRef> out;
  const Route& r = server_.routes().route(server_.node().fragment_id());
  for (const Election::Candidate& c : election_.others_heard())
    if (const StandbyRef* s = r.standby(c.node)) out.push_back(*s);
  return out;
}

TimeUs StandbyRole::watch_wakeup_us() const {
  TimeUs t = watch_.next_wakeup_us();
  // While I wait for a winner I send no candidacies and decide nothing (winner_due_us_ below).
  const bool standing = election_.is_open() && awaited_winner_ == kNoNode;
  if (standing) t = std::min(t, next_candidacy_us_);
  if (standing && !deadline_passed_) t = std::min(t, election_.deadline_us());
  if (awaited_winner_ != kNoNode) t = std::min(t, winner_due_us_);
  return t;
}

void StandbyRole::check_no_output_sent(const Effects& eff, std::size_t first) const {
  for (std::size_t i = first; i < eff.sends.size(); ++i)
    HAPAIR_CHECK_MSG(!std::holds_alternative<TupleBatch>(eff.sends[i].envelope.body),
                     "standby " << server_.node().self() << " (" << to_string(server_.node().mode()) << ") sends output to node "
                                << eff.sends[i].to << " before taking over");
}

}  // namespace hapair
