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
// Without a detail; out of line, so a check costs its caller a compare and a branch.
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] inline void check_failed(const char* expr, const char* file, int line) {
  check_failed(expr, file, line, std::string());
}

// The message of a failed HAPAIR_CHECK_MSG. Its stream lives on the heap and its constructor and
// fail() are out of line, so a hot function that checks (a tuple appended to a queue, one taken
// by an operator) keeps no string stream on its stack and needs no cleanup for one: only the
// compare, the branch and, in its cold part, the calls that format the values (in the
// simulator's profile a stream on the stack had doubled the cost of such functions). Trivially
// destructible on purpose: fail() aborts, and the stream is never freed.
class CheckMessage {
 public:
  [[gnu::cold]] [[gnu::noinline]] CheckMessage(const char* expr, const char* file, int line)
      : os_(new std::ostringstream), expr_(expr), file_(file), line_(line) {}
  template <typename T>
  CheckMessage& operator<<(const T& value) {
    *os_ << value;
    return *this;
  }
  [[noreturn]] [[gnu::cold]] [[gnu::noinline]] void fail() const { check_failed(expr_, file_, line_, os_->str()); }

 private:
  std::ostringstream* os_;
  const char* expr_;
  const char* file_;
  int line_;
};

}  // namespace hapair

#define HAPAIR_CHECK(cond)                                                     \
  do {                                                                         \
    if (!(cond)) [[unlikely]] ::hapair::check_failed(#cond, __FILE__, __LINE__); \
  } while (0)

// HAPAIR_CHECK_MSG(a < b, "a=" << a << " b=" << b)
#define HAPAIR_CHECK_MSG(cond, stream_expr)                                    \
  do {                                                                         \
    if (!(cond)) [[unlikely]] {                                                \
      ::hapair::CheckMessage hapair_check_message_(#cond, __FILE__, __LINE__);  \
      hapair_check_message_ << stream_expr;                                    \
      hapair_check_message_.fail();                                            \
    }                                                                          \
  } while (0)
