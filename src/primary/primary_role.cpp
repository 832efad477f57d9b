#include "primary/primary_role.h"

#include <algorithm>
#include <type_traits>

#include "protocols/check.h"
#include "protocols/wire_size.h"


namespace hapair {

std::unique_ptr<PrimarySide> make_primary_side(const Approach& approach, Server& server, const PrimaryOptions& options) {
  if (server.node().kind() != FragmentKind::operators) return make_stateless_primary_side(server, options);
  return approach.primary_side(server, options);
}

PrimaryRole::PrimaryRole(Server& server, PrimaryOptions options, std::unique_ptr<PrimarySide> side)
    : server_(server),
      options_(options),
      side_(std::move(side)) {
  HAPAIR_CHECK(side_ != nullptr);
}

void PrimaryRole::on_start(TimeUs now, Effects& eff) {
  server_.set_role(Role::primary);
  const PlanFragment& f = server_.node().fragment_plan();
  // The original primary heartbeats its standbys (the plan's); a primary that took over those
  // its route names: none with one standby, the election's followers with k standbys.
  if (f.has_standby()) {
    const Route& r = server_.routes().route(server_.node().fragment_id());
    HAPAIR_CHECK_MSG(r.standbys.size() <= f.standbys.size(),
                     "fragment " << f.name << " routes to " << r.standbys.size() << " standbys, its plan has " << f.standbys.size());
    for (const StandbyRef& sb : r.standbys) watch_standby(now, sb.node);
  }
  side_->on_start(now, live_standbys());
  if (server_.node().kind() == FragmentKind::source) next_source_us_ = now;
  if (options_.rebase_when_consumers_ready) {
    rebase_pending_ = true;
    server_.workload().set_paused(true);
    maybe_finish_rebase(now, eff);
  }
  if (!options_.took_over)
    server_.trace(eff, now, TraceKind::start).with(TraceKey::role, Role::primary).with(TraceKey::ha, server_.node().mode());
  on_tick(now, eff);
}

void PrimaryRole::on_tick(TimeUs now, Effects& eff) {
  discount_own_stall(now);
  if (confirming_epoch_ != 0 && now >= next_confirmation_request_us_) request_confirmations(now, eff);
  for (NodeId n : live_standbys()) {
    WatchedStandby* w = watched(n);
    if (w != nullptr && w->detector.check(now)) standby_suspected(now, eff, n, Detector::heartbeat);
  }
  for (NodeId n : live_standbys()) {
    WatchedStandby* w = watched(n);
    if (w != nullptr && now >= w->loss_due_us) on_standby_lost(now, eff, n, w->suspected_by);
  }
  if (now >= next_heartbeat_us_) {
    for (const WatchedStandby& w : standbys_) server_.send(eff, now, w.node, Heartbeat{static_cast<std::uint64_t>(now)});
    next_heartbeat_us_ = standbys_.empty() ? kNever
                                           : now + us_from_ms(static_cast<double>(server_.node().settings().heartbeat_interval_ms));
  }
  side_->on_tick(now, eff);
  after_event(now, eff);
}

void PrimaryRole::on_message(TimeUs now, const Envelope& env, Effects& eff) {
  const NodeId from = env.header.sender;
  WatchedStandby* standby = watched(from);
  if (standby != nullptr) {
    if (standby->detector.suspected() || standby->loss_due_us != kNever)
      server_.trace(eff, now, TraceKind::standby_heard).with(TraceKey::standby, from);
    standby->detector.heard(now);
    standby->loss_due_us = kNever;  // it lives: not lost after all
  }
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, TupleBatch>) {
          server_.inputs().accept_batch(now, from, m, eff);
        } else if constexpr (std::is_same_v<T, Level0Ack>) {
          server_.outputs().on_level0_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, Level1Ack>) {
          server_.outputs().on_level1_ack(now, from, m);
        } else if constexpr (std::is_same_v<T, ReplayRequest>) {
          server_.outputs().on_replay_request(now, from, m, eff);
          maybe_finish_rebase(now, eff);
        } else if constexpr (std::is_same_v<T, Takeover>) {
          if (m.fragment == server_.node().fragment_id() && m.new_primary == server_.node().self() && m.epoch == server_.routes().epoch()) {
            // A producer echoes my own route: it serves me in my epoch.
            if (confirming_epoch_ != 0 && m.epoch == confirming_epoch_) confirmed_producers_.insert(from);
            server_.count("route_echoes_received");
          } else if (claims_my_dissolved_epoch(m)) {
            on_competing_claim(now, from, m, eff);
          } else if (server_.on_takeover(now, m, eff)) {
            server_.trace(eff, now, TraceKind::fenced)
                .with(TraceKey::fragment_primary, m.new_primary)
                .with(TraceKey::epoch, m.epoch)
                .with(TraceKey::claim_lost, false);
            successor_ = std::make_unique<FencedRole>(server_);
          }
        } else if constexpr (std::is_same_v<T, Heartbeat>) {
          // A standby's heartbeat: nothing to do.
        } else if constexpr (std::is_same_v<T, Redirect>) {
          // A consumer fragment's primary subscribes its rejoined active standby.
          server_.outputs().on_redirect(now, from, m, eff);
        } else if constexpr (std::is_same_v<T, Rejoin>) {
          on_rejoin(now, from, m, eff);
        } else {
          // The messages of my approach (its traits name them) go to its primary end: from my
          // standby to on_message, from any other node (a neighbour's barrier, the coordinator of
          // global checkpoints) to on_neighbour_message; anything else is unexpected here.
          const char* kind = message_kind_name(env.body);
          const bool mine = server_.node().traits().exchanges(kind);
          bool taken = false;
          if (mine && from != kNoNode)
            taken = standby != nullptr ? side_->on_message(now, from, env.body, eff)
                                       : side_->on_neighbour_message(now, from, env.body, eff);
          if (!taken) server_.count(std::string("unexpected_") + kind + "_dropped");
        }
      },
      env.body);
  if (!successor_) after_event(now, eff);
}

