#include "judge/checker.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>

#include "protocols/check.h"

namespace hapair {

namespace {

std::uint64_t value_bits(double v) {
  if (v == 0.0) v = 0.0;
  if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
  // memcpy, not std::bit_cast: the WebAssembly build's standard library (libc++ 14) lacks it.
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

EntryKey key_of(const Delivery& d) { return entry_key(d); }

using Identity = std::pair<StreamId, std::uint64_t>;

struct Counts {
  std::uint64_t reference = 0;
  std::uint64_t delivered = 0;
  // One occurrence of the entry (its first in the reference, else its first delivery), whose
  // exact value the examples show.
  const Delivery* sample = nullptr;
};

// The entries (EntryKey) of two delivery sequences, numbered 0, 1, ... in order of first
// occurrence (the first sequence's, then the second's), and the entry of every delivery of each:
// what a std::map<EntryKey, ...> over both would hold, from one open-addressing table of entry
// numbers instead of a tree node and a lookup per delivery (the judge of a chaos run spent more
// time in those trees, and then in a sort of the deliveries by hash, than the simulator in the
// run). Nothing iterates the table: the numbering follows the sequences, so it is the same on
// every platform; callers that want the key order compare keys.
struct EntryIndex {
  std::vector<std::uint32_t> of_first;   // per delivery of the first sequence
  std::vector<std::uint32_t> of_second;  // per delivery of the second
  // Per entry, its first occurrence in the first sequence, else in the second.
  std::vector<const Delivery*> sample;
  std::size_t entries() const { return sample.size(); }
};

// Spreads a key over 64 bits: only the probes' speed depends on it (equal hashes of distinct
// keys stay distinct entries), so the fields are folded with odd multipliers and mixed twice.
std::uint64_t hash_of(const EntryKey& k) {
  const std::uint64_t folded = static_cast<std::uint64_t>(std::get<0>(k)) ^
                               static_cast<std::uint64_t>(std::get<2>(k)) * 0x9e3779b97f4a7c15ULL ^
                               std::get<3>(k) * 0xc2b2ae3d27d4eb4fULL ^
                               static_cast<std::uint64_t>(std::get<4>(k)) * 0x165667b19e3779f9ULL;
  return mix64(std::get<1>(k) ^ mix64(folded));
}

EntryIndex index_entries(const std::vector<Delivery>& first, const std::vector<Delivery>& second) {
  const std::size_t deliveries = first.size() + second.size();
  HAPAIR_CHECK_MSG(deliveries < std::numeric_limits<std::uint32_t>::max() / 2, "deliveries=" << deliveries);
  // At most half full, so a probe sequence ends soon at an empty slot. A slot holds an entry's
  // number and the high half of its key's hash, so most probes that do not match never read
  // the entry's sample delivery.
  struct Slot {
    std::uint32_t entry;
    std::uint32_t hash_high;
  };
  constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();
  std::size_t slots = 16;
  while (slots < 2 * deliveries) slots *= 2;
  std::vector<Slot> slot(slots, Slot{kEmpty, 0});

  EntryIndex ix;
  ix.of_first.reserve(first.size());
  ix.of_second.reserve(second.size());
  auto number = [&](const Delivery& d) -> std::uint32_t {
    const EntryKey k = key_of(d);
    const std::uint64_t h = hash_of(k);
    const auto high = static_cast<std::uint32_t>(h >> 32);
    for (std::size_t i = h & (slots - 1);; i = (i + 1) & (slots - 1)) {
      Slot& s = slot[i];
      if (s.entry == kEmpty) {
        s = Slot{static_cast<std::uint32_t>(ix.sample.size()), high};
        ix.sample.push_back(&d);
        return s.entry;
      }
      if (s.hash_high == high && key_of(*ix.sample[s.entry]) == k) return s.entry;
    }
  };
  for (const Delivery& d : first) ix.of_first.push_back(number(d));
  for (const Delivery& d : second) ix.of_second.push_back(number(d));
  return ix;
}

// Per entry, its copies in the reference and in the delivered output (indexed as `ix`, made from
// the reference first).
std::vector<Counts> count_entries(const EntryIndex& ix) {
  std::vector<Counts> counts(ix.entries());
  for (std::size_t e = 0; e < counts.size(); ++e) counts[e].sample = ix.sample[e];
  for (const std::uint32_t e : ix.of_first) ++counts[e].reference;
  for (const std::uint32_t e : ix.of_second) ++counts[e].delivered;
  return counts;
}

// Per stream, the entries of `sequence` (their numbers, `entries` per delivery) whose occurrence
// number is within the entry's limit: its reference count when `sequence` is the delivered one,
// its delivered count when it is the reference (the order rule in checker.h).
std::map<StreamId, std::vector<std::uint32_t>> restricted_sequences(const std::vector<Delivery>& sequence,
                                                                   const std::vector<std::uint32_t>& entries,
                                                                   const std::vector<Counts>& counts,
                                                                   bool limit_by_reference) {
  std::map<StreamId, std::vector<std::uint32_t>> out;
  std::vector<std::uint64_t> seen(counts.size(), 0);
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    const std::uint32_t e = entries[i];
    const Counts& c = counts[e];
    const std::uint64_t limit = limit_by_reference ? c.reference : c.delivered;
    if (++seen[e] <= limit) out[sequence[i].stream].push_back(e);
  }
  return out;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

}  // namespace

SemanticsEntry entry_of(const Delivery& d) {
  return {d.stream, d.tuple.lineage, d.tuple.key, d.tuple.value, d.tuple.ts_us};
}

SemanticsReport check_semantics(const std::vector<Delivery>& reference,
                                const std::vector<Delivery>& delivered,
                                const std::vector<std::string>& arbitrary) {
  SemanticsReport r;
  r.reference_tuples = reference.size();
  r.delivered_tuples = delivered.size();
  r.arbitrary_operators = arbitrary;
  r.multiset_compare = !arbitrary.empty();

  const EntryIndex ix = index_entries(reference, delivered);
  const std::vector<Counts> counts = count_entries(ix);

  // Delivered entries per identity whose value the reference does not have: what a lost entry
  // of the same identity was replaced by (the first such entry in key order).
  std::map<Identity, const Delivery*> wrong_value_of;
  for (const Counts& c : counts) {
    if (c.reference != 0) continue;
    const auto [it, added] = wrong_value_of.emplace(Identity{c.sample->stream, c.sample->tuple.lineage}, c.sample);
    if (!added && key_of(*c.sample) < key_of(*it->second)) it->second = c.sample;
  }

  std::vector<SemanticsExample> lost_examples, duplicate_examples, differing_examples;
  for (const Counts& c : counts) {
    if (c.reference > c.delivered) r.lost += c.reference - c.delivered;
    if (c.reference > 0 && c.delivered > c.reference) r.duplicates += c.delivered - c.reference;
    if (c.reference == 0) r.differing += c.delivered;
  }
  HAPAIR_CHECK_MSG(r.delivered_tuples + r.lost == r.reference_tuples + r.duplicates + r.differing,
                   "delivered=" << r.delivered_tuples << " lost=" << r.lost << " reference="
                                << r.reference_tuples << " duplicates=" << r.duplicates
                                << " differing=" << r.differing);

  // Examples in a reading order: lost ones as the reference produced them, duplicates and
  // differing ones as they were delivered.
  std::vector<bool> example_taken(counts.size(), false);
  auto add_example = [&](std::vector<SemanticsExample>& to, const char* kind, const Delivery& d, std::uint32_t entry) {
    if (to.size() >= kSemanticsExamplesPerKind || example_taken[entry]) return;
    example_taken[entry] = true;
    const Counts& c = counts[entry];
    SemanticsExample e;
    e.kind = kind;
    e.entry = entry_of(d);
    e.reference_count = c.reference;
    e.delivered_count = c.delivered;
    if (c.reference > c.delivered) {
      auto it = wrong_value_of.find({d.stream, d.tuple.lineage});
      if (it != wrong_value_of.end()) e.delivered_instead = entry_of(*it->second);
    }
    to.push_back(e);
  };
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const Counts& c = counts[ix.of_first[i]];
    if (c.reference > c.delivered) add_example(lost_examples, "lost", reference[i], ix.of_first[i]);
  }
  for (std::size_t i = 0; i < delivered.size(); ++i) {
    const std::uint32_t e = ix.of_second[i];
    const Counts& c = counts[e];
    if (c.reference > 0 && c.delivered > c.reference) add_example(duplicate_examples, "duplicate", delivered[i], e);
    if (c.reference == 0) add_example(differing_examples, "differing", delivered[i], e);
  }
  for (auto* list : {&lost_examples, &duplicate_examples, &differing_examples}) {
    r.examples.insert(r.examples.end(), list->begin(), list->end());
  }

