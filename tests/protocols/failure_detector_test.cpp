// The heartbeat failure detector (protocols/failure_detector.h): suspicion after the timeout,
// once; and the silence it reports, which is its own when it runs and the driver's detector's
// when the driver watches the partner (a disabled detector's last_heard_us is not a silence).
#include <catch2/catch.hpp>

#include "protocols/failure_detector.h"

using namespace hapair;

TEST_CASE("a failure detector suspects once after the timeout and reports the silence it saw", "[detector]") {
  FailureDetector d(30'000);
  d.start(1'000);
  CHECK_FALSE(d.check(30'999));
  d.heard(10'000);
  CHECK_FALSE(d.check(39'999));
  CHECK(d.check(40'000));
  CHECK_FALSE(d.check(50'000));  // sticky: once per suspicion
  CHECK(d.silence_us(40'000, false, 200'000) == 30'000);
  CHECK(d.silence_us(40'000, true, 200'000) == 30'000);  // its own detector ran: what it saw
}

TEST_CASE("a disabled detector reports the driver's silence, not the time since it last heard anything", "[detector]") {
  FailureDetector d(30'000);
  d.start(0);
  d.disable();
  // An idle spare hears nothing from its primary for the whole run: at 9 s the primary's crash
  // line closes. The primary was not silent: its connection was alive until it closed.
  CHECK(d.silence_us(9'000'000, true, 200'000) == 0);
  // The driver's heartbeat (ZMTP) found a hang: silent for its timeout.
  CHECK(d.silence_us(9'000'000, false, 200'000) == 200'000);
  CHECK_FALSE(d.check(9'000'000));
}
