// What the experiment tests share (tests/harness/experiments_test.cpp, the quick-experiment sweep
// in tests/sweeps): a fresh temporary folder, a file's text and lines, whether a line is a claim
// outcome, and the options of a quick run. Header only: the areas that use it link the campaigns.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "campaigns/experiments.h"

namespace hapair::testing {

inline std::string experiment_temp_dir(const std::string& name) {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("hapair_experiments_test_" + name + "-" + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

inline bool is_claim_line(const std::string& line) {
  return line == "claim holds" || line.rfind("claim differs: ", 0) == 0;
}

inline ExperimentOptions quick_options(const std::string& out_dir) {
  ExperimentOptions o;
  o.quick = true;
  o.out_dir = out_dir;
  o.hapair_binary = HAPAIR_BINARY;
  return o;
}

}  // namespace hapair::testing
