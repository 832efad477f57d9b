#include "judge/reference.h"

#include <memory>
#include <set>
#include <tuple>

#include "operators/fragment.h"
#include "operators/operator.h"
#include "operators/source_generator.h"
#include "protocols/check.h"

namespace hapair {

namespace {

// Pushes tuples and end-of-stream through the fragments depth-first. Recursion depth is bounded
// by the longest fragment chain of the (acyclic) plan.
class ReferenceNetwork {
 public:
  ReferenceNetwork(const Plan& plan, const MergeOrders& merge_orders)
      : plan_(plan), fragments_(plan.fragments.size()), fragment_tuples_(plan.fragments.size(), 0) {
    for (const PlanFragment& f : plan.fragments) {
      if (f.kind == FragmentKind::operators) fragments_[f.id] = std::make_unique<Fragment>(plan, f.id);
    }
    for (const auto& [key, runs] : merge_orders) {
      const auto [fragment, op] = key;
      HAPAIR_CHECK_MSG(fragment < fragments_.size() && fragments_[fragment] != nullptr,
                       "merge order for fragment " << fragment << ", which runs no operators");
      HAPAIR_CHECK_MSG(fragments_[fragment]->replay_merge_order(op, runs),
                       "merge order for operator " << op << " of fragment " << plan.fragments[fragment].name
                                                   << ", which is not a non-deterministic operator");
    }
  }

  std::uint64_t unmatched_merge_runs() const {
    std::uint64_t n = 0;
    for (const auto& f : fragments_)
      if (f) n += f->unmatched_merge_runs();
    return n;
  }

  void push(StreamId stream, const Tuple& t) {
    for (FragmentId c : consumers(stream)) {
      const PlanFragment& f = plan_.fragments.at(c);
      if (f.kind == FragmentKind::sink) {
        deliveries_.push_back(Delivery{t.ts_us, stream, t});
      } else if (f.kind == FragmentKind::operators) {
        FragmentOutputs out;
        ++fragment_tuples_.at(c);
        fragments_.at(c)->process(stream, t, out);
        for (const FragmentOutput& o : out) push(o.stream, o.tuple);
      }
    }
  }

  void end_stream(StreamId stream) {
    if (!ended_.insert(stream).second) return;
    for (FragmentId c : consumers(stream)) {
      if (plan_.fragments.at(c).kind != FragmentKind::operators) continue;
      Fragment& fragment = *fragments_.at(c);
      FragmentOutputs out;
      fragment.end_of_stream(stream, out);
      for (const FragmentOutput& o : out) push(o.stream, o.tuple);
      for (StreamId s : fragment.outputs()) {
        if (fragment.output_ended(s)) end_stream(s);
      }
    }
  }

  void check_finished() const {
    for (const PlanFragment& f : plan_.fragments) {
      if (f.kind != FragmentKind::operators) continue;
      HAPAIR_CHECK_MSG(fragments_.at(f.id)->has_finished(),
                       "fragment " << f.name << " has not finished after end-of-stream on every source");
    }
  }

  std::vector<Delivery> take_deliveries() { return std::move(deliveries_); }
  const std::vector<std::uint64_t>& fragment_tuples() const { return fragment_tuples_; }

 private:
  const std::vector<FragmentId>& consumers(StreamId stream) const {
    HAPAIR_CHECK_MSG(stream < plan_.streams.size(), "stream=" << stream << " streams=" << plan_.streams.size());
    return plan_.streams[stream].consumers;
  }

  const Plan& plan_;
  std::vector<std::unique_ptr<Fragment>> fragments_;  // by fragment id; null for sources, sinks
  std::set<StreamId> ended_;
  std::vector<Delivery> deliveries_;
  std::vector<std::uint64_t> fragment_tuples_;  // by fragment id
};

struct SourceCursor {
  FragmentId fragment = kNoFragment;
  StreamId stream = kNoStream;
  const SourceSpec* spec = nullptr;
  TupleId next = 1;
  TupleId count = 0;
  Tuple head;  // tuple `next`, valid while next <= count
};

}  // namespace

ReferenceRun reference_run(const Plan& plan) { return reference_run(plan, MergeOrders{}); }

ReferenceRun reference_run(const Plan& plan, const MergeOrders& merge_orders) {
  const std::uint64_t seed = plan.settings().seed;
  const double duration_s = plan.settings().duration_s;

  std::vector<SourceCursor> sources;  // in fragment order
  for (const PlanFragment& f : plan.fragments) {
    if (f.kind != FragmentKind::source) continue;
    SourceCursor c;
    c.fragment = f.id;
    c.spec = &plan.spec(f.id).source;
    c.stream = plan.stream_id(c.spec->stream);
    HAPAIR_CHECK_MSG(c.stream != kNoStream, "source " << f.name << " stream " << c.spec->stream << " not in plan");
    c.count = source_tuple_count(*c.spec, duration_s);
    if (c.count >= 1) c.head = source_tuple(*c.spec, seed, 1);
    sources.push_back(c);
  }

  ReferenceNetwork network(plan, merge_orders);
  ReferenceRun run;
  // Merge by (ts, source fragment index, id): each step takes the smallest head. Sources are few,
  // so a linear scan per tuple is cheaper than a heap and obviously deterministic.
  for (;;) {
    SourceCursor* best = nullptr;
    for (SourceCursor& c : sources) {
      if (c.next > c.count) continue;
      if (best == nullptr || std::tuple(c.head.ts_us, c.fragment, c.next) <
                                 std::tuple(best->head.ts_us, best->fragment, best->next)) {
        best = &c;
      }
    }
    if (best == nullptr) break;
    network.push(best->stream, best->head);
    ++run.input_tuples;
    ++best->next;
    if (best->next <= best->count) best->head = source_tuple(*best->spec, seed, best->next);
  }
  for (const SourceCursor& c : sources) network.end_stream(c.stream);
  network.check_finished();
  run.unmatched_merge_runs = network.unmatched_merge_runs();
  run.deliveries = network.take_deliveries();
  run.fragment_tuples = network.fragment_tuples();
  return run;
}

std::vector<Delivery> reference_output(const Plan& plan) { return reference_run(plan).deliveries; }

std::vector<std::string> arbitrary_operators(const Plan& plan) {
  std::vector<std::string> names;
  for (const PlanFragment& f : plan.fragments) {
    if (f.kind != FragmentKind::operators) continue;
    for (const OperatorSpec& spec : plan.spec(f.id).operators) {
      if (make_operator(spec)->operator_class() == OperatorClass::arbitrary) names.push_back(spec.name);
    }
  }
  return names;
}

}  // namespace hapair
