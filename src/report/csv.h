// CSV writing: the one place that quotes a field, for every CSV file hapair writes (a run's
// output.csv, events.csv, metrics.csv and merge_order.csv, and the compare, experiment, chaos
// and soak tables).
//
// The quoting is RFC 4180's: a field that holds a separator, a double quote or a line break
// (\r or \n) is written between double quotes, with every double quote inside doubled; any
// other field is written as it is. Numbers are formatted by the caller (fmt), so a row is a
// pure function of its values and the same values give the same bytes.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "protocols/number_text.h"  // shortest_text(): the one lossless number form

namespace hapair {

// `s` between double quotes, its double quotes doubled (for columns that are always quoted,
// like events.csv's details).
std::string csv_quoted(std::string_view s);

// `s` as it is when it needs no quoting, else csv_quoted(s).
std::string csv_field(std::string_view s);

// One record, built field by field, so that a writer never places a separator by hand:
//   CsvRow().field(name).number(count).fixed(ms, 3).line()  ->  "name,12,3.500\n"
class CsvRow {
 public:
  // A text field, quoted when it needs it.
  CsvRow& field(std::string_view s);
  // A text field that is always quoted.
  CsvRow& quoted(std::string_view s);
  // A field the caller has already formatted and that needs no quoting (a number, an enum's
  // name); checked, so a separator inside is a bug caught at once.
  CsvRow& raw(std::string_view s);
  template <std::integral Int>
  CsvRow& number(Int v) {
    return raw(std::to_string(v));
  }
  CsvRow& flag(bool b) { return raw(b ? "1" : "0"); }
  // A double with `decimals` digits after the point ("%.3f").
  CsvRow& fixed(double v, int decimals);
  // A double in shortest_text() form.
  CsvRow& exact(double v) { return raw(shortest_text(v)); }
  // An empty field.
  CsvRow& empty() { return raw(""); }

  // The record with its line break.
  std::string line() const { return text_ + "\n"; }

 private:
  void separate();
  std::string text_;
  bool first_ = true;
};

}  // namespace hapair
