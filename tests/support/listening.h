// The TCP sockets a process listens on, as /proc shows them: for the tests that play a stranger
// on the network (tests/e2e/garbage_test.cpp, tests/e2e/curve_test.cpp, tests/hosts/).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace hapair::testing {

struct ListeningSocket {
  std::string address;  // IPv4, dotted ("0.0.0.0" for any)
  int port = 0;
};

// The IPv4 TCP sockets in state LISTEN that process `pid` holds (its descriptors' inodes found in
// /proc/PID/net/tcp, which shows the process's own network namespace).
std::vector<ListeningSocket> listening_sockets(pid_t pid);

}  // namespace hapair::testing
