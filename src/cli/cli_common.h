// Pieces several subcommands share: loading the topology with overrides, reporting problems,
// and a progress line on stderr.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options/options_description.hpp>

#include "config/topology_file.h"
#include "launch/launcher.h"
#include "protocols/plan.h"

namespace hapair::cli {

// Loads the topology (the built-in default when `path` is empty), applies the overrides and
// builds the plan; on any problem the plan is null and `problems` holds every one.
struct PlanLoad {
  std::shared_ptr<const Plan> plan;
  std::vector<std::string> problems;
};
PlanLoad load_plan(const std::string& path, const RunOverrides& o);

// Prints problems as a list under a heading; returns the exit status for invalid input (2).
int report_problems(const std::string& command, const std::string& heading, const std::vector<std::string>& problems);

// Boost.Program_options reads "-5" into an unsigned option as a huge number, so whole-number
// options are read as text and converted here: `text` as a whole number in [min, max]. On
// anything else (a sign, a fraction, trailing text, out of range) a problem naming the option
// and the range is added and nullopt returned.
std::optional<std::uint64_t> whole_number(const std::string& option, const std::string& text, std::uint64_t min,
                                          std::uint64_t max, std::vector<std::string>& problems);

// The valid range of a numeric option that takes fractions (seconds, rates, costs): from `min`
// (itself allowed when `min_allowed`) to `max` (allowed); NaN and infinities never are.
struct NumberRange {
  double min = 0;
  bool min_allowed = false;
  double max = 0;
  const char* unit = "";  // "seconds", "tuples per second", "microseconds"
};
// Shared ranges. A run or a wait of more than a day is a typo, not an experiment.
inline constexpr double kSecondsMax = 86'400.0;
inline constexpr NumberRange kDurationRange{0.0, false, kSecondsMax, "seconds"};
inline constexpr NumberRange kTimeoutRange{0.0, false, kSecondsMax, "seconds"};
inline constexpr NumberRange kRateRange{0.0, false, kRateTpsMax, "tuples per second"};
inline constexpr NumberRange kOperatorCostRange{0.0, true, kOperatorCostUsPerTupleMax, "microseconds"};
// "--duration-s '-1': must be a number of seconds > 0 and <= 86400"; the text as given.
std::string range_problem(const std::string& option, const std::string& text, const NumberRange& range);
// `text` as a number inside `range`, else a problem naming the option and the range (a typo, a
// trailing unit, a sign) is added and nullopt returned. Read as text, so every bad value gets
// the same message and NaN is refused.
std::optional<double> real_number(const std::string& option, const std::string& text, const NumberRange& range,
                                  std::vector<std::string>& problems);

// `text` as a finite number (no unit, nothing after it), else nullopt.
std::optional<double> finite_number(const std::string& text);

// "--driver 'x'": real or sim, with the close match.
void check_driver(const std::string& driver, std::vector<std::string>& problems);

// --ha / --approaches items: the HA mode, or a problem listing the modes with the close match.
std::optional<HaMode> ha_mode_option(const std::string& option, const std::string& text, std::vector<std::string>& problems);

// --hosts FILE, --copy-binary, --remote-binary PATH, --install-package FILE, --secure: a real run on several hosts over ssh
// (docs/HOSTS.md). `run` and `compare` take them.
struct HostsArgs {
  std::string hosts_path;
  bool copy_binary = false;
  std::string remote_binary = "hapair";
  std::string install_package;  // --install-package FILE
  // --secure: CURVE on every ZeroMQ socket of the run (runtime/curve.h); always on with --hosts.
  bool secure = false;
};
void add_hosts_options(boost::program_options::options_description& described, HostsArgs& args);
// The hosts file read (every problem at once, with the driver: several hosts need `real`); an
// empty HostsLaunch without --hosts.
HostsLaunch hosts_launch(const HostsArgs& args, const std::string& driver, std::vector<std::string>& problems);
// The hosts options as a command line names them again (" --hosts FILE --copy-binary"; "" without
// --hosts), for the reproduce commands of a campaign.
std::string hosts_arguments(const HostsArgs& args);
// --lose-host items (HOST@SECONDS, host-of:NODE@SECONDS) added to `hosts.losses`; a problem per
// item that is not one, and one when there are items but no --hosts.
void add_lose_host_options(const std::vector<std::string>& items, HostsLaunch& hosts, std::vector<std::string>& problems);
// --pause-host items (HOST@SECONDS+DURATION, host-of:NODE@SECONDS+DURATION) added to
// `hosts.pauses`; a problem per malformed item, and one when there is no hosts file.
void add_host_pause_options(const std::vector<std::string>& items, HostsLaunch& hosts, std::vector<std::string>& problems);
// --limit-bandwidth items (HOST-HOST=RATE@SECONDS[+DURATION], RATE in tc's units: 8mbit) added to
// `hosts.limits`; a problem per malformed item, and one when there is no hosts file.
void add_limit_bandwidth_options(const std::vector<std::string>& items, HostsLaunch& hosts, std::vector<std::string>& problems);
// The faults of a run on several hosts against its plan (every problem at once): the placement,
// each host loss's host and time, and partitions between two nodes on one host (a partition
// across hosts cuts the hosts' link, hosts/host_faults.h).
std::vector<std::string> hosts_fault_problems(const Plan& plan, const HostsLaunch& hosts, const std::vector<FaultSpec>& faults);

// A progress line on stderr: rewritten in place on a terminal, one line a second otherwise.
class Progress {
 public:
  explicit Progress(std::string label);
  void update(double elapsed_s, double total_s);
  void done(const std::string& note = "");

 private:
  std::string label_;
  bool tty_;
  int last_whole_s_ = -1;
};

}  // namespace hapair::cli
