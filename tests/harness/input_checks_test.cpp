// Checks of user input shared by run, compare and chaos (config/input_checks.h): close matches
// of misspelt names, the victim of a comparison, fault times inside the run, and
// validate_run_faults reporting every problem of a schedule with the valid names.
#include <catch2/catch.hpp>

#include <limits>

#include "config/input_checks.h"
#include "run/run_once.h"
#include "config/topology_file.h"

using namespace hapair;

namespace {

Plan input_default_plan(HaMode ha) {
  Topology t = default_topology();
  t.settings.ha = ha;
  return make_plan(t);
}

}  // namespace

TEST_CASE("edit distance counts insertions, deletions, substitutions and swapped neighbours", "[input]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("aggregate", "aggregate") == 0);
  CHECK(edit_distance("aggregat", "aggregate") == 1);
  CHECK(edit_distance("agregate", "aggregate") == 1);
  CHECK(edit_distance("chian", "chain") == 1);
  CHECK(edit_distance("passive", "active") == 3);
  CHECK(edit_distance("", "sink") == 4);
}

TEST_CASE("a close match is offered only when one choice is clearly meant", "[input]") {
  const std::vector<std::string> modes = {"none", "amnesia", "upstream", "passive", "active"};
  CHECK(close_match("pasive", modes) == std::optional<std::string>("passive"));
  CHECK(close_match("PASSIVE", modes) == std::optional<std::string>("passive"));
  CHECK(close_match("ups", modes) == std::optional<std::string>("upstream"));
  CHECK_FALSE(close_match("a", modes).has_value());        // too short to be a prefix
  CHECK_FALSE(close_match("quantum", modes).has_value());  // nothing near
  CHECK_FALSE(close_match("", modes).has_value());
  // Two choices equally near: no guess.
  CHECK_FALSE(close_match("ab", {"aa", "bb"}).has_value());
  CHECK(unknown_choice("--ha", "pasive", "an HA mode", modes) ==
        "--ha 'pasive' is not an HA mode (did you mean 'passive'?); the choices are: none, amnesia, upstream, "
        "passive, active");
  CHECK(unknown_choice("--pick", "rnd", "a pick rule", {"turn", "random"}) ==
        "--pick 'rnd' is not a pick rule; the choices are: turn, random");
}

TEST_CASE("the victim of a comparison must be the primary of an operator fragment", "[input]") {
  const Plan plan = input_default_plan(HaMode::passive);
  CHECK(victim_names(plan) == std::vector<std::string>{"filter", "aggregate"});
  CHECK(check_victim(plan, "aggregate", "--victim").empty());
  CHECK(check_victim(plan, "filter", "--victim").empty());

  for (const char* end : {"source", "sink"}) {
    INFO(end);
    const auto problems = check_victim(plan, end, "--victim");
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Contains("which no approach protects") &&
                                Catch::Contains("the primary of an operator fragment: filter, aggregate"));
  }
  const auto standby = check_victim(plan, "aggregate.backup", "--victim");
  REQUIRE(standby.size() == 1);
  CHECK_THAT(standby[0], Catch::Contains("the standby of fragment aggregate; name its primary 'aggregate'"));
  const auto misspelt = check_victim(plan, "agregate", "--victim");
  REQUIRE(misspelt.size() == 1);
  CHECK_THAT(misspelt[0], Catch::Contains("(did you mean 'aggregate'?)") && Catch::Contains("filter, aggregate"));
}

TEST_CASE("a fault time must fall after the start and before the sources stop", "[input]") {
  const Plan plan = input_default_plan(HaMode::none);  // duration_s 6
  CHECK_FALSE(fault_time_problem(plan, 3.0).has_value());
  CHECK_FALSE(fault_time_problem(plan, 5.999).has_value());
  for (double bad : {-3.0, 0.0, 6.0, 9.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    INFO(bad);
    const auto p = fault_time_problem(plan, bad);
    REQUIRE(p.has_value());
    CHECK_THAT(*p, Catch::Contains("0 < SECONDS < 6 s (duration_s)"));
  }
}

TEST_CASE("validate_run_faults names each unknown node with the nodes of the run and the close match", "[input]") {
  const Plan none = input_default_plan(HaMode::none);
  const auto problems = validate_run_faults(none, {{FaultKind::crash, "aggregat", "", 2.0, 0.0},
                                                   {FaultKind::crash, "aggregate", "", 9.0, 0.0},
                                                   {FaultKind::pause, "filtr", "", 1.0, 0.5},
                                                   {FaultKind::crash, "aggregate.backup", "", 1.0, 0.0},
                                                   {FaultKind::partition, "filter", "sinc", 1.0, 0.5}});
  REQUIRE(problems.size() == 5);
  CHECK_THAT(problems[0], Catch::StartsWith("fault 1 (crash aggregat at 2 s): unknown node 'aggregat' (did you mean "
                                            "'aggregate'?); the nodes of this run are: source, filter, aggregate, sink"));
  CHECK_THAT(problems[1], Catch::StartsWith("fault 2 (crash aggregate at 9 s): at 9 s: a fault must come after the start "
                                            "and before the sources stop"));
  CHECK_THAT(problems[2], Catch::Contains("unknown node 'filtr' (did you mean 'filter'?)"));
  // A standby's name under a mode without standby says why it is not there.
  CHECK_THAT(problems[3], Catch::Contains("fragment aggregate runs ha none, which has no standby"));
  CHECK_THAT(problems[4], Catch::Contains("unknown peer node 'sinc' (did you mean 'sink'?)"));

  // The schedule checks of the simulator still apply, once each.
  const Plan passive = input_default_plan(HaMode::passive);
  const auto twice = validate_run_faults(passive, {{FaultKind::crash, "aggregate", "", 2.0, 0.0},
                                                   {FaultKind::crash, "aggregate", "", 3.0, 0.0}});
  REQUIRE(twice.size() == 1);
  CHECK_THAT(twice[0], Catch::Contains("already crashed"));
  const auto negative = validate_run_faults(passive, {{FaultKind::crash, "aggregate", "", -1.0, 0.0}});
  REQUIRE(negative.size() == 1);
  CHECK_THAT(negative[0], Catch::Contains("at -1 s: a fault must come after the start"));
  CHECK(validate_run_faults(passive, {{FaultKind::crash, "aggregate.backup", "", 2.0, 0.0}}).empty());
}
