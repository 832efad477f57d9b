#include "retention/restart_point_store.h"

#include <algorithm>
#include <set>

#include "protocols/check.h"

namespace hapair {

void RestartPointStore::add(const Level1Ack& ack) {
  if (ack.restart_point.empty()) {
    // Passive standby: "my checkpoint covers input up to up_to".
    const TupleId before = trim_position_;
    direct_ = true;
    trim_position_ = std::max(trim_position_, ack.up_to);
    HAPAIR_CHECK_MSG(trim_position_ >= before && trim_position_ >= ack.up_to,
                     "trim position " << trim_position_ << " after " << before << " and a direct ack to " << ack.up_to);
    return;
  }
  add(StoredRestartPoint{ack.generation, ack.up_to, ack.restart_point, ack.forwarded});
}

void RestartPointStore::add(const StoredRestartPoint& point) {
  if (newest_ && point.generation <= newest_->generation) return;  // stale or repeated: a peer's, ignored
  const TupleId trim_before = trim_position_;
  older_ = newest_;
  newest_ = point;
  if (older_) trim_position_ = std::max(trim_position_, older_->up_to);
  // Generations and the trim position never move backwards (a peer's generation may be any
  // number, 0 included, but the two kept are in order); the trim position follows the older of
  // the two points (a recovery node may still need the newer one's input).
  HAPAIR_CHECK_MSG(!older_ || older_->generation < newest_->generation,
                   "stored generations " << older_->generation << ", " << newest_->generation << " out of order");
  HAPAIR_CHECK_MSG(trim_position_ >= trim_before, "trim position moves back from " << trim_before << " to " << trim_position_);
}

std::vector<StoredRestartPoint> RestartPointStore::points_to_forward(bool newest_only) const {
  std::vector<StoredRestartPoint> out = points();
  if (newest_only && out.size() > 1) out.erase(out.begin());
  for (StoredRestartPoint& p : out)
    for (DownstreamRestartPoints& f : p.forwarded) f.points.clear();
  return out;
}

std::vector<StoredRestartPoint> RestartPointStore::points() const {
  std::vector<StoredRestartPoint> out;
  if (older_) out.push_back(*older_);
  if (newest_) out.push_back(*newest_);
  return out;
}

std::uint64_t RestartPointStore::newest_generation() const { return newest_ ? newest_->generation : 0; }

std::optional<std::uint64_t> choose_generation(const std::vector<RestartPoints>& offers) {
  if (offers.empty()) return std::nullopt;
  std::set<std::uint64_t> common;
  for (const auto& p : offers[0].points) common.insert(p.generation);
  for (std::size_t i = 1; i < offers.size(); ++i) {
    std::set<std::uint64_t> mine;
    for (const auto& p : offers[i].points) mine.insert(p.generation);
    std::set<std::uint64_t> both;
    std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(),
                          std::inserter(both, both.begin()));
    common = std::move(both);
  }
  if (common.empty()) return std::nullopt;
  const std::uint64_t chosen = *common.rbegin();
  // The recovery node restarts from this generation and asks every producer to replay from it
  // (upstream_backup/spare_role.cpp reads its point back with find_generation): every offer
  // holds it.
  for (const auto& o : offers)
    HAPAIR_CHECK_MSG(std::any_of(o.points.begin(), o.points.end(), [&](const StoredRestartPoint& p) { return p.generation == chosen; }),
                     "generation " << chosen << " chosen, not offered on stream " << o.stream);
  return chosen;
}

std::optional<StoredRestartPoint> find_generation(const std::vector<RestartPoints>& offers, std::uint64_t generation) {
  for (const auto& o : offers)
    for (const auto& p : o.points)
      if (p.generation == generation) return p;
  return std::nullopt;
}

}  // namespace hapair
