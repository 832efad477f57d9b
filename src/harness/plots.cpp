#include "harness/plots.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace hapair {

std::string source_dir() {
  if (const char* env = std::getenv("HAPAIR_SOURCE_DIR")) return env;
#ifdef HAPAIR_SOURCE_DIR_DEFAULT
  return HAPAIR_SOURCE_DIR_DEFAULT;
#else
  return ".";
#endif
}

std::string run_plot_script(const std::string& script, const std::vector<std::string>& args) {
  const std::string python = "/usr/bin/python3";
  const std::string path = source_dir() + "/experiments/plot/" + script;
  if (!std::filesystem::exists(python)) return "no " + python + " (install python3-matplotlib)";
  if (!std::filesystem::exists(path)) return "no plot script " + path;
  pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    std::vector<std::string> all = {python, path};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    setenv("MPLBACKEND", "Agg", 1);
    execv(python.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return "waitpid failed";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return script + " failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
           "); is python3-matplotlib installed?";
  return "";
}

}  // namespace hapair
