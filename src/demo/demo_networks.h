// The networks the teaching demo offers (`hapair demo`, docs/DEMO.md): small query networks
// built in code (the demo's WebAssembly build reads no files), slow enough to watch: a few
// hundred tuples a second, every batch, ack and trim traced (trace_level = data).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocols/topology.h"

namespace hapair {

struct DemoNetwork {
  std::string name;
  std::string title;
  std::string description;
};

// In the order the page lists them; the first is the default.
const std::vector<DemoNetwork>& demo_networks();

// The topology of a demo network under `ha` with `seed` and `duration_s`; nullopt for an unknown
// name.
std::optional<Topology> demo_topology(const std::string& name, HaMode ha, std::uint64_t seed, double duration_s);

}  // namespace hapair
