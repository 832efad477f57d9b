// The rules of what each approach promises, applied to a finished run: whether its schedule
// stayed within the guarantee of its approach (beyond_guarantee, read from the run's own events
// in time order) and whether the verdict kept that guarantee (judge_guarantee). Every command
// that judges a run uses them: `hapair run` and `compare` (run/guarantee.h) and `hapair chaos`.
//
// Paper: Hwang et al. (ICDE 2005), section 3, promise each approach's recovery type for a single
// fail-stop crash: precise for passive standby, active standby with determinants and, on
// deterministic networks, upstream backup; gap for amnesia. docs/FAULTS.md states the rules and
// extends them to the faults the paper assumed away.
//
// Invariant: a run is a violation only when its schedule stayed within the guarantee and the
// verdict (or completion) broke it; a schedule that left a fragment without any node holding its
// state is "beyond the guarantee", never a violation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "judge/checker.h"
#include "protocols/plan.h"
#include "protocols/run_result.h"

namespace hapair {

// The sink streams whose content, not only their order, depends on how an arbitrary operator
// (Union) interleaved its inputs, because an order-sensitive operator (a windowed Aggregate or
// Join, which close windows by the largest timestamp seen) reads the interleaved stream,
// directly or through Filter/Map/Union (order_dependent_streams, merge_order.h). A run judges
// them against the interleaving its Unions really chose; only when that order is unknown are
// they left out and reported as not judged. Returns plan stream ids read by sinks, ascending.
std::vector<StreamId> unjudged_streams(const Plan& plan);

enum class GuaranteeClass { ok, beyond, violation };
const char* to_string(GuaranteeClass);

// Whether the schedule of a finished run left some fragment without a node that holds its state,
// judged from the run's own events in time order (docs/FAULTS.md, "beyond the guarantee"): a
// crash of a fragment without standby (ha none); a crash of the acting primary of a fragment
// whose pair was not restored since its last failure or takeover (the restarted node had not yet
// become a full standby); a crash of a standby while its primary was down and not yet replaced;
// under upstream backup, three adjacent fragments recovering at once (a fragment goes down while
// its upstream, itself gone down while its own upstream was recovering, has not settled).
// Returns the reason, or nullopt when every failure had a standby to recover it.
std::optional<std::string> beyond_guarantee(const Plan& plan, const RunResult& result);

struct GuaranteeJudgement {
  GuaranteeClass klass = GuaranteeClass::ok;
  std::string reason;  // why it is a violation or beyond; for ok, what was expected ("gap expected")
};

// The guarantee of an approach (its traits' Promise, docs/FAULTS.md), applied to a run:
// - a schedule beyond the guarantee: beyond, whatever the verdict;
// - an approach that promises nothing (ha none): never a violation;
// - for every other: a run that did not complete, or reported an error;
// - a gap promised (amnesia): nothing more (its gaps are expected);
// - rollback promised for this network and settings (upstream backup on an arbitrary network,
//   active standby without determinants on one): lost > 0;
// - precise promised: any verdict but precise (and for an approach that is precise only on
//   deterministic networks, lost > 0 is named as such).
// Whether this approach under these settings renumbers a recovered fragment's output (upstream
// backup under the conservative trimming rule, for fragments that do not keep their input's ids):
// its promise is then the one it gives on an arbitrary network.
bool rebases_ids(const ApproachTraits& approach, const Settings& settings);

GuaranteeJudgement judge_guarantee(const ApproachTraits& approach, bool determinants, bool arbitrary_network,
                                   const SemanticsReport& semantics, bool completed,
                                  const std::vector<std::string>& errors, const std::optional<std::string>& beyond);


}  // namespace hapair
