// Placeholder until the real `hapair node` lands (owned by whoever builds it).
#include <cstdio>

#include "cli/commands.h"

namespace hapair::cli {
int node_command(const Args&) {
  std::fprintf(stderr, "hapair node: not built yet\n");
  return 2;
}
}  // namespace hapair::cli
