#include "node/approaches.h"

#include <array>

#include "backup/approaches.h"
#include "protocols/check.h"
#include "upstream_backup/approaches.h"

namespace hapair {

namespace {

const std::array<Approach, 5>& registered() {
  static const std::array<Approach, 5> table{
      no_ha_approach(),            // src/primary: a primary and nothing else
      amnesia_approach(),          // src/upstream_backup: a spare restarts from empty state
      upstream_backup_approach(),  // src/upstream_backup: level-1 rounds, restart points, replay
      passive_standby_approach(),  // src/backup: checkpoints to a standby that installs them
      active_standby_approach(),   // src/backup: a standby that processes too, with determinants
  };
  return table;
}

}  // namespace

const Approach& approach_for(HaMode mode) {
  for (const Approach& a : registered())
    if (a.mode == mode) return a;
  HAPAIR_CHECK_MSG(false, "no approach registered for ha " << to_string(mode));
  return registered().front();
}

}  // namespace hapair
