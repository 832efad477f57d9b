#include "operators/aggregate.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "operators/state_io.h"
#include "protocols/check.h"

namespace hapair {
namespace {

// Floor division for possibly negative numerators (window starts before time 0 exist).
TimeUs floor_div(TimeUs a, TimeUs b) {
  TimeUs q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

constexpr std::size_t kAccumulatorBytes = 5 * 8;

void write_accumulator(ByteWriter& w, std::int64_t key, std::uint64_t count, double sum, double min, double max,
                       std::uint64_t version) {
  w.i64(key);
  w.u64(count);
  w.f64(sum);
  w.f64(min);
  w.f64(max);
  w.u64(version);
}

// An open window's header: its start, creating tuple and creation version.
template <typename Window>
void write_window_header(ByteWriter& w, TimeUs start, const Window& win) {
  w.i64(start);
  w.u64(win.first_input_id);
  w.u64(win.version);
}

template <typename Window>
bool read_window_header(ByteReader& r, TimeUs& start, Window& win) {
  start = r.i64();
  win.first_input_id = r.u64();
  win.version = r.u64();
  return r.ok();
}

}  // namespace

Aggregate::Aggregate(const OperatorSpec& spec)
    : config_{hash_name(spec.name), spec.function, us_from_ms(static_cast<double>(spec.window_ms)),
              us_from_ms(static_cast<double>(spec.slide_ms)), spec.group_by_key} {
  HAPAIR_CHECK_MSG(spec.inputs.size() == 1, "aggregate " << spec.name << " has " << spec.inputs.size() << " inputs");
  HAPAIR_CHECK_MSG(config_.slide_us > 0 && config_.window_us >= config_.slide_us &&
                       config_.window_us % config_.slide_us == 0,
                   "aggregate " << spec.name << ": window_ms=" << spec.window_ms << " must be a positive multiple of slide_ms="
                                << spec.slide_ms);
}

TimeUs Aggregate::first_window_start_us(TimeUs ts_us) const {
  // Window k contains ts iff k*slide <= ts < k*slide + window, i.e. (ts - window) / slide < k.
  // A timestamp within one window of the smallest TimeUs (only a forged one) counts from there.
  const TimeUs ts = std::max(ts_us, std::numeric_limits<TimeUs>::min() + config_.window_us);
  return (floor_div(ts - config_.window_us, config_.slide_us) + 1) * config_.slide_us;
}

double Aggregate::result(const Accumulator& a) const {
  switch (config_.function) {
    case AggregateFunction::count: return static_cast<double>(a.count);
    case AggregateFunction::sum: return a.sum;
    case AggregateFunction::avg: return a.sum / static_cast<double>(a.count);
    case AggregateFunction::min: return a.min;
    case AggregateFunction::max: return a.max;
  }
  return 0.0;
}

TimeUs Aggregate::output_boundary(const std::vector<TimeUs>& input_boundaries) const {
  TimeUs b = Operator::output_boundary(input_boundaries);
  if (!open_.empty()) b = std::min(b, open_.begin()->first + config_.window_us);
  return b;
}

void Aggregate::close_window(std::map<TimeUs, OpenWindow>::iterator it, Tuples& out) {
  const TimeUs start = it->first;
  const OpenWindow& w = it->second;
  HAPAIR_CHECK_MSG(!w.groups.empty(), "window start=" << start << " is empty");
  const TimeUs end = start + config_.window_us;
  ClosedWindow closed;
  closed.first_input_id = w.first_input_id;
  closed.first_output_id = counter_ + 1;
  for (const auto& [key, acc] : w.groups) {
    Tuple o;
    o.id = ++counter_;
    o.ts_us = end;
    o.key = key;
    o.value = result(acc);
    o.lineage = mix64(config_.name_hash, mix64(static_cast<std::uint64_t>(end), static_cast<std::uint64_t>(key)));
    out.push_back(o);
  }
  closed.last_output_id = counter_;
  closed.version = version_;
  closed_[start] = closed;
  open_.erase(it);
}

void Aggregate::process(std::size_t port, const Tuple& t, Tuples& out) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  HAPAIR_CHECK_MSG(t.id > last_input_id_, "id=" << t.id << " last_input_id=" << last_input_id_);
  HAPAIR_CHECK_MSG(!ended_, "tuple id=" << t.id << " after end of stream");
  ++version_;
  last_input_id_ = t.id;
  if (!has_watermark_ || t.ts_us > watermark_us_) {
    while (!open_.empty() && open_.begin()->first + config_.window_us <= t.ts_us) close_window(open_.begin(), out);
    has_watermark_ = true;
    watermark_us_ = t.ts_us;
  } else if (t.ts_us < watermark_us_) {
    ++late_tuples_;
  }
  const std::int64_t key = config_.group_by_key ? t.key : 0;
  const TimeUs first_start_us = first_window_start_us(t.ts_us);
  // The windows a tuple falls into are consecutive starts, so one search finds the first and
  // the walk goes on from there (window_ms / slide_ms lookups per tuple otherwise).
  auto it = open_.lower_bound(first_start_us);
  for (TimeUs start = first_start_us; start <= t.ts_us; start += config_.slide_us) {
    // Windows before the restart bound would be incomplete; windows ending at or before the
    // watermark have closed already (a late tuple must not reopen them).
    if (start < min_window_start_us_ || start + config_.window_us <= watermark_us_) continue;
    while (it != open_.end() && it->first < start) ++it;
    if (it == open_.end() || it->first != start) {
      it = open_.emplace_hint(it, start, OpenWindow{});
      it->second.first_input_id = t.id;
      it->second.version = version_;
    }
    auto [g, fresh] = it->second.groups.try_emplace(key);
    Accumulator& a = g->second;
    if (fresh) {
      a.min = t.value;
      a.max = t.value;
    } else {
      a.min = std::min(a.min, t.value);
      a.max = std::max(a.max, t.value);
    }
    ++a.count;
    a.sum += t.value;
    a.version = version_;
  }
}

void Aggregate::end_of_stream(std::size_t port, Tuples& out) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  if (ended_) return;
  ++version_;
  while (!open_.empty()) close_window(open_.begin(), out);
  ended_ = true;
}

