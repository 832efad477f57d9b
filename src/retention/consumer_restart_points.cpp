#include "retention/consumer_restart_points.h"

#include <algorithm>

#include "protocols/check.h"

namespace hapair {

ConsumerRestartPoints ConsumerRestartPoints::for_stream(const Plan& plan, FragmentId producer, StreamId stream) {
  ConsumerRestartPoints c;
  // A source never fails and recovers, and a consumer with one producer restarts from whatever
  // my recovery node installs (docs/FAULTS.md): only an operator fragment recovered exactly by
  // upstream backup (an approach that recovers from restart points, under the exact rule) makes a
  // consumer with several producers wait for its upstream.
  c.follow_own_approach(plan, producer, plan.traits(producer).recovers_from_restart_points);
  for (FragmentId d : plan.streams[stream].consumers) {
    if (plan.traits(d).recovers_from_restart_points) c.upstream_backup_consumers_.insert(d);
    if (plan.fragments[d].upstream.size() >= 2) c.several_producers_.insert(d);
  }
  return c;
}

void ConsumerRestartPoints::follow_own_approach(const Plan& plan, FragmentId producer, bool recovers_from_restart_points) {
  held_waits_for_upstream_ = plan.fragments.at(producer).kind == FragmentKind::operators && recovers_from_restart_points &&
                             plan.settings().trimming != TrimmingRule::conservative;
}

void ConsumerRestartPoints::follow_consumer_approach(FragmentId d, bool recovers_from_restart_points) {
  if (recovers_from_restart_points) upstream_backup_consumers_.insert(d);
  else upstream_backup_consumers_.erase(d);
}

bool ConsumerRestartPoints::add(FragmentId d, const Level1Ack& ack) {
  RestartPointStore& store = stores_[d];
  const std::uint64_t before = store.newest_generation();
  const TupleId trim_before = store.trim_position();
  store.add(ack);
  HAPAIR_CHECK_MSG(store.trim_position() >= trim_before, "consumer " << d << " trim position moves back from "
                                                                     << trim_before << " to " << store.trim_position());
  return store.newest_generation() != before;
}

void ConsumerRestartPoints::install(FragmentId d, const std::vector<StoredRestartPoint>& points) {
  RestartPointStore& store = stores_[d];
  const TupleId trim_before = store.trim_position();
  for (const auto& p : points) store.add(p);
  HAPAIR_CHECK_MSG(store.trim_position() >= trim_before, "consumer " << d << " trim position moves back from "
                                                                     << trim_before << " to " << store.trim_position());
}

bool ConsumerRestartPoints::confirm_forwarded(FragmentId d, std::uint64_t generation) {
  std::uint64_t& confirmed = forwarded_confirmed_[d];
  if (generation <= confirmed) return false;  // a confirmation never lowers a generation
  confirmed = generation;
  return true;
}

std::uint64_t ConsumerRestartPoints::forwarded_confirmed(FragmentId d) const {
  auto it = forwarded_confirmed_.find(d);
  return it == forwarded_confirmed_.end() ? 0 : it->second;
}

TupleId ConsumerRestartPoints::trim_position(FragmentId d) const {
  auto it = stores_.find(d);
  return it == stores_.end() ? 0 : it->second.trim_position();
}

std::uint64_t ConsumerRestartPoints::held_generation(FragmentId d) const {
  auto it = stores_.find(d);
  if (it == stores_.end()) return 0;
  const std::uint64_t newest = it->second.newest_generation();
  if (!held_waits_for_upstream_ || !several_producers(d)) return newest;
  const std::uint64_t held = std::min(newest, forwarded_confirmed(d));
  // Read by the consumer's level-1 rounds (a new generation starts only once every producer
  // says it holds the current one): I never say I hold more than I have, nor more than my
  // upstream confirmed holding (so my recovery node could still offer it).
  HAPAIR_CHECK_MSG(held <= newest && held <= forwarded_confirmed(d),
                   "consumer " << d << " told generation " << held << " (newest " << newest << ", confirmed "
                               << forwarded_confirmed(d) << ")");
  return held;
}

std::optional<RestartPoints> ConsumerRestartPoints::offer(FragmentId d, StreamId stream, TupleId trimmed_up_to) const {
  if (!upstream_backup_consumers_.count(d)) return std::nullopt;
  RestartPoints offer;
  offer.stream = stream;
  offer.trimmed_up_to = trimmed_up_to;
  auto it = stores_.find(d);
  if (it != stores_.end()) offer.points = it->second.points();
  return offer;
}

std::vector<DownstreamRestartPoints> ConsumerRestartPoints::forwarded(StreamId stream, TupleId trimmed_up_to) const {
  std::vector<DownstreamRestartPoints> out;
  for (const auto& [d, store] : stores_) {
    auto points = store.points_to_forward(!several_producers(d));
    if (points.empty()) continue;  // a passive standby's direct acks: no restart points
    out.push_back(DownstreamRestartPoints{stream, d, trimmed_up_to, std::move(points)});
  }
  if (out.empty()) out.push_back(DownstreamRestartPoints{stream, kNoFragment, trimmed_up_to, {}});
  // A recovery node of mine installs forwarded points only when they name every output stream
  // (upstream_backup/forwarded_points.cpp): this stream is always named, with where it begins.
  HAPAIR_CHECK_MSG(!out.empty() && out.front().stream == stream && out.back().trimmed_up_to == trimmed_up_to,
                   "stream " << stream << " forwards " << out.size() << " entries");
  return out;
}

}  // namespace hapair
