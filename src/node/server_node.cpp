#include "node/server_node.h"

#include <type_traits>

#include "node/approaches.h"
#include "node/node_factory.h"
#include "primary/primary_role.h"
#include "primary/rejoin_role.h"
#include "protocols/check.h"

namespace hapair {

ServerNode::ServerNode(std::shared_ptr<const Plan> plan, NodeId self, const ApproachRegistry& approaches,
                       CheckpointStore* local_snapshots)
    : server_(std::move(plan), self, local_snapshots), approaches_(approaches) {
  const Approach& a = approach();
  if (server_.role() == Role::primary) {
    const PrimaryOptions options;
    role_ = std::make_unique<PrimaryRole>(server_, options, make_primary_side(a, server_, options));
  } else {
    // A planned standby (the plan names one only for modes whose approach has a standby role).
    HAPAIR_CHECK_MSG(a.standby_role != nullptr, "no standby role for ha " << to_string(a.mode));
    role_ = a.standby_role(server_, false);
  }
}

const Approach& ServerNode::approach() const { return approaches_.of(server_.node().mode()); }

void ServerNode::follow_switches(TimeUs now, Effects& eff) {
  if (!server_.node().plan().runs_fragment(server_.node().self()) || server_.node().plan().switches.empty()) return;
  const FragmentId f = server_.node().fragment_id();
  if (server_.role() == Role::primary) {
    // The schedule names the approach from its time on; a primary that took over after a switch
    // was due (its old primary failed first) switches too.
    if (auto mode = server_.node().plan().scheduled_mode(f, now); mode && *mode != server_.node().mode())
      role_->switch_approach(now, approaches_.of(*mode), eff);
    return;
  }
  // A standby (not one rejoining or fenced: those become a standby first) named by a route
  // whose approach is no longer mine: my primary switched. I become the new approach's standby
  // with a fresh fragment, as a rejoined one, and my primary's new end brings me up to date.
  const Route& r = server_.routes().route(f);
  const Role role = server_.role();
  if (r.mode == server_.node().mode() || r.standby(server_.node().self()) == nullptr || role == Role::rejoining ||
      role == Role::fenced || role == Role::coordinator)
    return;
  const HaMode from = server_.node().mode();
  server_.switch_approach(r.mode);
  const Approach& a = approach();
  HAPAIR_CHECK_MSG(a.standby_role != nullptr, "node " << server_.node().name() << " switched to ha " << to_string(a.mode)
                                                      << ", which has no standby");
  // A standby that holds state awaits the new approach's state from its primary, and until it
  // is installed keeps the role it replaces with that role's copy (its checkpoint, or the node's
  // live copy, left as it is): should the primary fail in between, that role takes over with it
  // (StandbyRole::cannot_take_over; docs/ARCHITECTURE.md "The window after a switch"). Without
  // a copy to keep, the node gets a fresh fragment. One that holds none (upstream backup's spare
  // restarts from upstream's retained input) keeps what its node had, a live copy when it was
  // an active standby: until upstream servers retain what the new approach needs, that copy is
  // the one that can take over (docs/ARCHITECTURE.md "Live switching").
  const Role old_role = role;
  std::unique_ptr<RoleBehaviour> next = a.standby_role(server_, true);
  if (server_.node().traits().standby_holds_state) {
    server_.set_role(server_.node().standby_role());
    if (!next->keep_predecessor(PredecessorStandby{std::move(role_), from, old_role}))
      server_.become_standby(server_.node().standby_role());
  } else {
    role_->leave_copy_in_node();
    server_.set_role(server_.node().standby_role());
  }
  server_.count("approach_switches_followed");
  server_.trace(eff, now, TraceKind::approach_switch)
      .with(TraceKey::ha, r.mode)
      .with(TraceKey::from_ha, from)
      .with(TraceKey::epoch, r.epoch)
      .with(TraceKey::fragment_primary, r.primary);
  role_ = std::move(next);
  role_->on_start(now, eff);
}

TimeUs ServerNode::next_switch_us(TimeUs now) const {
  if (server_.role() != Role::primary || !server_.node().plan().runs_fragment(server_.node().self())) return kNever;
  return server_.node().plan().next_switch_us(server_.node().fragment_id(), now);
}

Effects ServerNode::handle(TimeUs now, const Event& event) {
  Effects eff;
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, Start>) {
          server_.pair().set_driver_watches_partner(e.driver_watches_partner);
          if (e.restarted) role_ = std::make_unique<RejoiningRole>(server_, approach());
          role_->on_start(now, eff);
        } else if constexpr (std::is_same_v<T, Tick>) {
          role_->on_tick(now, eff);
        } else if constexpr (std::is_same_v<T, PeerLost>) {
          role_->on_peer_lost(now, e, eff);
        } else {
          const Envelope& env = e.envelope;
          if (!server_.pair().from_a_peer(env)) return;
          // The coordinator of global checkpoints (docs/CHECKPOINT.md) runs no fragment: it has
          // no fragment epoch and no route, so its messages skip the epoch and route checks
          // below, which look up the sender's fragment. Only a node whose approach has a
          // coordinator takes them (its ends); any other counts and drops them.
          if (!server_.node().plan().runs_fragment(env.header.sender)) {
            if (server_.node().traits().coordinator)
              role_->on_message(now, env, eff);
            else
              server_.count(std::string("from_no_fragment_") + message_kind_name(env.body) + "_dropped");
            return;
          }
          // A rejoining node speaks from an old epoch by definition: its request is not stale.
          if (std::holds_alternative<Rejoin>(env.body)) {
            role_->on_message(now, env, eff);
            return;
          }
          // An older epoch: dropped (counted), and the sender told who is primary now.
          if (!server_.pair().is_current(now, env, eff)) return;
          if (auto implied = server_.routes().implied_takeover(env)) {
            // The sender speaks in a newer epoch than we know: its Takeover was lost. Apply it
            // first, exactly as if it had arrived.
            server_.count("implied_takeovers");
            Envelope t;
            t.header = env.header;
            t.body = *implied;
            role_->on_message(now, t, eff);
            swap_roles(now, eff);
          } else {
            // A newer epoch that names no primary (an active standby's ack): ask the sender.
            server_.pair().ask_route(now, env, eff);
          }
          server_.pair().answer_old_statement(now, env, eff);
          role_->on_message(now, env, eff);
        }
      },
      event);
  swap_roles(now, eff);
  follow_switches(now, eff);
  swap_roles(now, eff);
  server_.end_event(now, eff);
  eff.wake_at(role_->next_wakeup_us());
  eff.wake_at(next_switch_us(now));
  return eff;
}

