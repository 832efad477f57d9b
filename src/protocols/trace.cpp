#include "protocols/trace.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "protocols/check.h"

namespace hapair {

namespace {

constexpr const char* kKindNames[] = {
    "start",           "role",          "end_of_output",     "fatal",
    "exited",          "failure",       "resume",            "restart",
    "heal",            "batch_sent",    "batch_received",    "duplicates_dropped",
    "level0_ack",      "level1_ack",    "trimmed",           "checkpoint",
    "checkpoint_covers", "checkpoint_acked", "checkpoint_installed", "checkpoint_rejected",
    "checkpoint_retry", "bootstrap_installed", "heartbeat_missed", "standby_suspected",
    "standby_heard",   "standby_lost",  "standby_restarted", "detection",
    "takeover",        "route_change",  "fenced",            "claim_renewed",
    "claim_deferred",
    "rebased",         "replay_request", "replay_start",     "replay_end",
    "replay_gap",      "held_output_released", "backpressure", "rejoin_requested",
    "rejoin_accepted", "rejoined",      "pair_restored",    "hybrid_switch",
    "candidacy",       "elected",       "follows",
    "checkpoint_triggered", "checkpoint_snapshot", "checkpoint_completed", "checkpoint_abandoned",
    "checkpoint_rollback", "checkpoint_restore", "approach_switch"};
static_assert(std::size(kKindNames) == kTraceKindCount);

struct KeyInfo {
  const char* name;
  TraceValueType type;
};
constexpr KeyInfo kKeys[] = {
    {"peer", TraceValueType::node},          {"failed", TraceValueType::node},
    {"standby", TraceValueType::node},       {"partner", TraceValueType::node},
    {"fragment_primary", TraceValueType::node}, {"over", TraceValueType::node},
    {"stream", TraceValueType::stream},      {"first_id", TraceValueType::number},
    {"last_id", TraceValueType::number},     {"after_id", TraceValueType::number},
    {"position", TraceValueType::number},    {"count", TraceValueType::number},
    {"duplicates", TraceValueType::number},  {"bytes", TraceValueType::number},
    {"chunks", TraceValueType::number},      {"checkpoint", TraceValueType::number},
    {"epoch", TraceValueType::number},       {"generation", TraceValueType::number},
    {"incarnation", TraceValueType::number}, {"silent_us", TraceValueType::number},
    {"duration_us", TraceValueType::number}, {"detector", TraceValueType::detector},
    {"fault", TraceValueType::fault},        {"role", TraceValueType::role},
    {"ha", TraceValueType::ha},              {"mode", TraceValueType::mode},
    {"reason", TraceValueType::reason},      {"replay", TraceValueType::flag},
    {"exact_ids", TraceValueType::flag},     {"claim_lost", TraceValueType::flag},
    {"determinants", TraceValueType::flag},  {"from_ha", TraceValueType::ha}};
static_assert(std::size(kKeys) == kTraceKeyCount);

}  // namespace

const char* to_string(Role r) {
  switch (r) {
    case Role::primary: return "primary";
    case Role::spare: return "spare";
    case Role::passive_backup: return "passive_backup";
    case Role::active_backup: return "active_backup";
    case Role::fenced: return "fenced";
    case Role::rejoining: return "rejoining";
    case Role::coordinator: return "coordinator";
  }
  return "?";
}

const char* to_string(TraceKind k) {
  const auto i = static_cast<std::size_t>(k);
  return i < kTraceKindCount ? kKindNames[i] : "?";
}

std::optional<TraceKind> trace_kind_from(const std::string& name) {
  for (std::size_t i = 0; i < kTraceKindCount; ++i)
    if (name == kKindNames[i]) return static_cast<TraceKind>(i);
  return std::nullopt;
}

bool is_data_plane(TraceKind k) {
  switch (k) {
    case TraceKind::batch_sent:
    case TraceKind::batch_received:
    case TraceKind::duplicates_dropped:
    case TraceKind::level0_ack:
    case TraceKind::level1_ack:
    case TraceKind::trimmed: return true;
    default: return false;
  }
}

const char* to_string(TraceKey k) {
  const auto i = static_cast<std::size_t>(k);
  return i < kTraceKeyCount ? kKeys[i].name : "?";
}

std::optional<TraceKey> trace_key_from(const std::string& name) {
  for (std::size_t i = 0; i < kTraceKeyCount; ++i)
    if (name == kKeys[i].name) return static_cast<TraceKey>(i);
  return std::nullopt;
}

TraceValueType trace_key_type(TraceKey k) {
  const auto i = static_cast<std::size_t>(k);
  HAPAIR_CHECK_MSG(i < kTraceKeyCount, "trace key " << i);
  return kKeys[i].type;
}

const char* to_string(TraceReason r) {
  switch (r) {
    case TraceReason::corrupt: return "corrupt";
    case TraceReason::does_not_apply: return "does_not_apply";
    case TraceReason::queue_full: return "queue_full";
    case TraceReason::stalled: return "stalled";
    case TraceReason::input_queue: return "input_queue";
    case TraceReason::command: return "command";
    case TraceReason::calm: return "calm";
    case TraceReason::latency: return "latency";
  }
  return "?";
}

TraceEvent& TraceEvent::add(TraceKey key, std::int64_t value) {
  HAPAIR_CHECK_MSG(static_cast<std::size_t>(key) < kTraceKeyCount, "trace key " << static_cast<int>(key));
  HAPAIR_CHECK_MSG(!has(key), "trace " << to_string(kind) << ": detail " << to_string(key) << " twice");
  HAPAIR_CHECK_MSG(detail_count < kTraceDetailsMax,
                   "trace " << to_string(kind) << ": more than " << kTraceDetailsMax << " details");
  details[detail_count++] = TraceDetail{key, value};
  return *this;
}

std::optional<std::int64_t> TraceEvent::get(TraceKey key) const {
  for (std::size_t i = 0; i < detail_count; ++i)
    if (details[i].key == key) return details[i].value;
  return std::nullopt;
}

NodeId TraceEvent::node_of(TraceKey key) const {
  const auto v = get(key);
  return v && *v >= 0 && *v < kNoNode ? static_cast<NodeId>(*v) : kNoNode;
}

StreamId TraceEvent::stream() const {
  const auto v = get(TraceKey::stream);
  return v && *v >= 0 && *v < kNoStream ? static_cast<StreamId>(*v) : kNoStream;
}

TupleId TraceEvent::id_of(TraceKey key) const {
  const auto v = get(key);
  return v ? static_cast<TupleId>(*v) : 0;
}

bool operator==(const TraceEvent& a, const TraceEvent& b) {
  return a.at_us == b.at_us && a.node == b.node && a.kind == b.kind && a.detail_count == b.detail_count &&
         std::equal(a.details.begin(), a.details.begin() + a.detail_count, b.details.begin()) && a.text == b.text;
}

}  // namespace hapair
