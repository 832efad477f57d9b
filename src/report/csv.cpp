#include "report/csv.h"

#include <fmt/format.h>

#include "protocols/check.h"

namespace hapair {

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