namespace {
// What a live switch sent at once: its announcement and the new end's state for the standbys.
std::size_t switch_bytes(const Effects& eff, std::size_t sends_before) {
  std::size_t bytes = 0;
  for (std::size_t i = sends_before; i < eff.sends.size(); ++i)
    if (wire_size_known(eff.sends[i].envelope.body)) bytes += wire_bytes(eff.sends[i].envelope);
  return bytes;
}
}  // namespace

bool PrimaryRole::switch_approach(TimeUs now, const Approach& to, Effects& eff) {
  const HaMode from = server_.node().mode();
  if (server_.node().kind() != FragmentKind::operators || to.mode == from || successor_) return false;
  const std::vector<NodeId> standbys = live_standbys();
  const std::size_t sends_before = eff.sends.size();
  for (NodeId s : standbys) side_->on_standby_lost(s);
  server_.switch_approach(to.mode);
  const Epoch epoch = server_.routes().epoch();
  // The announcement goes out before any state is captured (as when a standby rejoins): every
  // producer retains for the new approach before the new end fixes a position, and each
  // standby becomes the new approach's standby before that state reaches it.
  server_.pair().announce_takeover(now, eff, kNoNode);
  PrimaryOptions options = options_;
  // Level-1 generations continue above what upstream servers hold from an earlier epoch.
  options.first_generation = (static_cast<std::uint64_t>(epoch) << 32) + 1;
  options.switched = true;
  side_ = make_primary_side(to, server_, options);
  side_->on_start(now, {});
  for (NodeId s : standbys) side_->on_standby_joined(now, s, eff);
  server_.count("approach_switches");
  server_.trace(eff, now, TraceKind::approach_switch)
      .with(TraceKey::ha, to.mode)
      .with(TraceKey::from_ha, from)
      .with(TraceKey::epoch, epoch)
      .with(TraceKey::count, standbys.size())
      .with(TraceKey::bytes, switch_bytes(eff, sends_before));
  after_event(now, eff);
  return true;
}

void PrimaryRole::on_peer_lost(TimeUs now, const PeerLost& lost, Effects& eff) {
  if (watched(lost.peer) == nullptr) return;
  standby_suspected(now, eff, lost.peer, lost.detector);
}

void PrimaryRole::watch_standby(TimeUs now, NodeId standby) {
  HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                   "node " << server_.node().self() << " watches standby " << standby);
  WatchedStandby* w = watched(standby);
  if (w == nullptr) {
    standbys_.push_back(WatchedStandby{standby, FailureDetector(us_from_ms(static_cast<double>(server_.node().settings().failure_timeout_ms)))});
    std::sort(standbys_.begin(), standbys_.end(), [](const WatchedStandby& a, const WatchedStandby& b) { return a.node < b.node; });
    w = watched(standby);
  }
  w->detector.start(now);
  w->loss_due_us = kNever;
  if (server_.pair().own_heartbeats()) {
    next_heartbeat_us_ = now;
  } else {
    w->detector.disable();
    next_heartbeat_us_ = kNever;
  }
}

