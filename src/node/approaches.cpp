#include "node/approaches.h"

#include "backup/approaches.h"
#include "checkpoint/checkpoint_ends.h"
#include "hybrid/approaches.h"
#include "protocols/check.h"
#include "upstream_backup/approaches.h"

namespace hapair {

namespace {

// ha none: a primary and nothing else (the processing node of src/primary, no standby).
Approach no_ha_approach() { return Approach{HaMode::none, &make_stateless_primary_side, nullptr}; }

ApproachRegistry make_builtin() {
  ApproachRegistry r;
  for (const Approach& a : {
           no_ha_approach(),            // src/primary: a primary and nothing else
           amnesia_approach(),          // src/upstream_backup: a spare restarts from empty state
           upstream_backup_approach(),  // src/upstream_backup: level-1 rounds, restart points, replay
           passive_standby_approach(),  // src/backup: checkpoints to a standby that installs them
           active_standby_approach(),   // src/backup: a standby that processes too, with determinants
           hybrid_standby_approach(),   // src/hybrid: passive standby, active while a failure looks likely
           global_checkpoints_approach(),  // src/checkpoint: barriers, a coordinator, a spare restored from its store
       })
    r = r.with(a);
  for (HaMode mode : ApproachCatalog::builtin().modes())
    HAPAIR_CHECK_MSG(r.has(mode), "the built-in approach " << to_string(mode) << " has traits but no registration");
  return r;
}

}  // namespace

const ApproachRegistry& ApproachRegistry::builtin() {
  static const ApproachRegistry registry = make_builtin();
  return registry;
}

ApproachRegistry ApproachRegistry::with(Approach extra) const {
  HAPAIR_CHECK_MSG(!has(extra.mode), "approach mode " << static_cast<int>(extra.mode) << " registered twice");
  HAPAIR_CHECK_MSG(extra.primary_side != nullptr, "approach mode " << static_cast<int>(extra.mode) << " has no primary end");
  ApproachRegistry r = *this;
  r.approaches_.push_back(extra);
  return r;
}

bool ApproachRegistry::has(HaMode mode) const {
  for (const Approach& a : approaches_)
    if (a.mode == mode) return true;
  return false;
}

const Approach& ApproachRegistry::of(HaMode mode) const {
  for (const Approach& a : approaches_)
    if (a.mode == mode) return a;
  HAPAIR_CHECK_MSG(false, "no approach registered for mode " << static_cast<int>(mode));
  return approaches_.front();
}

}  // namespace hapair