RestartPoint Aggregate::make_point(TupleId replay_after, TimeUs min_window_start_us, TupleId counter) const {
  RestartPoint point;
  point.replay_after.push_back(replay_after);
  ByteWriter w;
  write_tag(w, BlobTag::aggregate_resume);
  w.i64(min_window_start_us);
  w.u64(counter);
  point.resume = w.take();
  return point;
}

RestartPoint Aggregate::restart_point(TupleId acked_output) const {
  // Closed windows precede open ones and their outputs grow with their start, so the first
  // closed window with an unacked output, else the first open window, is the earliest needed.
  for (const auto& [start, c] : closed_) {
    if (c.last_output_id > acked_output) return make_point(c.first_input_id - 1, start, c.first_output_id - 1);
  }
  if (!open_.empty()) {
    const auto& [start, w] = *open_.begin();
    return make_point(w.first_input_id - 1, start, counter_);
  }
  // Nothing is needed: a restart continues after the last input, and may emit only windows
  // that a future tuple opens completely. Every window starting at or before the watermark
  // contains it or ended before it, so it has closed (or lies before the bound) and must never
  // be created again: the bound is the first window start after the watermark.
  const TimeUs next_start =
      has_watermark_ ? (floor_div(watermark_us_, config_.slide_us) + 1) * config_.slide_us : kNoBound;
  return make_point(last_input_id_, std::max(next_start, min_window_start_us_), counter_);
}

bool Aggregate::restart_from(const RestartPoint& point) {
  if (point.replay_after.size() != 1) return false;
  ByteReader r(point.resume);
  if (!read_tag(r, BlobTag::aggregate_resume)) return false;
  const TimeUs min_start = r.i64();
  const TupleId counter = r.u64();
  if (!r.ok() || !r.at_end()) return false;
  Aggregate fresh(config_);
  fresh.version_ = version_ + 1;
  fresh.counter_ = counter;
  fresh.last_input_id_ = point.replay_after[0];
  fresh.min_window_start_us_ = min_start;
  *this = std::move(fresh);
  return true;
}

void Aggregate::forget_up_to(TupleId acked_output) {
  bool changed = false;
  while (!closed_.empty() && closed_.begin()->second.last_output_id <= acked_output) {
    closed_.erase(closed_.begin());
    changed = true;
  }
  if (changed) ++version_;
}