PrimaryRole::WatchedStandby* PrimaryRole::watched(NodeId n) {
  if (n == kNoNode) return nullptr;
  for (WatchedStandby& w : standbys_)
    if (w.node == n) return &w;
  return nullptr;
}

std::vector<NodeId> PrimaryRole::live_standbys() const {
  std::vector<NodeId> out;
  for (const WatchedStandby& w : standbys_) out.push_back(w.node);
  return out;
}

void PrimaryRole::standby_suspected(TimeUs now, Effects& eff, NodeId standby, Detector detector) {
  WatchedStandby* w = watched(standby);
  HAPAIR_CHECK_MSG(w != nullptr, "node " << server_.node().self() << " suspects standby " << standby << " it does not watch");
  server_.count("standby_suspected");
  const bool gone = detector == Detector::connection;
  const TimeUs hang_us = us_from_ms(static_cast<double>(server_.node().settings().hang_timeout_ms));
  w->silence_at_suspicion_us = w->detector.silence_us(now, detector == Detector::connection, hang_us);
  w->suspected_at_us = now;
  server_.trace(eff, now, TraceKind::standby_suspected)
      .with(TraceKey::standby, standby)
      .with(TraceKey::detector, detector)
      .with(TraceKey::silent_us, w->silence_at_suspicion_us)
      .with_text(gone ? "its process is gone: declared lost at once"
                      : "output that waits for it stays held until it is declared lost");
  // A closed connection means a dead process, which cannot take over: nothing to wait for. A
  // silence may be a cut link, behind which the standby takes over after one failure timeout:
  // wait one more, so the neighbours follow it before I claim a new epoch of my own.
  if (gone) {
    on_standby_lost(now, eff, standby, detector);
  } else if (w->loss_due_us == kNever) {
    w->loss_due_us = now + (kStandbyLossFailureTimeouts - 1) *
                               us_from_ms(static_cast<double>(server_.node().settings().failure_timeout_ms));
    w->suspected_by = detector;
  }
}

void PrimaryRole::on_rejoin(TimeUs now, NodeId from, const Rejoin& r, Effects& eff) {
  const PlanFragment& f = server_.node().fragment_plan();
  // Only another node of my fragment may rejoin it. A fragment without a standby (ha none) has
  // no other node, and a Rejoin claiming to come from kNoNode must not pass for one from it
  // (found by fuzz/envelope_fuzz).
  if (!f.is_replica(from) || from == server_.node().self() || r.fragment != server_.node().fragment_id() ||
      r.node != from) {
    server_.count("unexpected_rejoin_dropped");
    return;
  }
  // k standbys: while I suspect a standby of silence I may be the one that was paused or cut off
  // (another standby may have taken over meanwhile, and my neighbours follow its epoch): a new
  // pair now would claim an epoch against it. The rejoiner repeats its request; by then either
  // the silence was mine and a neighbour's fencing notice reached me, or the standby is lost.
  if (f.standbys.size() > 1 && std::any_of(standbys_.begin(), standbys_.end(), [](const WatchedStandby& w) {
        return w.loss_due_us != kNever;
      })) {
    server_.count("rejoins_deferred_while_suspecting");
    return;
  }
  // I did not run for a failure timeout or more (discount_own_stall): a standby may have taken
  // over meanwhile, in the epoch a new pair would open now. Its fencing notice answers my first
  // heartbeats; the rejoiner repeats its request.
  if (now < stalled_until_us_) {
    server_.count("rejoins_deferred_after_own_stall");
    return;
  }
  const Route& route = server_.routes().route(server_.node().fragment_id());
  const StandbyRef* known = route.standby(from);
  if (known != nullptr && r.incarnation == known->incarnation) {
    // A repeated request: our answer was lost. Answer again.
    server_.send(eff, now, from, server_.routes().statement_of(server_.node().fragment_id()));
    return;
  }
  if (known != nullptr) {
    // My standby restarted (a new incarnation asks): what it had is gone. Form the pair again,
    // in a new epoch, with fresh state for it.
    server_.count("standby_restarted");
    server_.trace(eff, now, TraceKind::standby_restarted).with(TraceKey::standby, from);
  } else if (route.standbys.size() >= f.standbys.size()) {
    server_.count("unexpected_rejoin_dropped");  // the pair is whole
    return;
  }
  // A new epoch names the pair: me as primary, the rejoined node as standby. The announcement
  // goes out before any state is captured, so upstream servers hold back trimming for the new
  // standby before the checkpoint position is fixed.
  server_.pair().form_pair(from, r.incarnation);  // what my Unions chose so far: in the epoch that ends
  server_.pair().announce_takeover(now, eff, from);
  server_.pair().send_routes_to(now, eff, from);
  watch_standby(now, from);
  // Every producer must serve me in this epoch: one that followed another claim of an earlier
  // epoch (my partner's, while I was paused) dropped me from its consumers and waits for my
  // replay request, which I made before that and will not repeat on my own (chaos active case
  // 483: the output stopped for good). Asked until each echoes my route.
  begin_confirmations(now, eff, server_.routes().epoch());
  // My old standby asks to rejoin: it claims nothing. What a dissolution still held is released
  // by the new pair's checkpoint or bootstrap (output before the new standby is released).
  dissolve_pending_ = false;
  dissolved_epoch_ = 0;
  deferred_claimant_ = kNoNode;
  server_.trace(eff, now, TraceKind::rejoin_accepted)
      .with(TraceKey::standby, from)
      .with(TraceKey::epoch, server_.routes().epoch())
      .with(TraceKey::incarnation, r.incarnation);
  if (server_.node().kind() == FragmentKind::operators) side_->on_standby_joined(now, from, eff);
}

