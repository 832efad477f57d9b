// Plotting: every figure is drawn by a small matplotlib script under experiments/plot/, run with
// Debian's /usr/bin/python3 (the only python3 that has python3-matplotlib). A plot that cannot
// be drawn is reported, never fatal: the CSV beside it is the result.
#pragma once

#include <string>
#include <vector>

namespace hapair {

// Runs experiments/plot/<script> with the arguments; returns "" on success, else what failed.
std::string run_plot_script(const std::string& script, const std::vector<std::string>& args);

// Where the experiment folders and plot scripts are: $HAPAIR_SOURCE_DIR when set, else
// PREFIX/share/hapair when this binary is PREFIX/bin/hapair of an installed package, else the
// source tree it was built from.
std::string source_dir();

}  // namespace hapair
