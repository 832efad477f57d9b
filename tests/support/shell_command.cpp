#include "support/shell_command.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace hapair::testing {

ShellResult run_shell(const std::string& command) {
  ShellResult r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace hapair::testing
