#include "checkpoint/regions.h"

#include <algorithm>
#include <set>

#include "protocols/check.h"

namespace hapair {

std::vector<FragmentId> failover_fragments(const Plan& plan, FragmentId failed, FailoverMode mode,
                                           const std::vector<bool>& stream_retained) {
  HAPAIR_CHECK_MSG(failed < plan.fragments.size() && plan.fragments[failed].kind == FragmentKind::operators,
                   "fragment " << failed << " is not an operator fragment of the plan");
  HAPAIR_CHECK_MSG(stream_retained.size() == plan.streams.size(),
                   "retention of " << stream_retained.size() << " streams for a plan of " << plan.streams.size());
  auto is_operators = [&](FragmentId f) { return plan.fragments[f].kind == FragmentKind::operators; };
  std::vector<FragmentId> out;
  if (mode == FailoverMode::full) {
    for (const PlanFragment& f : plan.fragments)
      if (is_operators(f.id)) out.push_back(f.id);
    return out;
  }
  // The connected component of `failed` over non-retained streams between operator fragments.
  std::set<FragmentId> region{failed};
  std::vector<FragmentId> todo{failed};
  while (!todo.empty()) {
    const FragmentId f = todo.back();
    todo.pop_back();
    for (const PlanStream& s : plan.streams) {
      if (stream_retained[s.id] || !is_operators(s.producer)) continue;
      std::vector<FragmentId> ends;
      if (s.producer == f) ends = s.consumers;
      else if (std::find(s.consumers.begin(), s.consumers.end(), f) != s.consumers.end()) ends = {s.producer};
      for (FragmentId g : ends)
        if (is_operators(g) && region.insert(g).second) todo.push_back(g);
    }
  }
  return {region.begin(), region.end()};
}

std::map<FragmentId, std::vector<FragmentId>> rollback_sets(const Plan& plan, FailoverMode mode,
                                                            const std::vector<bool>& stream_retained) {
  std::map<FragmentId, std::vector<FragmentId>> out;
  for (const PlanFragment& f : plan.fragments)
    if (f.kind == FragmentKind::operators) out[f.id] = failover_fragments(plan, f.id, mode, stream_retained);
  return out;
}

}  // namespace hapair
