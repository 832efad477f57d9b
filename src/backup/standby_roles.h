// The standby role a node starts in, by its fragment's HA mode.
#pragma once

#include <memory>

#include "primary/role.h"

namespace hapair {

std::unique_ptr<RoleBehaviour> make_standby_role(Server& server);

}  // namespace hapair
