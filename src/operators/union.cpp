#include "operators/union.h"

#include <algorithm>

#include "operators/state_io.h"
#include "protocols/check.h"

namespace hapair {

UnionOperator::UnionOperator(const OperatorSpec& spec) : UnionOperator(spec.inputs.size()) {}

UnionOperator::UnionOperator(std::size_t port_count)
    : port_count_(port_count),
      last_seen_(port_count_, 0),
      ended_(port_count_, false),
      buffered_(port_count_),
      forgotten_emitted_(port_count_, 0) {
  HAPAIR_CHECK_MSG(port_count_ >= 2 && port_count_ <= 0xffff, "a union needs 2 to 65535 inputs, has " << port_count_);
}

void UnionOperator::emit(std::size_t port, const Tuple& t, Tuples& out) {
  Tuple o = t;
  o.id = ++counter_;
  out.push_back(o);
  causes_.push_back(Cause{o.id, static_cast<std::uint16_t>(port), t.id});
  log_emission(port, t.id, o.id);
  if (follow_) return;
  // Run-length records: consecutive emissions from one port share a record, but only until the
  // record has been taken (it may already be on its way to the standby).
  if (!recorded_.empty() && recorded_.back().port == port) {
    ++recorded_.back().count;
  } else {
    recorded_.push_back(DeterminantRecord{static_cast<std::uint16_t>(port), 1});
  }
}

void UnionOperator::log_emission(std::size_t port, TupleId input, TupleId output) {
  const auto p = static_cast<std::uint16_t>(port);
  const bool continues = log_next_output_ == output;
  log_next_output_ = output + 1;
  if (!merge_log_.empty()) {
    MergeSegment& seg = merge_log_.back();
    if (seg.following == follow_ && continues) {
      MergeRun& last = seg.runs.back();
      if (last.port == p && last.first_input + last.count == input && last.count < 0xffffffffU) {
        ++last.count;
      } else {
        seg.runs.push_back(MergeRun{p, input, 1});
      }
      return;
    }
  }
  merge_log_.push_back(MergeSegment{output, follow_, {MergeRun{p, input, 1}}});
}

std::vector<MergeSegment> UnionOperator::take_merge_order() {
  std::vector<MergeSegment> taken;
  taken.swap(merge_log_);
  return taken;
}

bool UnionOperator::replay_merge_order(const std::vector<MergeRun>& runs) {
  replay_.assign(runs.begin(), runs.end());
  replaying_ = !replay_.empty();
  return true;
}

bool UnionOperator::drain_replay(Tuples& out) {
  while (!replay_.empty()) {
    MergeRun& run = replay_.front();
    if (run.port >= port_count_ || run.count == 0) {
      ++unmatched_runs_;
      replay_.pop_front();
      continue;
    }
    const TupleId up_to = run.first_input + run.count - 1;
    std::deque<Buffered>& buffer = buffered_[run.port];
    while (!buffer.empty() && buffer.front().tuple.id <= up_to) {
      emit(run.port, buffer.front().tuple, out);
      buffer.pop_front();
    }
    if (!buffer.empty() || last_seen_[run.port] >= up_to) {
      replay_.pop_front();  // everything up to `up_to` has been emitted
    } else if (ended_[run.port]) {
      ++unmatched_runs_;  // the port ended before the input the run names
      replay_.pop_front();
    } else {
      return false;
    }
  }
  replaying_ = false;
  return true;
}

void UnionOperator::process(std::size_t port, const Tuple& t, Tuples& out) {
  HAPAIR_CHECK_MSG(port < port_count_, "port=" << port << " ports=" << port_count_);
  HAPAIR_CHECK_MSG(t.id > last_seen_[port], "port=" << port << " id=" << t.id << " last=" << last_seen_[port]);
  HAPAIR_CHECK_MSG(!ended_[port], "port=" << port << " tuple id=" << t.id << " after end of stream");
  last_seen_[port] = t.id;
  if (!follow_ && !replaying_ && pending_.empty() && buffered_tuples() == 0) {
    emit(port, t, out);
    return;
  }
  buffered_[port].push_back(Buffered{t, ++arrival_seq_});
  drain(out);
}

void UnionOperator::drain(Tuples& out) {
  if (replaying_ && !drain_replay(out)) return;
  while (!pending_.empty()) {
    DeterminantRecord& record = pending_.front();
    std::deque<Buffered>& buffer = buffered_[record.port];
    while (record.count > 0 && !buffer.empty()) {
      emit(record.port, buffer.front().tuple, out);
      buffer.pop_front();
      --record.count;
    }
    if (record.count == 0) {
      pending_.pop_front();
    } else if (ended_[record.port]) {
      // The port delivered everything it ever will: the record asks for tuples that do not exist.
      ++rejected_records_;
      pending_.pop_front();
    } else {
      return;  // wait for more input on record.port
    }
  }
  if (follow_) return;
  // Leading with nothing pending: the rest goes out in the order it arrived.
  for (;;) {
    std::size_t best = port_count_;
    for (std::size_t p = 0; p < port_count_; ++p) {
      if (buffered_[p].empty()) continue;
      if (best == port_count_ || buffered_[p].front().arrival < buffered_[best].front().arrival) best = p;
    }
    if (best == port_count_) return;
    emit(best, buffered_[best].front().tuple, out);
    buffered_[best].pop_front();
  }
}

void UnionOperator::end_of_stream(std::size_t port, Tuples& out) {
  HAPAIR_CHECK_MSG(port < port_count_, "port=" << port << " ports=" << port_count_);
  ended_[port] = true;
  drain(out);
}

bool UnionOperator::has_finished() const {
  return std::all_of(ended_.begin(), ended_.end(), [](bool e) { return e; }) && buffered_tuples() == 0;
}

TimeUs UnionOperator::output_boundary(const std::vector<TimeUs>& input_boundaries) const {
  TimeUs b = Operator::output_boundary(input_boundaries);
  for (const auto& buffer : buffered_)  // each port's input comes in ts order
    if (!buffer.empty()) b = std::min(b, buffer.front().tuple.ts_us);
  return b;
}

std::size_t UnionOperator::buffered_tuples() const {
  std::size_t n = 0;
  for (const auto& b : buffered_) n += b.size();
  return n;
}

std::vector<DeterminantRecord> UnionOperator::take_determinants() {
  std::vector<DeterminantRecord> taken;
  taken.swap(recorded_);
  return taken;
}

void UnionOperator::set_follow_determinants(bool follow) { follow_ = follow; }

void UnionOperator::add_determinants(const std::vector<DeterminantRecord>& records, Tuples& out) {
  for (const DeterminantRecord& r : records) {
    if (r.port >= port_count_) {
      ++rejected_records_;
      continue;
    }
    if (r.count == 0) continue;
    pending_.push_back(r);
  }
  drain(out);
}

RestartPoint UnionOperator::restart_point(TupleId acked_output) const {
  const TupleId acked = std::max(acked_output, forgotten_up_to_);
  RestartPoint point;
  point.replay_after = forgotten_emitted_;
  for (const Cause& c : causes_) {
    if (c.output > acked) break;
    point.replay_after[c.port] = std::max(point.replay_after[c.port], c.input);
  }
  // Buffered input has not been emitted, so it is needed whatever was acked. (Each port emits in
  // arrival order, so this never lowers the position; it guards the invariant.)
  for (std::size_t p = 0; p < port_count_; ++p) {
    if (!buffered_[p].empty()) point.replay_after[p] = std::min(point.replay_after[p], buffered_[p].front().tuple.id - 1);
  }
  ByteWriter w;
  write_tag(w, BlobTag::union_resume);
  w.u64(std::min(acked, counter_));
  point.resume = w.take();
  return point;
}

bool UnionOperator::restart_from(const RestartPoint& point) {
  if (point.replay_after.size() != port_count_) return false;
  ByteReader r(point.resume);
  if (!read_tag(r, BlobTag::union_resume)) return false;
  const TupleId counter = r.u64();
  if (!r.ok() || !r.at_end()) return false;
  std::vector<MergeSegment> log = std::move(merge_log_);
  const TupleId log_next = log_next_output_;
  *this = UnionOperator(port_count_);
  merge_log_ = std::move(log);
  log_next_output_ = log_next;
  counter_ = counter;
  forgotten_up_to_ = counter;
  last_seen_ = point.replay_after;
  forgotten_emitted_ = point.replay_after;
  return true;
}

void UnionOperator::forget_up_to(TupleId acked_output) {
  const TupleId acked = std::min(acked_output, counter_);
  while (!causes_.empty() && causes_.front().output <= acked) {
    const Cause& c = causes_.front();
    forgotten_emitted_[c.port] = std::max(forgotten_emitted_[c.port], c.input);
    causes_.pop_front();
  }
  forgotten_up_to_ = std::max(forgotten_up_to_, acked);
}

Bytes UnionOperator::snapshot() const {
  ByteWriter w;
  write_tag(w, BlobTag::union_state);
  w.u64(port_count_);
  write_bool(w, follow_);
  w.u64(counter_);
  w.u64(arrival_seq_);
  w.u64(forgotten_up_to_);
  for (std::size_t p = 0; p < port_count_; ++p) {
    w.u64(last_seen_[p]);
    write_bool(w, ended_[p]);
    w.u64(forgotten_emitted_[p]);
    w.u64(buffered_[p].size());
    for (const Buffered& b : buffered_[p]) {
      write_tuple(w, b.tuple);
      w.u64(b.arrival);
    }
  }
  w.u64(causes_.size());
  for (const Cause& c : causes_) {
    w.u64(c.output);
    w.u64(c.port);
    w.u64(c.input);
  }
  w.u64(pending_.size());
  for (const DeterminantRecord& d : pending_) {
    w.u64(d.port);
    w.u64(d.count);
  }
  w.u64(recorded_.size());
  for (const DeterminantRecord& d : recorded_) {
    w.u64(d.port);
    w.u64(d.count);
  }
  return w.take();
}

namespace {

bool read_records(ByteReader& r, std::size_t port_count, std::vector<DeterminantRecord>& out) {
  const std::uint64_t n = r.count(16);
  for (std::uint64_t i = 0; i < n && r.ok(); ++i) {
    const std::uint64_t port = r.u64();
    const std::uint64_t count = r.u64();
    if (port >= port_count || count == 0 || count > 0xffffffffULL) return false;
    out.push_back(DeterminantRecord{static_cast<std::uint16_t>(port), static_cast<std::uint32_t>(count)});
  }
  return r.ok();
}

}  // namespace

bool UnionOperator::restore(const Bytes& snapshot) {
  ByteReader r(snapshot);
  if (!read_tag(r, BlobTag::union_state)) return false;
  if (r.u64() != port_count_) return false;
  UnionOperator s(port_count_);
  if (!read_bool(r, s.follow_)) return false;
  s.counter_ = r.u64();
  s.arrival_seq_ = r.u64();
  s.forgotten_up_to_ = r.u64();
  for (std::size_t p = 0; p < port_count_ && r.ok(); ++p) {
    s.last_seen_[p] = r.u64();
    bool ended = false;
    if (!read_bool(r, ended)) return false;
    s.ended_[p] = ended;
    s.forgotten_emitted_[p] = r.u64();
    const std::uint64_t n = r.count(kTupleBytes + 8);
    for (std::uint64_t i = 0; i < n && r.ok(); ++i) {
      Buffered b;
      b.tuple = read_tuple(r);
      b.arrival = r.u64();
      s.buffered_[p].push_back(b);
    }
  }
  const std::uint64_t causes = r.count(24);
  for (std::uint64_t i = 0; i < causes && r.ok(); ++i) {
    Cause c;
    c.output = r.u64();
    const std::uint64_t port = r.u64();
    c.input = r.u64();
    if (port >= port_count_) return false;
    c.port = static_cast<std::uint16_t>(port);
    s.causes_.push_back(c);
  }
  std::vector<DeterminantRecord> pending;
  if (!read_records(r, port_count_, pending)) return false;
  s.pending_.assign(pending.begin(), pending.end());
  if (!read_records(r, port_count_, s.recorded_)) return false;
  if (!r.ok() || !r.at_end()) return false;
  s.rejected_records_ = rejected_records_;
  s.merge_log_ = std::move(merge_log_);
  s.log_next_output_ = log_next_output_;
  *this = std::move(s);
  return true;
}

}  // namespace hapair
