// What the rest of the system asks of an HA approach, as one record of plain data per approach:
// its name, its standby (how many, how it is named, whether it processes input, whether it holds
// state), what its consumers' producers retain for it, what it promises, the settings it reads and
// the messages only its two ends exchange. Every site above the approaches reads these traits
// instead of branching on the approach; the two ends themselves (what the primary does for its
// standby, what the standby does until and at a takeover) live in the approach's own folder and
// are registered in src/node/approaches.cpp.
//
// Paper: Hwang et al. (ICDE 2005), section 4: amnesia, upstream backup, passive standby and active
// standby differ in what the primary does for its backup and what the backup does at a takeover;
// section 3 gives the recovery type each one promises for a fail-stop crash.
//
// Invariants: a catalog holds each mode and each name at most once; the built-in catalog holds
// exactly one baseline (an approach with no standby, promising nothing), and every approach with a
// standby names it with a suffix no other approach uses differently. A mode's number never changes
// (it is in traces and result files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocols/trace.h"

namespace hapair {

struct Settings;

// The approaches' ids. The four of the paper, ha none, hybrid standby (src/hybrid) and global
// checkpoints (src/checkpoint) are built in (approach_traits.cpp, one record each); an approach written elsewhere (a test's, a researcher's) takes a number of its
// own beyond these and registers its record in a catalog (ApproachCatalog::with).
enum class HaMode : std::uint8_t { none, amnesia, upstream, passive, active, hybrid, checkpoint };

// The mode of sources and sinks, which never get standbys (a source regenerates its tuples from
// the seed, a sink is the client application), and the default of a topology.
inline constexpr HaMode kNoHa = HaMode::none;

// What a recovery leaves in the output (section 3), weakest first.
enum class RecoveryType : std::uint8_t { nothing, gap, rollback, precise };
const char* to_string(RecoveryType);

// What an approach promises after a crash within its guarantee (docs/FAULTS.md), by network:
// without an arbitrary operator, with one, and with one when the `determinants` setting is off.
struct Promise {
  RecoveryType deterministic_network = RecoveryType::nothing;
  RecoveryType arbitrary_network = RecoveryType::nothing;
  RecoveryType arbitrary_network_without_determinants = RecoveryType::nothing;
  // The promise for a run's network and settings.
  RecoveryType on(bool arbitrary_network, bool determinants) const {
    if (!arbitrary_network) return deterministic_network;
    return determinants ? this->arbitrary_network : arbitrary_network_without_determinants;
  }
  // Promises in order, least first (compared field by field).
  friend auto operator<=>(const Promise&, const Promise&) = default;
};

// Whether a fragment's output waits until its standby has the choices its Unions made (so a
// successor replays the same interleaving; judge/merge_order.h).
enum class ChoicesHeld : std::uint8_t { never, always, with_determinants };

// An experiment label that names an approach with one setting changed ("active_nodet": active
// standby without determinants).
struct ApproachVariant {
  std::string label;
  void (*apply)(Settings&) = nullptr;
};

struct ApproachTraits {
  HaMode mode = kNoHa;
  std::string name;   // in topology files, options and result files: "passive"
  std::string title;  // in sentences: "passive standby"
  // The approach every other one's overhead is measured against (ha none: no standby, no HA work).
  bool baseline = false;

  // ---- the standby -------------------------------------------------------------------------
  // Standbys the plan gives each operator fragment by default (0: none).
  std::size_t standbys = 0;
  // The most standbys a fragment may ask for (the `standbys` setting, k standbys), at most
  // kStandbysMax: the approaches whose ends elect the most advanced standby at a takeover and
  // ship to every standby (passive standby); 1 for the others. Unset (0), as in an approach
  // written elsewhere: `standbys` (protocols/plan.cpp, most_standbys).
  std::size_t standbys_max = 0;
  // The plan names a standby <fragment><suffix>: ".spare" (a recovery node that starts from its
  // upstreams), ".backup" (a standby that holds the primary's state).
  std::string standby_suffix;
  // The role a planned standby starts in (its lane in the timeline).
  Role standby_role = Role::spare;
  // Producers send the fragment's input to its standby too, which processes it (active standby):
  // two processes do the fragment's work.
  bool standby_processes_input = false;
  // Its standby processes input only after a switch (hybrid standby while it is active): then,
  // as an active standby's, it acknowledges its input, asks its producers to replay and
  // heartbeats them.
  bool standby_processes_input_when_switched = false;
  // The standby holds (or gets) the primary's state. When it does not (amnesia, upstream backup),
  // a restarted node whose partner is lost too can take over its fragment like a standby would:
  // nothing of its partner's is needed.
  bool standby_holds_state = false;

