#include "config/builtin_networks.h"

#include <algorithm>

namespace hapair {

namespace {

// "nexmark_q5" as users write it: the first '_' of a family's query is a ':'.
std::string spelled(const std::string& stem) {
  const auto underscore = stem.find('_');
  if (stem.rfind("nexmark_", 0) == 0 && underscore != std::string::npos) return "nexmark:" + stem.substr(underscore + 1);
  return stem;
}

}  // namespace

std::optional<std::string_view> builtin_network_text(const std::string& name) {
  for (const EmbeddedNetwork& n : embedded_networks())
    if (name == n.name || name == spelled(n.name)) return std::string_view(n.text, n.size);
  return std::nullopt;
}

std::string builtin_network_names() {
  std::vector<std::string> names;
  for (const EmbeddedNetwork& n : embedded_networks()) names.push_back(spelled(n.name));
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace hapair
