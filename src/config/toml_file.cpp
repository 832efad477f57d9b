#include "config/toml_file.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hapair {

std::string ConfigProblems::at(const toml::node& n) const { return at(line_of(n)); }

void ConfigProblems::add(const toml::node& n, const std::string& what) { add(line_of(n), what); }

std::vector<std::string> ConfigProblems::take() {
  std::stable_sort(problems_.begin(), problems_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& p : problems_) out.push_back(std::move(p.second));
  problems_.clear();
  return out;
}

TomlText parse_toml(const std::string& text, const std::string& file_name) {
  if (text.size() > kConfigFileBytesMax)
    return TomlText{std::nullopt,
                    {file_name + ": the file has " + std::to_string(text.size()) + " bytes, at most " +
                     std::to_string(kConfigFileBytesMax) + " are accepted"}};
  try {
    return TomlText{toml::parse(text, file_name), {}};
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    return TomlText{std::nullopt, {file_name + ":" + std::to_string(at.line) + ": not valid TOML: " +
                                   std::string(e.description()) + " (column " + std::to_string(at.column) + ")"}};
  }
}

std::optional<std::string> read_config_file(const std::string& path, std::string& problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = "cannot open " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string text(kConfigFileBytesMax + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) {
    problem = "cannot read " + path;
    return std::nullopt;
  }
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kConfigFileBytesMax) {
    problem = path + ": larger than " + std::to_string(kConfigFileBytesMax) + " bytes; is this a configuration file?";
    return std::nullopt;
  }
  return text;
}

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }
int line_of(const toml::key& k) { return static_cast<int>(k.source().begin.line); }

std::string toml_text(const toml::node& n) {
  std::ostringstream out;
  n.visit([&out](const auto& v) { out << toml::toml_formatter(v, toml::format_flags::none); });
  std::string s = out.str();
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string toml_string(std::string_view s) {
  std::ostringstream out;
  out << toml::toml_formatter(toml::value<std::string>(std::string(s)), toml::format_flags::none);
  return out.str();
}

std::string toml_number(double v) {
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0";
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s == "-nan") s = "nan";
  return s;
}

std::string toml_string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& s : items) out += (out.size() > 1 ? ", " : "") + toml_string(s);
  return out + "]";
}

}  // namespace hapair
