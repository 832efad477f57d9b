// Test support shared by the plan and topology file tests: small builders for topology items and
// matchers over lists of validation problems. Header only, so each test area includes it without
// linking anything extra.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "protocols/approach_traits.h"
#include "protocols/topology.h"

namespace hapair::testing {

inline FragmentSpec source(const std::string& name, const std::string& stream) {
  FragmentSpec f;
  f.name = name;
  f.kind = FragmentKind::source;
  f.source.stream = stream;
  return f;
}

inline FragmentSpec sink(const std::string& name, std::vector<std::string> inputs) {
  FragmentSpec f;
  f.name = name;
  f.kind = FragmentKind::sink;
  f.sink_inputs = std::move(inputs);
  return f;
}

inline OperatorSpec op(const std::string& name, OperatorKind kind, std::vector<std::string> inputs,
                       const std::string& output) {
  OperatorSpec o;
  o.name = name;
  o.kind = kind;
  o.inputs = std::move(inputs);
  o.output = output;
  return o;
}

inline FragmentSpec fragment(const std::string& name, std::vector<OperatorSpec> ops) {
  FragmentSpec f;
  f.name = name;
  f.operators = std::move(ops);
  return f;
}

// The topology without the fields that say where its items were defined (a parsed file's
// "file:line"s), for comparing it with one built in code.
inline Topology without_places(Topology t) {
  t.source_file.clear();
  t.settings.where.clear();
  t.sim.where.clear();
  t.links.where.clear();
  for (LinkSpec& l : t.links.links) l.where.clear();
  for (FragmentSpec& f : t.fragments) {
    f.where.clear();
    for (OperatorSpec& o : f.operators) o.where.clear();
  }
  return t;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One problem a line, for INFO().
inline std::string joined(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

// Some problem mentions every one of `parts`.
inline bool has_problem(const std::vector<std::string>& problems, std::initializer_list<std::string> parts) {
  for (const auto& p : problems) {
    bool all = true;
    for (const auto& part : parts) all = all && contains(p, part);
    if (all) return true;
  }
  return false;
}

// The built-in approaches and one more, `coordinated` (mode `mode`), that needs a coordinator
// (global checkpoints, docs/CHECKPOINT.md) and has a spare per fragment: a plan where a fragment
// uses it gets the node `coordinator`. No built-in approach needs one yet.
inline ApproachCatalog coordinated_catalog(HaMode mode) {
  ApproachTraits t;
  t.mode = mode;
  t.name = "coordinated";
  t.title = "coordinated checkpoints";
  t.standbys = 1;
  t.standby_suffix = ".spare";
  t.coordinator = true;
  t.promise = {RecoveryType::precise, RecoveryType::rollback, RecoveryType::rollback};
  return ApproachCatalog::builtin().with(t);
}

}  // namespace hapair::testing
