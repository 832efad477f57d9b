#include "operators/lookup.h"

#include "operators/ysb.h"
#include "protocols/check.h"

namespace hapair {

Lookup::Lookup(const OperatorSpec& spec)
    : StatelessOperator(BlobTag::lookup_state),
      table_(static_cast<Table>(static_cast<int>(operator_param(spec, "table")))),
      table_size_(static_cast<std::int64_t>(operator_param(spec, "table_size"))),
      block_(static_cast<std::int64_t>(operator_param(spec, "block"))),
      range_(static_cast<std::int64_t>(operator_param(spec, "range"))),
      table_seed_(static_cast<std::uint64_t>(operator_param(spec, "table_seed"))),
      into_key_(operator_param(spec, "into") == 0.0) {
  HAPAIR_CHECK_MSG(spec.inputs.size() == 1, "lookup " << spec.name << " has " << spec.inputs.size() << " inputs");
  HAPAIR_CHECK_MSG(table_size_ >= 1 && block_ >= 1 && range_ >= 1,
                   "lookup " << spec.name << ": table_size=" << table_size_ << " block=" << block_ << " range=" << range_);
}

bool Lookup::entry(std::int64_t key, std::int64_t& out) const {
  if (key < 0 || key >= table_size_) return false;
  switch (table_) {
    case Table::blocks: out = key / block_; return true;
    case Table::hash:
      out = static_cast<std::int64_t>(mix64(table_seed_, static_cast<std::uint64_t>(key)) % static_cast<std::uint64_t>(range_));
      return true;
    case Table::ysb: {
      const auto campaign = ysb_campaign_of(key, range_, block_, table_seed_);
      if (!campaign) return false;
      out = *campaign;
      return true;
    }
  }
  return false;
}

bool Lookup::transform(const Tuple& in, Tuple& out) const {
  std::int64_t e = 0;
  if (!entry(in.key, e)) return false;
  out = in;
  if (into_key_) out.key = e;
  else out.value = static_cast<double>(e);
  return true;
}

}  // namespace hapair
