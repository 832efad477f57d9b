// The clock offset of a remote host, estimated NTP-style (RFC 5905, section 8) from four
// timestamps: t1 the launcher sends a probe (launcher clock), t2 the host receives it and t3 it
// answers (host clock), t4 the answer arrives (launcher clock). Then
//     offset      = ((t2 - t1) + (t3 - t4)) / 2   (host clock minus launcher clock)
//     round trip  = (t4 - t1) - (t3 - t2)
//     error bound = round trip / 2
// whatever the split of the round trip between the two directions: the true offset lies within
// offset ± error bound. Of N probes the one with the smallest round trip is kept (the least
// queueing, hence the tightest bound). Used to carry a failure instant taken on a node's host
// back to the launcher's clock (docs/HOSTS.md).
//
// Paper: none; Hwang et al. (ICDE 2005) measure recovery on one clock. Across hosts every time
// is corrected and given with its error bound.
//
// Invariants: a ClockOffset has error_bound_us >= 0 and is sound for integer microseconds:
// offset_us is the floor of the exact half and error_bound_us the ceiling (the two halves have
// the same parity, so [offset - bound, offset + bound] still holds the exact interval). A
// probe whose timestamps go backwards (t4 < t1, t3 < t2, or a negative round trip) comes from a
// peer or a clock step: it is counted and dropped, never asserted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace hapair {

struct ClockProbe {
  std::int64_t t1_us = 0;  // launcher: probe sent
  std::int64_t t2_us = 0;  // host: probe received
  std::int64_t t3_us = 0;  // host: answer sent
  std::int64_t t4_us = 0;  // launcher: answer received
};

// Why the probe cannot be used ("" when it can).
std::string clock_probe_problem(const ClockProbe& p);

class ClockOffset {
 public:
  // The estimate of a usable probe (clock_probe_problem(p) is empty).
  static ClockOffset from_probe(const ClockProbe& p);
  // A known offset with its bound (a host on the launcher's own clock: 0 ± 0).
  ClockOffset(std::int64_t offset_us, std::int64_t error_bound_us, std::int64_t round_trip_us);

  std::int64_t offset_us() const { return offset_us_; }  // host clock minus launcher clock
  std::int64_t error_bound_us() const { return error_bound_us_; }
  std::int64_t round_trip_us() const { return round_trip_us_; }

  // A time read on the host's clock, on the launcher's clock (± error_bound_us).
  std::int64_t to_launcher_us(std::int64_t host_us) const { return host_us - offset_us_; }
  // Whether a true offset is consistent with this estimate.
  bool admits(std::int64_t true_offset_us) const;

 private:
  std::int64_t offset_us_;
  std::int64_t error_bound_us_;
  std::int64_t round_trip_us_;
};

// Keeps the best of up to `probes_max` probes of one host: the smallest round trip, the earlier
// of two equal ones. Unusable probes are counted and dropped; they use up no slot.
class ClockOffsetEstimator {
 public:
  explicit ClockOffsetEstimator(std::size_t probes_max);

  // False when the probe was dropped (unusable; the problem is in last_problem()) or the
  // estimator already holds probes_max probes.
  bool add(const ClockProbe& p);
  bool complete() const { return used_ == probes_max_; }
  std::size_t used() const { return used_; }
  std::size_t dropped() const { return dropped_; }
  const std::string& last_problem() const { return last_problem_; }
  // The best estimate so far; nullopt before the first usable probe.
  const std::optional<ClockOffset>& best() const { return best_; }

 private:
  std::size_t probes_max_;
  std::size_t used_ = 0;
  std::size_t dropped_ = 0;
  std::string last_problem_;
  std::optional<ClockOffset> best_;
};

}  // namespace hapair
