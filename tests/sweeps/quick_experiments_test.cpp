// Every reproduction experiment's quick version (campaigns/experiments.h) in the simulator writes
// its CSV, PNG, seed, config and version files and ends with a claim outcome. A sweep over every
// experiment: it runs in the Release build (label sweeps; about a minute under the sanitizers).
#include <catch2/catch.hpp>

#include "campaigns/experiments.h"
#include "support/experiment_files.h"
#include "config/experiment_config.h"
#include "protocols/version.h"

using namespace hapair;
using namespace hapair::testing;

TEST_CASE("every quick experiment writes its CSV, PNG, seed, config and version files and a claim outcome",
          "[experiments]") {
  const std::string root = experiment_temp_dir("quick");
  for (const ExperimentInfo& info : experiment_infos()) {
    DYNAMIC_SECTION(info.name) {
      const std::string out = root + "/" + info.name;
      RunCache cache;
      ExperimentReport report = run_experiment(info.name, quick_options(out), cache);
      INFO("problems: " << (report.problems.empty() ? "" : report.problems.front()));
      REQUIRE(report.problems.empty());
      CHECK(report.run_errors.empty());
      CHECK(report.write_errors.empty());
      CHECK(report.plot_error.empty());
      CHECK(report.driver == "sim");
      REQUIRE(report.runs > 0);

      const std::vector<std::string> csv = lines_of(read_text(out + "/" + info.name + ".csv"));
      REQUIRE(csv.size() == report.runs + 1);
      std::string header;
      for (const std::string& c : experiment_csv_columns()) header += (header.empty() ? "" : ",") + c;
      CHECK(csv.front() == header);
      for (std::size_t i = 1; i < csv.size(); ++i) CHECK(csv[i].rfind(info.name + ",", 0) == 0);

      const std::string png = read_text(out + "/" + info.name + ".png");
      REQUIRE(png.size() > 8);
      CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));

      CHECK(read_text(out + "/seed.txt").rfind("seeds 1", 0) == 0);
      CHECK(read_text(out + "/version.txt") == std::string(version_string()) + "\n");
      CHECK(load_experiment_config(out + "/config.toml").problems.empty());
      CHECK(std::filesystem::is_directory(out + "/runs"));

      CHECK(is_claim_line(report.claim.line()));
      bool printed = false;
      for (const std::string& line : lines_of(read_text(out + "/" + info.name + ".txt")))
        printed = printed || (is_claim_line(line) && line == report.claim.line());
      CHECK(printed);
    }
  }
}

