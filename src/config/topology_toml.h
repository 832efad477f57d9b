// The topology reader over a parsed TOML document (config/topology_file.h reads whole texts
// with it), for files that hold a topology and tables of their own: an experiment file's
// [experiment] table (config/experiment_config.h).
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "config/topology_file.h"

namespace hapair {

// Reads the topology tables of `doc`; the top-level tables named in `tables_read_elsewhere` are
// left to the caller, any other unknown one is a problem. Problems as parse_topology().
TopologyLoad read_topology(const toml::table& doc, const std::string& file_name,
                           const std::vector<std::string>& tables_read_elsewhere);

}  // namespace hapair
