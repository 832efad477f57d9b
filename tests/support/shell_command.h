// Running a shell command from a test and collecting what it printed and how it ended (for the
// tests that run the built `hapair` binary). cli_test.cpp and experiments_test.cpp still hold
// copies of their own; new tests use this one.
#pragma once

#include <string>

namespace hapair::testing {

struct ShellResult {
  int status = -1;  // the exit status; -1 when the shell could not run or the command died of a signal
  std::string out;  // stdout (and stderr when the command redirects it)
};

// Runs `command` through /bin/sh (popen) and waits for it.
ShellResult run_shell(const std::string& command);

}  // namespace hapair::testing
