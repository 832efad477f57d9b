#include "hosts/clock_offset.h"

#include "protocols/check.h"

namespace hapair {
namespace {

// Floor and ceiling of v / 2 for negative v too (C++ division truncates toward zero).
std::int64_t half_floor(std::int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }
std::int64_t half_ceil(std::int64_t v) { return -half_floor(-v); }

// Probe timestamps are microseconds since an epoch; beyond ±2^60 they are not a clock.
constexpr std::int64_t kSpanMaxUs = std::int64_t{1} << 60;  // 36,000 years: sums of differences stay in range

bool within(std::int64_t v) { return v > -kSpanMaxUs && v < kSpanMaxUs; }

}  // namespace

std::string clock_probe_problem(const ClockProbe& p) {
  for (std::int64_t t : {p.t1_us, p.t2_us, p.t3_us, p.t4_us})
    if (!within(t)) return "a timestamp of " + std::to_string(t) + " us is out of range";
  if (p.t4_us < p.t1_us)
    return "the answer arrived (t4 = " + std::to_string(p.t4_us) + ") before the probe was sent (t1 = " +
           std::to_string(p.t1_us) + "): the launcher's clock went backwards";
  if (p.t3_us < p.t2_us)
    return "the host answered (t3 = " + std::to_string(p.t3_us) + ") before it received the probe (t2 = " +
           std::to_string(p.t2_us) + "): the host's clock went backwards";
  if ((p.t4_us - p.t1_us) < (p.t3_us - p.t2_us))
    return "the host held the probe " + std::to_string(p.t3_us - p.t2_us) + " us, longer than its round trip of " +
           std::to_string(p.t4_us - p.t1_us) + " us: the clocks run at different rates or stepped";
  return "";
}

ClockOffset ClockOffset::from_probe(const ClockProbe& p) {
  const std::string problem = clock_probe_problem(p);
  HAPAIR_CHECK_MSG(problem.empty(), "from_probe of an unusable probe: " << problem);
  const std::int64_t sum = (p.t2_us - p.t1_us) + (p.t3_us - p.t4_us);
  const std::int64_t round_trip = (p.t4_us - p.t1_us) - (p.t3_us - p.t2_us);
  // sum + round_trip = 2 (t2 - t1): the same parity, so floor and ceiling keep the bound sound.
  HAPAIR_CHECK_MSG((sum - round_trip) % 2 == 0, "sum=" << sum << " round_trip=" << round_trip);
  return ClockOffset(half_floor(sum), half_ceil(round_trip), round_trip);
}

ClockOffset::ClockOffset(std::int64_t offset_us, std::int64_t error_bound_us, std::int64_t round_trip_us)
    : offset_us_(offset_us), error_bound_us_(error_bound_us), round_trip_us_(round_trip_us) {
  HAPAIR_CHECK_MSG(error_bound_us_ >= 0 && round_trip_us_ >= 0,
                   "error_bound_us=" << error_bound_us_ << " round_trip_us=" << round_trip_us_);
  HAPAIR_CHECK_MSG(2 * error_bound_us_ >= round_trip_us_,
                   "the bound " << error_bound_us_ << " us is below half the round trip " << round_trip_us_ << " us");
  HAPAIR_CHECK_MSG(within(offset_us_), "offset_us=" << offset_us_);
}

bool ClockOffset::admits(std::int64_t true_offset_us) const {
  return true_offset_us >= offset_us_ - error_bound_us_ && true_offset_us <= offset_us_ + error_bound_us_;
}

ClockOffsetEstimator::ClockOffsetEstimator(std::size_t probes_max) : probes_max_(probes_max) {
  HAPAIR_CHECK_MSG(probes_max_ >= 1, "probes_max=" << probes_max_);
}

bool ClockOffsetEstimator::add(const ClockProbe& p) {
  if (complete()) return false;
  if (std::string problem = clock_probe_problem(p); !problem.empty()) {
    ++dropped_;
    last_problem_ = std::move(problem);
    return false;
  }
  ++used_;
  const ClockOffset estimate = ClockOffset::from_probe(p);
  if (!best_ || estimate.round_trip_us() < best_->round_trip_us()) best_ = estimate;
  HAPAIR_CHECK(used_ <= probes_max_);
  return true;
}

}  // namespace hapair