void PrimaryRole::on_standby_lost(TimeUs now, Effects& eff, NodeId lost, Detector detector) {
  WatchedStandby* w = watched(lost);
  if (w == nullptr) return;
  // Silent since before the suspicion (the driver's detector, or mine), and since it.
  const TimeUs silent_us = w->detector.disabled() ? w->silence_at_suspicion_us + (now - w->suspected_at_us)
                                                  : now - w->detector.last_heard_us();
  side_->on_standby_lost(lost);
  std::erase_if(standbys_, [&](const WatchedStandby& x) { return x.node == lost; });
  if (!standbys_.empty()) {
    // k standbys: others remain. A new epoch names them without the lost one (upstream servers
    // stop keeping input for it, and it rejoins if it comes back); what is held keeps waiting
    // for the remaining standbys, which can reproduce it.
    // (No dissolution to confirm: a standby cut off from me alone does not take over while the
    // others still hear me and refuse its candidacy, StandbyRole; and I claim nothing against a
    // standby that did take over while I was paused: its newer epoch fences me.)
    server_.pair().drop_standby(lost);
    server_.pair().announce_takeover(now, eff, lost);
    trace_standby_lost(now, eff, lost, detector, silent_us).with(TraceKey::count, standbys_.size()).with_text("the other standbys remain");
    return;
  }
  next_heartbeat_us_ = kNever;
  // The pair is dissolved in a new epoch: me as primary, no standby. Upstream servers stop
  // sending to (and keeping input for) an active standby, and the old standby — told directly
  // now, and answered with this epoch whenever it speaks from the old one — rejoins instead of
  // acting on state from before the loss.
  server_.pair().dissolve_pair();
  dissolved_epoch_ = server_.routes().epoch();
  // A closed connection means a dead process: nobody can claim this epoch but me. After a
  // silence, the standby may have been cut off and have taken over in the same epoch (the
  // neighbours follow whichever claim they heard first): until every consumer and producer
  // answered mine, what was held stays held, and nothing is acknowledged upstream, so that the
  // standby's claim can still win without a trace of mine (on_competing_claim).
  dissolve_pending_ = detector != Detector::connection;
  // The announcement goes first: a producer echoes the route it follows in answer to my replay
  // request, and my request alone does not tell it the new epoch (an active standby sends
  // replay requests too, RouteTable::implied_takeover).
  server_.pair().announce_takeover(now, eff, lost);
  if (dissolve_pending_) {
    // Consumers confirm by saying where they resume (as after a takeover); producers by
    // echoing my route in answer to a replay request (request_confirmations).
    server_.outputs().reset_consumers_awaiting_replay_request();
    begin_confirmations(now, eff, dissolved_epoch_);
  }
  trace_standby_lost(now, eff, lost, detector, silent_us)
      .with_text(dissolve_pending_ ? "held output waits until every neighbour follows this epoch"
                                   : "running unprotected until a standby rejoins");
  if (!dissolve_pending_) release_held_output(now, eff);
}