  // ---- a node of no fragment ---------------------------------------------------------------
  // The approach needs a coordinator (global checkpoints: Flink's JobManager in role,
  // docs/CHECKPOINT.md): a plan where some fragment uses it gets one more node, named
  // kCoordinatorNodeName (protocols/plan.h), that runs no fragment (PlanNode::fragment is
  // kNoFragment) and is built by the registration record's coordinator factory.
  bool coordinator = false;

  // ---- what producers keep for it ----------------------------------------------------------
  // A producer keeps output for a consumer fragment of this approach until its level-1 ack
  // (the consumer may ask for a replay after a takeover), not only until its level-0 ack.
  bool consumers_retain = false;
  // Its recovery node restarts from the restart points its upstreams hold (upstream backup).
  // With the exact trimming rule a consumer with several producers waits for its upstream, and
  // two adjacent fragments recovering at once is the most it recovers (judge/guarantee_rules.h).
  bool recovers_from_restart_points = false;
  // Under the conservative trimming rule its recovery rebases output ids, so it promises that
  // nothing is lost, not that nothing is duplicated (as on an arbitrary network).
  bool conservative_trimming_rebases_ids = false;
  // Whether its output waits for the standby to have its Unions' choices.
  ChoicesHeld output_waits_for_choices = ChoicesHeld::never;

  // ---- what it promises, reads and sends ---------------------------------------------------
  Promise promise;
  // The settings (docs/TOPOLOGY.md) that only this approach reads: a campaign draws them and
  // names them only for it.
  std::vector<std::string> settings;
  // The message kinds (kMessageKindNames) only its two ends exchange: the primary role hands them
  // to the approach's primary end, and counts them as unexpected from anyone but its standby.
  std::vector<std::string> messages;
  std::vector<ApproachVariant> variants;

  bool has_standby() const { return standbys > 0; }
  // Whether its standby may talk to the fragment's producers (level-0 acks, replay requests,
  // heartbeats), now or after a switch: none of these says who is primary, so from another
  // fragment they never imply a takeover (RouteTable::implied_takeover).
  bool standby_talks_to_producers() const { return standby_processes_input || standby_processes_input_when_switched; }
  bool reads_setting(std::string_view setting) const;
  bool exchanges(std::string_view message_kind) const;
  // Processes doing the fragment's work when all is well.
  std::size_t processes_busy() const { return standby_processes_input ? 1 + standbys : 1; }
  bool holds_choices(bool determinants) const {
    return output_waits_for_choices == ChoicesHeld::always ||
           (output_waits_for_choices == ChoicesHeld::with_determinants && determinants);
  }
};

// The approaches a plan may name, by mode and by name.
class ApproachCatalog {
 public:
  // The approaches of this repository (approach_traits.cpp), in the order of HaMode.
  static const ApproachCatalog& builtin();

  // A copy with one more approach (a test's, a researcher's); its mode and name must be new.
  ApproachCatalog with(ApproachTraits extra) const;

  const ApproachTraits* find(HaMode mode) const;
  const ApproachTraits* find(std::string_view name) const;
  // The traits of a mode the catalog holds (checked).
  const ApproachTraits& of(HaMode mode) const;
  const std::vector<ApproachTraits>& all() const { return traits_; }
  std::vector<HaMode> modes() const;
  // The modes whose promise on a deterministic network is precise (the soak's default).
  std::vector<HaMode> precise_modes() const;
  // The baseline's mode (checked: exactly one).
  HaMode baseline() const;
  // "none, amnesia, upstream, passive, active": for error messages and help texts.
  std::string names() const;
  // An experiment label: an approach's name or one of its variants'.
  const ApproachVariant* variant(std::string_view label, HaMode* mode) const;

 private:
  std::vector<ApproachTraits> traits_;
};

// The name of a mode in the built-in catalog; "?" for another (name those by their catalog).
const char* to_string(HaMode mode);
// A built-in approach by name.
std::optional<HaMode> parse_ha_mode(const std::string& name);
// The built-in approaches' names, for errors.
std::string allowed_ha_modes();

}  // namespace hapair
