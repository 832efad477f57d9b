#include "cli/cli_common.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include <boost/program_options.hpp>

#include "config/hosts_file.h"
#include "config/input_checks.h"
#include "hosts/host_faults.h"
#include "hosts/placement.h"
#include "run/run_once.h"

namespace hapair::cli {

int report_problems(const std::string& command, const std::string& heading, const std::vector<std::string>& problems) {
  std::fprintf(stderr, "%s: %s (%zu problem%s):\n", command.c_str(), heading.c_str(), problems.size(),
               problems.size() == 1 ? "" : "s");
  for (const auto& p : problems) std::fprintf(stderr, "  - %s\n", p.c_str());
  return 2;
}

PlanLoad load_plan(const std::string& path, const RunOverrides& o) {
  PlanLoad out;
  Topology topology;
  if (path.empty()) {
    topology = default_topology();
  } else {
    TopologyLoad load = load_topology_file(path);
    if (!load.problems.empty() || !load.topology) {
      for (const auto& p : load.problems) out.problems.push_back("the topology " + path + ": " + p);
      if (out.problems.empty()) out.problems.push_back("the topology " + path + " could not be read");
      return out;
    }
    topology = *load.topology;
  }
  // apply_overrides re-validates the result, so its problems include validate()'s.
  out.problems = apply_overrides(topology, o);
  if (out.problems.empty()) out.plan = std::make_shared<const Plan>(make_plan(topology));
  return out;
}

std::optional<std::uint64_t> whole_number(const std::string& option, const std::string& text, std::uint64_t min,
                                          std::uint64_t max, std::vector<std::string>& problems) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc() && p == end && !text.empty() && v >= min && v <= max) return v;
  problems.push_back(option + " '" + text + "': must be a whole number from " + std::to_string(min) + " to " +
                     std::to_string(max));
  return std::nullopt;
}

namespace {

std::string number_text(double v) { return fmt::format("{:.15g}", v); }

}  // namespace

std::string range_problem(const std::string& option, const std::string& text, const NumberRange& range) {
  std::string unit = range.unit[0] != '\0' ? std::string(" of ") + range.unit : "";
  return option + " '" + text + "': must be a number" + unit + (range.min_allowed ? " >= " : " > ") +
         number_text(range.min) + " and <= " + number_text(range.max);
}

std::optional<double> finite_number(const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc() && p == end && !text.empty() && std::isfinite(v)) return v;
  return std::nullopt;
}

std::optional<double> real_number(const std::string& option, const std::string& text, const NumberRange& range,
                                  std::vector<std::string>& problems) {
  const std::optional<double> v = finite_number(text);
  if (v && (range.min_allowed ? *v >= range.min : *v > range.min) && *v <= range.max) return v;
  problems.push_back(range_problem(option, text, range));
  return std::nullopt;
}

void check_driver(const std::string& driver, std::vector<std::string>& problems) {
  if (driver != "real" && driver != "sim")
    problems.push_back(unknown_choice("--driver", driver, "a driver", {"real", "sim"}));
}

std::optional<HaMode> ha_mode_option(const std::string& option, const std::string& text, std::vector<std::string>& problems) {
  if (auto m = parse_ha_mode(text)) return m;
  std::vector<std::string> modes;
  for (const ApproachTraits& a : ApproachCatalog::builtin().all()) modes.push_back(a.name);
  problems.push_back(unknown_choice(option, text, "an HA mode", modes));
  return std::nullopt;
}

void add_hosts_options(boost::program_options::options_description& described, HostsArgs& args) {
  namespace po = boost::program_options;
  described.add_options()
      ("hosts", po::value<std::string>(&args.hosts_path),
       "run the nodes on the hosts of this file over ssh (TOML, docs/HOSTS.md; --driver real); the control socket binds "
       "the address the hosts reach this machine at unless --control is given")
      ("copy-binary", po::bool_switch(&args.copy_binary),
       "with --hosts: copy this hapair binary into each host's run folder and run that one")
      ("remote-binary", po::value<std::string>(&args.remote_binary)->default_value("hapair"),
       "with --hosts: the hapair each host runs (a path, or a name its PATH finds); must print this build's --version")
      ("install-package", po::value<std::string>(&args.install_package),
       "with --hosts: copy this Debian package of hapair (scripts/package.sh) to each host, unpack it into the run "
       "folder (dpkg-deb -x: no root, removed with the folder) and run its hapair; the host needs the package's "
       "Depends")
      ("secure", po::bool_switch(&args.secure),
       "CURVE on every ZeroMQ socket of the run, with keys made for the run and handed to the nodes on stdin: only the "
       "run's own processes get in (docs/HOSTS.md); always on with --hosts, off by default on one machine");
}

