// Hosts files (`--hosts FILE`, docs/HOSTS.md): the TOML list of machines a run may use, each
// with its address, how ssh reaches it, its working directory and labels such as its rack,
// parsed into a HostList (hosts/host_list.h).
//
// Paper: none; the machines of section 2's servers.
//
// Invariants: as for topology files (config/toml_file.h), every problem names "file:line" and
// all of them are reported at once; a HostList comes back only when there is none, and then
// validate_hosts() accepts it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hosts/host_list.h"

namespace hapair {

struct HostsLoad {
  std::optional<HostList> hosts;      // set only when `problems` is empty
  std::vector<std::string> problems;  // parse problems first, then validate_hosts()'s
};

// Parses `text`; `file_name` names it in messages.
HostsLoad parse_hosts(const std::string& text, const std::string& file_name);
// Reads and parses a file (at most 1 MiB).
HostsLoad load_hosts_file(const std::string& path);

}  // namespace hapair
