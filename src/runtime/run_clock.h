// The runtime's clock: microseconds since the run epoch, the `now` every core receives.
//
// Paper: not a paper concept; it realises ARCHITECTURE.md "Time": the launcher picks the run
// epoch as a CLOCK_REALTIME instant and every node measures time from it, so the timestamps of
// different processes on one host (and on NTP-synchronised hosts) are comparable.
//
// Invariant: now_us() never decreases. The epoch is translated once into a CLOCK_MONOTONIC
// instant, so a wall-clock step (NTP) during a run cannot move `now` backwards, which the core
// contract (core.h) forbids.
#pragma once

#include <ctime>

#include "protocols/ids.h"

namespace hapair {

class RunClock {
 public:
  // A clock whose zero is the CLOCK_REALTIME instant `epoch_realtime_us`.
  static RunClock from_realtime_epoch(std::int64_t epoch_realtime_us) {
    const std::int64_t offset_us = realtime_us() - monotonic_us();
    return RunClock(epoch_realtime_us - offset_us);
  }
  // A clock whose zero is the present instant (benchmarks, tests).
  static RunClock starting_now() { return RunClock(monotonic_us()); }

  TimeUs now_us() const { return monotonic_us() - epoch_monotonic_us_; }

  // Sleeps until now_us() >= t (returns at once when it already is).
  void sleep_until(TimeUs t) const {
    for (;;) {
      const TimeUs left = t - now_us();
      if (left <= 0) return;
      struct timespec ts;
      ts.tv_sec = static_cast<time_t>(left / 1'000'000);
      ts.tv_nsec = static_cast<long>((left % 1'000'000) * 1000);
      nanosleep(&ts, nullptr);
    }
  }

  static std::int64_t realtime_us() { return read_us(CLOCK_REALTIME); }
  static std::int64_t monotonic_us() { return read_us(CLOCK_MONOTONIC); }
  // CPU time this process has used, for the cpu_us counter.
  static std::int64_t process_cpu_us() { return read_us(CLOCK_PROCESS_CPUTIME_ID); }

 private:
  explicit RunClock(std::int64_t epoch_monotonic_us) : epoch_monotonic_us_(epoch_monotonic_us) {}
  static std::int64_t read_us(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
  }
  std::int64_t epoch_monotonic_us_;
};

}  // namespace hapair