HostsLaunch hosts_launch(const HostsArgs& args, const std::string& driver, std::vector<std::string>& problems) {
  HostsLaunch out;
  if (args.secure && driver != "real") problems.push_back("--secure needs --driver real (the simulator has no sockets)");
  if (args.hosts_path.empty()) {
    if (args.copy_binary) problems.push_back("--copy-binary needs --hosts FILE");
    if (!args.install_package.empty()) problems.push_back("--install-package needs --hosts FILE");
    return out;
  }
  if (driver != "real") problems.push_back("--hosts needs --driver real (the simulator runs on this machine)");
  HostsLoad load = load_hosts_file(args.hosts_path);
  for (auto& p : load.problems) problems.push_back(std::move(p));  // each names the file
  if (load.hosts) out.hosts = std::make_shared<const HostList>(std::move(*load.hosts));
  if (!args.install_package.empty()) {
    std::error_code ec;
    if (args.copy_binary)
      problems.push_back("--install-package and --copy-binary exclude each other: each says which hapair the hosts run");
    else if (args.remote_binary != HostsArgs{}.remote_binary)
      problems.push_back("--install-package and --remote-binary exclude each other: each says which hapair the hosts run");
    else if (!std::filesystem::is_regular_file(args.install_package, ec))
      problems.push_back("--install-package " + args.install_package + ": no such file (scripts/package.sh writes build/hapair_VERSION_amd64.deb)");
  }
  out.copy_binary = args.copy_binary;
  out.remote_binary = args.remote_binary;
  out.install_package = args.install_package;
  return out;
}

std::string hosts_arguments(const HostsArgs& args) {
  if (args.hosts_path.empty()) return "";
  std::string out = " --hosts " + args.hosts_path;
  if (args.copy_binary) out += " --copy-binary";
  else if (!args.install_package.empty()) out += " --install-package " + args.install_package;
  else if (args.remote_binary != HostsArgs{}.remote_binary) out += " --remote-binary " + args.remote_binary;
  return out;
}

void add_lose_host_options(const std::vector<std::string>& items, HostsLaunch& hosts, std::vector<std::string>& problems) {
  for (const std::string& text : items) {
    const std::size_t at = text.rfind('@');
    const std::optional<double> seconds = at == std::string::npos ? std::nullopt : finite_number(text.substr(at + 1));
    if (at == 0 || !seconds) problems.push_back("--lose-host '" + text + "' is not HOST@SECONDS or host-of:NODE@SECONDS (e.g. h2@1.5)");
    else hosts.losses.push_back(HostLossSpec{text.substr(0, at), *seconds});
  }
  if (!items.empty() && !hosts.hosts) problems.push_back("--lose-host needs --hosts FILE");
}

void add_host_pause_options(const std::vector<std::string>& items, HostsLaunch& hosts, std::vector<std::string>& problems) {
  for (const std::string& text : items) {
    std::string error;
    const std::optional<FaultSpec> f = parse_pause_fault(text, error);
    if (!f) problems.push_back("--pause-host '" + text + "' is not HOST@SECONDS+DURATION or host-of:NODE@SECONDS+DURATION (e.g. h2@1+0.5)");
    else hosts.pauses.push_back(HostPauseSpec{f->node, f->at_s, f->duration_s});
  }
  if (!items.empty() && !hosts.hosts) problems.push_back("--pause-host needs --hosts FILE (on one machine, --pause NODE@S+D)");
}

namespace {

// "8mbit", "500kbit", "1.5gbit", "64000bit": bits per second (tc's units), 8 kbit/s .. 100 gbit/s.
std::optional<std::int64_t> link_rate(const std::string& text) {
  static const std::pair<const char*, double> kUnits[] = {{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1.0}};
  for (const auto& [unit, factor] : kUnits) {
    const std::string u = unit;
    if (text.size() <= u.size() || text.compare(text.size() - u.size(), u.size(), u) != 0) continue;
    const std::optional<double> n = finite_number(text.substr(0, text.size() - u.size()));
    if (!n || *n * factor < 8e3 || *n * factor > 1e11) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(*n * factor));
  }
  return std::nullopt;
}

}  // namespace