void PrimaryRole::discount_own_stall(TimeUs now) {
  const TimeUs timeout_us = us_from_ms(static_cast<double>(server_.node().settings().failure_timeout_ms));
  if (standbys_.empty() || next_heartbeat_us_ == kNever || now - next_heartbeat_us_ < timeout_us) return;
  // My heartbeat was due a failure timeout ago or more: I did not run (paused, starved). My
  // standbys' silence is mine, and a standby may have taken over: I watch them afresh and form
  // no new pair for one failure timeout, by which my first heartbeats have been answered (chaos
  // case 6148 of seed 1, 10,000 runs: a primary paused past its standby's takeover accepted a
  // Rejoin at once, in the epoch its standby had claimed, and took the fragment back with stale
  // state; its producer had trimmed for the standby).
  for (WatchedStandby& w : standbys_) {
    w.detector.heard(now);
    w.loss_due_us = kNever;
  }
  stalled_until_us_ = now + timeout_us;
  server_.count("own_stalls_discounted");
}

TraceEvent& PrimaryRole::trace_standby_lost(TimeUs now, Effects& eff, NodeId lost, Detector detector, TimeUs silent_us) {
  server_.count("standby_lost");
  return server_.trace(eff, now, TraceKind::standby_lost)
      .with(TraceKey::standby, lost)
      .with(TraceKey::detector, detector)
      .with(TraceKey::silent_us, silent_us)
      .with(TraceKey::epoch, server_.routes().epoch());
}

void PrimaryRole::begin_confirmations(TimeUs now, Effects& eff, Epoch epoch) {
  confirming_epoch_ = epoch;
  confirmed_producers_.clear();
  request_confirmations(now, eff);
}

void PrimaryRole::request_confirmations(TimeUs now, Effects& eff) {
  if (producers_confirmed()) {
    // Every producer serves me in that epoch (a pending dissolution still waits for consumers).
    confirming_epoch_ = 0;
    next_confirmation_request_us_ = kNever;
    return;
  }
  for (const auto& [s, in] : server_.inputs()) {
    const NodeId producer = server_.routes().route(in.producer()).primary;
    if (producer == kNoNode || confirmed_producers_.count(producer)) continue;
    server_.send(eff, now, producer, ReplayRequest{s, in.last_accepted(), 0});
    server_.count("confirmation_requests_sent");
  }
  next_confirmation_request_us_ = now + server_.node().retransmit_us();
}

bool PrimaryRole::producers_confirmed() const {
  for (const auto& [s, in] : server_.inputs())
    if (!confirmed_producers_.count(server_.routes().route(in.producer()).primary)) return false;
  return true;
}

bool PrimaryRole::dissolve_confirmed() const {
  if (!producers_confirmed()) return false;
  // The consumer fragments' primaries (a standby being bootstrapped is subscribed by its own).
  for (const auto& [s, o] : server_.outputs())
    for (const ConsumerState& c : o.consumers())
      if (!c.ready && c.node == server_.routes().route(c.fragment).primary) return false;
  return true;
}

void PrimaryRole::release_held_output(TimeUs now, Effects& eff) {
  dissolve_pending_ = false;
  // Nobody else can reproduce what was held (the standby that could is gone) and nobody else
  // acts for this fragment (every neighbour follows my epoch), so it goes out now.
  // (An approach whose output waits for something else than its standby keeps it held: global
  // checkpoints release on a complete checkpoint.)
  const std::size_t released = side_->output_held_for_standby() ? server_.outputs().release_all_held() : 0;
  // A passive primary without a standby acknowledges what it processed, so upstream queues stay
  // bounded (as after a takeover); other modes' upstreams trim as before, now without the
  // standby (the announcement removed it from their consumers).
  side_->on_held_output_released(now);
  server_.count("held_tuples_released", static_cast<std::int64_t>(released));
  server_.trace(eff, now, TraceKind::held_output_released)
      .with(TraceKey::count, released)
      .with(TraceKey::epoch, server_.routes().epoch())
      .with_text("running unprotected until a standby rejoins");
  // A claim of my epoch announced while mine was unconfirmed: every neighbour follows mine.
  if (deferred_claimant_ != kNoNode) renew_claim_over(now, deferred_claimant_, eff);
}

