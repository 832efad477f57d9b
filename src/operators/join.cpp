#include "operators/join.h"

#include <algorithm>
#include <limits>

#include "operators/state_io.h"
#include "protocols/check.h"

namespace hapair {

Join::Join(TimeUs window_us, JoinCombine combine) : window_us_(window_us), combine_(combine) {}

Join::Join(const OperatorSpec& spec) : Join(us_from_ms(static_cast<double>(spec.join_window_ms)), spec.combine) {
  HAPAIR_CHECK_MSG(spec.inputs.size() == 2, "join " << spec.name << " has " << spec.inputs.size() << " inputs");
  HAPAIR_CHECK_MSG(window_us_ >= 0, "join " << spec.name << " join_window_ms=" << spec.join_window_ms);
}

double Join::combine(double left, double right) const {
  switch (combine_) {
    case JoinCombine::sum: return left + right;
    case JoinCombine::left: return left;
    case JoinCombine::right: return right;
    case JoinCombine::product: return left * right;
  }
  return 0.0;
}

void Join::Side::insert(const Tuple& t) {
  // Ids grow along a port, so only a corrupt snapshot repeats one: its tuple is not held, and
  // the three runs stay in step (an evicted tuple is the front of its key's run and in `ids`).
  if (!ids.insert(t.id)) return;
  by_time.insert(t);
  by_key[t.key].insert(t);
}

void Join::Side::evict_before(TimeUs bound_us) {
  while (!by_time.empty() && by_time.front().ts_us < bound_us) {
    const Tuple& t = by_time.front();
    // The least (ts, id) held is the least of its key too.
    TupleRun& same_key = by_key.at(t.key);
    HAPAIR_CHECK_MSG(same_key.front().id == t.id, "key=" << t.key << " id=" << t.id << " front=" << same_key.front().id);
    same_key.pop_front();
    HAPAIR_CHECK_MSG(ids.erase(t.id), "id=" << t.id);
    by_time.pop_front();
  }
  // A key whose tuples are gone keeps its (empty, allocated) run for the next tuple of that key,
  // until there are more such keys than tuples held: then they go, so the index stays bounded.
  if (by_key.size() > 2 * by_time.size() + 64) std::erase_if(by_key, [](const auto& entry) { return entry.second.empty(); });
}

std::size_t Join::buffered_tuples() const { return buffers_[0].size() + buffers_[1].size(); }

TimeUs Join::output_boundary(const std::vector<TimeUs>& input_boundaries) const {
  TimeUs b = Operator::output_boundary(input_boundaries);
  for (const auto& buffer : buffers_)
    if (!buffer.empty()) b = std::min(b, buffer.begin()->first.first);
  return b;
}
std::size_t Join::state_tuples() const { return sides_[0].by_time.size() + sides_[1].by_time.size(); }
bool Join::has_finished() const { return ended_[0] && ended_[1] && buffered_tuples() == 0; }

bool Join::processable(std::size_t port, TimeUs ts_us) const {
  const std::size_t q = 1 - port;
  if (ended_[q]) return true;
  if (!has_seen_[q]) return false;
  return max_seen_ts_us_[q] > ts_us || (max_seen_ts_us_[q] == ts_us && q > port);
}

void Join::process(std::size_t port, const Tuple& t, Tuples& out) {
  HAPAIR_CHECK_MSG(port < 2, "port=" << port);
  HAPAIR_CHECK_MSG(t.id > last_seen_id_[port], "port=" << port << " id=" << t.id << " last=" << last_seen_id_[port]);
  HAPAIR_CHECK_MSG(!ended_[port], "port=" << port << " tuple id=" << t.id << " after end of stream");
  last_seen_id_[port] = t.id;
  max_seen_ts_us_[port] = has_seen_[port] ? std::max(max_seen_ts_us_[port], t.ts_us) : t.ts_us;
  has_seen_[port] = true;
  buffers_[port].emplace(TimeKey{t.ts_us, t.id}, t);
  run(out);
}

void Join::end_of_stream(std::size_t port, Tuples& out) {
  HAPAIR_CHECK_MSG(port < 2, "port=" << port);
  ended_[port] = true;
  run(out);
}

void Join::run(Tuples& out) {
  // The smallest buffered merge key is processable whenever anything is (see join.h), so the
  // loop takes it while it can; each iteration removes one buffered tuple.
  while (buffered_tuples() > 0) {
    std::size_t p = 2;
    for (std::size_t s = 0; s < 2; ++s) {
      if (buffers_[s].empty()) continue;
      if (p == 2) {
        p = s;
        continue;
      }
      const Tuple& a = buffers_[s].begin()->second;
      const Tuple& b = buffers_[p].begin()->second;
      if (MergeKey{a.ts_us, static_cast<std::uint8_t>(s), a.id} < MergeKey{b.ts_us, static_cast<std::uint8_t>(p), b.id}) p = s;
    }
    const Tuple x = buffers_[p].begin()->second;
    if (!processable(p, x.ts_us)) return;
    buffers_[p].erase(buffers_[p].begin());
    process_one(p, x, out);
  }
}

void Join::process_one(std::size_t port, const Tuple& x, Tuples& out) {
  const MergeKey key{x.ts_us, static_cast<std::uint8_t>(port), x.id};
  const TimeUs bound_us = x.ts_us - window_us_;
  sides_[0].evict_before(bound_us);
  sides_[1].evict_before(bound_us);
  Step step;
  step.key = key;
  for (std::size_t s = 0; s < 2; ++s)
    step.oldest_needed[s] = sides_[s].ids.empty() ? last_processed_id_[s] + 1 : sides_[s].ids.front();
  step.first_output_id = counter_ + 1;

  const bool silent = has_silent_ && !(silent_through_ < key);
  const Side& other = sides_[1 - port];
  const auto same_key = other.by_key.find(x.key);
  if (!silent && same_key != other.by_key.end()) {
    for (const Tuple& partner : same_key->second) {
      const TimeUs gap_us = x.ts_us > partner.ts_us ? x.ts_us - partner.ts_us : partner.ts_us - x.ts_us;
      if (gap_us > window_us_) continue;
      const Tuple& l = port == 0 ? x : partner;
      const Tuple& r = port == 0 ? partner : x;
      Tuple o;
      o.id = ++counter_;
      o.ts_us = std::max(l.ts_us, r.ts_us);
      o.key = x.key;
      o.value = combine(l.value, r.value);
      o.lineage = mix64(l.lineage, r.lineage);
      out.push_back(o);
    }
  }
  sides_[port].insert(x);
  last_processed_id_[port] = x.id;
  last_processed_ = key;
  has_processed_ = true;
  if (counter_ >= step.first_output_id) {
    step.last_output_id = counter_;
    steps_.push_back(step);
  }
}

RestartPoint Join::make_point(const std::array<TupleId, 2>& replay_after, bool has_silent,
                              const MergeKey& silent_through, TupleId counter) const {
  RestartPoint point;
  point.replay_after.assign(replay_after.begin(), replay_after.end());
  ByteWriter w;
  write_tag(w, BlobTag::join_resume);
  write_bool(w, has_silent);
  w.i64(silent_through.ts_us);
  w.u8(silent_through.port);
  w.u64(silent_through.id);
  w.u64(counter);
  point.resume = w.take();
  return point;
}

RestartPoint Join::restart_point(TupleId acked_output) const {
  for (const Step& step : steps_) {
    if (step.last_output_id <= acked_output) continue;
    std::array<TupleId, 2> replay_after{step.oldest_needed[0] - 1, step.oldest_needed[1] - 1};
    // Silent up to just before x itself: x is the first tuple whose processing emits again.
    MergeKey before_x = step.key;
    before_x.id -= 1;
    return make_point(replay_after, true, before_x, step.first_output_id - 1);
  }
  // Every output is acked: keep what the state and the buffers hold, and emit only for tuples
  // after the last one processed (or after the silent bound of a restart not yet passed).
  std::array<TupleId, 2> replay_after{};
  for (std::size_t s = 0; s < 2; ++s) {
    TupleId oldest = std::numeric_limits<TupleId>::max();
    if (!sides_[s].ids.empty()) oldest = sides_[s].ids.front();
    for (const auto& entry : buffers_[s]) oldest = std::min(oldest, entry.second.id);
    replay_after[s] = oldest == std::numeric_limits<TupleId>::max() ? last_seen_id_[s] : oldest - 1;
  }
  bool has_silent = has_silent_;
  MergeKey silent = silent_through_;
  if (has_processed_ && (!has_silent || silent < last_processed_)) {
    has_silent = true;
    silent = last_processed_;
  }
  return make_point(replay_after, has_silent, silent, counter_);
}

bool Join::restart_from(const RestartPoint& point) {
  if (point.replay_after.size() != 2) return false;
  ByteReader r(point.resume);
  if (!read_tag(r, BlobTag::join_resume)) return false;
  bool has_silent = false;
  if (!read_bool(r, has_silent)) return false;
  MergeKey silent;
  silent.ts_us = r.i64();
  silent.port = r.u8();
  silent.id = r.u64();
  const TupleId counter = r.u64();
  if (!r.ok() || !r.at_end() || silent.port > 1) return false;
  Join fresh(window_us_, combine_);
  fresh.counter_ = counter;
  fresh.has_silent_ = has_silent;
  fresh.silent_through_ = silent;
  for (std::size_t s = 0; s < 2; ++s) {
    fresh.last_seen_id_[s] = point.replay_after[s];
    fresh.last_processed_id_[s] = point.replay_after[s];
  }
  *this = std::move(fresh);
  return true;
}

void Join::forget_up_to(TupleId acked_output) {
  while (!steps_.empty() && steps_.front().last_output_id <= acked_output) steps_.pop_front();
}

// ---- snapshots ---------------------------------------------------------------------------------

namespace {

void write_key(ByteWriter& w, TimeUs ts, std::uint8_t port, TupleId id) {
  w.i64(ts);
  w.u8(port);
  w.u64(id);
}

}  // namespace

Bytes Join::snapshot() const {
  ByteWriter w;
  write_tag(w, BlobTag::join_state);
  w.u64(counter_);
  for (std::size_t s = 0; s < 2; ++s) {
    w.u64(sides_[s].by_time.size());
    for (const Tuple& t : sides_[s].by_time) write_tuple(w, t);
    w.u64(buffers_[s].size());
    for (const auto& entry : buffers_[s]) write_tuple(w, entry.second);
    w.u64(last_seen_id_[s]);
    write_bool(w, has_seen_[s]);
    w.i64(max_seen_ts_us_[s]);
    w.u64(last_processed_id_[s]);
    write_bool(w, ended_[s]);
  }
  write_bool(w, has_processed_);
  write_key(w, last_processed_.ts_us, last_processed_.port, last_processed_.id);
  write_bool(w, has_silent_);
  write_key(w, silent_through_.ts_us, silent_through_.port, silent_through_.id);
  w.u64(steps_.size());
  for (const Step& step : steps_) {
    write_key(w, step.key.ts_us, step.key.port, step.key.id);
    w.u64(step.first_output_id);
    w.u64(step.last_output_id);
    w.u64(step.oldest_needed[0]);
    w.u64(step.oldest_needed[1]);
  }
  return w.take();
}

bool Join::restore(const Bytes& snapshot) {
  ByteReader r(snapshot);
  if (!read_tag(r, BlobTag::join_state)) return false;
  Join s(window_us_, combine_);
  s.counter_ = r.u64();
  auto read_key = [&r](MergeKey& k) {
    k.ts_us = r.i64();
    k.port = r.u8();
    k.id = r.u64();
    return r.ok() && k.port <= 1;
  };
  for (std::size_t p = 0; p < 2; ++p) {
    const std::uint64_t held = r.count(kTupleBytes);
    for (std::uint64_t i = 0; i < held && r.ok(); ++i) s.sides_[p].insert(read_tuple(r));
    const std::uint64_t buffered = r.count(kTupleBytes);
    for (std::uint64_t i = 0; i < buffered && r.ok(); ++i) {
      const Tuple t = read_tuple(r);
      s.buffers_[p].emplace(TimeKey{t.ts_us, t.id}, t);
    }
    s.last_seen_id_[p] = r.u64();
    bool flag = false;
    if (!read_bool(r, flag)) return false;
    s.has_seen_[p] = flag;
    s.max_seen_ts_us_[p] = r.i64();
    s.last_processed_id_[p] = r.u64();
    if (!read_bool(r, flag)) return false;
    s.ended_[p] = flag;
  }
  if (!read_bool(r, s.has_processed_) || !read_key(s.last_processed_)) return false;
  if (!read_bool(r, s.has_silent_) || !read_key(s.silent_through_)) return false;
  const std::uint64_t steps = r.count(17 + 4 * 8);
  for (std::uint64_t i = 0; i < steps; ++i) {
    Step step;
    if (!read_key(step.key)) return false;
    step.first_output_id = r.u64();
    step.last_output_id = r.u64();
    step.oldest_needed[0] = r.u64();
    step.oldest_needed[1] = r.u64();
    if (!r.ok() || step.first_output_id == 0 || step.first_output_id > step.last_output_id) return false;
    s.steps_.push_back(step);
  }
  if (!r.ok() || !r.at_end()) return false;
  *this = std::move(s);
  return true;
}

}  // namespace hapair
