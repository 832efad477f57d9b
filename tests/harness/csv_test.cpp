// The one CSV writer (report/csv.h): RFC 4180 quoting of every awkward field, rows built field by
// field, and every quoted field read back unchanged by the tests' reader (tests/support).
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "report/csv.h"
#include "support/result_csv.h"

using namespace hapair;

TEST_CASE("a plain CSV field is written as it is", "[csv]") {
  CHECK(csv_field("aggregate.backup") == "aggregate.backup");
  CHECK(csv_field("") == "");
  CHECK(csv_field("kind=crash node=a") == "kind=crash node=a");
  CHECK(csv_field("it's") == "it's");
}

TEST_CASE("a CSV field with a separator, quote or line break is quoted with its quotes doubled", "[csv]") {
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("\"") == "\"\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("carriage\rreturn") == "\"carriage\rreturn\"");
  CHECK(csv_field(",") == "\",\"");
}

TEST_CASE("an always-quoted CSV field is quoted even when plain", "[csv]") {
  CHECK(csv_quoted("") == "\"\"");
  CHECK(csv_quoted("plain") == "\"plain\"");
  CHECK(csv_quoted("a \"b\", c") == "\"a \"\"b\"\", c\"");
}

TEST_CASE("a CSV row places one separator between fields and ends with a line break", "[csv]") {
  CHECK(CsvRow().line() == "\n");
  CHECK(CsvRow().empty().line() == "\n");
  CHECK(CsvRow().empty().empty().line() == ",\n");
  CHECK(CsvRow()
            .field("net, with comma")
            .number(std::uint64_t{18446744073709551615ULL})
            .number(std::int64_t{-5})
            .number(std::uint16_t{7})
            .flag(true)
            .flag(false)
            .fixed(2.5, 3)
            .fixed(-0.0004, 3)
            .exact(0.1)
            .quoted("x")
            .empty()
            .line() == "\"net, with comma\",18446744073709551615,-5,7,1,0,2.500,-0.000,0.1,\"x\",\n");
}

TEST_CASE("shortest_text reads back as exactly the same double", "[csv]") {
  for (double v : {0.1, 1.0 / 3.0, 1e-7, 123456789.125, 0.372974, -2.5, 1e300}) {
    INFO(v);
    CHECK(std::stod(shortest_text(v)) == v);
  }
  CHECK(shortest_text(100.0) == "100");
  CHECK(shortest_text(0.372974) == "0.372974");
}

TEST_CASE("every written CSV field reads back unchanged", "[csv]") {
  const std::vector<std::string> fields = {"", "plain", "a,b", "\"", "say \"hi\", twice", "two\nlines", "cr\r\nlf", ",,"};
  CsvRow row;
  for (const std::string& f : fields) row.field(f);
  CsvRow quoted;
  for (const std::string& f : fields) quoted.quoted(f);
  const std::vector<CsvRecord> records = parse_csv(row.line() + quoted.line());
  REQUIRE(records.size() == 2);
  CHECK(records[0].fields == fields);
  CHECK(records[1].fields == fields);
  CHECK(records[0].line == 1);
  // The first record holds two line breaks inside quotes ("two\nlines" and "cr\r\nlf"), so the
  // second starts on line 4.
  CHECK(records[1].line == 4);
}
