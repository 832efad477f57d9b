// Upstream backup and amnesia, registered as approaches (primary/approach.h). Both restart a
// failed fragment on a spare from empty state (spare_role.h); upstream backup's primary sends
// level-1 rounds carrying its restart point (level1_sender), so that its upstream neighbours
// retain exactly what a recovery needs; amnesia's primary sends none (gap recovery).
#pragma once

#include <memory>

#include "primary/approach.h"

namespace hapair {

Approach upstream_backup_approach();
Approach amnesia_approach();

// Upstream backup's end at the primary: a level-1 round every ack interval.
std::unique_ptr<PrimarySide> make_level1_sender(Server& server, const PrimaryOptions& options);

}  // namespace hapair
