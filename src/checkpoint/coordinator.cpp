#include "checkpoint/coordinator.h"

#include <algorithm>

#include "protocols/check.h"

namespace hapair {

CheckpointCoordinator::CheckpointCoordinator(std::vector<CheckpointParticipant> participants,
                                             std::map<FragmentId, std::vector<FragmentId>> rollback_sets,
                                             CoordinatorSettings settings, CheckpointStore& store)
    : participants_(std::move(participants)), rollback_sets_(std::move(rollback_sets)), settings_(settings), store_(store) {
  HAPAIR_CHECK_MSG(!participants_.empty(), "a coordinator without participants");
  HAPAIR_CHECK_MSG(settings_.interval_us > 0 && settings_.timeout_us > 0 && settings_.checkpoints_retained >= 1,
                   "interval_us=" << settings_.interval_us << " timeout_us=" << settings_.timeout_us
                                  << " retained=" << settings_.checkpoints_retained);
  for (const CheckpointParticipant& p : participants_)
    HAPAIR_CHECK_MSG(p.fragment != kNoFragment && !p.name.empty(), "participant " << p.fragment << " '" << p.name << "'");
}

const CheckpointParticipant* CheckpointCoordinator::participant(FragmentId f) const {
  for (const CheckpointParticipant& p : participants_)
    if (p.fragment == f) return &p;
  return nullptr;
}

void CheckpointCoordinator::start(TimeUs now, CoordinatorOutput& /*out*/) {
  HAPAIR_CHECK_MSG(!started_, "coordinator started twice");
  started_ = true;
  newest_complete_ = store_.newest_complete();
  next_id_ = store_.highest_started() + 1;
  next_trigger_us_ = now + settings_.interval_us;
}

void CheckpointCoordinator::abandon(CoordinatorOutput& out) {
  if (!in_flight_) return;
  out.abandoned.push_back(*in_flight_);
  in_flight_.reset();
  acked_.clear();
}

void CheckpointCoordinator::tick(TimeUs now, CoordinatorOutput& out) {
  if (!started_) return;
  if (in_flight_ && now >= in_flight_since_us_ + settings_.timeout_us) {
    abandon(out);
    next_trigger_us_ = std::min(next_trigger_us_, now);
  }
  if (in_flight_ || !restoring_.empty() || now < next_trigger_us_) return;
  in_flight_ = next_id_++;
  in_flight_since_us_ = now;
  acked_.clear();
  next_trigger_us_ = now + settings_.interval_us;
  out.triggered.push_back(*in_flight_);
}

void CheckpointCoordinator::snapshot(TimeUs /*now*/, FragmentId fragment, CheckpointId id, const Bytes& state,
                                     CoordinatorOutput& out) {
  const CheckpointParticipant* p = participant(fragment);
  if (p == nullptr || !in_flight_ || id != *in_flight_ || acked_.count(fragment) != 0) {
    ++stale_;
    return;
  }
  store_.put_snapshot(id, p->name, state);
  acked_.insert(fragment);
  if (acked_.size() < participants_.size()) return;
  std::vector<std::string> names;
  for (const CheckpointParticipant& q : participants_) names.push_back(q.name);
  store_.complete(id, names, settings_.checkpoints_retained);
  HAPAIR_CHECK_MSG(store_.newest_complete() == id, "checkpoint " << id << " completed but the store's newest is another");
  newest_complete_ = id;
  in_flight_.reset();
  acked_.clear();
  out.completed.push_back(id);
}

void CheckpointCoordinator::fragment_failed(TimeUs /*now*/, FragmentId fragment, CoordinatorOutput& out) {
  HAPAIR_CHECK_MSG(participant(fragment) != nullptr, "fragment " << fragment << " is not coordinated");
  abandon(out);
  Rollback r;
  r.number = ++rollbacks_;
  r.to = newest_complete_.value_or(0);
  r.failed = fragment;
  auto it = rollback_sets_.find(fragment);
  r.fragments = it != rollback_sets_.end() ? it->second : std::vector<FragmentId>{fragment};
  HAPAIR_CHECK_MSG(std::find(r.fragments.begin(), r.fragments.end(), fragment) != r.fragments.end(),
                   "the rollback set of fragment " << fragment << " does not hold it");
  // A failure during a rollback widens it: everything not yet restored restores anew (its
  // snapshot is the same checkpoint's), and the new region joins.
  for (FragmentId f : r.fragments) restoring_.insert(f);
  out.rollbacks.push_back(std::move(r));
}

void CheckpointCoordinator::restored(TimeUs now, FragmentId fragment, std::uint64_t number, CoordinatorOutput& /*out*/) {
  if (number != rollbacks_ || restoring_.erase(fragment) == 0) {
    ++stale_;
    return;
  }
  if (restoring_.empty()) next_trigger_us_ = now + settings_.interval_us;
}

TimeUs CheckpointCoordinator::next_wakeup_us() const {
  if (!started_) return kNever;
  if (in_flight_) return in_flight_since_us_ + settings_.timeout_us;
  if (!restoring_.empty()) return kNever;
  return next_trigger_us_;
}

}  // namespace hapair
