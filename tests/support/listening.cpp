#include "support/listening.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace hapair::testing {

std::vector<ListeningSocket> listening_sockets(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::set<std::string> inodes;
  if (DIR* fds = opendir((proc + "/fd").c_str())) {
    while (dirent* entry = readdir(fds)) {
      char target[256] = {0};
      const ssize_t n = readlink((proc + "/fd/" + entry->d_name).c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      const std::string t(target, static_cast<std::size_t>(n));
      if (t.rfind("socket:[", 0) == 0) inodes.insert(t.substr(8, t.size() - 9));
    }
    closedir(fds);
  }
  std::vector<ListeningSocket> out;
  std::ifstream tcp(proc + "/net/tcp");
  std::string line;
  std::getline(tcp, line);  // header
  while (std::getline(tcp, line)) {
    std::istringstream in(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    in >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    if (state != "0A" || !inodes.count(inode)) continue;  // 0A: LISTEN
    const std::size_t colon = local.find(':');
    // The address is the kernel's 32-bit word in hex, least significant byte first.
    const unsigned long word = std::stoul(local.substr(0, colon), nullptr, 16);
    char dotted[16];
    std::snprintf(dotted, sizeof dotted, "%lu.%lu.%lu.%lu", word & 0xff, (word >> 8) & 0xff, (word >> 16) & 0xff,
                  (word >> 24) & 0xff);
    out.push_back(ListeningSocket{dotted, std::stoi(local.substr(colon + 1), nullptr, 16)});
  }
  return out;
}

}  // namespace hapair::testing