bool PrimaryRole::claims_my_dissolved_epoch(const Takeover& t) const {
  return dissolved_epoch_ != 0 && t.fragment == server_.node().fragment_id() && t.epoch == dissolved_epoch_ &&
         t.epoch == server_.routes().epoch() && t.new_primary != server_.node().self() && t.new_primary < server_.node().plan().nodes.size() &&
         server_.node().plan().nodes[t.new_primary].fragment == server_.node().fragment_id();
}

void PrimaryRole::on_competing_claim(TimeUs now, NodeId from, const Takeover& t, Effects& eff) {
  if (dissolve_pending_ && from == t.new_primary) {
    // My old standby announces its own claim of my epoch (it resumed from a pause and took over
    // on its old state). That alone says nothing of who follows it: my neighbours answer each
    // claim of an epoch whose first claim they follow with the one they follow. If they all
    // follow me, they trimmed their output for me and only my claim can be precise (chaos case
    // 615 of seed 1: yielding here let the stale standby win, and its replay found a gap).
    deferred_claimant_ = t.new_primary;
    server_.count("epoch_claims_deferred");
    server_.trace(eff, now, TraceKind::claim_deferred).with(TraceKey::epoch, t.epoch).with(TraceKey::over, t.new_primary);
    return;
  }
  if (dissolve_pending_) {
    // A neighbour follows my old standby's claim of the epoch I claimed: it wins. Nothing I
    // held went out; I rejoin as its standby (its new epoch then brings every neighbour over to
    // it).
    server_.count("epoch_claims_lost");
    server_.trace(eff, now, TraceKind::fenced)
        .with(TraceKey::fragment_primary, t.new_primary)
        .with(TraceKey::epoch, t.epoch)
        .with(TraceKey::claim_lost, true);
    successor_ = std::make_unique<FencedRole>(server_);
    return;
  }
  // Every neighbour answered my claim before this one came (a standby that resumed and took
  // over on its old state): mine stands.
  renew_claim_over(now, t.new_primary, eff);
}

void PrimaryRole::renew_claim_over(TimeUs now, NodeId over, Effects& eff) {
  deferred_claimant_ = kNoNode;
  server_.pair().renew_claim();
  dissolved_epoch_ = server_.routes().epoch();
  server_.pair().announce_takeover(now, eff, over);
  server_.count("epoch_claims_renewed");
  server_.trace(eff, now, TraceKind::claim_renewed).with(TraceKey::epoch, server_.routes().epoch()).with(TraceKey::over, over);
}

void PrimaryRole::after_event(TimeUs now, Effects& eff) {
  if (dissolve_pending_ && dissolve_confirmed()) release_held_output(now, eff);
  // A source emits what is due (its next tuple's time comes back), a fragment processes its input.
  next_source_us_ = server_.workload().run(now, eff);
  side_->after_processing(now, eff);
  server_.outputs().pump(now, eff);
  server_.inputs().send_level0_acks(now, eff, false);
  next_retransmit_us_ = server_.retransmit(now, eff);
  next_retransmit_us_ = std::min(next_retransmit_us_, side_->retransmit(now, eff));
  // Rewound consumers are re-sent at once.
  server_.outputs().pump(now, eff);
}

void PrimaryRole::maybe_finish_rebase(TimeUs now, Effects& eff) {
  if (!rebase_pending_ || !server_.outputs().all_ready()) return;
  server_.outputs().rebase_all();
  rebase_pending_ = false;
  server_.workload().set_paused(false);
  server_.trace(eff, now, TraceKind::rebased).with_text("output ids continue above what consumers accepted");
}

TimeUs PrimaryRole::next_wakeup_us() const {
  TimeUs t = std::min({next_heartbeat_us_, next_source_us_, server_.inputs().next_ack_due_us(), side_->next_wakeup_us()});
  t = std::min(t, next_retransmit_us_);
  for (const WatchedStandby& w : standbys_) t = std::min({t, w.detector.deadline_us(), w.loss_due_us});
  if (confirming_epoch_ != 0) t = std::min(t, next_confirmation_request_us_);
  return t;
}

void FencedRole::on_start(TimeUs now, Effects& eff) {
  server_.set_role(Role::fenced);
  server_.count("fenced");
  (void)now;
  (void)eff;
}

void FencedRole::on_message(TimeUs, const Envelope&, Effects&) { server_.count("fenced_dropped"); }

}  // namespace hapair
