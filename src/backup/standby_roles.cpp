#include "backup/standby_roles.h"

#include "backup/active_standby_role.h"
#include "backup/passive_standby_role.h"
#include "backup/spare_role.h"

namespace hapair {

std::unique_ptr<RoleBehaviour> make_standby_role(Server& server) {
  switch (server.role()) {
    case Role::passive_backup: return std::make_unique<PassiveStandbyRole>(server);
    case Role::active_backup: return std::make_unique<ActiveStandbyRole>(server);
    default: return std::make_unique<SpareRole>(server);
  }
}

}  // namespace hapair
