// The semantics checker: measures the recovery type a run really gave by comparing its sink
// output with the failure-free reference output of the same plan and seed (reference.h).
//
// Paper: the three recovery types of Hwang et al. (section 3): precise (the output equals a
// failure-free run's), rollback (nothing lost, but duplicates or differing tuples) and gap (some
// output lost). docs/EXPERIMENTS.md ("How we measure") is the contract; its definitions, repeated:
//
//   Each output tuple is an entry (identity, value) with identity = (stream, lineage) and
//   value = (key, value, ts_us). Tuple ids and delivery times are not part of an entry: ids are
//   rebased by some takeovers and delivery times always differ. Both outputs are compared as
//   multisets of entries. For each entry e with reference count r and delivered count d:
//     lost       += max(0, r - d)   reference entries never delivered with that value
//     duplicates += max(0, d - r)   when r > 0: entries delivered more often than the reference
//     differing  += d               when r == 0: delivered entries the reference does not have
//   A window whose value came out wrong therefore counts once as lost (the right value) and once
//   as differing (the wrong one).
//
//   order_matches: per stream, the delivered sequence with duplicates and differing entries
//   removed (of an entry with reference count r, the first r occurrences are kept) equals the
//   reference sequence restricted to what was delivered (of an entry delivered d times, the
//   first d occurrences are kept). Differing entries are left out of the order comparison
//   because they are already counted, and a value that is wrong says nothing about order.
//
//   Verdict: "gap" when lost > 0; otherwise "rollback" when duplicates > 0 or differing > 0, or
//   when the network is deterministic (no arbitrary operator) and the order does not match;
//   otherwise "precise". A network with an arbitrary operator (Union merging in arrival order)
//   has no single correct order, so it is compared as a multiset only.
//
// Invariant: lost, duplicates and differing are computed from counts alone, so
// delivered_tuples == reference_tuples - lost + duplicates + differing always holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "protocols/messages.h"

namespace hapair {

// One output tuple as the checker sees it: its identity (stream, lineage) and its value
// (key, value, ts_us).
struct SemanticsEntry {
  StreamId stream = kNoStream;
  std::uint64_t lineage = 0;
  std::int64_t key = 0;
  double value = 0.0;
  TimeUs ts_us = 0;
  friend bool operator==(const SemanticsEntry&, const SemanticsEntry&) = default;
};

SemanticsEntry entry_of(const Delivery& d);

// An entry as an ordered map key. The value is compared by its bits so that the order is total
// and exact; -0.0 and 0.0 are one value, and every NaN is one value, because the operators may
// produce either form for what is logically the same result.
using EntryKey = std::tuple<StreamId, std::uint64_t, std::int64_t, std::uint64_t, TimeUs>;
EntryKey entry_key(const Delivery& d);

// A few concrete entries behind the counts, for the demo and for debugging a failed run.
struct SemanticsExample {
  std::string kind;  // "lost", "duplicate" or "differing"
  SemanticsEntry entry;
  std::uint64_t reference_count = 0;
  std::uint64_t delivered_count = 0;
  // For a lost entry: a delivered entry with the same identity but another value, if any (the
  // wrong value that was delivered instead).
  std::optional<SemanticsEntry> delivered_instead;
};

// A sink stream left out of the verdict, and why (its content depends on a Union's interleaving,
// and the interleaving the run really chose is not known: judge/merge_order.h).
struct NotJudged {
  std::string stream;  // the stream's name
  std::string reason;
  friend bool operator==(const NotJudged&, const NotJudged&) = default;
};

struct SemanticsReport {
  std::string verdict;  // "precise", "rollback" or "gap"
  std::uint64_t lost = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t differing = 0;
  std::uint64_t reference_tuples = 0;
  std::uint64_t delivered_tuples = 0;
  bool order_matches = true;
  bool multiset_compare = false;  // the network has an arbitrary operator: order not judged
  std::string note;
  std::vector<std::string> arbitrary_operators;  // names, in plan order
  std::vector<SemanticsExample> examples;        // at most kSemanticsExamplesPerKind per kind
  // Filled by the harness (run_once.h judge_run), not by check_semantics: streams left out of
  // every count above, and whether the reference replayed the merge order the run's Unions
  // really chose (for the streams whose content depends on it).
  std::vector<NotJudged> not_judged;
  bool merge_order_replayed = false;
};

inline constexpr std::size_t kSemanticsExamplesPerKind = 3;

// Compares `delivered` (in delivery order) with `reference` (in reference order).
// `arbitrary_operators` names the network's arbitrary operators (for a plan:
// arbitrary_operators(plan) in reference.h); when it is non-empty the order is reported but does
// not affect the verdict.
SemanticsReport check_semantics(const std::vector<Delivery>& reference,
                                const std::vector<Delivery>& delivered,
                                const std::vector<std::string>& arbitrary_operators);

// How the output splits at a failure instant F (docs/EXPERIMENTS.md, "How we measure": recovery time ends at the
// first *new* output tuple, one the reference has and that was not delivered before F).
// A delivery is "before" F when at_us < F. A delivery at or after F is new when it is the k-th
// delivered copy of an entry with reference count r, b copies of it were delivered before F, and
// b < k <= r: it fills a reference slot that was still empty at F.
struct FailureSplit {
  TimeUs failure_us = 0;
  // Reference entries (with multiplicity, at most r per entry) delivered before F.
  std::uint64_t reference_delivered_before = 0;
  std::uint64_t deliveries_before = 0;
  // Indexes into the deliveries of the new ones, in delivery order.
  std::vector<std::size_t> new_deliveries;
};

FailureSplit split_at_failure(const std::vector<Delivery>& reference,
                              const std::vector<Delivery>& delivered, TimeUs failure_us);

// Each delivered tuple against the reference, for the timeline's output strip, by the counts
// above: of an entry with reference count r, the first r delivered copies are exact and later
// ones duplicates; a delivered entry the reference does not have is differing. Missing: the
// reference occurrences never delivered (of an entry delivered d < r times, its last r - d
// occurrences in reference order), as indexes into the reference.
// Invariant: exact + missing = reference size; duplicates and differing equal check_semantics'.
enum class DeliveryStatus : std::uint8_t { exact, duplicate, differing };
const char* to_string(DeliveryStatus);
struct OutputClassification {
  std::vector<DeliveryStatus> status;  // one per delivery, in delivery order
  std::vector<std::size_t> missing;    // indexes into the reference, ascending
};
OutputClassification classify_output(const std::vector<Delivery>& reference, const std::vector<Delivery>& delivered);

// classify_output one delivery at a time, for a live view (the demo): the reference is known
// whole from the start, the deliveries come as the run goes.
class OutputClassifier {
 public:
  explicit OutputClassifier(const std::vector<Delivery>& reference);
  ~OutputClassifier();
  OutputClassifier(OutputClassifier&&) noexcept;
  OutputClassifier& operator=(OutputClassifier&&) noexcept;
  // The status of the next delivered tuple.
  DeliveryStatus add(const Delivery& d);
  // How many copies of `d`'s entry were delivered so far, and how many the reference has.
  std::uint64_t delivered(const Delivery& d) const;
  std::uint64_t in_reference(const Delivery& d) const;

 private:
  struct Counts;
  std::unique_ptr<Counts> counts_;
};

}  // namespace hapair