// ---- snapshots and deltas ----------------------------------------------------------------------

void Aggregate::write_scalars(ByteWriter& w) const {
  w.u64(version_);
  w.u64(counter_);
  w.u64(last_input_id_);
  write_bool(w, has_watermark_);
  w.i64(watermark_us_);
  w.i64(min_window_start_us_);
  write_bool(w, ended_);
  w.u64(late_tuples_);
}

bool Aggregate::read_scalars(ByteReader& r) {
  version_ = r.u64();
  counter_ = r.u64();
  last_input_id_ = r.u64();
  if (!read_bool(r, has_watermark_)) return false;
  watermark_us_ = r.i64();
  min_window_start_us_ = r.i64();
  if (!read_bool(r, ended_)) return false;
  late_tuples_ = r.u64();
  return r.ok();
}

void Aggregate::copy_scalars_from(const Aggregate& o) {
  version_ = o.version_;
  counter_ = o.counter_;
  last_input_id_ = o.last_input_id_;
  has_watermark_ = o.has_watermark_;
  watermark_us_ = o.watermark_us_;
  min_window_start_us_ = o.min_window_start_us_;
  ended_ = o.ended_;
  late_tuples_ = o.late_tuples_;
}

namespace {

void write_closed(ByteWriter& w, TimeUs start, TupleId first_in, TupleId first_out, TupleId last_out,
                  std::uint64_t version) {
  w.i64(start);
  w.u64(first_in);
  w.u64(first_out);
  w.u64(last_out);
  w.u64(version);
}

}  // namespace

Bytes Aggregate::snapshot() const {
  ByteWriter w;
  write_tag(w, BlobTag::aggregate_state);
  write_scalars(w);
  w.u64(closed_.size());
  for (const auto& [start, c] : closed_)
    write_closed(w, start, c.first_input_id, c.first_output_id, c.last_output_id, c.version);
  w.u64(open_.size());
  for (const auto& [start, win] : open_) {
    write_window_header(w, start, win);
    w.u64(win.groups.size());
    for (const auto& [key, a] : win.groups) write_accumulator(w, key, a.count, a.sum, a.min, a.max, a.version);
  }
  return w.take();
}

namespace {

constexpr std::size_t kClosedBytes = 5 * 8;

template <typename Closed>
bool read_closed(ByteReader& r, TimeUs& start, Closed& c) {
  start = r.i64();
  c.first_input_id = r.u64();
  c.first_output_id = r.u64();
  c.last_output_id = r.u64();
  c.version = r.u64();
  return r.ok() && c.first_output_id >= 1 && c.first_output_id <= c.last_output_id;
}

template <typename Acc>
bool read_accumulator(ByteReader& r, std::int64_t& key, Acc& a) {
  key = r.i64();
  a.count = r.u64();
  a.sum = r.f64();
  a.min = r.f64();
  a.max = r.f64();
  a.version = r.u64();
  return r.ok() && a.count > 0;
}

}  // namespace

bool Aggregate::restore(const Bytes& snapshot) {
  ByteReader r(snapshot);
  if (!read_tag(r, BlobTag::aggregate_state)) return false;
  Aggregate s(config_);
  if (!s.read_scalars(r)) return false;
  const std::uint64_t closed = r.count(kClosedBytes);
  for (std::uint64_t i = 0; i < closed; ++i) {
    TimeUs start = 0;
    ClosedWindow c;
    if (!read_closed(r, start, c) || !s.closed_.emplace(start, c).second) return false;
  }
  const std::uint64_t open = r.count(4 * 8);
  for (std::uint64_t i = 0; i < open; ++i) {
    TimeUs start = 0;
    OpenWindow win;
    if (!read_window_header(r, start, win)) return false;
    const std::uint64_t groups = r.count(kAccumulatorBytes + 8);
    for (std::uint64_t g = 0; g < groups; ++g) {
      std::int64_t key = 0;
      Accumulator a;
      if (!read_accumulator(r, key, a) || !win.groups.emplace(key, a).second) return false;
    }
    if (!r.ok() || win.groups.empty() || !s.open_.emplace(start, std::move(win)).second) return false;
  }
  if (!r.ok() || !r.at_end()) return false;
  *this = std::move(s);
  return true;
}

