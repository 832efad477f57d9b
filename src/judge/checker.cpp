#include "judge/checker.h"

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

Identity identity_of(const EntryKey& k) { return {std::get<0>(k), std::get<1>(k)}; }

struct Counts {
  std::uint64_t reference = 0;
  std::uint64_t delivered = 0;
  // One occurrence of the entry (its first in the reference, else its first delivery), whose
  // exact value the examples show.
  const Delivery* sample = nullptr;
};

using CountMap = std::map<EntryKey, Counts>;

CountMap count_entries(const std::vector<Delivery>& reference, const std::vector<Delivery>& delivered) {
  CountMap counts;
  for (const Delivery& d : reference) {
    Counts& c = counts[key_of(d)];
    if (c.sample == nullptr) c.sample = &d;
    ++c.reference;
  }
  for (const Delivery& d : delivered) {
    Counts& c = counts[key_of(d)];
    if (c.sample == nullptr) c.sample = &d;
    ++c.delivered;
  }
  return counts;
}

// Per stream, the entries of `sequence` whose occurrence number is within the entry's limit:
// its reference count when `sequence` is the delivered one, its delivered count when it is the
// reference (the order rule in checker.h).
std::map<StreamId, std::vector<const Counts*>> restricted_sequences(const std::vector<Delivery>& sequence,
                                                                   const CountMap& counts,
                                                                   bool limit_by_reference) {
  std::map<StreamId, std::vector<const Counts*>> out;
  std::map<const Counts*, std::uint64_t> seen;
  for (const Delivery& d : sequence) {
    const Counts& c = counts.at(key_of(d));
    const std::uint64_t limit = limit_by_reference ? c.reference : c.delivered;
    std::uint64_t& k = seen[&c];
    ++k;
    if (k <= limit) out[d.stream].push_back(&c);
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

  const CountMap counts = count_entries(reference, delivered);

  // Delivered entries per identity whose value the reference does not have: what a lost entry
  // of the same identity was replaced by.
  std::map<Identity, const Delivery*> wrong_value_of;
  for (const auto& [key, c] : counts) {
    if (c.reference == 0) wrong_value_of.emplace(identity_of(key), c.sample);
  }

  std::vector<SemanticsExample> lost_examples, duplicate_examples, differing_examples;
  for (const auto& [key, c] : counts) {
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
  std::map<const Counts*, bool> example_taken;
  auto add_example = [&](std::vector<SemanticsExample>& to, const char* kind, const Delivery& d,
                         const Counts& c) {
    if (to.size() >= kSemanticsExamplesPerKind || example_taken[&c]) return;
    example_taken[&c] = true;
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
  for (const Delivery& d : reference) {
    const Counts& c = counts.at(key_of(d));
    if (c.reference > c.delivered) add_example(lost_examples, "lost", d, c);
  }
  for (const Delivery& d : delivered) {
    const Counts& c = counts.at(key_of(d));
    if (c.reference > 0 && c.delivered > c.reference) add_example(duplicate_examples, "duplicate", d, c);
    if (c.reference == 0) add_example(differing_examples, "differing", d, c);
  }
  for (auto* list : {&lost_examples, &duplicate_examples, &differing_examples}) {
    r.examples.insert(r.examples.end(), list->begin(), list->end());
  }

  r.order_matches = restricted_sequences(delivered, counts, true) == restricted_sequences(reference, counts, false);

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
  std::map<EntryKey, std::uint64_t> reference_count;
  for (const Delivery& d : reference) ++reference_count[key_of(d)];

  FailureSplit s;
  s.failure_us = failure_us;
  // Copies of each entry delivered so far (before F during the first pass, overall after).
  std::map<EntryKey, std::uint64_t> before;
  for (const Delivery& d : delivered) {
    if (d.at_us >= failure_us) continue;
    ++s.deliveries_before;
    const EntryKey k = key_of(d);
    auto it = reference_count.find(k);
    std::uint64_t& b = before[k];
    ++b;
    if (it != reference_count.end() && b <= it->second) ++s.reference_delivered_before;
  }
  std::map<EntryKey, std::uint64_t> seen = before;
  for (std::size_t i = 0; i < delivered.size(); ++i) {
    const Delivery& d = delivered[i];
    if (d.at_us < failure_us) continue;
    const EntryKey k = key_of(d);
    auto it = reference_count.find(k);
    const std::uint64_t kth = ++seen[k];
    if (it != reference_count.end() && kth <= it->second) s.new_deliveries.push_back(i);
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
