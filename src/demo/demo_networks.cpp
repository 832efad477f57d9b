#include "demo/demo_networks.h"

namespace hapair {

namespace {

FragmentSpec source(const std::string& name, const std::string& stream, double rate_tps, DistributionKind d,
                    double a, double b) {
  FragmentSpec f;
  f.name = name;
  f.kind = FragmentKind::source;
  f.source.stream = stream;
  f.source.rate_tps = rate_tps;
  f.source.key_count = 4;
  f.source.values = {d, a, b};
  f.where = "demo network";
  return f;
}

FragmentSpec sink(const std::string& input) {
  FragmentSpec f;
  f.name = "sink";
  f.kind = FragmentKind::sink;
  f.sink_inputs = {input};
  f.where = "demo network";
  return f;
}

FragmentSpec fragment(const std::string& name, std::vector<OperatorSpec> ops) {
  FragmentSpec f;
  f.name = name;
  for (auto& op : ops) op.where = "demo network";
  f.operators = std::move(ops);
  f.where = "demo network";
  return f;
}

OperatorSpec filter(const std::string& name, const std::string& in, const std::string& out, double below) {
  OperatorSpec op;
  op.name = name;
  op.kind = OperatorKind::filter;
  op.inputs = {in};
  op.output = out;
  op.filter_field = Field::value;
  op.filter_op = CompareOp::lt;
  op.filter_constant = below;
  return op;
}

OperatorSpec sum_per_key(const std::string& name, const std::string& in, const std::string& out, std::int64_t window_ms,
                         std::int64_t slide_ms) {
  OperatorSpec op;
  op.name = name;
  op.kind = OperatorKind::aggregate;
  op.inputs = {in};
  op.output = out;
  op.function = AggregateFunction::sum;
  op.window_ms = window_ms;
  op.slide_ms = slide_ms;
  op.group_by_key = true;
  return op;
}

}  // namespace

const std::vector<DemoNetwork>& demo_networks() {
  static const std::vector<DemoNetwork> networks = {
      {"default", "filter, then a windowed sum",
       "source -> filter (value < 80) -> aggregate (sum per key over 200 ms windows, every 100 ms) -> sink: a "
       "stateless operator, then a stateful one whose windows must survive a crash"},
      {"chain", "a longer chain",
       "source -> filter -> map -> aggregate -> sink, one server each: more hops to replay from under upstream backup"},
      {"union", "two sources merged",
       "two sources -> merge (Union, in arrival order: non-deterministic) -> filter -> sink: active standby ships "
       "the merge order to its backup as determinants"},
  };
  return networks;
}

std::optional<Topology> demo_topology(const std::string& name, HaMode ha, std::uint64_t seed, double duration_s) {
  Topology t;
  t.name = name;
  if (name == "default") {
    t.fragments = {source("source", "raw", 400, DistributionKind::uniform, 0, 100),
                   fragment("filter", {filter("keep_small", "raw", "small", 80)}),
                   fragment("aggregate", {sum_per_key("sum_per_key", "small", "totals", 200, 100)}), sink("totals")};
  } else if (name == "chain") {
    OperatorSpec scale;
    scale.name = "scale";
    scale.kind = OperatorKind::map;
    scale.inputs = {"small"};
    scale.output = "scaled";
    scale.map_scale = 2.0;
    t.fragments = {source("source", "raw", 400, DistributionKind::uniform, 0, 100),
                   fragment("filter", {filter("keep_small", "raw", "small", 80)}), fragment("map", {scale}),
                   fragment("aggregate", {sum_per_key("sum_per_key", "scaled", "totals", 200, 100)}), sink("totals")};
  } else if (name == "union") {
    OperatorSpec merge;
    merge.name = "merge_both";
    merge.kind = OperatorKind::union_op;
    merge.inputs = {"s1", "s2"};
    merge.output = "merged";
    t.fragments = {source("s1", "s1", 200, DistributionKind::uniform, 0, 100),
                   source("s2", "s2", 200, DistributionKind::normal, 50, 15), fragment("merge", {merge}),
                   fragment("filter", {filter("keep_small", "merged", "kept", 50)}), sink("kept")};
  } else {
    return std::nullopt;
  }
  t.settings.ha = ha;
  t.settings.seed = seed;
  t.settings.duration_s = duration_s;
  t.settings.trace_level = TraceLevel::data;
  // Batches of at most 10 tuples, sent within 10 ms: few enough packets to follow one by one.
  t.settings.batch_tuples = 10;
  t.settings.batch_flush_ms = 10;
  t.settings.drain_quiet_s = 2.0;
  // Links of 5 ms: at a hundredth of real time a message is half a second on its way, long
  // enough to see it travel (the protocol is the same at 0.1 ms; only the pictures change).
  t.sim.link_latency_ms = 5.0;
  t.sim.link_jitter_ms = 0.5;
  t.settings.drain_timeout_s = 5.0;
  return t;
}

}  // namespace hapair
