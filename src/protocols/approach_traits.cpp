// The traits table: one record per built-in approach (approach_traits.h). Adding an approach to
// the repository is a folder for its two ends, its line in src/node/approaches.cpp and its record
// here (docs/ARCHITECTURE.md, "How to add an approach").
#include "protocols/approach_traits.h"

#include <algorithm>

#include "protocols/check.h"
#include "protocols/topology.h"

namespace hapair {

namespace {

using R = RecoveryType;

ApproachTraits no_ha() {
  ApproachTraits t;
  t.mode = HaMode::none;
  t.name = "none";
  t.title = "ha none";
  t.baseline = true;
  return t;
}

ApproachTraits amnesia() {
  ApproachTraits t;
  t.mode = HaMode::amnesia;
  t.name = "amnesia";
  t.title = "amnesia";
  t.standbys = 1;
  t.standbys_max = 1;
  t.standby_suffix = ".spare";
  t.standby_role = Role::spare;
  t.promise = {R::gap, R::gap, R::gap};
  return t;
}

ApproachTraits upstream_backup() {
  ApproachTraits t;
  t.mode = HaMode::upstream;
  t.name = "upstream";
  t.title = "upstream backup";
  t.standbys = 1;
  t.standbys_max = 1;
  t.standby_suffix = ".spare";
  t.standby_role = Role::spare;
  t.consumers_retain = true;
  t.recovers_from_restart_points = true;
  t.conservative_trimming_rebases_ids = true;
  t.promise = {R::precise, R::rollback, R::rollback};
  t.settings = {"trimming"};
  t.variants = {{"upstream_exact", [](Settings& s) { s.trimming = TrimmingRule::exact; }},
                {"upstream_conservative", [](Settings& s) { s.trimming = TrimmingRule::conservative; }}};
  return t;
}

ApproachTraits passive_standby() {
  ApproachTraits t;
  t.mode = HaMode::passive;
  t.name = "passive";
  t.title = "passive standby";
  t.standbys = 1;
  t.standbys_max = kStandbysMax;
  t.standby_suffix = ".backup";
  t.standby_role = Role::passive_backup;
  t.standby_holds_state = true;
  t.consumers_retain = true;
  t.output_waits_for_choices = ChoicesHeld::always;
  t.promise = {R::precise, R::precise, R::precise};
  t.settings = {"checkpoint_interval_ms", "checkpoint_mode"};
  t.messages = {"checkpoint", "checkpoint_ack"};
  return t;
}

ApproachTraits active_standby() {
  ApproachTraits t;
  t.mode = HaMode::active;
  t.name = "active";
  t.title = "active standby";
  t.standbys = 1;
  t.standbys_max = kStandbysMax;
  t.standby_suffix = ".backup";
  t.standby_role = Role::active_backup;
  t.standby_processes_input = true;
  t.standby_holds_state = true;
  t.output_waits_for_choices = ChoicesHeld::with_determinants;
  t.promise = {R::precise, R::precise, R::rollback};
  t.settings = {"determinants"};
  // Determinants while both run; a checkpoint (and its ack) when a rejoined standby is bootstrapped.
  t.messages = {"determinants", "determinant_ack", "checkpoint", "checkpoint_ack"};
  t.variants = {{"active_nodet", [](Settings& s) { s.determinants = false; }}};
  return t;
}

// Hybrid standby (src/hybrid): passive standby while all is well; on a trigger (the primary
// stalled, its input queue long, an explicit command) the standby is bootstrapped from a full
// checkpoint plus redirected input and runs as an active standby, back to passive after a calm
// period. Producers send it input only while it is active (by Redirect, not by these traits).
ApproachTraits hybrid_standby() {
  ApproachTraits t;
  t.mode = HaMode::hybrid;
  t.name = "hybrid";
  t.title = "hybrid standby";
  t.standbys = 1;
  t.standbys_max = kStandbysMax;
  t.standby_suffix = ".backup";
  t.standby_role = Role::passive_backup;
  t.standby_processes_input_when_switched = true;
  t.standby_holds_state = true;
  t.consumers_retain = true;
  t.output_waits_for_choices = ChoicesHeld::always;
  t.promise = {R::precise, R::precise, R::precise};
  t.settings = {"checkpoint_interval_ms", "checkpoint_mode", "hybrid_stall_ms", "hybrid_input_queue_tuples", "hybrid_latency_ms",
                "hybrid_calm_ms", "hybrid_switch_at_ms"};
  t.messages = {"checkpoint", "checkpoint_ack"};
  return t;
}

// Global checkpoints (src/checkpoint, docs/CHECKPOINT.md; Flink's asynchronous barrier
// snapshots): no standby process that holds or processes anything, a spare per fragment that
// takes over from the coordinator's store, and a coordinator node. Producers keep output for
// its consumers until a completed checkpoint covers it (level-1 acks come only then). An
// arbitrary fragment's output waits for a completed checkpoint (as a transactional sink's
// would), so a regenerated interleaving never differs from a delivered one: precise everywhere.
ApproachTraits global_checkpoints() {
  ApproachTraits t;
  t.mode = HaMode::checkpoint;
  t.name = "checkpoint";
  t.title = "global checkpoints";
  t.standbys = 1;
  t.standbys_max = 1;
  t.standby_suffix = ".spare";
  t.standby_role = Role::spare;
  t.coordinator = true;
  t.consumers_retain = true;
  t.output_waits_for_choices = ChoicesHeld::always;
  t.promise = {R::precise, R::precise, R::precise};
  t.settings = {"checkpoint_interval_ms", "checkpoints_retained", "failover", "checkpoint_alignment", "local_recovery"};
  t.messages = {"checkpoint",          "checkpoint_trigger", "checkpoint_barrier",
                "checkpoint_complete", "rollback",           "restored"};
  return t;
}

ApproachCatalog make_builtin_approaches() {
  ApproachCatalog c;
  for (ApproachTraits t : {no_ha(), amnesia(), upstream_backup(), passive_standby(), active_standby(), hybrid_standby(),
                           global_checkpoints()})
    c = c.with(std::move(t));
  return c;
}

}  // namespace

const char* to_string(RecoveryType r) {
  switch (r) {
    case RecoveryType::nothing: return "nothing";
    case RecoveryType::gap: return "gap";
    case RecoveryType::rollback: return "rollback";
    case RecoveryType::precise: return "precise";
  }
  return "?";
}

bool ApproachTraits::reads_setting(std::string_view setting) const {
  return std::find(settings.begin(), settings.end(), setting) != settings.end();
}

bool ApproachTraits::exchanges(std::string_view message_kind) const {
  return std::find(messages.begin(), messages.end(), message_kind) != messages.end();
}

const ApproachCatalog& ApproachCatalog::builtin() {
  static const ApproachCatalog catalog = make_builtin_approaches();
  return catalog;
}

ApproachCatalog ApproachCatalog::with(ApproachTraits extra) const {
  HAPAIR_CHECK_MSG(find(extra.mode) == nullptr, "approach mode " << static_cast<int>(extra.mode) << " registered twice");
  HAPAIR_CHECK_MSG(!extra.name.empty() && find(extra.name) == nullptr, "approach name '" << extra.name << "' empty or registered twice");
  HAPAIR_CHECK_MSG(extra.has_standby() == !extra.standby_suffix.empty(),
                   "approach " << extra.name << ": a standby needs a name suffix, and only a standby has one");
  HAPAIR_CHECK_MSG(!extra.baseline || (!extra.has_standby() && extra.promise == Promise{}),
                   "approach " << extra.name << ": the baseline has no standby and promises nothing");
  HAPAIR_CHECK_MSG((!extra.standby_processes_input && !extra.standby_processes_input_when_switched) || extra.has_standby(),
                   "approach " << extra.name << ": a standby that processes input needs a standby");
  for (const ApproachTraits& t : traits_)
    HAPAIR_CHECK_MSG(t.standby_suffix != extra.standby_suffix || t.standby_holds_state == extra.standby_holds_state,
                     "approaches " << t.name << " and " << extra.name << " share the standby suffix '" << extra.standby_suffix
                                   << "' but not what their standby holds");
  ApproachCatalog c = *this;
  c.traits_.push_back(std::move(extra));
  return c;
}

const ApproachTraits* ApproachCatalog::find(HaMode mode) const {
  for (const ApproachTraits& t : traits_)
    if (t.mode == mode) return &t;
  return nullptr;
}

const ApproachTraits* ApproachCatalog::find(std::string_view name) const {
  for (const ApproachTraits& t : traits_)
    if (t.name == name) return &t;
  return nullptr;
}

const ApproachTraits& ApproachCatalog::of(HaMode mode) const {
  const ApproachTraits* t = find(mode);
  HAPAIR_CHECK_MSG(t != nullptr, "no approach with mode " << static_cast<int>(mode) << " in the catalog (" << names() << ")");
  return *t;
}

std::vector<HaMode> ApproachCatalog::modes() const {
  std::vector<HaMode> out;
  for (const ApproachTraits& t : traits_) out.push_back(t.mode);
  return out;
}

std::vector<HaMode> ApproachCatalog::precise_modes() const {
  std::vector<HaMode> out;
  for (const ApproachTraits& t : traits_)
    if (t.promise.deterministic_network == RecoveryType::precise) out.push_back(t.mode);
  return out;
}

HaMode ApproachCatalog::baseline() const {
  const ApproachTraits* found = nullptr;
  for (const ApproachTraits& t : traits_) {
    if (!t.baseline) continue;
    HAPAIR_CHECK_MSG(found == nullptr, "two baselines: " << found->name << " and " << t.name);
    found = &t;
  }
  HAPAIR_CHECK_MSG(found != nullptr, "no baseline approach in the catalog (" << names() << ")");
  return found->mode;
}

std::string ApproachCatalog::names() const {
  std::string out;
  for (const ApproachTraits& t : traits_) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

const ApproachVariant* ApproachCatalog::variant(std::string_view label, HaMode* mode) const {
  for (const ApproachTraits& t : traits_)
    for (const ApproachVariant& v : t.variants)
      if (v.label == label) {
        *mode = t.mode;
        return &v;
      }
  return nullptr;
}

const char* to_string(HaMode mode) {
  const ApproachTraits* t = ApproachCatalog::builtin().find(mode);
  return t != nullptr ? t->name.c_str() : "?";
}

std::optional<HaMode> parse_ha_mode(const std::string& name) {
  const ApproachTraits* t = ApproachCatalog::builtin().find(name);
  if (t == nullptr) return std::nullopt;
  return t->mode;
}

std::string allowed_ha_modes() { return ApproachCatalog::builtin().names(); }

}  // namespace hapair
