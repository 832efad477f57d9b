// The quiet-drain rule (protocols/quiet_drain.h) that ends a run which cannot complete.
#include <catch2/catch.hpp>

#include "protocols/quiet_drain.h"

using namespace hapair;

namespace {

Settings settings_with(double duration_s, double drain_quiet_s) {
  Settings s;
  s.duration_s = duration_s;
  s.drain_quiet_s = drain_quiet_s;
  s.retransmit_timeout_ms = 100;  // longest back-off 1.6 s
  return s;
}

Metrics queues(std::int64_t tuples) { return Metrics{{"output_queue_tuples", tuples}, {"heartbeats_sent", tuples * 7}}; }

}  // namespace

TEST_CASE("the output is quiet only after the duration and a quiet window without deliveries or queue changes") {
  QuietDrain q(settings_with(1.0, 2.0), 2);
  CHECK(q.window_us() == 2'000'000);
  q.report(0, 0, queues(5));
  q.report(0, 1, queues(0));
  q.activity(500'000);  // a delivery
  CHECK_FALSE(q.quiet(2'400'000, false));  // within the window of the delivery
  CHECK(q.quiet(2'500'000, false));
  // A queue that changed keeps the run going; other counters do not.
  q.report(2'600'000, 1, queues(0));
  q.report(2'600'000, 0, Metrics{{"output_queue_tuples", 5}, {"heartbeats_sent", 1}});
  CHECK(q.quiet(2'600'000, false));
  q.report(2'700'000, 0, queues(6));
  CHECK_FALSE(q.quiet(4'600'000, false));
  CHECK(q.quiet(4'700'000, false));
  // Something still to come (a fault action) holds it back.
  CHECK_FALSE(q.quiet(4'700'000, true));
}

TEST_CASE("the quiet window is never shorter than the longest retransmission back-off, nor ends before the duration") {
  QuietDrain q(settings_with(5.0, 0.5), 1);
  CHECK(q.window_us() == 1'600'000);
  q.report(0, 0, queues(1));
  CHECK_FALSE(q.quiet(4'999'999, false));
  CHECK(q.quiet(5'000'000, false));
}

TEST_CASE("a node that is down does not hold the quiet rule back, and a restarted one does again") {
  QuietDrain q(settings_with(1.0, 2.0), 2);
  q.report(0, 0, queues(1));
  q.report(3'000'000, 1, queues(1));
  CHECK_FALSE(q.quiet(4'000'000, false));  // node 1's queues changed at 3 s
  q.set_down(1, true);
  CHECK(q.quiet(4'000'000, false));
  q.set_down(1, false);
  CHECK_FALSE(q.quiet(4'000'000, false));
}
