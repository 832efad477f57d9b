// Lookup (a join against a static table): each input's key is looked up in a table that every
// node computes the same way, and the entry replaces its key (or its value); a key the table
// lacks drops the tuple, as an inner join does. Tables:
//   blocks: keys 0 .. table_size-1, entry k = k / block (the Yahoo Streaming Benchmark's campaign
//           of an ad: each campaign owns `block` consecutive ads);
//   hash:   keys 0 .. table_size-1, entry k = mix64(table_seed, k) mod range;
//   ysb:    the Yahoo benchmark's table (operators/ysb.h): keys 0 .. range x block - 1 (and below
//           table_size), entry k = ysb_campaign_of(k, range campaigns, block ads each, table_seed),
//           the same table a ysb source with that campaign_seed draws its `campaign` field from.
// A static table is part of the query, not of its state: a recovered node recomputes it.
//
// Class: repeatable (stateless, operators/stateless_operator.h). Invariant: an output keeps its
// input's id, timestamp and lineage, so the cause function is the identity.
#pragma once

#include <cstdint>

#include "operators/stateless_operator.h"
#include "protocols/topology.h"

namespace hapair {

class Lookup final : public StatelessOperator {
 public:
  enum class Table : std::uint8_t { blocks, hash, ysb };  // the choices' order in the traits
  explicit Lookup(const OperatorSpec& spec);
  OperatorKind kind() const override { return OperatorKind::lookup; }
  // The table's entry for `key`; false: the table has none.
  bool entry(std::int64_t key, std::int64_t& out) const;

 protected:
  bool transform(const Tuple& in, Tuple& out) const override;

 private:
  Table table_;
  std::int64_t table_size_;
  std::int64_t block_;
  std::int64_t range_;
  std::uint64_t table_seed_;
  bool into_key_;
};

}  // namespace hapair
