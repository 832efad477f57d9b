// Pieces several subcommands share: loading the topology with overrides, reporting problems,
// and a progress line on stderr.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/topology_file.h"
#include "protocols/plan.h"

namespace hapair::cli {

// Loads the topology (the built-in default when `path` is empty), applies the overrides and
// builds the plan; on any problem the plan is null and `problems` holds every one.
struct PlanLoad {
  std::shared_ptr<const Plan> plan;
  std::vector<std::string> problems;
};
PlanLoad load_plan(const std::string& path, const RunOverrides& o);

// Prints problems as a list under a heading; returns the exit status for invalid input (2).
int report_problems(const std::string& command, const std::string& heading, const std::vector<std::string>& problems);

// Boost.Program_options reads "-5" into an unsigned option as a huge number, so whole-number
// options are read as text and converted here: `text` as a whole number in [min, max]. On
// anything else (a sign, a fraction, trailing text, out of range) a problem naming the option
// and the range is added and nullopt returned.
std::optional<std::uint64_t> whole_number(const std::string& option, const std::string& text, std::uint64_t min,
                                          std::uint64_t max, std::vector<std::string>& problems);

// "--driver 'x'": real or sim, with the close match.
void check_driver(const std::string& driver, std::vector<std::string>& problems);

// --ha / --approaches items: the HA mode, or a problem listing the modes with the close match.
std::optional<HaMode> ha_mode_option(const std::string& option, const std::string& text, std::vector<std::string>& problems);

// A progress line on stderr: rewritten in place on a terminal, one line a second otherwise.
class Progress {
 public:
  explicit Progress(std::string label);
  void update(double elapsed_s, double total_s);
  void done(const std::string& note = "");

 private:
  std::string label_;
  bool tty_;
  int last_whole_s_ = -1;
};

}  // namespace hapair::cli
