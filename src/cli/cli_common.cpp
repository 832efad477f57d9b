#include "cli/cli_common.h"

#include <unistd.h>

#include <cmath>

namespace hapair::cli {

int report_problems(const std::string& command, const std::string& heading, const std::vector<std::string>& problems) {
  std::fprintf(stderr, "%s: %s (%zu problem%s):\n", command.c_str(), heading.c_str(), problems.size(),
               problems.size() == 1 ? "" : "s");
  for (const auto& p : problems) std::fprintf(stderr, "  - %s\n", p.c_str());
  return 2;
}

std::shared_ptr<const Plan> load_plan(const std::string& command, const std::string& path, const RunOverrides& o) {
  Topology topology;
  if (path.empty()) {
    topology = default_topology();
  } else {
    TopologyLoad load = load_topology_file(path);
    if (!load.problems.empty() || !load.topology) {
      report_problems(command, "the topology " + path + " is not valid", load.problems);
      return nullptr;
    }
    topology = *load.topology;
  }
  auto problems = apply_overrides(topology, o);
  if (!problems.empty()) {
    report_problems(command, "the options do not fit the topology", problems);
    return nullptr;
  }
  auto more = validate(topology);
  if (!more.empty()) {
    report_problems(command, "the topology is not valid", more);
    return nullptr;
  }
  return std::make_shared<const Plan>(make_plan(topology));
}

Progress::Progress(std::string label) : label_(std::move(label)), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::update(double elapsed_s, double total_s) {
  const int whole = static_cast<int>(std::floor(elapsed_s));
  if (!tty_ && whole == last_whole_s_) return;
  last_whole_s_ = whole;
  const double pct = total_s > 0 ? std::min(100.0, 100.0 * elapsed_s / total_s) : 0.0;
  if (tty_)
    std::fprintf(stderr, "\r%s: %5.1f / %.1f s (%3.0f%%)   ", label_.c_str(), elapsed_s, total_s, pct);
  else
    std::fprintf(stderr, "%s: %.0f / %.1f s\n", label_.c_str(), elapsed_s, total_s);
  std::fflush(stderr);
}

void Progress::done(const std::string& note) {
  if (tty_) std::fprintf(stderr, "\r%s: done%s%s%*s\n", label_.c_str(), note.empty() ? "" : " - ", note.c_str(), 20, "");
  else std::fprintf(stderr, "%s: done%s%s\n", label_.c_str(), note.empty() ? "" : " - ", note.c_str());
}

}  // namespace hapair::cli
