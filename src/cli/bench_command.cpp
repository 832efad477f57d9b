// Placeholder until the real `hapair bench` lands (owned by whoever builds it).
#include <cstdio>

#include "cli/commands.h"

namespace hapair::cli {
int bench_command(const Args&) {
  std::fprintf(stderr, "hapair bench: not built yet\n");
  return 2;
}
}  // namespace hapair::cli
