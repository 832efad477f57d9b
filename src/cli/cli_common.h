// Pieces several subcommands share: loading the topology with overrides, reporting problems,
// and a progress line on stderr.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/topology_file.h"
#include "protocols/plan.h"

namespace hapair::cli {

// Loads the topology (the built-in default when `path` is empty), applies the overrides and
// builds the plan. On any problem prints every one (prefixed with `command`) and returns null.
std::shared_ptr<const Plan> load_plan(const std::string& command, const std::string& path, const RunOverrides& o);

// Prints problems as a list under a heading; returns the exit status for invalid input (2).
int report_problems(const std::string& command, const std::string& heading, const std::vector<std::string>& problems);

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
