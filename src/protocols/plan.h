// A deployment plan: the topology resolved to numeric ids, with one node (process) per fragment
// primary and one per standby (spare, backup or recovery node) that the fragment's approach needs
// (its traits, protocols/approach_traits.h).
// Every core and driver receives the same plan, so every node knows every other node's role.
//
// Invariants: node, fragment and stream ids are indexes into their vectors; every inter-fragment
// stream has exactly one producing fragment; the fragment graph is acyclic.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocols/ids.h"
#include "protocols/topology.h"

namespace hapair {

// The name of the node a plan adds when an approach needs a coordinator (ApproachTraits::coordinator).
inline constexpr const char* kCoordinatorNodeName = "coordinator";

struct PlanNode {
  NodeId id = kNoNode;
  std::string name;  // "aggregate", "aggregate.backup", "aggregate.spare", "coordinator"
  // kNoFragment for a node that runs no fragment: the coordinator of global checkpoints.
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
  // Its timestamps never go backwards (ordered_streams below).
  bool ordered = true;
};

struct PlanFragment {
  FragmentId id = kNoFragment;
  std::string name;
  FragmentKind kind = FragmentKind::operators;
  HaMode ha = kNoHa;
  NodeId primary = kNoNode;
  // The plan's standbys (the `standbys` setting, k; one by default; none for ha none, sources
  // and sinks). Nodes named <fragment><suffix>, then <fragment><suffix>2, 3 (standby_node_name).
  std::vector<NodeId> standbys;
  std::vector<StreamId> inputs;   // streams read from other fragments, in first-use order
  std::vector<StreamId> outputs;  // streams sent to other fragments
  std::vector<FragmentId> upstream;    // producers of inputs
  std::vector<FragmentId> downstream;  // consumers of outputs
  OperatorClass klass = OperatorClass::repeatable;  // weakest class of its operators
  std::size_t spec_index = 0;  // index into topology.fragments

  bool has_standby() const { return !standbys.empty(); }
  // The primary and every standby: the nodes that run this fragment.
  std::vector<NodeId> replicas() const;
  bool is_replica(NodeId n) const;
  // A replica's place: 0 the plan's primary, i the plan's i-th standby; beyond them for a node
  // of another fragment. Ties of an election among k standbys go to the lowest.
  std::size_t replica_index(NodeId n) const;
  // The node node n pairs with in the plan: a standby's primary, the primary's (first) standby;
  // kNoNode for a fragment without standby.
  NodeId plan_partner(NodeId n) const {
    if (standbys.empty()) return kNoNode;
    return n == primary ? standbys.front() : primary;
  }
};

// A live switch of a fragment's approach, resolved (Topology::switches).
struct PlanSwitch {
  FragmentId fragment = kNoFragment;
  HaMode to = kNoHa;
  TimeUs at_us = 0;
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
  // The approaches this plan may name (the built-in ones, unless a caller registered more).
  ApproachCatalog approaches;
  // Some Union merges in timestamp order, so streams carry boundaries (TupleBatch::boundary_ms).
  bool boundaries = false;
  // The coordinator node (kCoordinatorNodeName), the last node of the plan, when some
  // fragment's approach needs one (ApproachTraits::coordinator); kNoNode otherwise.
  NodeId coordinator = kNoNode;
  bool runs_fragment(NodeId n) const { return n < nodes.size() && nodes[n].fragment != kNoFragment; }
  // The traits of a fragment's approach (sources and sinks: the baseline's). The approach the
  // plan gives it at the start: a live switch changes it during the run (switches below; who
  // follows which is the route table's, RouteTable::traits).
  const ApproachTraits& traits(FragmentId f) const;
  // Live switches (docs/ARCHITECTURE.md "Live switching"), in time order (ties in file order).
  std::vector<PlanSwitch> switches;
  // The approach fragment f's schedule gives it at `now`: the last switch due by then (nullopt:
  // none due yet).
  std::optional<HaMode> scheduled_mode(FragmentId f, TimeUs now) const;
  // When fragment f's next switch after `now` is due (kNever: none).
  TimeUs next_switch_us(FragmentId f, TimeUs now) const;
};

// An approach a fragment can be switched to and from live (docs/ARCHITECTURE.md "Live
// switching"): one with a standby and no coordinator, precise on a deterministic network.
bool switchable_mode(const ApproachCatalog& approaches, HaMode mode);
// Their names, for errors: "upstream, passive, active, hybrid".
std::string switchable_mode_names(const ApproachCatalog& approaches);

// The name of a fragment's standby number `index` (0 first): "aggregate.backup",
// "aggregate.backup2", "aggregate.backup3".
std::string standby_node_name(const std::string& fragment, const std::string& suffix, std::size_t index);

// Whether an operator's output timestamps never go backwards, given its inputs': Filter and Map
// keep their input's order, an Aggregate emits windows in end order, a Join in its later input's
// order when both inputs are ordered, a Union in arrival order interleaves (not ordered) and one
// in timestamp order merges (ordered when its inputs are).
bool ordered_output(const OperatorSpec& op, const std::vector<bool>& inputs_ordered);
// Every stream of a topology (sources' and operators', by name): whether its timestamps never go
// backwards. A stream on a cycle counts as unordered (validate() reports the cycle).
std::map<std::string, bool> ordered_streams(const Topology& t);

// Bounds validate() holds knobs to that command-line options override too (the CLI checks its
// options against the same numbers).
inline constexpr double kRateTpsMax = 10'000'000.0;
inline constexpr std::int64_t kBatchTuplesMax = 100'000;
inline constexpr double kOperatorCostUsPerTupleMax = 100'000.0;  // 0.1 s per tuple: beyond any sensible model
// Link emulation ([links], [[link]]): a minute of delay or jitter is already far beyond a WAN.
inline constexpr double kLinkDelayMsMax = 60'000.0;
inline constexpr std::int64_t kLinkQueueMessagesMax = 10'000'000;
inline constexpr std::int64_t kLinkQueueBytesMin = 1024;
inline constexpr std::int64_t kLinkQueueBytesMax = std::int64_t{1} << 34;  // 16 GiB

// Every problem of a topology at once (an empty vector means valid); each names its place
// ("file:line" where known) and what is wrong.
// `approaches`: the approaches the topology may name.
std::vector<std::string> validate(const Topology&, const ApproachCatalog& approaches = ApproachCatalog::builtin());

// The host a node runs on: where a run on several hosts placed it ([placement], written by the
// launcher), else the host it is pinned to (its fragment's host, or standby_host for a standby);
// "" when neither says (a run on one machine, or the coordinator of global checkpoints).
const std::string& host_of(const Plan& plan, NodeId node);

// Builds the plan of a topology that validate() accepted.
Plan make_plan(const Topology&, const ApproachCatalog& approaches = ApproachCatalog::builtin());

}  // namespace hapair
