#include "operators/stateless_operator.h"

#include "protocols/check.h"

namespace hapair {

void StatelessOperator::process(std::size_t port, const Tuple& t, Tuples& out) {
  HAPAIR_CHECK_MSG(port == 0, "port=" << port);
  HAPAIR_CHECK_MSG(!ended_, "tuple id=" << t.id << " after end of stream");
  auto virtual_transform = [this](const Tuple& in, Tuple& result) { return transform(in, result); };
  take(t, out, virtual_transform);
}

std::size_t StatelessOperator::process_run(std::size_t port, const Tuple* tuples, std::size_t count, Tuples& out,
                                           std::size_t out_max) {
  return process_run_with(port, tuples, count, out, out_max,
                          [this](const Tuple& in, Tuple& result) { return transform(in, result); });
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
