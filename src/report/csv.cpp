#include "report/csv.h"

#include <charconv>
#include <system_error>

#include <fmt/format.h>

#include "protocols/check.h"

namespace hapair {

std::string shortest_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  HAPAIR_CHECK_MSG(ec == std::errc(), "to_chars failed for a double");
  return std::string(buf, end);
}

std::string csv_quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_field(std::string_view s) {
  return s.find_first_of(",\"\r\n") == std::string_view::npos ? std::string(s) : csv_quoted(s);
}

void CsvRow::separate() {
  if (!first_) text_ += ',';
  first_ = false;
}

CsvRow& CsvRow::field(std::string_view s) {
  separate();
  text_ += csv_field(s);
  return *this;
}

CsvRow& CsvRow::quoted(std::string_view s) {
  separate();
  text_ += csv_quoted(s);
  return *this;
}

CsvRow& CsvRow::raw(std::string_view s) {
  HAPAIR_CHECK_MSG(s.find_first_of(",\"\r\n") == std::string_view::npos, "a raw CSV field needs quoting: " << s);
  separate();
  text_ += s;
  return *this;
}

CsvRow& CsvRow::fixed(double v, int decimals) { return raw(fmt::format("{:.{}f}", v, decimals)); }

}  // namespace hapair
