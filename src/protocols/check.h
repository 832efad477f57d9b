// Always-on assertions (TigerBeetle style): our own invariants are checked in every build,
// and a failure prints the values involved before aborting. Use them for "we did something
// illegal"; never for bad input from a peer or a config file (count and drop, or report).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace hapair {

[[noreturn]] inline void check_failed(const char* expr, const char* file, int line, const std::string& detail) {
  std::fprintf(stderr, "hapair: invariant violated: %s at %s:%d%s%s\n", expr, file, line,
               detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace hapair

#define HAPAIR_CHECK(cond)                                                     \
  do {                                                                         \
    if (!(cond)) ::hapair::check_failed(#cond, __FILE__, __LINE__, "");        \
  } while (0)

// HAPAIR_CHECK_MSG(a < b, "a=" << a << " b=" << b)
#define HAPAIR_CHECK_MSG(cond, stream_expr)                                    \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::ostringstream hapair_check_os_;                                     \
      hapair_check_os_ << stream_expr;                                         \
      ::hapair::check_failed(#cond, __FILE__, __LINE__, hapair_check_os_.str()); \
    }                                                                          \
  } while (0)
