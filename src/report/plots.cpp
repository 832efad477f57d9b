#include "report/plots.h"

#include <cstdlib>
#include <filesystem>

#include "proc/child_process.h"

namespace hapair {

std::string source_dir() {
  if (const char* env = std::getenv("HAPAIR_SOURCE_DIR")) return env;
  // An installed hapair (the Debian package, or one unpacked into a host's run folder by
  // --install-package) finds its experiments in PREFIX/share/hapair beside PREFIX/bin.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "hapair";
    if (std::filesystem::is_directory(installed / "experiments", ec)) return installed.string();
  }
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
  ExecSpec spec;
  spec.argv = {python, path};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.environment = {"MPLBACKEND=Agg"};
  std::string error;
  ChildProcess child = ChildProcess::spawn(spec, error);
  if (!child.running()) return script + ": " + error;
  const std::optional<ChildExit> exit = child.wait();
  if (!exit) return script + ": the plot process could not be waited for";
  if (!exit->clean()) return script + " failed (" + exit->describe() + "); is python3-matplotlib installed?";
  return "";
}

}  // namespace hapair
