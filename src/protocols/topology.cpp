#include "protocols/topology.h"

#include <array>
#include <string_view>
#include <utility>

namespace hapair {
namespace {

template <typename E, std::size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse_from(const std::array<std::pair<E, const char*>, N>& table, const std::string& s) {
  for (const auto& [e, name] : table)
    if (s == name) return e;
  return std::nullopt;
}

template <typename E, std::size_t N>
std::string allowed(const std::array<std::pair<E, const char*>, N>& table) {
  std::string out;
  for (const auto& [e, name] : table) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

constexpr std::array<std::pair<FragmentKind, const char*>, 3> kFragmentKinds{
    {{FragmentKind::source, "source"}, {FragmentKind::operators, "operators"}, {FragmentKind::sink, "sink"}}};
constexpr std::array<std::pair<OperatorClass, const char*>, 4> kOperatorClasses{
    {{OperatorClass::repeatable, "repeatable"},
     {OperatorClass::convergent_capable, "convergent-capable"},
     {OperatorClass::deterministic, "deterministic"},
     {OperatorClass::arbitrary, "arbitrary"}}};
constexpr std::array<std::pair<QueueFullPolicy, const char*>, 2> kPolicies{
    {{QueueFullPolicy::backpressure, "backpressure"}, {QueueFullPolicy::error, "error"}}};
constexpr std::array<std::pair<CheckpointMode, const char*>, 2> kCheckpointModes{
    {{CheckpointMode::full, "full"}, {CheckpointMode::delta, "delta"}}};
constexpr std::array<std::pair<FailoverMode, const char*>, 2> kFailoverModes{
    {{FailoverMode::full, "full"}, {FailoverMode::region, "region"}}};
constexpr std::array<std::pair<CheckpointAlignment, const char*>, 2> kAlignments{
    {{CheckpointAlignment::aligned, "aligned"}, {CheckpointAlignment::unaligned, "unaligned"}}};
constexpr std::array<std::pair<Field, const char*>, 2> kFields{{{Field::key, "key"}, {Field::value, "value"}}};
constexpr std::array<std::pair<CompareOp, const char*>, 6> kCompareOps{{{CompareOp::lt, "<"},
                                                                        {CompareOp::le, "<="},
                                                                        {CompareOp::gt, ">"},
                                                                        {CompareOp::ge, ">="},
                                                                        {CompareOp::eq, "=="},
                                                                        {CompareOp::ne, "!="}}};
constexpr std::array<std::pair<AggregateFunction, const char*>, 5> kFunctions{{{AggregateFunction::count, "count"},
                                                                              {AggregateFunction::sum, "sum"},
                                                                              {AggregateFunction::avg, "avg"},
                                                                              {AggregateFunction::min, "min"},
                                                                              {AggregateFunction::max, "max"}}};
constexpr std::array<std::pair<JoinCombine, const char*>, 4> kCombines{{{JoinCombine::sum, "sum"},
                                                                        {JoinCombine::left, "left"},
                                                                        {JoinCombine::right, "right"},
                                                                        {JoinCombine::product, "product"}}};
constexpr std::array<std::pair<DistributionKind, const char*>, 3> kDistributions{
    {{DistributionKind::uniform, "uniform"},
     {DistributionKind::normal, "normal"},
     {DistributionKind::exponential, "exponential"}}};
constexpr std::array<std::pair<TrimmingRule, const char*>, 2> kTrimmingRules{
    {{TrimmingRule::exact, "exact"}, {TrimmingRule::conservative, "conservative"}}};
constexpr std::array<std::pair<DetectorKind, const char*>, 2> kDetectors{
    {{DetectorKind::heartbeat, "heartbeat"}, {DetectorKind::connection_heartbeat, "connection+heartbeat"}}};
constexpr std::array<std::pair<TraceLevel, const char*>, 2> kTraceLevels{
    {{TraceLevel::control, "control"}, {TraceLevel::data, "data"}}};
constexpr std::array<std::pair<UnionOrder, const char*>, 2> kUnionOrders{
    {{UnionOrder::arrival, "arrival"}, {UnionOrder::timestamp, "timestamp"}}};
constexpr std::array<std::pair<SourceGeneratorKind, const char*>, 3> kGenerators{
    {{SourceGeneratorKind::uniform, "uniform"}, {SourceGeneratorKind::nexmark, "nexmark"}, {SourceGeneratorKind::ysb, "ysb"}}};
constexpr std::array<std::pair<NexmarkEvent, const char*>, 3> kNexmarkEvents{
    {{NexmarkEvent::person, "person"}, {NexmarkEvent::auction, "auction"}, {NexmarkEvent::bid, "bid"}}};

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

const char* to_string(FragmentKind v) { return name_of(kFragmentKinds, v); }
const char* to_string(OperatorClass v) { return name_of(kOperatorClasses, v); }
const char* to_string(QueueFullPolicy v) { return name_of(kPolicies, v); }
const char* to_string(CheckpointMode v) { return name_of(kCheckpointModes, v); }
const char* to_string(FailoverMode v) { return name_of(kFailoverModes, v); }
const char* to_string(CheckpointAlignment v) { return name_of(kAlignments, v); }
const char* to_string(Field v) { return name_of(kFields, v); }
const char* to_string(CompareOp v) { return name_of(kCompareOps, v); }
const char* to_string(AggregateFunction v) { return name_of(kFunctions, v); }
const char* to_string(JoinCombine v) { return name_of(kCombines, v); }
const char* to_string(DistributionKind v) { return name_of(kDistributions, v); }
const char* to_string(TrimmingRule v) { return name_of(kTrimmingRules, v); }
const char* to_string(DetectorKind v) { return name_of(kDetectors, v); }
const char* to_string(TraceLevel v) { return name_of(kTraceLevels, v); }
const char* to_string(UnionOrder v) { return name_of(kUnionOrders, v); }
const char* to_string(SourceGeneratorKind v) { return name_of(kGenerators, v); }
const char* to_string(NexmarkEvent v) { return name_of(kNexmarkEvents, v); }

std::optional<QueueFullPolicy> parse_queue_full_policy(const std::string& s) { return parse_from(kPolicies, s); }
std::optional<CheckpointMode> parse_checkpoint_mode(const std::string& s) { return parse_from(kCheckpointModes, s); }
std::optional<FailoverMode> parse_failover_mode(const std::string& s) { return parse_from(kFailoverModes, s); }
std::optional<CheckpointAlignment> parse_checkpoint_alignment(const std::string& s) { return parse_from(kAlignments, s); }
std::optional<Field> parse_field(const std::string& s) { return parse_from(kFields, s); }
std::optional<CompareOp> parse_compare_op(const std::string& s) { return parse_from(kCompareOps, s); }
std::optional<AggregateFunction> parse_aggregate_function(const std::string& s) { return parse_from(kFunctions, s); }
std::optional<JoinCombine> parse_join_combine(const std::string& s) { return parse_from(kCombines, s); }
std::optional<DistributionKind> parse_distribution_kind(const std::string& s) { return parse_from(kDistributions, s); }
std::optional<TrimmingRule> parse_trimming_rule(const std::string& s) { return parse_from(kTrimmingRules, s); }
std::optional<DetectorKind> parse_detector_kind(const std::string& s) { return parse_from(kDetectors, s); }
std::optional<TraceLevel> parse_trace_level(const std::string& s) { return parse_from(kTraceLevels, s); }
std::optional<UnionOrder> parse_union_order(const std::string& s) { return parse_from(kUnionOrders, s); }
std::optional<SourceGeneratorKind> parse_source_generator_kind(const std::string& s) { return parse_from(kGenerators, s); }
std::optional<NexmarkEvent> parse_nexmark_event(const std::string& s) { return parse_from(kNexmarkEvents, s); }
std::string allowed_queue_full_policies() { return allowed(kPolicies); }
std::string allowed_checkpoint_modes() { return allowed(kCheckpointModes); }
std::string allowed_failover_modes() { return allowed(kFailoverModes); }
std::string allowed_checkpoint_alignments() { return allowed(kAlignments); }
std::string allowed_fields() { return allowed(kFields); }
std::string allowed_compare_ops() { return allowed(kCompareOps); }
std::string allowed_aggregate_functions() { return allowed(kFunctions); }
std::string allowed_join_combines() { return allowed(kCombines); }
std::string allowed_distribution_kinds() { return allowed(kDistributions); }
std::string allowed_trimming_rules() { return allowed(kTrimmingRules); }
std::string allowed_detector_kinds() { return allowed(kDetectors); }
std::string allowed_trace_levels() { return allowed(kTraceLevels); }
std::string allowed_union_orders() { return allowed(kUnionOrders); }
std::string allowed_source_generator_kinds() { return allowed(kGenerators); }
std::string allowed_nexmark_events() { return allowed(kNexmarkEvents); }

// The names are those of Beam's Person, Auction and Bid fields (snake case) and of YSB's JSON
// event keys without "_id"; operators/nexmark.h and operators/ysb.h compute them.
const std::vector<std::string>& nexmark_field_names(NexmarkEvent e) {
  static const std::vector<std::string> person{"id", "state", "city", "name"};
  static const std::vector<std::string> auction{"id", "seller", "category", "initial_bid", "reserve", "expires"};
  static const std::vector<std::string> bid{"auction", "bidder", "price"};
  switch (e) {
    case NexmarkEvent::person: return person;
    case NexmarkEvent::auction: return auction;
    case NexmarkEvent::bid: return bid;
  }
  return bid;
}
const std::vector<std::string>& ysb_field_names() {
  static const std::vector<std::string> names{"ad", "campaign", "event_type", "ad_type", "user", "page"};
  return names;
}
std::string allowed_nexmark_fields(NexmarkEvent e) { return join_names(nexmark_field_names(e)); }
std::string allowed_ysb_fields() { return join_names(ysb_field_names()); }
std::pair<std::string, std::string> nexmark_default_fields(NexmarkEvent e) {
  switch (e) {
    case NexmarkEvent::person: return {"id", "state"};
    case NexmarkEvent::auction: return {"id", "seller"};
    case NexmarkEvent::bid: return {"auction", "price"};
  }
  return {"auction", "price"};
}

double source_rate_setting(const SourceSpec& s) {
  return s.generator == SourceGeneratorKind::nexmark ? s.nexmark.events_per_s : s.rate_tps;
}
void set_source_rate_setting(SourceSpec& s, double rate) {
  if (s.generator == SourceGeneratorKind::nexmark)
    s.nexmark.events_per_s = rate;
  else
    s.rate_tps = rate;
}

Topology default_topology() {
  Topology t;
  t.name = "default";

  FragmentSpec source;
  source.name = "source";
  source.kind = FragmentKind::source;
  source.source.stream = "raw";
  source.source.rate_tps = 2000.0;
  source.source.key_count = 8;
  source.source.values = {DistributionKind::uniform, 0.0, 100.0};
  source.where = "built-in default";

  FragmentSpec filter;
  filter.name = "filter";
  filter.where = "built-in default";
  OperatorSpec keep;
  keep.name = "keep_small";
  keep.kind = OperatorKind::filter;
  keep.inputs = {"raw"};
  keep.output = "small";
  keep.filter_field = Field::value;
  keep.filter_op = CompareOp::lt;
  keep.filter_constant = 80.0;
  keep.where = "built-in default";
  filter.operators.push_back(keep);

  FragmentSpec aggregate;
  aggregate.name = "aggregate";
  aggregate.where = "built-in default";
  OperatorSpec sum;
  sum.name = "sum_per_key";
  sum.kind = OperatorKind::aggregate;
  sum.inputs = {"small"};
  sum.output = "totals";
  sum.function = AggregateFunction::sum;
  sum.window_ms = 200;
  sum.slide_ms = 20;
  sum.group_by_key = true;
  sum.where = "built-in default";
  aggregate.operators.push_back(sum);

  FragmentSpec sink;
  sink.name = "sink";
  sink.kind = FragmentKind::sink;
  sink.sink_inputs = {"totals"};
  sink.where = "built-in default";

  t.fragments = {source, filter, aggregate, sink};
  return t;
}

void apply_link_override(LinkSettings& settings, const LinkOverride& o) {
  if (o.latency_ms) settings.latency_ms = *o.latency_ms;
  if (o.jitter_ms) settings.jitter_ms = *o.jitter_ms;
  if (o.loss_ratio) settings.loss_ratio = *o.loss_ratio;
  if (o.duplication_ratio) settings.duplication_ratio = *o.duplication_ratio;
  if (o.bandwidth_bytes_per_s) settings.bandwidth_bytes_per_s = *o.bandwidth_bytes_per_s;
  if (o.queue_messages_max) settings.queue_messages_max = *o.queue_messages_max;
  if (o.queue_bytes_max) settings.queue_bytes_max = *o.queue_bytes_max;
}

}  // namespace hapair
