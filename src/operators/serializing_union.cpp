#include "operators/serializing_union.h"

#include <algorithm>
#include <limits>

#include "operators/state_io.h"
#include "protocols/check.h"

namespace hapair {

namespace {
constexpr TimeUs kEndedBoundary = std::numeric_limits<TimeUs>::max();
}  // namespace

SerializingUnion::SerializingUnion(const OperatorSpec& spec) : SerializingUnion(spec.inputs.size()) {}

SerializingUnion::SerializingUnion(std::size_t port_count)
    : port_count_(port_count), ports_(port_count), forgotten_emitted_(port_count, 0) {
  HAPAIR_CHECK_MSG(port_count_ >= 2 && port_count_ <= 0xffff, "a union needs 2 to 65535 inputs, has " << port_count_);
}

bool SerializingUnion::may_precede(std::size_t q, TimeUs ts, std::size_t p) const {
  const Port& port = ports_[q];
  if (!port.buffered.empty()) {
    const Tuple& f = port.buffered.front();
    return f.ts_us < ts || (f.ts_us == ts && q < p);
  }
  if (port.ended) return false;
  // Port q will deliver nothing with ts below its boundary; at the boundary itself, a tuple of a
  // lower port number goes first.
  return port.boundary_us < ts || (port.boundary_us == ts && q < p);
}

void SerializingUnion::drain(Tuples& out) {
  for (;;) {
    // The buffered tuple with the smallest merge key.
    std::size_t best = port_count_;
    for (std::size_t p = 0; p < port_count_; ++p) {
      if (ports_[p].buffered.empty()) continue;
      if (best == port_count_ || ports_[p].buffered.front().ts_us < ports_[best].buffered.front().ts_us) best = p;
    }
    if (best == port_count_) return;
    const Tuple& x = ports_[best].buffered.front();
    for (std::size_t q = 0; q < port_count_; ++q)
      if (q != best && may_precede(q, x.ts_us, best)) return;  // wait for q's progress
    // Merge keys only grow: (ts, port) after the last output's (ids grow within a port).
    HAPAIR_CHECK_MSG(!has_last_ || x.ts_us > last_ts_ || (x.ts_us == last_ts_ && best >= last_port_),
                     "merge key (" << x.ts_us << ", " << best << ") after (" << last_ts_ << ", " << last_port_ << ")");
    Tuple o = x;
    o.id = ++counter_;
    out.push_back(o);
    causes_.push_back(Cause{o.id, static_cast<std::uint16_t>(best), x.id});
    has_last_ = true;
    last_ts_ = x.ts_us;
    last_port_ = best;
    ports_[best].buffered.pop_front();
  }
}

void SerializingUnion::process(std::size_t port, const Tuple& t, Tuples& out) {
  HAPAIR_CHECK_MSG(port < port_count_, "port=" << port << " ports=" << port_count_);
  Port& p = ports_[port];
  HAPAIR_CHECK_MSG(t.id > p.last_seen, "port=" << port << " id=" << t.id << " last=" << p.last_seen);
  HAPAIR_CHECK_MSG(!p.ended, "port=" << port << " tuple id=" << t.id << " after end of stream");
  // A port's timestamps never go backwards, nor below a boundary its producer announced.
  HAPAIR_CHECK_MSG(t.ts_us >= p.boundary_us, "port=" << port << " tuple id=" << t.id << " ts=" << t.ts_us
                                                     << " below the port's boundary " << p.boundary_us);
  p.last_seen = t.id;
  p.boundary_us = t.ts_us;
  p.buffered.push_back(t);
  drain(out);
}

void SerializingUnion::advance_boundary(std::size_t port, TimeUs boundary_us, Tuples& out) {
  HAPAIR_CHECK_MSG(port < port_count_, "port=" << port << " ports=" << port_count_);
  Port& p = ports_[port];
  if (p.ended || boundary_us <= p.boundary_us) return;  // boundaries only move forward
  p.boundary_us = boundary_us;
  drain(out);
}

TimeUs SerializingUnion::output_boundary(const std::vector<TimeUs>& /*input_boundaries*/) const {
  // Every later output is a buffered tuple or a later input: the smallest of each port's front
  // and boundary bounds them all.
  TimeUs b = kEndedBoundary;
  for (const Port& p : ports_) {
    if (!p.buffered.empty()) b = std::min(b, p.buffered.front().ts_us);
    else if (!p.ended) b = std::min(b, p.boundary_us);
  }
  return b;
}

void SerializingUnion::end_of_stream(std::size_t port, Tuples& out) {
  HAPAIR_CHECK_MSG(port < port_count_, "port=" << port << " ports=" << port_count_);
  ports_[port].ended = true;
  drain(out);
}

bool SerializingUnion::has_finished() const {
  return std::all_of(ports_.begin(), ports_.end(), [](const Port& p) { return p.ended && p.buffered.empty(); });
}

std::size_t SerializingUnion::buffered_tuples() const {
  std::size_t n = 0;
  for (const Port& p : ports_) n += p.buffered.size();
  return n;
}

RestartPoint SerializingUnion::restart_point(TupleId acked_output) const {
  const TupleId acked = std::max(acked_output, forgotten_up_to_);
  RestartPoint point;
  point.replay_after = forgotten_emitted_;
  for (const Cause& c : causes_) {
    if (c.output > acked) break;
    point.replay_after[c.port] = std::max(point.replay_after[c.port], c.input);
  }
  for (std::size_t p = 0; p < port_count_; ++p)
    if (!ports_[p].buffered.empty())
      point.replay_after[p] = std::min(point.replay_after[p], ports_[p].buffered.front().id - 1);
  ByteWriter w;
  write_tag(w, BlobTag::sunion_resume);
  w.u64(std::min(acked, counter_));
  point.resume = w.take();
  return point;
}

bool SerializingUnion::restart_from(const RestartPoint& point) {
  if (point.replay_after.size() != port_count_) return false;
  ByteReader r(point.resume);
  if (!read_tag(r, BlobTag::sunion_resume)) return false;
  const TupleId counter = r.u64();
  if (!r.ok() || !r.at_end()) return false;
  *this = SerializingUnion(port_count_);
  counter_ = counter;
  forgotten_up_to_ = counter;
  for (std::size_t p = 0; p < port_count_; ++p) ports_[p].last_seen = point.replay_after[p];
  forgotten_emitted_ = point.replay_after;
  return true;
}

void SerializingUnion::forget_up_to(TupleId acked_output) {
  const TupleId acked = std::min(acked_output, counter_);
  while (!causes_.empty() && causes_.front().output <= acked) {
    const Cause& c = causes_.front();
    forgotten_emitted_[c.port] = std::max(forgotten_emitted_[c.port], c.input);
    causes_.pop_front();
  }
  forgotten_up_to_ = std::max(forgotten_up_to_, acked);
}

Bytes SerializingUnion::snapshot() const {
  ByteWriter w;
  write_tag(w, BlobTag::sunion_state);
  w.u64(port_count_);
  w.u64(counter_);
  write_bool(w, has_last_);
  w.i64(last_ts_);
  w.u64(last_port_);
  w.u64(forgotten_up_to_);
  for (std::size_t p = 0; p < port_count_; ++p) {
    const Port& port = ports_[p];
    w.u64(port.last_seen);
    w.i64(port.boundary_us);
    write_bool(w, port.ended);
    w.u64(forgotten_emitted_[p]);
    w.u64(port.buffered.size());
    for (const Tuple& t : port.buffered) write_tuple(w, t);
  }
  w.u64(causes_.size());
  for (const Cause& c : causes_) {
    w.u64(c.output);
    w.u64(c.port);
    w.u64(c.input);
  }
  return w.take();
}

bool SerializingUnion::restore(const Bytes& snapshot) {
  ByteReader r(snapshot);
  if (!read_tag(r, BlobTag::sunion_state)) return false;
  if (r.u64() != port_count_) return false;
  SerializingUnion s(port_count_);
  s.counter_ = r.u64();
  if (!read_bool(r, s.has_last_)) return false;
  s.last_ts_ = r.i64();
  const std::uint64_t last_port = r.u64();
  if (last_port >= port_count_) return false;
  s.last_port_ = static_cast<std::size_t>(last_port);
  s.forgotten_up_to_ = r.u64();
  for (std::size_t p = 0; p < port_count_ && r.ok(); ++p) {
    Port& port = s.ports_[p];
    port.last_seen = r.u64();
    port.boundary_us = r.i64();
    if (!read_bool(r, port.ended)) return false;
    s.forgotten_emitted_[p] = r.u64();
    const std::uint64_t n = r.count(kTupleBytes);
    for (std::uint64_t i = 0; i < n && r.ok(); ++i) {
      const Tuple t = read_tuple(r);
      // A snapshot from a peer: its buffers must keep the port's order.
      if (t.id > port.last_seen || (!port.buffered.empty() && (t.id <= port.buffered.back().id ||
                                                               t.ts_us < port.buffered.back().ts_us)))
        return false;
      port.buffered.push_back(t);
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
  if (!r.ok() || !r.at_end()) return false;
  *this = std::move(s);
  return true;
}

}  // namespace hapair