  r.order_matches = restricted_sequences(delivered, ix.of_second, counts, true) ==
                    restricted_sequences(reference, ix.of_first, counts, false);

  if (r.lost > 0) {
    r.verdict = "gap";
  } else if (r.duplicates > 0 || r.differing > 0 || (!r.multiset_compare && !r.order_matches)) {
    r.verdict = "rollback";
  } else {
    r.verdict = "precise";
  }

  if (r.multiset_compare) {
    r.note = "compared as multisets (network has an arbitrary operator: " + join_names(arbitrary) + ")";
  } else {
    r.note = "compared as multisets and in order (deterministic network)";
  }
  if (!r.order_matches) r.note += "; the delivered order differs from the reference order";
  return r;
}

FailureSplit split_at_failure(const std::vector<Delivery>& reference,
                              const std::vector<Delivery>& delivered, TimeUs failure_us) {
  const EntryIndex ix = index_entries(reference, delivered);
  std::vector<std::uint64_t> reference_count(ix.entries(), 0);
  for (const std::uint32_t e : ix.of_first) ++reference_count[e];

  FailureSplit s;
  s.failure_us = failure_us;
  // Copies of each entry delivered so far (before F during the first pass, overall after).
  std::vector<std::uint64_t> seen(ix.entries(), 0);
  for (std::size_t i = 0; i < delivered.size(); ++i) {
    if (delivered[i].at_us >= failure_us) continue;
    ++s.deliveries_before;
    const std::uint32_t e = ix.of_second[i];
    if (++seen[e] <= reference_count[e]) ++s.reference_delivered_before;
  }
  for (std::size_t i = 0; i < delivered.size(); ++i) {
    if (delivered[i].at_us < failure_us) continue;
    const std::uint32_t e = ix.of_second[i];
    if (++seen[e] <= reference_count[e]) s.new_deliveries.push_back(i);
  }
  return s;
}

const char* to_string(DeliveryStatus s) {
  switch (s) {
    case DeliveryStatus::exact: return "exact";
    case DeliveryStatus::duplicate: return "duplicate";
    case DeliveryStatus::differing: return "differing";
  }
  return "?";
}

EntryKey entry_key(const Delivery& d) {
  return {d.stream, d.tuple.lineage, d.tuple.key, value_bits(d.tuple.value), d.tuple.ts_us};
}

struct OutputClassifier::Counts {
  std::map<EntryKey, std::pair<std::uint64_t, std::uint64_t>> by_entry;  // reference, delivered
};

OutputClassifier::OutputClassifier(const std::vector<Delivery>& reference) : counts_(std::make_unique<Counts>()) {
  for (const Delivery& d : reference) ++counts_->by_entry[key_of(d)].first;
}
OutputClassifier::~OutputClassifier() = default;
OutputClassifier::OutputClassifier(OutputClassifier&&) noexcept = default;
OutputClassifier& OutputClassifier::operator=(OutputClassifier&&) noexcept = default;

DeliveryStatus OutputClassifier::add(const Delivery& d) {
  auto& [r, n] = counts_->by_entry[key_of(d)];
  ++n;
  return r == 0 ? DeliveryStatus::differing : n <= r ? DeliveryStatus::exact : DeliveryStatus::duplicate;
}

std::uint64_t OutputClassifier::delivered(const Delivery& d) const {
  auto it = counts_->by_entry.find(key_of(d));
  return it == counts_->by_entry.end() ? 0 : it->second.second;
}

std::uint64_t OutputClassifier::in_reference(const Delivery& d) const {
  auto it = counts_->by_entry.find(key_of(d));
  return it == counts_->by_entry.end() ? 0 : it->second.first;
}

OutputClassification classify_output(const std::vector<Delivery>& reference, const std::vector<Delivery>& delivered) {
  OutputClassifier classifier(reference);
  OutputClassification out;
  out.status.reserve(delivered.size());
  for (const Delivery& d : delivered) out.status.push_back(classifier.add(d));
  std::map<EntryKey, std::uint64_t> occurrence;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const std::uint64_t n = ++occurrence[key_of(reference[i])];
    if (n > classifier.delivered(reference[i])) out.missing.push_back(i);
  }
  return out;
}

}  // namespace hapair
