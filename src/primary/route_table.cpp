#include "primary/route_table.h"

#include <algorithm>

#include "protocols/check.h"

namespace hapair {

RouteTable::RouteTable(const Plan& plan, NodeId self) : plan_(&plan), self_(self) {
  HAPAIR_CHECK_MSG(self < plan.nodes.size(), "node " << self << " of " << plan.nodes.size());
  own_ = plan.nodes[self].fragment;
  routes_.resize(plan.fragments.size());
  for (const auto& pf : plan.fragments) {
    Route& r = routes_[pf.id];
    r.primary = pf.primary;
    r.mode = pf.ha;
    for (NodeId s : pf.standbys) r.standbys.push_back(StandbyRef{s, 0});
  }
}

const Route& RouteTable::route(FragmentId f) const {
  HAPAIR_CHECK_MSG(f < routes_.size(), "fragment " << f << " of " << routes_.size());
  return routes_[f];
}

Takeover RouteTable::statement_of(FragmentId f) const {
  const Route& r = route(f);
  return Takeover{f, r.primary, r.epoch, r.standbys, r.mode};
}

const ApproachTraits& RouteTable::traits(FragmentId f) const { return plan_->approaches.of(route(f).mode); }

std::vector<NodeId> RouteTable::input_nodes_of(FragmentId f) const {
  std::vector<NodeId> out;
  const Route& r = route(f);
  if (r.primary != kNoNode) out.push_back(r.primary);
  if (traits(f).standby_processes_input)
    for (const StandbyRef& s : r.standbys) out.push_back(s.node);
  return out;
}

std::vector<NodeId> RouteTable::neighbour_nodes() const {
  std::vector<NodeId> out;
  auto add_fragment = [&](FragmentId f) {
    const PlanFragment& pf = plan_->fragments[f];
    for (NodeId n : pf.replicas())
      if (n != kNoNode && n != self_ && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  const PlanFragment& mine = plan_->fragments[own_];
  for (FragmentId f : mine.upstream) add_fragment(f);
  for (FragmentId f : mine.downstream) add_fragment(f);
  std::sort(out.begin(), out.end());
  return out;
}

bool RouteTable::is_stale(const Envelope& e) const {
  const NodeId sender = e.header.sender;
  if (sender >= plan_->nodes.size()) return false;
  return e.header.epoch < routes_[plan_->nodes[sender].fragment].epoch;
}

namespace {
// What only its fragment's primary sends to other fragments: data, level-1 acks, a standby's
// feed, subscriptions of a rejoined standby, restart points. An active standby also acknowledges
// its input (level-0), asks its producers to replay, and sends heartbeats: none of these says who
// is primary (real campaign case 604, docs/FAULTS.md).
bool only_a_primary_sends(const Message& m) {
  return std::holds_alternative<TupleBatch>(m) || std::holds_alternative<Level1Ack>(m) ||
         std::holds_alternative<Checkpoint>(m) || std::holds_alternative<Determinants>(m) ||
         std::holds_alternative<Redirect>(m) || std::holds_alternative<RestartPoints>(m);
}
}  // namespace

std::optional<Takeover> RouteTable::implied_takeover(const Envelope& e) const {
  if (std::holds_alternative<Takeover>(e.body)) return std::nullopt;
  // A candidacy comes from a standby in an election (k standbys): the epoch it names is the one
  // its sender follows, not one it claims (a follower of the last winner speaks in that
  // winner's epoch).
  if (std::holds_alternative<Candidacy>(e.body)) return std::nullopt;
  const NodeId n = e.header.sender;
  if (n >= plan_->nodes.size()) return std::nullopt;
  const FragmentId f = plan_->nodes[n].fragment;
  // Only a standby that processes input (active standby, hybrid standby while it is active)
  // talks to nodes outside its pair (its input's producers): what it sends them does not make it
  // the primary (chaos case 3863 of seed 1, 10,000 runs: a hybrid standby's level-0 ack in its
  // primary's new epoch made a producer cut off from that primary follow the standby). Inside
  // the pair any message in a newer epoch does: the partner's heartbeat tells a resumed standby
  // that its pair was dissolved.
  if (f != own_ && traits(f).standby_talks_to_producers() && !only_a_primary_sends(e.body)) return std::nullopt;
  const Route& r = routes_[f];
  if (e.header.epoch <= r.epoch) return std::nullopt;
  // Only a node that took over (or renewed its pair) speaks in a newer epoch than we know.
  return Takeover{f, n, e.header.epoch, implied_standbys(f, n), std::nullopt};
}

std::vector<StandbyRef> RouteTable::implied_standbys(FragmentId f, NodeId n) const {
  const Route& r = routes_[f];
  if (r.primary == n) return r.standbys;
  // Another node of my own fragment speaks in a newer epoch: a standby took over. What it sends
  // a node of its own fragment (heartbeats, checkpoints, determinants: Takeovers and candidacies
  // imply nothing) it sends only to the standbys its route names, so I am one of them; with k
  // standbys, the election's winner names every standby it heard (StandbyRole::followers), and
  // I take the others to be among them until its own announcement says. Following it with no
  // standby would fence me, and a winner that fails before its announcement reaches me would
  // then leave nobody to take over (chaos case 5189 of seed 1, 10,000 runs: its announcement to
  // the other standby was lost, its heartbeat arrived, and it crashed 1.5 ms after taking over).
  if (f == own_) {
    std::vector<StandbyRef> out;
    for (const StandbyRef& s : r.standbys)
      if (s.node != n) out.push_back(s);
    return out;
  }
  return {};
}

bool RouteTable::newer_epoch_without_route(const Envelope& e) const {
  if (std::holds_alternative<Takeover>(e.body) || e.header.sender >= plan_->nodes.size()) return false;
  const FragmentId f = plan_->nodes[e.header.sender].fragment;
  return f != own_ && e.header.epoch > routes_[f].epoch && !implied_takeover(e);
}

bool RouteTable::old_statement_of_mine(const Envelope& e) const {
  const auto* t = std::get_if<Takeover>(&e.body);
  if (!t || e.header.sender >= plan_->nodes.size() || plan_->nodes[e.header.sender].fragment == own_) return false;
  return t->fragment == own_ && t->epoch < routes_[own_].epoch;
}

TakeoverNews RouteTable::classify(const Takeover& t) const {
  if (t.fragment >= plan_->fragments.size() || t.new_primary >= plan_->nodes.size() ||
      plan_->nodes[t.new_primary].fragment != t.fragment || t.epoch > kEpochFollowMax ||
      (t.mode && plan_->approaches.find(*t.mode) == nullptr))
    return TakeoverNews::malformed;
  const Route& r = routes_[t.fragment];
  // The announcement of an epoch I follow from an implied takeover (which cannot know the
  // approach) tells me its approach: followed once more, for its mode.
  if (t.epoch == r.epoch && t.new_primary == r.primary && t.fragment != own_ && t.mode && *t.mode != r.mode)
    return TakeoverNews::newer;
  const bool repeat = t.epoch == r.epoch && t.new_primary == r.primary && t.fragment != own_;
  if (repeat) return TakeoverNews::repeat;
  if (t.epoch == r.epoch && t.fragment != own_) return TakeoverNews::epoch_tie;
  if (t.epoch <= r.epoch) return TakeoverNews::stale;
  return TakeoverNews::newer;
}

void RouteTable::follow(const Takeover& t) {
  HAPAIR_CHECK_MSG(classify(t) == TakeoverNews::newer,
                   "fragment " << t.fragment << " epoch " << t.epoch << " followed " << routes_.at(t.fragment).epoch);
  const HaMode mode = t.mode.value_or(routes_[t.fragment].mode);
  routes_[t.fragment] = Route{t.new_primary, t.standbys, t.epoch, mode};
}

void RouteTable::advance_own_epoch() {
  Route& r = routes_[own_];
  HAPAIR_CHECK_MSG(r.epoch + 1 > r.epoch, "epoch " << r.epoch);
  r.epoch += 1;
}

void RouteTable::claim_as_primary(const std::vector<StandbyRef>& followers) {
  Route& r = routes_[own_];
  for (const StandbyRef& f : followers)
    HAPAIR_CHECK_MSG(f.node != self_ && plan_->fragments.at(own_).is_replica(f.node),
                     "node " << self_ << " claims fragment " << own_ << " with follower " << f.node);
  r.primary = self_;
  r.standbys = followers;
  advance_own_epoch();
}

void RouteTable::form_pair(NodeId standby, std::uint64_t incarnation) {
  Route& r = routes_[own_];
  HAPAIR_CHECK_MSG(r.primary == self_, "node " << self_ << " forms a pair of fragment " << own_ << " led by " << r.primary);
  HAPAIR_CHECK_MSG(standby != kNoNode && standby != self_, "node " << self_ << " pairs with node " << standby);
  std::erase_if(r.standbys, [&](const StandbyRef& s) { return s.node == standby; });
  r.standbys.push_back(StandbyRef{standby, incarnation});
  HAPAIR_CHECK_MSG(r.standbys.size() <= plan_->fragments.at(own_).standbys.size(),
                   "fragment " << own_ << " has " << r.standbys.size() << " standbys, its plan "
                               << plan_->fragments.at(own_).standbys.size());
  advance_own_epoch();
}

void RouteTable::dissolve_pair() {
  Route& r = routes_[own_];
  r.standbys.clear();
  advance_own_epoch();
}

void RouteTable::drop_standby(NodeId standby) {
  Route& r = routes_[own_];
  HAPAIR_CHECK_MSG(r.primary == self_, "node " << self_ << " drops a standby of fragment " << own_ << " led by " << r.primary);
  std::erase_if(r.standbys, [&](const StandbyRef& s) { return s.node == standby; });
  advance_own_epoch();
}

void RouteTable::renew_claim() { advance_own_epoch(); }

void RouteTable::switch_approach(HaMode mode) {
  Route& r = routes_[own_];
  HAPAIR_CHECK_MSG(r.primary == self_, "node " << self_ << " switches fragment " << own_ << " led by " << r.primary);
  HAPAIR_CHECK_MSG(plan_->approaches.find(mode) != nullptr && mode != r.mode, "fragment " << own_ << " switches from mode "
                                                                               << static_cast<int>(r.mode) << " to " << static_cast<int>(mode));
  r.mode = mode;
  advance_own_epoch();
}

void RouteTable::resume_own_approach(HaMode mode) {
  Route& r = routes_[own_];
  HAPAIR_CHECK_MSG(r.primary != self_, "node " << self_ << " resumes an approach of fragment " << own_ << " it leads");
  HAPAIR_CHECK_MSG(plan_->approaches.find(mode) != nullptr, "fragment " << own_ << " resumes unknown mode " << static_cast<int>(mode));
  r.mode = mode;
}

void RouteTable::announced(TimeUs now, NodeId old_primary) {
  announce_pending_ = true;
  announce_old_primary_ = old_primary;
  announced_us_ = now;
}

bool RouteTable::fencing_notice_due(NodeId n, TimeUs now, TimeUs interval_us) {
  if (n >= plan_->nodes.size() || n == self_) return false;
  const Route& r = routes_[plan_->nodes[n].fragment];
  if (r.primary == n || r.primary == kNoNode) return false;  // a late message of the current primary itself
  auto it = fencing_sent_us_.find(n);
  if (it != fencing_sent_us_.end() && now - it->second < interval_us) return false;
  fencing_sent_us_[n] = now;
  return true;
}

bool RouteTable::route_exchange_due(NodeId n, bool asking, TimeUs now, TimeUs interval_us) {
  if (n >= plan_->nodes.size() || n == self_) return false;
  auto it = route_exchange_us_.find({n, asking});
  if (it != route_exchange_us_.end() && now - it->second < interval_us) return false;
  route_exchange_us_[{n, asking}] = now;
  return true;
}

}  // namespace hapair
