#include "operators/top.h"

#include <algorithm>
#include <limits>

#include "operators/state_io.h"
#include "protocols/check.h"

namespace hapair {

Top::Top(const OperatorSpec& spec) {
  HAPAIR_CHECK_MSG(spec.inputs.size() == 1, "top " << spec.name << " has " << spec.inputs.size() << " inputs");
}

bool Top::better(const Tuple& a, const Tuple& b) {
  if (a.value != b.value) return a.value > b.value;
  if (a.key != b.key) return a.key < b.key;
  return a.id < b.id;
}

void Top::close(Tuples& out) {
  if (!best_) return;
  Tuple o = *best_;
  o.id = ++counter_;
  out.push_back(o);
  emitted_.push_back(Emitted{o.id, open_last_input_});
  best_.reset();
}

void Top::process(std::size_t port, const Tuple& t, Tuples& out) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  HAPAIR_CHECK_MSG(t.id > last_input_id_, "id=" << t.id << " last=" << last_input_id_);
  HAPAIR_CHECK_MSG(!ended_, "tuple id=" << t.id << " after end of stream");
  last_input_id_ = t.id;
  // Late: a window already past. Only a renumbered replay upstream sends one (upstream backup's
  // conservative rule restarting a fragment with state, beyond its guarantee past a consumer with
  // state); dropped, as a window operator drops what comes after its watermark.
  if (best_ && t.ts_us < best_->ts_us) return;
  if (best_ && t.ts_us > best_->ts_us) close(out);
  if (!best_ || better(t, *best_)) best_ = t;
  open_last_input_ = t.id;
}

void Top::advance_boundary(std::size_t port, TimeUs boundary_us, Tuples& out) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  // Nothing more of the open window can come once the boundary is past its timestamp.
  if (best_ && boundary_us > best_->ts_us) close(out);
}

TimeUs Top::output_boundary(const std::vector<TimeUs>& input_boundaries) const {
  TimeUs b = Operator::output_boundary(input_boundaries);
  if (best_) b = std::min(b, best_->ts_us);
  return b;
}

void Top::end_of_stream(std::size_t port, Tuples& out) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  close(out);
  ended_ = true;
}

RestartPoint Top::restart_point(TupleId acked_output) const {
  RestartPoint point;
  TupleId after = forgotten_last_input_;
  TupleId counter = forgotten_up_to_;
  for (const Emitted& e : emitted_) {
    if (e.output > acked_output) break;
    after = e.last_input;
    counter = e.output;
  }
  point.replay_after = {after};
  ByteWriter w;
  write_tag(w, BlobTag::top_resume);
  w.u64(counter);
  point.resume = w.take();
  return point;
}

bool Top::restart_from(const RestartPoint& point) {
  if (point.replay_after.size() != 1) return false;
  ByteReader r(point.resume);
  if (!read_tag(r, BlobTag::top_resume)) return false;
  const TupleId counter = r.u64();
  if (!r.ok() || !r.at_end()) return false;
  *this = Top();
  counter_ = counter;
  forgotten_up_to_ = counter;
  last_input_id_ = point.replay_after[0];
  forgotten_last_input_ = point.replay_after[0];
  return true;
}

void Top::forget_up_to(TupleId acked_output) {
  while (!emitted_.empty() && emitted_.front().output <= acked_output) {
    forgotten_last_input_ = emitted_.front().last_input;
    forgotten_up_to_ = emitted_.front().output;
    emitted_.pop_front();
  }
}

Bytes Top::snapshot() const {
  ByteWriter w;
  write_tag(w, BlobTag::top_state);
  w.u64(counter_);
  w.u64(last_input_id_);
  write_bool(w, ended_);
  write_bool(w, best_.has_value());
  if (best_) write_tuple(w, *best_);
  w.u64(open_last_input_);
  w.u64(forgotten_last_input_);
  w.u64(forgotten_up_to_);
  w.u64(emitted_.size());
  for (const Emitted& e : emitted_) {
    w.u64(e.output);
    w.u64(e.last_input);
  }
  return w.take();
}

bool Top::restore(const Bytes& snapshot) {
  ByteReader r(snapshot);
  if (!read_tag(r, BlobTag::top_state)) return false;
  Top s;
  s.counter_ = r.u64();
  s.last_input_id_ = r.u64();
  bool has_best = false;
  if (!read_bool(r, s.ended_) || !read_bool(r, has_best)) return false;
  if (has_best) s.best_ = read_tuple(r);
  s.open_last_input_ = r.u64();
  s.forgotten_last_input_ = r.u64();
  s.forgotten_up_to_ = r.u64();
  const std::uint64_t n = r.count(16);
  for (std::uint64_t i = 0; i < n && r.ok(); ++i) {
    Emitted e;
    e.output = r.u64();
    e.last_input = r.u64();
    if (e.output <= (s.emitted_.empty() ? s.forgotten_up_to_ : s.emitted_.back().output) || e.output > s.counter_)
      return false;  // outputs in order, none beyond the counter
    s.emitted_.push_back(e);
  }
  if (!r.ok() || !r.at_end()) return false;
  *this = std::move(s);
  return true;
}

}  // namespace hapair
