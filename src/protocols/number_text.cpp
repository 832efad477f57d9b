#include "protocols/number_text.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace hapair {

std::string shortest_text(double v) {
  char buf[64];
#if defined(__EMSCRIPTEN__)
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) return buf;
  }
  return buf;
#else
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return std::to_string(v);
  return std::string(buf, p);
#endif
}

}  // namespace hapair
