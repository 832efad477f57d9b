// Reading configuration files written in TOML (topology files, experiment files; the format is
// docs/TOPOLOGY.md) through toml++, which keeps the source line of every key and value, and the
// few pieces of TOML text our writers need.
//
// Paper: none; this is how a user tells the harness which query network to run (section 2's
// boxes and streams) and with which knobs.
//
// Invariants: every problem names "file:line" (the line of the key or table it is about) and all
// problems of a file are reported at once, in the order of their lines; a text that is not valid
// TOML yields exactly its syntax error, with line and column, because nothing after it can be
// read reliably. Text written by toml_string/toml_number reads back as exactly the same value.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

namespace hapair {

constexpr std::size_t kConfigFileBytesMax = 1u << 20;

// The problems found in one file; each is "file:line: what".
class ConfigProblems {
 public:
  explicit ConfigProblems(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  std::string at(int line) const { return line > 0 ? file_ + ":" + std::to_string(line) : file_; }
  std::string at(const toml::node& n) const;
  void add(int line, const std::string& what) { problems_.emplace_back(line, at(line) + ": " + what); }
  void add(const toml::node& n, const std::string& what);
  bool empty() const { return problems_.empty(); }
  // Every problem, ordered by line (a table's keys are visited in key order, not file order).
  std::vector<std::string> take();

 private:
  std::string file_;
  std::vector<std::pair<int, std::string>> problems_;
};

struct TomlText {
  std::optional<toml::table> table;   // set when the text is valid TOML of at most kConfigFileBytesMax
  std::vector<std::string> problems;  // otherwise: why not, with file:line:column
};
TomlText parse_toml(const std::string& text, const std::string& file_name);

// The whole file, or nullopt with `problem` set (cannot open, larger than kConfigFileBytesMax).
std::optional<std::string> read_config_file(const std::string& path, std::string& problem);

// The line a parsed node (key, value or table) starts on; 0 for nodes built in code.
int line_of(const toml::node& n);
int line_of(const toml::key& k);
// A value as TOML text, for messages: `"pasive"` with its quotes, `1.5`, `[1, 2]`.
std::string toml_text(const toml::node& n);
// A quoted TOML basic string with escapes.
std::string toml_string(std::string_view s);
// The shortest TOML number that reads back as exactly `v`; whole numbers without an exponent.
std::string toml_number(double v);
// ["a", "b"]
std::string toml_string_array(const std::vector<std::string>& items);

}  // namespace hapair
