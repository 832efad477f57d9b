// Passive and active standby, registered as approaches (primary/approach.h): the primary's end
// of each (checkpoint sending; determinant shipping and the rejoin bootstrap) and the standby's.
#pragma once

#include <memory>

#include "primary/approach.h"

namespace hapair {

Approach passive_standby_approach();
Approach active_standby_approach();

// The primaries' ends (the standbys hand over to a PrimaryRole with one when they take over).
std::unique_ptr<PrimarySide> make_passive_primary_side(Server& server, const PrimaryOptions& options);
std::unique_ptr<PrimarySide> make_active_primary_side(Server& server, const PrimaryOptions& options);

}  // namespace hapair
