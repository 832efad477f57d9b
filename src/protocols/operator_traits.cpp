// The operator traits table: one record per operator type (operator_traits.h). Adding an operator
// to the repository is its class in src/operators/, its line in src/operators/registry.cpp and its
// record here (docs/OPERATORS.md).
#include "protocols/operator_traits.h"

#include <algorithm>
#include <cmath>

#include "protocols/check.h"
#include "protocols/topology.h"

namespace hapair {

namespace {

bool all_ordered(const std::vector<bool>& inputs) {
  return std::all_of(inputs.begin(), inputs.end(), [](bool o) { return o; });
}
bool keeps_order(const OperatorSpec&, const std::vector<bool>& inputs) { return all_ordered(inputs); }
bool always_ordered(const OperatorSpec&, const std::vector<bool>&) { return true; }
OperatorClass repeatable(const OperatorSpec&) { return OperatorClass::repeatable; }
OperatorClass deterministic(const OperatorSpec&) { return OperatorClass::deterministic; }

OperatorTraits filter() {
  return {OperatorKind::filter, "filter", 1, 1, &repeatable, &keeps_order, false, {}};
}
OperatorTraits map() { return {OperatorKind::map, "map", 1, 1, &repeatable, &keeps_order, false, {}}; }
OperatorTraits union_op() {
  // In arrival order the paper's arbitrary Union; in timestamp order a serializing, deterministic one.
  return {OperatorKind::union_op,
          "union",
          2,
          0xffff,
          [](const OperatorSpec& o) {
            return o.union_order == UnionOrder::timestamp ? OperatorClass::deterministic : OperatorClass::arbitrary;
          },
          [](const OperatorSpec& o, const std::vector<bool>& inputs) {
            return o.union_order == UnionOrder::timestamp && all_ordered(inputs);
          },
          false,
          {},
          [](const OperatorSpec& o) { return o.union_order == UnionOrder::timestamp; }};
}
OperatorTraits aggregate() {
  // Windows aligned to absolute time: restarted anywhere it converges (section 3); it emits
  // windows in end order, whatever the order of its input.
  return {OperatorKind::aggregate, "aggregate", 1, 1, [](const OperatorSpec&) { return OperatorClass::convergent_capable; },
          &always_ordered, true, {}};
}
OperatorTraits join() {
  return {OperatorKind::join, "join", 2, 2, &deterministic, &keeps_order, true, {}};
}

OperatorTraits project() {
  OperatorTraits t{OperatorKind::project, "project", 1, 1, &repeatable, &keeps_order, false, {}};
  t.params = {
      {"key", 0, 0, 2, true, "", {"key", "value", "constant"}, "where the output's key comes from"},
      {"key_divisor", 1, 1, 1e15, true, "", {}, "the key is divided by this (after `key`)"},
      {"key_modulo", 0, 0, 1e15, true, "", {}, "then taken modulo this, into [0, key_modulo) (0: not)"},
      {"key_constant", 0, -1e15, 1e15, true, "", {}, "the key when key = \"constant\""},
      {"value", 0, 0, 2, true, "", {"value", "key", "one"}, "where the output's value comes from"},
      {"scale", 1, -1e300, 1e300, false, "", {}, "the value is multiplied by this"},
      {"offset", 0, -1e300, 1e300, false, "", {}, "then this is added"},
  };
  return t;
}

OperatorTraits lookup() {
  OperatorTraits t{OperatorKind::lookup, "lookup", 1, 1, &repeatable, &keeps_order, false, {}};
  t.params = {
      {"table", 0, 0, 2, true, "", {"blocks", "hash", "ysb"},
       "blocks: entry k = k / block (a campaign owns `block` consecutive ads); hash: entry k = mix64(table_seed, k) mod range; "
       "ysb: the Yahoo benchmark's ad -> campaign table of range campaigns x block ads, seeded by table_seed (a ysb source's "
       "campaign_seed)"},
      {"table_size", 1000, 1, 1e15, true, "", {}, "the table holds keys 0 .. table_size - 1; other keys are dropped"},
      {"block", 10, 1, 1e15, true, "", {}, "blocks: keys per entry"},
      {"range", 100, 1, 1e15, true, "", {}, "hash, ysb: entries lie in [0, range)"},
      {"table_seed", 1, 0, 1e15, true, "", {}, "hash, ysb: the table's seed"},
      {"into", 0, 0, 1, true, "", {"key", "value"}, "the entry replaces the key or the value"},
  };
  return t;
}

OperatorTraits top() {
  // Order-sensitive: a window is complete when a later timestamp arrives.
  return {OperatorKind::top, "top", 1, 1, &deterministic, &keeps_order, true, {}, [](const OperatorSpec&) { return true; }};
}

OperatorCatalog make_builtin_operators() {
  OperatorCatalog c;
  for (OperatorTraits t : {filter(), map(), union_op(), aggregate(), join(), project(), lookup(), top()})
    c = c.with(std::move(t));
  return c;
}

}  // namespace

const char* to_string(OperatorKind kind) {
  const OperatorTraits* t = OperatorCatalog::builtin().find(kind);
  return t != nullptr ? t->name.c_str() : "?";
}

std::optional<OperatorKind> parse_operator_kind(const std::string& name) {
  const OperatorTraits* t = OperatorCatalog::builtin().find(name);
  if (t == nullptr) return std::nullopt;
  return t->kind;
}

std::string allowed_operator_kinds() { return OperatorCatalog::builtin().names(); }

const OperatorParam* OperatorTraits::param(std::string_view n) const {
  for (const OperatorParam& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

const OperatorCatalog& OperatorCatalog::builtin() {
  static const OperatorCatalog catalog = make_builtin_operators();
  return catalog;
}

OperatorCatalog OperatorCatalog::with(OperatorTraits extra) const {
  HAPAIR_CHECK_MSG(find(extra.kind) == nullptr, "operator kind " << static_cast<int>(extra.kind) << " registered twice");
  HAPAIR_CHECK_MSG(!extra.name.empty() && find(extra.name) == nullptr, "operator type '" << extra.name << "' empty or registered twice");
  HAPAIR_CHECK_MSG(extra.klass != nullptr && extra.ordered_output != nullptr && extra.inputs_min >= 1 &&
                       extra.inputs_max >= extra.inputs_min,
                   "operator type " << extra.name << " lacks its class or order rule, or has inputs " << extra.inputs_min
                                    << ".." << extra.inputs_max);
  for (std::size_t i = 0; i < extra.params.size(); ++i) {
    const OperatorParam& p = extra.params[i];
    HAPAIR_CHECK_MSG(p.default_value >= p.min && p.default_value <= p.max && (!p.whole || std::floor(p.default_value) == p.default_value),
                     "operator type " << extra.name << ": knob " << p.name << "'s default " << p.default_value << " is not in ["
                                      << p.min << ", " << p.max << "]");
    HAPAIR_CHECK_MSG(p.choices.empty() || (p.whole && p.min == 0 && p.max + 1 == static_cast<double>(p.choices.size())),
                     "operator type " << extra.name << ": knob " << p.name << " names choices but is not their index");
    for (std::size_t j = 0; j < i; ++j)
      HAPAIR_CHECK_MSG(extra.params[j].name != p.name, "operator type " << extra.name << ": knob " << p.name << " twice");
  }
  OperatorCatalog c = *this;
  c.traits_.push_back(std::move(extra));
  return c;
}

const OperatorTraits* OperatorCatalog::find(OperatorKind kind) const {
  for (const OperatorTraits& t : traits_)
    if (t.kind == kind) return &t;
  return nullptr;
}

const OperatorTraits* OperatorCatalog::find(std::string_view name) const {
  for (const OperatorTraits& t : traits_)
    if (t.name == name) return &t;
  return nullptr;
}

const OperatorTraits& OperatorCatalog::of(OperatorKind kind) const {
  const OperatorTraits* t = find(kind);
  HAPAIR_CHECK_MSG(t != nullptr, "no operator type of kind " << static_cast<int>(kind) << " (" << names() << ")");
  return *t;
}

std::string OperatorCatalog::names() const {
  std::string out;
  for (const OperatorTraits& t : traits_) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

double operator_param(const OperatorSpec& spec, std::string_view name) {
  const auto it = spec.params.find(std::string(name));
  if (it != spec.params.end()) return it->second;
  const OperatorParam* p = OperatorCatalog::builtin().of(spec.kind).param(name);
  HAPAIR_CHECK_MSG(p != nullptr, "operator " << spec.name << " (" << to_string(spec.kind) << ") has no knob " << name);
  return p->default_value;
}

}  // namespace hapair