Bytes Aggregate::snapshot_delta(std::uint64_t since_version) const {
  ByteWriter w;
  write_tag(w, BlobTag::aggregate_delta);
  w.u64(since_version);
  write_scalars(w);
  // Closed-window bookkeeping only grows at the back and is forgotten from the front, so the
  // first start still kept plus the records closed since the base describe it completely.
  write_bool(w, !closed_.empty());
  w.i64(closed_.empty() ? 0 : closed_.begin()->first);
  std::uint64_t changed_closed = 0;
  for (const auto& entry : closed_) changed_closed += entry.second.version > since_version ? 1 : 0;
  w.u64(changed_closed);
  for (const auto& [start, c] : closed_) {
    if (c.version > since_version) write_closed(w, start, c.first_input_id, c.first_output_id, c.last_output_id, c.version);
  }
  w.u64(open_.size());
  for (const auto& [start, win] : open_) write_window_header(w, start, win);
  std::uint64_t changed = 0;
  for (const auto& entry : open_)
    for (const auto& g : entry.second.groups) changed += g.second.version > since_version ? 1 : 0;
  w.u64(changed);
  for (const auto& [start, win] : open_) {
    for (const auto& [key, a] : win.groups) {
      if (a.version <= since_version) continue;
      w.i64(start);
      write_accumulator(w, key, a.count, a.sum, a.min, a.max, a.version);
    }
  }
  return w.take();
}

bool Aggregate::apply_delta(const Bytes& delta) {
  ByteReader r(delta);
  if (!read_tag(r, BlobTag::aggregate_delta)) return false;
  // A delta is relative to one base version; applied to any other state it would be wrong.
  if (r.u64() != version_ || !r.ok()) return false;
  Aggregate scalars(config_);
  if (!scalars.read_scalars(r)) return false;
  bool any_closed = false;
  if (!read_bool(r, any_closed)) return false;
  const TimeUs closed_first = r.i64();
  std::vector<std::pair<TimeUs, ClosedWindow>> closed;
  const std::uint64_t closed_n = r.count(kClosedBytes);
  for (std::uint64_t i = 0; i < closed_n; ++i) {
    std::pair<TimeUs, ClosedWindow> c;
    if (!read_closed(r, c.first, c.second)) return false;
    closed.push_back(c);
  }
  std::map<TimeUs, OpenWindow> open_set;  // windows without their accumulators
  const std::uint64_t open_n = r.count(3 * 8);
  for (std::uint64_t i = 0; i < open_n; ++i) {
    TimeUs start = 0;
    OpenWindow win;
    if (!read_window_header(r, start, win) || !open_set.emplace(start, std::move(win)).second) return false;
  }
  std::vector<std::pair<TimeUs, std::pair<std::int64_t, Accumulator>>> accs;
  const std::uint64_t acc_n = r.count(kAccumulatorBytes + 16);
  accs.reserve(acc_n);
  for (std::uint64_t i = 0; i < acc_n; ++i) {
    const TimeUs start = r.i64();
    std::pair<std::int64_t, Accumulator> a;
    if (!read_accumulator(r, a.first, a.second) || open_set.count(start) == 0) return false;
    accs.emplace_back(start, a);
  }
  if (!r.ok() || !r.at_end()) return false;
  // A window new to this state must bring at least one accumulator: windows are never empty.
  for (const auto& entry : open_set) {
    if (open_.count(entry.first)) continue;
    const bool has_group = std::any_of(accs.begin(), accs.end(), [&](const auto& a) { return a.first == entry.first; });
    if (!has_group) return false;
  }

  // Everything parsed and checked: apply.
  copy_scalars_from(scalars);
  if (!any_closed) {
    closed_.clear();
  } else {
    closed_.erase(closed_.begin(), closed_.lower_bound(closed_first));
  }
  for (const auto& [start, c] : closed) closed_[start] = c;
  for (auto it = open_.begin(); it != open_.end();) {
    it = open_set.count(it->first) ? std::next(it) : open_.erase(it);
  }
  for (auto& [start, win] : open_set) {
    OpenWindow& mine = open_[start];
    mine.first_input_id = win.first_input_id;
    mine.version = win.version;
  }
  for (const auto& [start, a] : accs) open_[start].groups[a.first] = a.second;
  return true;
}

}  // namespace hapair
