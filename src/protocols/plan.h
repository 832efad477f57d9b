// A deployment plan: the topology resolved to numeric ids, with one node (process) per fragment
// primary and one per standby (spare, backup or recovery node) that the fragment's HA mode needs.
// Every core and driver receives the same plan, so every node knows every other node's role.
//
// Invariants: node, fragment and stream ids are indexes into their vectors; every inter-fragment
// stream has exactly one producing fragment; the fragment graph is acyclic.
#pragma once

#include <string>
#include <vector>

#include "protocols/ids.h"
#include "protocols/topology.h"

namespace hapair {

struct PlanNode {
  NodeId id = kNoNode;
  std::string name;  // "aggregate", "aggregate.backup", "aggregate.spare"
  FragmentId fragment = kNoFragment;
  bool standby = false;
  std::string endpoint;  // from the topology, possibly empty (launcher assigns)
};

struct PlanStream {
  StreamId id = kNoStream;
  std::string name;
  FragmentId producer = kNoFragment;
  std::vector<FragmentId> consumers;  // other fragments reading this stream
  // The weakest operator class on any path from a fragment input to this stream inside the
  // producing fragment (sources count as repeatable).
  OperatorClass producer_class = OperatorClass::repeatable;
};

struct PlanFragment {
  FragmentId id = kNoFragment;
  std::string name;
  FragmentKind kind = FragmentKind::operators;
  HaMode ha = HaMode::none;
  NodeId primary = kNoNode;
  NodeId standby = kNoNode;  // kNoNode when the mode needs none
  std::vector<StreamId> inputs;   // streams read from other fragments, in first-use order
  std::vector<StreamId> outputs;  // streams sent to other fragments
  std::vector<FragmentId> upstream;    // producers of inputs
  std::vector<FragmentId> downstream;  // consumers of outputs
  OperatorClass klass = OperatorClass::repeatable;  // weakest class of its operators
  std::size_t spec_index = 0;  // index into topology.fragments
};

struct Plan {
  Topology topology;
  std::vector<PlanNode> nodes;
  std::vector<PlanStream> streams;  // inter-fragment streams only
  std::vector<PlanFragment> fragments;

  const Settings& settings() const { return topology.settings; }
  const FragmentSpec& spec(FragmentId f) const { return topology.fragments.at(fragments.at(f).spec_index); }
  // Lookups by name; kNo* when absent.
  NodeId node_id(const std::string& name) const;
  FragmentId fragment_id(const std::string& name) const;
  StreamId stream_id(const std::string& name) const;
  // Whether an HA mode's consumers may ask for a replay of their input after a takeover
  // (and so need the upstream to retain it until their level-1 ack).
  static bool needs_retention(HaMode consumer_mode);
  static bool has_standby(HaMode mode);
};

// Bounds validate() holds knobs to that command-line options override too (the CLI checks its
// options against the same numbers).
inline constexpr double kRateTpsMax = 10'000'000.0;
inline constexpr std::int64_t kBatchTuplesMax = 100'000;
inline constexpr double kOperatorCostUsPerTupleMax = 100'000.0;  // 0.1 s per tuple: beyond any sensible model

// Every problem of a topology at once (an empty vector means valid); each names its place
// ("file:line" where known) and what is wrong.
std::vector<std::string> validate(const Topology&);

// Builds the plan of a topology that validate() accepted.
Plan make_plan(const Topology&);

}  // namespace hapair
