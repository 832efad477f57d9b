#include "operators/stateless_operator.h"

#include "protocols/check.h"

namespace hapair {

// One input: its checks, then its output (if the transform keeps it). True when it made one.
bool StatelessOperator::take(const Tuple& t, Tuples& out) {
  HAPAIR_CHECK_MSG(t.id > last_input_id_, "id=" << t.id << " last_input_id=" << last_input_id_);
  last_input_id_ = t.id;
  Tuple result;
  if (!transform(t, result)) return false;
  HAPAIR_CHECK_MSG(result.id == t.id, "transform changed id " << t.id << " to " << result.id);
  last_output_id_ = result.id;
  out.push_back(result);
  return true;
}

void StatelessOperator::process(std::size_t port, const Tuple& t, Tuples& out) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  HAPAIR_CHECK_MSG(!ended_, "tuple id=" << t.id << " after end of stream");
  take(t, out);
}

// The same checks and results as process() on each tuple, in one loop: at most one output per
// input, so the run stops as soon as `out` reaches out_max.
std::size_t StatelessOperator::process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                                           std::size_t out_max) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  HAPAIR_CHECK_MSG(!ended_ || count == 0, "tuple id=" << tuples[0].id << " after end of stream");
  out.reserve(out.size() + count);
  for (std::size_t i = 0; i < count; ++i)
    if (take(tuples[i], out) && out.size() >= out_max) return i + 1;
  return count;
}

void StatelessOperator::end_of_stream(std::size_t port, Tuples& /*out*/) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  ended_ = true;
}

Bytes StatelessOperator::snapshot() const {
  ByteWriter w;
  write_tag(w, tag_);
  w.u64(last_input_id_);
  w.u64(last_output_id_);
  write_bool(w, ended_);
  return w.take();
}

bool StatelessOperator::restore(const Bytes& snapshot) {
  ByteReader r(snapshot);
  if (!read_tag(r, tag_)) return false;
  const TupleId last_input = r.u64();
  const TupleId last_output = r.u64();
  bool ended = false;
  if (!read_bool(r, ended) || !r.at_end() || last_output > last_input) return false;
  last_input_id_ = last_input;
  last_output_id_ = last_output;
  ended_ = ended;
  return true;
}

RestartPoint StatelessOperator::restart_point(TupleId acked_output) const {
  RestartPoint point;
  point.replay_after.push_back(acked_output >= last_output_id_ ? last_input_id_ : acked_output);
  return point;
}

bool StatelessOperator::restart_from(const RestartPoint& point) {
  if (point.replay_after.size() != 1 || !point.resume.empty()) return false;
  // The restarted operator has, in effect, processed everything up to the replay position:
  // a later restart point must not go back before it.
  last_input_id_ = point.replay_after[0];
  last_output_id_ = 0;
  ended_ = false;
  return true;
}

}  // namespace hapair
