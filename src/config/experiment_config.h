// Experiment configuration files: experiments/<name>/experiment.toml is a topology file with
// every knob written out (docs/TOPOLOGY.md) plus one [experiment] table holding the
// experiment's own parameters: which approaches run, what is swept over which points, how many
// seeds, which node is SIGKILLed when. docs/EXPERIMENTS.md lists the keys.
//
// Paper: each reproduced figure of Hwang et al. (section 6) varies one knob (the communication
// interval, the operator state size, the input rate, the trimming rule) and measures recovery
// time, runtime overhead or the recovery type; this is where an experiment says which.
//
// Invariants: the file is parsed once as TOML; the [experiment] table is read here and the rest
// by the topology reader (config/topology_toml.h), so every problem names its "file:line"; a
// config comes back only when there is no problem at all; write_experiment_section() writes back
// every key so that parse_experiment_config(write_experiment_section(s) + write_topology(t))
// reproduces both.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocols/topology.h"

namespace hapair {

// One network of a multi-network experiment (the semantics table): a topology file, relative to
// the experiment's folder, and the node SIGKILLed in it.
struct ExperimentNetwork {
  std::string file;
  std::string victim;
  friend bool operator==(const ExperimentNetwork&, const ExperimentNetwork&) = default;
};

// The [experiment] table. Every key is optional here; each experiment reports the ones it
// needs and does not find (see experiments.cpp).
struct ExperimentSection {
  std::vector<std::string> approaches;  // labels, see approach_labels()
  std::vector<std::string> sweeps;      // knobs swept, see sweep_names()
  // <sweep>_points and <sweep>_quick_points: the values of each sweep, in the order given.
  std::map<std::string, std::vector<double>> points;
  std::map<std::string, std::vector<double>> quick_points;
  std::int64_t seeds = 3;                 // runs per point, seeds base, base + 1, ...
  std::string victim;                     // the node SIGKILLed (runs with a failure)
  std::optional<double> fail_at_s;        // when (the earliest instant, see fail_spread_s)
  // The failure of each seed's runs comes at fail_at_s plus an offset in [0, fail_spread_s)
  // derived from the seed alone (the same for every approach at that seed), so the failures fall
  // at different phases of the checkpoint and ack timers, as a failure at a random time would.
  double fail_spread_s = 0.0;
  double quick_duration_s = 1.5;          // --quick: duration_s of every run
  double quick_fail_at_s = 0.75;          // --quick: fail_at_s
  double quick_fail_spread_s = 0.0;       // --quick: fail_spread_s
  std::vector<ExperimentNetwork> networks;  // {file, victim}, for experiments over several networks
  friend bool operator==(const ExperimentSection&, const ExperimentSection&) = default;
};

struct ExperimentConfig {
  std::string path;  // the file it came from ("" for text)
  ExperimentSection experiment;
  Topology topology;
};

struct ExperimentConfigLoad {
  std::optional<ExperimentConfig> config;  // set only when `problems` is empty
  std::vector<std::string> problems;
};

// Parses the text: the [experiment] table (optional) and the topology tables beside it.
ExperimentConfigLoad parse_experiment_config(const std::string& text, const std::string& file_name);
// Reads and parses a file (at most 1 MiB).
ExperimentConfigLoad load_experiment_config(const std::string& path);

// The [experiment] table as TOML text, every key explicit, in the order of the keys table in docs/EXPERIMENTS.md.
std::string write_experiment_section(const ExperimentSection& section);

// A number as the shortest text that reads back to the same double ("100", "0.665"): how the
// config, the CSV's sweep values and the run labels write numbers.
std::string number_text(double value);

// The approach labels an experiment may list: the HA modes (none, amnesia, upstream, passive,
// active) and variants: active_nodet (active standby without determinants), upstream_exact and
// upstream_conservative (upstream backup with settings.trimming forced to that rule).
const std::vector<std::string>& approach_labels();
// Sets the approach on a topology (every processing fragment); "" on success, else the problem.
std::string apply_approach(Topology& topology, const std::string& label);

// The knobs an experiment may sweep: interval_ms (checkpoint_interval_ms and ack_interval_ms
// together), checkpoint_interval_ms, ack_interval_ms, window_ms (every aggregate's window),
// rate_tps (every source; a nexmark source's events_per_s), conservative_retention_ms, load (the
// load rho of a fragment that processes every source tuple: every source's rate_tps, or a nexmark
// source's events_per_s, = rho x 10^6 / operator_cost_us_per_tuple),
// chain_depth (the network rebuilt as a chain of that many copies of its first processing
// fragment, stage1 .. stageN) and fail_offset_ms (not a knob of the network: the failure comes
// that many ms after the seed's failure instant, see docs/EXPERIMENTS.md).
const std::vector<std::string>& sweep_names();
// Sets a sweep knob to `value`; "" on success, else the problem (a fractional value for a whole
// number knob, a window that the slide does not divide, ...).
std::string apply_sweep(Topology& topology, const std::string& sweep, double value);

}  // namespace hapair
