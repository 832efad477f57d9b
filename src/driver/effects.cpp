#include "driver/effects.h"

#include <algorithm>
#include <utility>

namespace hapair {

bool WakeTimer::wish(TimeUs wake_at_us, TimeUs now) {
  if (wake_at_us == kNever) return false;
  const TimeUs t = std::max(wake_at_us, now);
  if (t >= at_us_) return false;
  at_us_ = t;
  return true;
}

bool WakeTimer::take(TimeUs scheduled_us) {
  if (scheduled_us != at_us_) return false;
  at_us_ = kNever;
  return true;
}

void EffectsApplier::apply(TimeUs now, Effects&& effects, EffectsDriver& driver) {
  if (!effects.deliveries.empty()) driver.deliver(effects.deliveries);
  for (TraceEvent& trace : effects.traces) {
    if (trace.node == kNoNode) trace.node = self_;
    driver.record_trace(std::move(trace));
  }
  for (MergeOrder& order : effects.merge_orders) driver.record_merge_order(std::move(order));
  for (Outgoing& outgoing : effects.sends) driver.send(std::move(outgoing));
  if (wake_.wish(effects.wake_at_us, now)) driver.schedule_wake(wake_.at_us());
  if (effects.finished && !finished_) {
    finished_ = true;
    driver.finished();
  }
  if (!effects.fatal_error.empty()) driver.fatal_error(std::move(effects.fatal_error));
}

}  // namespace hapair
