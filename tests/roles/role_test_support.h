// What the role tests share: the plans they build nodes of, batches to feed them, the messages
// a node sent, and a check that an invariant stops the process.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/topology_file.h"
#include "primary/workload.h"
#include "protocols/core.h"
#include "protocols/plan.h"

namespace hapair::test {

// The built-in default network (source -> filter -> aggregate -> sink) in HA mode `ha`.
inline std::shared_ptr<const Plan> default_plan(HaMode ha, const std::function<void(Settings&)>& tweak = {}) {
  Topology t = default_topology();
  t.settings.ha = ha;
  if (tweak) tweak(t.settings);
  return std::make_shared<Plan>(make_plan(t));
}

// The default network with a second source whose stream the aggregate's fragment merges with
// the filter's output first, so that fragment ("merge") has two producers, an operator fragment
// and a source:
//   source -raw-> filter -small-> merge (Union, then Aggregate) <-s2- s2;  merge -totals-> sink
inline std::shared_ptr<const Plan> two_producer_plan(HaMode ha, const std::function<void(Settings&)>& tweak = {}) {
  Topology t = default_topology();
  FragmentSpec s2 = t.fragments.at(0);
  s2.name = "s2";
  s2.source.stream = "s2";
  FragmentSpec& merge = t.fragments.at(2);
  merge.name = "merge";
  OperatorSpec both;
  both.name = "merge_both";
  both.kind = OperatorKind::union_op;
  both.inputs = {"small", "s2"};
  both.output = "merged";
  merge.operators.front().inputs = {"merged"};
  merge.operators.insert(merge.operators.begin(), both);
  t.fragments.insert(t.fragments.begin() + 1, s2);
  t.settings.ha = ha;
  if (tweak) tweak(t.settings);
  return std::make_shared<Plan>(make_plan(t));
}

// A network of experiments/networks/ (e.g. "union.toml") in HA mode `ha`.
inline std::shared_ptr<const Plan> network_plan(const std::string& file, HaMode ha) {
  auto load = load_topology_file(std::string(HAPAIR_SOURCE_DIR) + "/experiments/networks/" + file);
  Topology t = *load.topology;
  t.settings.ha = ha;
  for (auto& f : t.fragments) f.ha.reset();
  return std::make_shared<Plan>(make_plan(t));
}

// A batch of stream s after `prev` with ids prev+1 .. prev+count (timestamps 0.5 ms apart).
inline TupleBatch batch_after(StreamId s, TupleId prev, std::size_t count, double value = 1.0) {
  TupleBatch b;
  b.stream = s;
  b.prev_id = prev;
  for (std::size_t i = 0; i < count; ++i) {
    ++prev;
    b.tuples.push_back(Tuple{prev, static_cast<TimeUs>(prev) * 500, 1, value, prev});
  }
  return b;
}

// A node's parts wired as Server wires them (primary/server.h), each reachable, and the role
// settable, for the tests of one part. `epochs_ended` counts how often the pair side let the node
// collect its merge order before its own epoch ended.
struct Parts {
  std::shared_ptr<const Plan> plan;
  NodeIdentity node;
  Role role;
  RouteTable routes;
  Outbox outbox;
  int epochs_ended = 0;
  PairSide pair;
  InputSide inputs;
  OutputSide outputs;
  Workload workload;

  Parts(std::shared_ptr<const Plan> p, const std::string& name)
      : plan(std::move(p)),
        node(plan, plan->node_id(name)),
        role(node.planned_standby() ? node.standby_role() : Role::primary),
        routes(*plan, node.self()),
        outbox(node, routes),
        pair(node, routes, outbox,
             [this] {
               ++epochs_ended;
               workload.collect_merge_order();
             }),
        inputs(node, outbox, pair),
        outputs(node, role, outbox, pair),
        workload(node, role, routes, outbox, inputs, outputs) {}
  Parts(const Parts&) = delete;
  Parts& operator=(const Parts&) = delete;

  NodeId id(const std::string& name) const { return plan->node_id(name); }
  StreamId stream(const std::string& name) const { return plan->stream_id(name); }
  FragmentId fragment(const std::string& name) const { return plan->fragment_id(name); }
  // `from` sends a batch of `count` tuples of `stream` after `prev`, all of value `value`.
  void feed(const std::string& from, const std::string& stream, TupleId prev, std::size_t count, double value) {
    Effects eff;
    inputs.accept_batch(0, id(from), batch_after(plan->stream_id(stream), prev, count, value), eff);
  }
};

// The messages of type T a node sent to `to` (kNoNode: to anyone).
template <typename T>
std::vector<T> messages_to(const Effects& eff, NodeId to = kNoNode) {
  std::vector<T> out;
  for (const auto& o : eff.sends)
    if (to == kNoNode || o.to == to)
      if (auto* m = std::get_if<T>(&o.envelope.body)) out.push_back(*m);
  return out;
}

inline std::vector<TupleId> ids_in(const std::vector<TupleBatch>& batches) {
  std::vector<TupleId> out;
  for (const auto& b : batches)
    for (const auto& t : b.tuples) out.push_back(t.id);
  return out;
}

inline std::size_t traces_of(const Effects& eff, TraceKind kind) {
  std::size_t n = 0;
  for (const auto& t : eff.traces) n += t.kind == kind;
  return n;
}

// True when `f` stops the process on a failed invariant (HAPAIR_CHECK aborts): run in a forked
// child, whose output (the check's message, and the test framework's report of the abort) is
// discarded.
template <typename F>
bool aborts(F f) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stderr);
    std::freopen("/dev/null", "w", stdout);
    f();
    std::_Exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

}  // namespace hapair::test
