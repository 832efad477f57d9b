#pragma once
// The version every result file names (version.txt, run.json) and `hapair --version` prints:
// the project version and `git describe` of the checkout at configure time. Defined in a file
// that CMake generates (version.cpp.in), so a new commit recompiles one file, not every file.
namespace hapair {
const char* version_string();
}  // namespace hapair
