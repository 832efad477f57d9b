// Topology files: the TOML text a user writes to describe a query network, its HA modes
// and every knob of a run (docs/TOPOLOGY.md), parsed into a Topology and written back out.
//
// Paper: the query network of boxes and streams split into fragments, one server each, with an
// HA approach per fragment (sections 2 and 4); the knobs are the paper's intervals (heartbeat,
// checkpoint, queue trimming) and our queue bounds.
//
// Invariants: parsing reports every problem at once, each naming "file:line"; a topology comes
// back only when there is none. write_topology() writes every knob explicitly and
// parse_topology(write_topology(t)) == t except for the where/source_file fields, because the
// launcher hands exactly that text to every node process as the run's effective config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocols/topology.h"

namespace hapair {

struct TopologyLoad {
  std::optional<Topology> topology;  // set only when `problems` is empty
  std::vector<std::string> problems;  // parse problems first, then validate()'s
};

// Parses `text`; `file_name` names the text in `where` fields and messages.
TopologyLoad parse_topology(const std::string& text, const std::string& file_name);
// Reads and parses a file (at most 1 MiB).
TopologyLoad load_topology_file(const std::string& path);

// The effective config: every knob with its value, in the topology file format. Fields that
// do not apply to an item (a filter's window, an exponential distribution's second parameter)
// are not written and read back as their defaults.
std::string write_topology(const Topology& topology);

// Command-line overrides of a run.
struct RunOverrides {
  std::optional<HaMode> ha;  // the network default, and every processing fragment's own mode
  std::optional<double> duration_s;
  std::optional<double> rate_tps;  // every source (a nexmark source: its events_per_s)
  std::optional<std::uint64_t> seed;
  std::optional<double> operator_cost_us_per_tuple;
  std::optional<DetectorKind> detector;
  std::optional<TraceLevel> trace_level;
  // --standbys K: k standbys for every processing fragment (the network's `standbys`, and every
  // fragment's own reset to it).
  std::optional<std::int64_t> standbys;
  // --links KEY=VALUE,...: the [links] keys to set for every link (docs/LINKS.md).
  std::optional<std::string> links;
  // --switch NODE=APPROACH@SECONDS: live switches added to the topology's [[switch]] schedule
  // (parse_switch_option).
  std::vector<SwitchSpec> switches;
};

// Reads --switch text ("aggregate=active@2.5": the fragment's primary node, an approach, a time
// in seconds) into a switch; nullopt with `error` set when malformed (an unknown approach
// names the valid ones). Whether the fragment and time fit the run is validate()'s.
std::optional<SwitchSpec> parse_switch_option(const std::string& text, std::string& error);

// Reads --links text ("latency_ms=20,jitter_ms=5,loss_ratio=0.01": the [links] keys) into
// `defaults`; the problems (empty: accepted). The ranges are validate()'s.
std::vector<std::string> parse_links_option(const std::string& text, LinkSettings& defaults);

// Applies the overrides and re-validates: the problems of the result (empty: valid). An `ha`
// override clears the per-fragment modes of processing fragments, so `--ha passive` really runs
// every fragment passive.
std::vector<std::string> apply_overrides(Topology& topology, const RunOverrides& overrides);

}  // namespace hapair
