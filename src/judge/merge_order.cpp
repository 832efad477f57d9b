#include "judge/merge_order.h"

#include <algorithm>
#include <memory>
#include <set>

#include "operators/operator.h"

namespace hapair {

namespace {

// Per stream name: 0 = a function of the input alone, 1 = its order depends on the interleaving
// of one of `arbitrary`, 2 = its content does (an order-sensitive operator read it reordered:
// its traits say so). Operators are visited until nothing changes (the
// graph is a DAG, so at most one pass per operator is needed).
std::vector<StreamId> streams_changed_by(const Plan& plan, const std::set<std::string>& arbitrary) {
  enum : int { clean = 0, reordered = 1, changed = 2 };
  std::map<std::string, int> state;
  std::size_t operators = 0;
  for (const auto& f : plan.topology.fragments) operators += f.operators.size();
  for (std::size_t pass = 0; pass <= operators; ++pass) {
    bool moved = false;
    for (const auto& f : plan.topology.fragments)
      for (const auto& op : f.operators) {
        int in = clean;
        for (const auto& s : op.inputs) in = std::max(in, state[s]);
        int out = in;
        if (arbitrary.count(op.name) != 0) out = std::max(in, int{reordered});
        // An order-sensitive operator (windowed: a late tuple misses its window) turns a reordered
        // input into changed content.
        if (OperatorCatalog::builtin().of(op.kind).order_sensitive && in >= reordered) out = changed;
        if (out > state[op.output]) {
          state[op.output] = out;
          moved = true;
        }
      }
    if (!moved) break;
  }
  std::set<StreamId> out;
  for (const auto& f : plan.topology.fragments)
    if (f.kind == FragmentKind::sink)
      for (const auto& s : f.sink_inputs)
        if (state[s] == changed && plan.stream_id(s) != kNoStream) out.insert(plan.stream_id(s));
  return {out.begin(), out.end()};
}

struct Entry {
  std::uint16_t port = 0;
  TupleId input = 0;
  friend auto operator<=>(const Entry&, const Entry&) = default;
};

std::string ids_text(TupleId first, TupleId last) {
  return first == last ? "output id " + std::to_string(first)
                       : "output ids " + std::to_string(first) + ".." + std::to_string(last);
}

// The records of one operator, by epoch; within an epoch by node, in report order.
struct EpochRecords {
  std::map<NodeId, std::vector<const MergeOrder*>> acting, following, independent;
};

// Expands `records` into `into` (output id -> entry). `authoritative`: overwrite what is there;
// otherwise only fill missing ids, and count disagreements.
void expand(const std::vector<const MergeOrder*>& records, bool authoritative, std::map<TupleId, Entry>& into,
            std::uint64_t& conflicts) {
  for (const MergeOrder* r : records) {
    TupleId id = r->first_output;
    for (const MergeRun& run : r->runs) {
      for (std::uint32_t i = 0; i < run.count; ++i, ++id) {
        const Entry e{run.port, run.first_input + i};
        auto [it, inserted] = into.emplace(id, e);
        if (inserted || it->second == e) continue;
        if (authoritative) it->second = e;
        else ++conflicts;
      }
    }
  }
}

// `holds_output`: the fragment's approach releases output only once the successor has the choices
// it depends on (passive standby, active standby with determinants).
ComposedMergeOrder compose_one(const Plan& plan, const std::string& name, bool holds_output,
                               const std::map<Epoch, EpochRecords>& epochs) {
  ComposedMergeOrder c;
  auto unknown = [&](std::string why) {
    c.known = false;
    c.runs.clear();
    c.unknown_reason = std::move(why);
    return c;
  };
  if (epochs.empty()) return unknown("no node reported the merge order of " + name);
  std::vector<Entry> order;   // the composed interleaving
  TupleId covered = 0;        // the last output id of the latest epoch's records
  std::set<NodeId> chose_alone;  // standbys that chose their own interleaving
  for (const auto& [epoch, recs] : epochs) {
    for (const auto& [node, _] : recs.independent) chose_alone.insert(node);
    if (recs.acting.size() > 1) {
      std::string nodes;
      for (const auto& [node, _] : recs.acting) nodes += (nodes.empty() ? "" : " and ") + plan.nodes[node].name;
      return unknown(nodes + " both acted as primary of " + name + " in epoch " + std::to_string(epoch));
    }
    std::map<TupleId, Entry> chosen;
    for (const auto& [node, records] : recs.acting) {
      if (chose_alone.count(node) != 0)
        return unknown(plan.nodes[node].name + " chose its own interleaving of " + name +
                       " as an active standby without determinants, then took over: two interleavings reached "
                       "the output");
      expand(records, true, chosen, c.follower_conflicts);
    }
    for (const auto& [node, records] : recs.following) expand(records, false, chosen, c.follower_conflicts);
    if (chosen.empty()) continue;
    const TupleId first = chosen.begin()->first;
    const TupleId last = chosen.rbegin()->first;
    if (last - first + 1 != chosen.size()) {
      TupleId expected = first;
      for (const auto& [id, _] : chosen) {
        if (id != expected) break;
        ++expected;
      }
      return unknown(ids_text(expected, chosen.lower_bound(expected)->first - 1) + " of " + name +
                     " in epoch " + std::to_string(epoch) + " were not reported (lost with a crashed node)");
    }
    if (first > covered + 1)
      return unknown(ids_text(covered + 1, first - 1) + " of " + name + " before epoch " + std::to_string(epoch) +
                     " were not reported (lost with a crashed node)");
    // This epoch's choices replace what earlier epochs chose for the same inputs.
    std::set<Entry> now;
    for (const auto& [id, e] : chosen) now.insert(e);
    std::vector<Entry> replaced;
    for (const Entry& e : order)
      if (now.count(e) != 0) replaced.push_back(e);
    if (!holds_output && !replaced.empty()) {
      // Without held output, what the earlier epoch chose for these inputs may already have
      // reached the sink; a successor that merges them in another order makes the output a
      // mixture of two interleavings.
      auto it = chosen.begin();
      bool same = true;
      for (std::size_t i = 0; i < replaced.size() && same; ++i, ++it) same = it != chosen.end() && it->second == replaced[i];
      if (!same)
        return unknown("the primary of epoch " + std::to_string(epoch) + " merged " + std::to_string(replaced.size()) +
                       " inputs of " + name + " again in another order than its predecessor, whose output was not "
                       "held: two interleavings reached the output");
    }
    std::erase_if(order, [&](const Entry& e) { return now.count(e) != 0; });
    std::set<Entry> appended;
    for (const auto& [id, e] : chosen)
      if (appended.insert(e).second) order.push_back(e);
    covered = last;
  }
  if (order.empty()) return unknown("no node reported the merge order of " + name);
  c.known = true;
  for (const Entry& e : order) {
    if (!c.runs.empty()) {
      MergeRun& r = c.runs.back();
      if (r.port == e.port && r.first_input + r.count == e.input && r.count < 0xffffffffU) {
        ++r.count;
        continue;
      }
    }
    c.runs.push_back(MergeRun{e.port, e.input, 1});
  }
  return c;
}

}  // namespace

std::vector<OrderDependence> order_dependences(const Plan& plan) {
  std::vector<OrderDependence> out;
  for (const PlanFragment& f : plan.fragments) {
    if (f.kind != FragmentKind::operators) continue;
    const auto& ops = plan.spec(f.id).operators;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (make_operator(ops[i])->operator_class() != OperatorClass::arbitrary) continue;
      OrderDependence d;
      d.key = {f.id, static_cast<std::uint16_t>(i)};
      d.name = ops[i].name;
      d.streams = streams_changed_by(plan, {ops[i].name});
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::map<StreamId, std::string> unrecorded_interleavings(const Plan& plan) {
  const std::map<std::string, bool> ordered = ordered_streams(plan.topology);
  // Per stream name: the reason its content depends on an unrecorded interleaving (empty: not).
  std::map<std::string, std::string> why;
  std::size_t operators = 0;
  for (const auto& f : plan.topology.fragments) operators += f.operators.size();
  for (std::size_t pass = 0; pass <= operators; ++pass) {
    bool moved = false;
    for (const auto& f : plan.topology.fragments)
      for (const auto& op : f.operators) {
        if (!why[op.output].empty()) continue;
        std::string reason;
        for (const auto& s : op.inputs)
          if (!why[s].empty()) reason = why[s];
        if (reason.empty() && op.inputs.size() >= 2 && op.kind != OperatorKind::union_op)
          for (const auto& s : op.inputs) {
            auto it = ordered.find(s);
            if (it == ordered.end() || it->second) continue;
            reason = "'" + op.name + "' reads '" + s + "', whose timestamps go back after a Union in arrival order, "
                     "together with another input: its output depends on how its inputs interleaved on arrival, "
                     "which hapair does not record (give the Union order = \"timestamp\" to judge it)";
            break;
          }
        if (!reason.empty()) {
          why[op.output] = reason;
          moved = true;
        }
      }
    if (!moved) break;
  }
  std::map<StreamId, std::string> out;
  for (const auto& f : plan.topology.fragments)
    if (f.kind == FragmentKind::sink)
      for (const auto& s : f.sink_inputs)
        if (!why[s].empty() && plan.stream_id(s) != kNoStream) out.emplace(plan.stream_id(s), why[s]);
  return out;
}

std::vector<StreamId> order_dependent_streams(const Plan& plan) {
  std::set<std::string> arbitrary;
  for (const OrderDependence& d : order_dependences(plan)) arbitrary.insert(d.name);
  std::vector<StreamId> out = streams_changed_by(plan, arbitrary);
  for (const auto& [s, reason] : unrecorded_interleavings(plan)) out.push_back(s);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::map<MergeOrderKey, ComposedMergeOrder> compose_merge_orders(const Plan& plan,
                                                                 const std::vector<MergeOrder>& records) {
  const std::vector<OrderDependence> ops = order_dependences(plan);
  std::map<MergeOrderKey, std::map<Epoch, EpochRecords>> by_key;
  std::map<MergeOrderKey, std::uint64_t> counts;
  for (const OrderDependence& d : ops) by_key[d.key];
  for (const MergeOrder& r : records) {
    if (r.node >= plan.nodes.size()) continue;
    const MergeOrderKey key{plan.nodes[r.node].fragment, r.op_index};
    auto it = by_key.find(key);
    if (it == by_key.end()) continue;
    ++counts[key];
    EpochRecords& e = it->second[r.epoch];
    auto& group = r.acting ? e.acting : r.following ? e.following : e.independent;
    group[r.node].push_back(&r);
  }
  std::map<MergeOrderKey, ComposedMergeOrder> out;
  for (const OrderDependence& d : ops) {
    const PlanFragment& f = plan.fragments.at(d.key.first);
    const bool holds = plan.traits(f.id).holds_choices(plan.settings().determinants);
    ComposedMergeOrder c = compose_one(plan, d.name, holds, by_key.at(d.key));
    c.records = counts[d.key];
    out.emplace(d.key, std::move(c));
  }
  return out;
}

}  // namespace hapair
