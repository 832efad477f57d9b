#include "primary/election.h"

#include <algorithm>

#include "protocols/check.h"

namespace hapair {

bool Election::ahead(const Candidate& a, const Candidate& b) {
  if (a.epoch != b.epoch) return a.epoch > b.epoch;
  if (a.position != b.position) return a.position > b.position;
  // Two replicas of one fragment never share an index, so the order is total.
  HAPAIR_CHECK_MSG(a.node == b.node || a.index != b.index,
                   "candidates " << a.node << " and " << b.node << " share replica index " << a.index);
  return a.index < b.index;
}

void Election::open(NodeId failed, const Candidate& me, const std::vector<NodeId>& others, TimeUs deadline_us,
                    TimeUs refusal_us) {
  HAPAIR_CHECK_MSG(failed != kNoNode && me.node != kNoNode && failed != me.node,
                   "election about node " << failed << " opened by node " << me.node);
  open_ = true;
  failed_ = failed;
  me_ = me;
  others_ = others;
  deadline_us_ = deadline_us;
  refusal_us_ = refusal_us;
  // Candidacies about another primary are of an older election.
  if (failed_heard_ != failed) {
    heard_.clear();
    failed_heard_ = failed;
  }
}

void Election::heard(NodeId failed, const Candidate& c) {
  if (failed != failed_heard_) {
    heard_.clear();
    failed_heard_ = failed;
  }
  heard_[c.node] = c;
  refusing_.erase(c.node);
}

bool Election::refused_now(TimeUs now) const {
  for (const auto& [n, at_us] : refusing_)
    if (!suspected_.count(n) && now < at_us + refusal_us_) return true;
  return false;
}

NodeId Election::winner(TimeUs now) const {
  if (!open_ || refused_now(now)) return kNoNode;
  if (now < deadline_us_)
    for (NodeId n : others_)
      if (!heard_.count(n) && !suspected_.count(n)) return kNoNode;
  Candidate best = me_;
  for (const Candidate& c : others_heard())
    if (ahead(c, best)) best = c;
  HAPAIR_CHECK_MSG(best.node == me_.node || (heard_.count(best.node) && !suspected_.count(best.node)),
                   "election names node " << best.node << ", neither heard nor me");
  return best.node;
}

std::vector<Election::Candidate> Election::others_heard() const {
  std::vector<Candidate> out;
  for (const auto& [n, c] : heard_)
    if (n != me_.node && !suspected_.count(n) && std::find(others_.begin(), others_.end(), n) != others_.end())
      out.push_back(c);
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return ahead(a, b); });
  return out;
}

}  // namespace hapair
