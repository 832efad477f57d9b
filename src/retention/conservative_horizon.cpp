#include "retention/conservative_horizon.h"

#include "protocols/check.h"

namespace hapair {

ConservativeHorizon::ConservativeHorizon(TimeUs retention_us) : retention_us_(retention_us) {
  HAPAIR_CHECK_MSG(retention_us_ > 0, "a conservative horizon of " << retention_us_ << " us");
}

void ConservativeHorizon::processed(TupleId id, TimeUs ts_us) {
  kept_.emplace_back(id, ts_us);
  while (!kept_.empty() && kept_.front().second < ts_us - retention_us_) {
    beyond_ = kept_.front().first;
    kept_.pop_front();
  }
  // The tuple just processed is within its own horizon (retention_us_ > 0), so it stays, and
  // what is left at the front is inside the horizon.
  HAPAIR_CHECK_MSG(!kept_.empty() && kept_.back().first == id && kept_.back().second == ts_us,
                   "horizon dropped the tuple it just processed: id " << id << " ts " << ts_us);
  HAPAIR_CHECK_MSG(kept_.front().second >= ts_us - retention_us_,
                   "horizon keeps ts " << kept_.front().second << " older than " << ts_us << " - " << retention_us_);
}

}  // namespace hapair