void add_limit_bandwidth_options(const std::vector<std::string>& items, HostsLaunch& hosts, std::vector<std::string>& problems) {
  for (const std::string& text : items) {
    const std::size_t eq = text.rfind('=');
    const std::size_t at = text.rfind('@');
    const std::size_t plus = text.rfind('+');
    HostLinkLimitSpec spec;
    const bool timed = eq != std::string::npos && at != std::string::npos && eq < at && (plus == std::string::npos || plus > at);
    const std::optional<std::int64_t> rate = timed ? link_rate(text.substr(eq + 1, at - eq - 1)) : std::nullopt;
    const std::optional<double> start =
        timed ? finite_number(text.substr(at + 1, plus == std::string::npos ? std::string::npos : plus - at - 1)) : std::nullopt;
    const std::optional<double> duration = timed && plus != std::string::npos ? finite_number(text.substr(plus + 1)) : 0.0;
    if (!timed || eq == 0 || !start || !duration || *duration < 0) {
      problems.push_back("--limit-bandwidth '" + text + "' is not HOST-HOST=RATE@SECONDS or HOST-HOST=RATE@SECONDS+DURATION "
                         "(e.g. h1-h3=8mbit@1+2; a host is a name of the hosts file or host-of:NODE)");
      continue;
    }
    if (!rate) {
      problems.push_back("--limit-bandwidth '" + text + "': the rate '" + text.substr(eq + 1, at - eq - 1) +
                         "' is not a number with one of the units bit, kbit, mbit, gbit (bits per second, as tc), "
                         "from 8kbit to 100gbit");
      continue;
    }
    hosts.limits.push_back(HostLinkLimitSpec{text.substr(0, eq), *rate, *start, *duration});
  }
  if (!items.empty() && !hosts.hosts)
    problems.push_back("--limit-bandwidth needs --hosts FILE (on one machine, emulate the link: --links "
                       "bandwidth_bytes_per_s=..., docs/LINKS.md)");
}

std::vector<std::string> hosts_fault_problems(const Plan& plan, const HostsLaunch& hosts, const std::vector<FaultSpec>& faults) {
  PlacementResult placed = place_nodes(plan, *hosts.hosts);
  std::vector<std::string> problems = std::move(placed.problems);
  if (!placed.placement) return problems;
  for (const HostLossSpec& loss : hosts.losses) {
    std::string problem;
    if (!lost_host(loss.host, plan, *placed.placement, *hosts.hosts, problem)) problems.push_back("--lose-host: " + problem);
    if (auto p = fault_time_problem(plan, loss.at_s)) problems.push_back("--lose-host " + loss.host + ": " + *p);
  }
  for (const HostLinkLimitSpec& limit : hosts.limits) {
    std::string problem;
    if (!named_link(limit.link, plan, *placed.placement, *hosts.hosts, problem)) problems.push_back("--limit-bandwidth: " + problem);
    if (auto p = fault_time_problem(plan, limit.at_s)) problems.push_back("--limit-bandwidth " + limit.link + ": " + *p);
  }
  for (const HostPauseSpec& pause : hosts.pauses) {
    std::string problem;
    if (!lost_host(pause.host, plan, *placed.placement, *hosts.hosts, problem, "host pause"))
      problems.push_back("--pause-host: " + problem);
    if (auto p = fault_time_problem(plan, pause.at_s)) problems.push_back("--pause-host " + pause.host + ": " + *p);
  }
  for (std::string& p : host_cuts(plan, *placed.placement, *hosts.hosts, faults).problems) problems.push_back("--partition " + p.substr(p.find(' ') + 1));
  // [[link]] tables by host match the placement on the hosts of the file.
  for (const LinkSpec& l : plan.topology.links.links)
    for (const std::string* h : {&l.from_host, &l.to_host})
      if (!h->empty() && !hosts.hosts->index_of(*h))
        problems.push_back((l.where.empty() ? std::string() : l.where + ": ") + "[[link]] host '" + *h + "': no such host in " +
                           hosts.hosts->source_file + " (its hosts: " + fmt::format("{}", fmt::join(hosts.hosts->names(), ", ")) + ")");
  return problems;
}

Progress::Progress(std::string label) : label_(std::move(label)), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::update(double elapsed_s, double total_s) {
  const int whole = static_cast<int>(std::floor(elapsed_s));
  if (!tty_ && whole == last_whole_s_) return;
  last_whole_s_ = whole;
  const double pct = total_s > 0 ? std::min(100.0, 100.0 * elapsed_s / total_s) : 0.0;
  if (tty_)
    std::fprintf(stderr, "\r%s: %5.1f / %.1f s (%3.0f%%)   ", label_.c_str(), elapsed_s, total_s, pct);
  else
    std::fprintf(stderr, "%s: %.0f / %.1f s\n", label_.c_str(), elapsed_s, total_s);
  std::fflush(stderr);
}

void Progress::done(const std::string& note) {
  if (tty_) std::fprintf(stderr, "\r%s: done%s%s%*s\n", label_.c_str(), note.empty() ? "" : " - ", note.c_str(), 20, "");
  else std::fprintf(stderr, "%s: done%s%s\n", label_.c_str(), note.empty() ? "" : " - ", note.c_str());
}

}  // namespace hapair::cli
