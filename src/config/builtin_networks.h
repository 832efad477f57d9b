// The example networks built into the binary (experiments/networks/*.toml, embedded at build time
// by scripts/embed_networks.cmake): a researcher names one instead of a file, and a binary on a
// testbed host needs no checkout. "nexmark_q5" is also spelled "nexmark:q5".
//
// Invariant: the embedded texts are the repository's files byte for byte, as of the build.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hapair {

struct EmbeddedNetwork {
  const char* name;  // the file's stem: "nexmark_q5"
  const char* text;
  std::size_t size;
};

// Every embedded network, by name (generated).
const std::vector<EmbeddedNetwork>& embedded_networks();

// The text of the built-in network `name` ("ysb", "nexmark_q5" or "nexmark:q5"); nullopt when
// there is none.
std::optional<std::string_view> builtin_network_text(const std::string& name);

// The built-in networks' names, for help texts and errors ("chain, default, ..., nexmark:q5, ...").
std::string builtin_network_names();

}  // namespace hapair
