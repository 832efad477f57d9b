// What the rest of the system asks of an operator type, as one record of plain data per type:
// its name in topology files, how many inputs it reads, its class (section 3 of the paper: what
// recovery an approach can give over it), whether its output keeps timestamp order, whether its
// output's content depends on the order of its input, and the knobs of its own. The operator's
// code (a class deriving from operators/operator.h's Operator) lives in src/operators/ and is
// registered by kind in src/operators/registry.cpp; docs/OPERATORS.md walks through adding one.
//
// Paper: Hwang et al. (ICDE 2005), sections 2 and 3: operators (Aurora's boxes) are Filter, Map,
// Union, windowed Aggregate and Join, each of a class (repeatable ⊂ convergent-capable ⊂
// deterministic ⊂ arbitrary) that bounds the recovery type; section 4.3: each exposes a cause
// function for upstream backup.
//
// Invariants: a catalog holds each kind and each name once; an operator's own knobs have
// distinct names, a default within [min, max], whole-number defaults where they must be whole,
// and a default that is a valid index when they name choices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hapair {

struct OperatorSpec;

// Nested classes of the paper (section 3): repeatable ⊂ convergent-capable ⊂ deterministic ⊂ arbitrary.
// Ordered from most to least constrained, so max() of two classes is the weaker one.
enum class OperatorClass { repeatable = 0, convergent_capable = 1, deterministic = 2, arbitrary = 3 };
const char* to_string(OperatorClass);

// The operator types. The paper's five, and those the field's workloads need (project, lookup,
// top); a kind's number never changes (it is in result files).
enum class OperatorKind : std::uint8_t { filter, map, union_op, aggregate, join, project, lookup, top };

// A knob an operator type reads besides name, type, inputs and output, kept in
// OperatorSpec::params (a number; for a choice, the index of the chosen name).
struct OperatorParam {
  std::string name;
  double default_value = 0.0;
  double min = 0.0;
  double max = 0.0;
  bool whole = false;                // a whole number
  std::string unit;                  // "ms", or empty
  std::vector<std::string> choices;  // non-empty: the value names one of these (written by name)
  std::string meaning;               // one sentence, for docs and errors
};

struct OperatorTraits {
  OperatorKind kind = OperatorKind::filter;
  std::string name;  // `type = "filter"` in a topology file
  std::size_t inputs_min = 1;
  std::size_t inputs_max = 1;
  // Its class, given its knobs (a Union's depends on its order).
  OperatorClass (*klass)(const OperatorSpec&) = nullptr;
  // Whether its output's timestamps never go back, given whether its inputs' do.
  bool (*ordered_output)(const OperatorSpec&, const std::vector<bool>& inputs_ordered) = nullptr;
  // Its output's content (not only order) depends on the order its input arrives in: a windowed
  // operator closes windows by the largest timestamp seen, so a late tuple misses its window
  // (the checker's merge-order rules, judge/merge_order.h).
  bool order_sensitive = false;
  // Knobs of its own (the paper's five keep typed fields in OperatorSpec instead).
  std::vector<OperatorParam> params;
  // It needs inputs whose timestamps never go back (a serializing Union merges by them, Top
  // takes a window's results as arriving together); null: any input will do.
  bool (*needs_ordered_inputs)(const OperatorSpec&) = nullptr;

  const OperatorParam* param(std::string_view name) const;
};

class OperatorCatalog {
 public:
  // The operator types of this repository (operator_traits.cpp), in the order of OperatorKind.
  static const OperatorCatalog& builtin();
  OperatorCatalog with(OperatorTraits extra) const;
  const OperatorTraits* find(OperatorKind kind) const;
  const OperatorTraits* find(std::string_view name) const;
  const OperatorTraits& of(OperatorKind kind) const;
  const std::vector<OperatorTraits>& all() const { return traits_; }
  std::string names() const;  // "filter, map, union, ..."

 private:
  std::vector<OperatorTraits> traits_;
};

// An operator's own knob: its value in spec.params, or the knob's default.
double operator_param(const OperatorSpec& spec, std::string_view name);

const char* to_string(OperatorKind);
std::optional<OperatorKind> parse_operator_kind(const std::string&);
std::string allowed_operator_kinds();

}  // namespace hapair