void ServerNode::swap_roles(TimeUs now, Effects& eff) {
  while (auto next = role_->take_successor()) {
    const std::optional<PeerLost> loss = role_->take_partner_loss();
    role_ = std::move(next);
    role_->on_start(now, eff);
    if (loss) role_->on_peer_lost(now, *loss, eff);
    // A fenced primary (paused, or cut off, while its standby took over) holds only stale
    // state: it rejoins its fragment as the new standby, restoring the pair.
    if (server_.role() == Role::fenced) {
      role_ = std::make_unique<RejoiningRole>(server_, approach());
      role_->on_start(now, eff);
    }
  }
}

Metrics ServerNode::metrics() const {
  Metrics m = server_.metrics();
  m["role"] = static_cast<std::int64_t>(server_.role());
  return m;
}

std::unique_ptr<NodeCore> make_node_core_from(const ApproachRegistry& approaches, std::shared_ptr<const Plan> plan,
                                              NodeId node, CheckpointStore* store, LocalSnapshots* local) {
  HAPAIR_CHECK_MSG(plan != nullptr && node < plan->nodes.size(), "node " << node);
  if (!plan->runs_fragment(node)) {
    // The coordinator: built by the first fragment's approach that has one (a plan gets one
    // coordinator however many fragments ask for it).
    for (const PlanFragment& f : plan->fragments) {
      if (!approaches.has(f.ha) || approaches.of(f.ha).coordinator == nullptr) continue;
      HAPAIR_CHECK_MSG(store != nullptr, "the coordinator " << plan->nodes[node].name
                                                             << " needs the run's checkpoint store (run_node_cores)");
      return approaches.of(f.ha).coordinator(std::move(plan), node, *store);
    }
    HAPAIR_CHECK_MSG(false, "node " << plan->nodes[node].name << " runs no fragment and no approach of the plan has a coordinator");
  }
  // Local recovery: the node's host keeps its fragment's snapshot copies.
  CheckpointStore* copies = nullptr;
  const PlanNode& n = plan->nodes[node];
  if (local != nullptr && plan->fragments[n.fragment].kind == FragmentKind::operators &&
      plan->settings().local_recovery)
    copies = &local->of(host_of(*plan, node), plan->fragments[n.fragment].name);
  return std::make_unique<ServerNode>(std::move(plan), node, approaches, copies);
}

std::unique_ptr<NodeCore> make_node_core(std::shared_ptr<const Plan> plan, NodeId node) {
  return make_node_core_from(ApproachRegistry::builtin(), std::move(plan), node);
}

std::function<std::unique_ptr<NodeCore>(std::shared_ptr<const Plan>, NodeId)> run_node_cores(
    std::shared_ptr<CheckpointStore> store, std::shared_ptr<LocalSnapshots> local) {
  HAPAIR_CHECK(store != nullptr && local != nullptr);
  return [store, local](std::shared_ptr<const Plan> plan, NodeId node) {
    return make_node_core_from(ApproachRegistry::builtin(), std::move(plan), node, store.get(), local.get());
  };
}

std::function<std::unique_ptr<NodeCore>(std::shared_ptr<const Plan>, NodeId)> run_node_cores() {
  return run_node_cores(std::make_shared<MemoryCheckpointStore>(), std::make_shared<MemoryLocalSnapshots>());
}

}  // namespace hapair
