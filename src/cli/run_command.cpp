// Placeholder until the real `hapair run` lands (owned by whoever builds it).
#include <cstdio>

#include "cli/commands.h"

namespace hapair::cli {
int run_command(const Args&) {
  std::fprintf(stderr, "hapair run: not built yet\n");
  return 2;
}
}  // namespace hapair::cli
