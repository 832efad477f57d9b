// The fuzz targets' own checks: a property that fails prints what and aborts, which libFuzzer
// reports as a crash and saves the input for (like HAPAIR_CHECK, but naming the target).
#pragma once

#include <cstdio>
#include <cstdlib>

namespace hapair::fuzz {

inline void require(bool ok, const char* target, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "%s: %s\n", target, what);
  std::abort();
}

}  // namespace hapair::fuzz
