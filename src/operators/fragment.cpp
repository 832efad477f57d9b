#include "operators/fragment.h"

#include <algorithm>
#include <limits>
#include <string>

#include "operators/state_io.h"
#include "protocols/check.h"

namespace hapair {
namespace {

constexpr TupleId kNothingNeeded = std::numeric_limits<TupleId>::max();
// The boundary of an input that ended: nothing more will come.
constexpr TimeUs kEndedBoundary = std::numeric_limits<TimeUs>::max();

}  // namespace

// An operator port reading another operator's output or a fragment input. Named, not anonymous:
// Fragment::Impl holds it (an anonymous type in a class of external linkage is one definition
// per file, which a unity build's combined files would share).
namespace fragment_internal {
struct Consumer {
  std::size_t op = 0;
  std::size_t port = 0;
};
}  // namespace fragment_internal
using fragment_internal::Consumer;

struct Fragment::Impl {
  // Structure, fixed at construction.
  std::vector<OperatorSpec> specs;
  std::vector<std::unique_ptr<Operator>> ops;
  std::vector<std::size_t> topo;                    // a topological order of the operators
  std::vector<std::vector<Consumer>> consumers;     // per op: internal readers of its output
  std::vector<StreamId> exported;                   // per op: the plan stream it exports, or kNoStream
  std::map<StreamId, std::vector<Consumer>> input_consumers;  // per fragment input
  // Per op: the buffer its outputs of one input go to before they are routed, reused (a fresh
  // vector per input was an allocation per tuple and operator). An operator is never fed again
  // while its outputs are being routed: the operators form a DAG and routing goes downstream.
  std::vector<Tuples> produced_by;

  // The fragment's own state besides its operators' (part of snapshots and deltas).
  struct State {
    std::vector<std::vector<TupleId>> skip;      // per op port: ignore ids at or below (after restart_from)
    std::vector<std::vector<bool>> port_ended;   // per op port
    std::vector<bool> finished;                  // per op: finish propagated downstream
    std::vector<std::uint64_t> determinant_seq;  // per op: number of the next determinant record
  };
  State st;
  std::uint64_t dropped = 0;

  // Boundaries (only in a plan where an operator waits on them: a Union in timestamp order). Per operator
  // port, every later input has ts >= in_boundary; per operator, every later output has
  // ts >= out_boundary. They are derived from what arrives, not state: a restored or restarted
  // fragment learns them again from its next inputs.
  bool boundaries = false;
  std::vector<std::vector<bool>> port_ordered;  // per op port: its input's timestamps never go back
  std::vector<std::vector<TimeUs>> in_boundary;
  std::vector<TimeUs> out_boundary;

  void reset_boundaries() {
    in_boundary.clear();
    for (const auto& op : ops) in_boundary.emplace_back(op->input_count(), 0);
    out_boundary.assign(ops.size(), 0);
  }

  // Every later input of (op, port) has ts >= b: the operator hears of it, and so do the
  // operators its output reaches when that output's boundary moves.
  void raise_port(std::size_t op, std::size_t port, TimeUs b, FragmentOutputs& out) {
    if (b <= in_boundary[op][port]) return;
    in_boundary[op][port] = b;
    Tuples produced;
    ops[op]->advance_boundary(port, b, produced);
    route(op, produced, out);
    notify_if_finished(op, out);
    raise_output(op, out);
  }

  void raise_output(std::size_t op, FragmentOutputs& out) {
    const TimeUs b = ops[op]->output_boundary(in_boundary[op]);
    if (b <= out_boundary[op]) return;
    out_boundary[op] = b;
    for (const Consumer& c : consumers[op]) raise_port(c.op, c.port, b, out);
  }

  std::vector<std::unique_ptr<Operator>> fresh_ops() const {
    std::vector<std::unique_ptr<Operator>> fresh;
    for (const OperatorSpec& spec : specs) fresh.push_back(make_operator(spec));
    return fresh;
  }

  void reset_state() {
    st = State{};
    for (const auto& op : ops) {
      st.skip.emplace_back(op->input_count(), 0);
      st.port_ended.emplace_back(op->input_count(), false);
    }
    st.finished.assign(ops.size(), false);
    st.determinant_seq.assign(ops.size(), 1);
  }

  void route(std::size_t op, const Tuples& produced, FragmentOutputs& out) {
    for (const Tuple& t : produced) {
      // Exported first, so that `out` lists a tuple before anything it causes downstream.
      if (exported[op] != kNoStream) out.push_back(FragmentOutput{exported[op], t});
      for (const Consumer& c : consumers[op]) feed(c.op, c.port, t, out);
    }
  }

  void feed(std::size_t op, std::size_t port, const Tuple& t, FragmentOutputs& out) {
    if (st.port_ended[op][port]) {
      ++dropped;
      return;
    }
    if (t.id <= st.skip[op][port]) return;  // replayed from below this port's own restart position
    Tuples& produced = produced_by[op];
    produced.clear();
    ops[op]->process(port, t, produced);
    route(op, produced, out);
    notify_if_finished(op, out);
    if (boundaries) {
      // An ordered input's own tuple is a boundary for what follows it on that port.
      if (port_ordered[op][port]) in_boundary[op][port] = std::max(in_boundary[op][port], t.ts_us);
      raise_output(op, out);
    }
  }

  // A run of one input port whose operator feeds no other operator of the fragment: the
  // operator takes the run in one call and its outputs go straight to `out` (exported) in the
  // order feed() would give, stopping once `out` holds `out_limit` tuples. Finishing is noticed
  // once after the run, which is the same as after every tuple: with no internal consumers,
  // notify_if_finished only marks the operator finished. Ids within a run grow, so the tuples a
  // restart position skips are a prefix.
  std::size_t feed_run(std::size_t op, std::size_t port, const Tuple* tuples, std::size_t count, FragmentOutputs& out,
                       std::size_t out_limit) {
    if (st.port_ended[op][port]) {
      dropped += count;
      return count;
    }
    std::size_t skipped = 0;
    while (skipped < count && tuples[skipped].id <= st.skip[op][port]) ++skipped;
    if (skipped == count) return count;
    std::size_t taken = 0;
    if (exported[op] != kNoStream) {
      // Straight into the outputs' buffer, which holds out_limit tuples when the operator stops
      // for want of room (the room of an empty buffer of its own, out_limit - out.size(), as before).
      Tuples& buffer = out.buffer();
      const std::size_t from = buffer.size();
      taken = ops[op]->process_run(port, tuples + skipped, count - skipped, buffer, out_limit);
      out.end_stretch(exported[op], from);
    } else {
      Tuples& produced = produced_by[op];
      produced.clear();
      taken = ops[op]->process_run(port, tuples + skipped, count - skipped, produced, std::numeric_limits<std::size_t>::max());
    }
    notify_if_finished(op, out);
    return skipped + taken;
  }

  void end_port(std::size_t op, std::size_t port, FragmentOutputs& out) {
    if (st.port_ended[op][port]) return;
    st.port_ended[op][port] = true;
    Tuples produced;
    ops[op]->end_of_stream(port, produced);
    route(op, produced, out);
    notify_if_finished(op, out);
    if (boundaries) {
      in_boundary[op][port] = kEndedBoundary;
      raise_output(op, out);
    }
  }

  void notify_if_finished(std::size_t op, FragmentOutputs& out) {
    if (st.finished[op] || !ops[op]->has_finished()) return;
    st.finished[op] = true;
    for (const Consumer& c : consumers[op]) end_port(c.op, c.port, out);
  }

  // The cause functions composed backwards: the position needed on each operator's output is
  // the minimum of its downstream ack (if exported) and its internal consumers' own replay
  // positions, which reverse topological order has computed already.
  void compose(const std::map<StreamId, TupleId>& acked, std::vector<TupleId>& needed,
               std::vector<RestartPoint>& points) const {
    needed.assign(ops.size(), kNothingNeeded);
    points.assign(ops.size(), RestartPoint{});
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
      const std::size_t i = *it;
      TupleId n = kNothingNeeded;
      if (exported[i] != kNoStream) {
        const auto a = acked.find(exported[i]);
        n = a == acked.end() ? 0 : a->second;
      }
      for (const Consumer& c : consumers[i]) n = std::min(n, points[c.op].replay_after.at(c.port));
      needed[i] = n;
      points[i] = ops[i]->restart_point(n);
      HAPAIR_CHECK_MSG(points[i].replay_after.size() == ops[i]->input_count(),
                       "operator " << specs[i].name << " gave " << points[i].replay_after.size() << " positions");
    }
  }

  void write_state(ByteWriter& w) const {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      write_ids(w, st.skip[i]);
      for (bool e : st.port_ended[i]) write_bool(w, e);
      write_bool(w, st.finished[i]);
      w.u64(st.determinant_seq[i]);
    }
  }

  // Reads what write_state() wrote; false when it does not fit these operators.
  bool read_state(ByteReader& r, State& out) const {
    out = State{};
    for (std::size_t i = 0; i < ops.size(); ++i) {
      std::vector<TupleId> s = read_ids(r);
      if (!r.ok() || s.size() != ops[i]->input_count()) return false;
      std::vector<bool> e(s.size());
      for (std::size_t p = 0; p < s.size(); ++p) {
        bool b = false;
        if (!read_bool(r, b)) return false;
        e[p] = b;
      }
      bool f = false;
      if (!read_bool(r, f)) return false;
      out.skip.push_back(std::move(s));
      out.port_ended.push_back(std::move(e));
      out.finished.push_back(f);
      out.determinant_seq.push_back(r.u64());
    }
    return r.ok();
  }
};

Fragment::Fragment(const Plan& plan, FragmentId id) : id_(id), impl_(std::make_unique<Impl>()) {
  const FragmentSpec& spec = plan.spec(id);
  if (spec.kind != FragmentKind::operators) {
    // Sources and sinks run no operators; they still expose their plan streams.
    inputs_ = plan.fragments.at(id).inputs;
    outputs_ = plan.fragments.at(id).outputs;
    impl_->reset_state();
    return;
  }
  Impl& m = *impl_;
  m.specs = spec.operators;
  std::map<std::string, std::size_t> producer;
  for (std::size_t i = 0; i < m.specs.size(); ++i) {
    m.ops.push_back(make_operator(m.specs[i]));
    HAPAIR_CHECK_MSG(m.ops.back()->input_count() == m.specs[i].inputs.size(),
                     "operator " << m.specs[i].name << " has " << m.specs[i].inputs.size() << " inputs, its kind takes "
                                 << m.ops.back()->input_count());
    HAPAIR_CHECK_MSG(producer.emplace(m.specs[i].output, i).second,
                     "stream " << m.specs[i].output << " is produced twice in fragment " << spec.name);
  }
  m.consumers.resize(m.ops.size());
  std::vector<std::size_t> indegree(m.ops.size(), 0);
  for (std::size_t i = 0; i < m.specs.size(); ++i) {
    for (std::size_t p = 0; p < m.specs[i].inputs.size(); ++p) {
      const std::string& name = m.specs[i].inputs[p];
      const auto internal = producer.find(name);
      if (internal != producer.end()) {
        m.consumers[internal->second].push_back(Consumer{i, p});
        ++indegree[i];
        continue;
      }
      const StreamId s = plan.stream_id(name);
      HAPAIR_CHECK_MSG(s != kNoStream, "fragment " << spec.name << " reads stream " << name << ", which the plan lacks");
      m.input_consumers[s].push_back(Consumer{i, p});
      if (std::find(inputs_.begin(), inputs_.end(), s) == inputs_.end()) inputs_.push_back(s);
    }
  }
  for (std::size_t i = 0; i < m.specs.size(); ++i) {
    const StreamId s = plan.stream_id(m.specs[i].output);
    const bool exported = s != kNoStream && plan.streams.at(s).producer == id;
    m.exported.push_back(exported ? s : kNoStream);
    if (exported) outputs_.push_back(s);
  }
  // Kahn's algorithm, always taking the lowest ready index, so the order is the spec's order
  // wherever the spec is already topological.
  std::vector<bool> placed(m.ops.size(), false);
  for (std::size_t round = 0; round < m.ops.size(); ++round) {
    std::size_t next = m.ops.size();
    for (std::size_t i = 0; i < m.ops.size() && next == m.ops.size(); ++i)
      if (!placed[i] && indegree[i] == 0) next = i;
    HAPAIR_CHECK_MSG(next != m.ops.size(), "the operators of fragment " << spec.name << " form a cycle");
    placed[next] = true;
    m.topo.push_back(next);
    for (const Consumer& c : m.consumers[next]) --indegree[c.op];
  }
  m.reset_state();
  // Boundaries flow through every fragment of a plan with a Union in timestamp order (its
  // inputs may come from other fragments), and through none otherwise.
  m.boundaries = plan.boundaries;
  m.port_ordered.resize(m.ops.size());
  std::vector<bool> output_ordered(m.ops.size(), false);
  for (std::size_t i : m.topo) {
    std::vector<bool> ins;
    for (const std::string& name : m.specs[i].inputs) {
      const auto internal = producer.find(name);
      ins.push_back(internal != producer.end() ? output_ordered[internal->second] : plan.streams.at(plan.stream_id(name)).ordered);
    }
    output_ordered[i] = ordered_output(m.specs[i], ins);
    m.port_ordered[i] = std::move(ins);
  }
  m.reset_boundaries();
  m.produced_by.resize(m.ops.size());
}

Fragment::~Fragment() = default;

OperatorClass Fragment::klass() const {
  OperatorClass k = OperatorClass::repeatable;
  for (const auto& op : impl_->ops) k = std::max(k, op->operator_class());
  return k;
}

void Fragment::process(StreamId input, const Tuple& t, FragmentOutputs& out) {
  const auto it = impl_->input_consumers.find(input);
  if (it == impl_->input_consumers.end()) {
    ++impl_->dropped;
    return;
  }
  for (const Consumer& c : it->second) impl_->feed(c.op, c.port, t, out);
}

std::size_t Fragment::process_run(StreamId input, const Tuple* tuples, std::size_t count, FragmentOutputs& out,
                                  std::size_t outputs_max) {
  Impl& m = *impl_;
  const auto it = m.input_consumers.find(input);
  if (it == m.input_consumers.end()) {
    m.dropped += count;
    return count;
  }
  HAPAIR_CHECK_MSG(outputs_max >= 1, "outputs_max=" << outputs_max);
  const std::size_t limit = out.size() + outputs_max;
  const std::vector<Consumer>& consumers = it->second;
  if (consumers.size() == 1 && !m.boundaries && m.consumers[consumers[0].op].empty())
    return m.feed_run(consumers[0].op, consumers[0].port, tuples, count, out, limit);
  for (std::size_t i = 0; i < count; ++i) {
    for (const Consumer& c : consumers) m.feed(c.op, c.port, tuples[i], out);
    if (out.size() >= limit) return i + 1;
  }
  return count;
}

void Fragment::advance_boundary(StreamId input, TimeUs boundary_us, FragmentOutputs& out) {
  if (!impl_->boundaries) return;
  const auto it = impl_->input_consumers.find(input);
  if (it == impl_->input_consumers.end()) return;  // not mine: nothing to do (a tuple would be counted)
  for (const Consumer& c : it->second) impl_->raise_port(c.op, c.port, boundary_us, out);
}

TimeUs Fragment::output_boundary(StreamId output) const {
  for (std::size_t i = 0; i < impl_->ops.size(); ++i)
    if (impl_->exported[i] == output) return impl_->boundaries ? impl_->out_boundary[i] : 0;
  return 0;
}

bool Fragment::uses_boundaries() const { return impl_->boundaries; }

void Fragment::end_of_stream(StreamId input, FragmentOutputs& out) {
  const auto it = impl_->input_consumers.find(input);
  if (it == impl_->input_consumers.end()) {
    ++impl_->dropped;
    return;
  }
  for (const Consumer& c : it->second) impl_->end_port(c.op, c.port, out);
}

bool Fragment::output_ended(StreamId output) const {
  for (std::size_t i = 0; i < impl_->ops.size(); ++i)
    if (impl_->exported[i] == output) return impl_->st.finished[i];
  return false;
}

bool Fragment::has_finished() const {
  return std::all_of(impl_->st.finished.begin(), impl_->st.finished.end(), [](bool f) { return f; });
}

// ---- snapshots ---------------------------------------------------------------------------------

Bytes Fragment::snapshot() const {
  ByteWriter w;
  write_tag(w, BlobTag::fragment_state);
  w.u64(impl_->ops.size());
  for (const auto& op : impl_->ops) w.bytes(op->snapshot());
  impl_->write_state(w);
  return w.take();
}

bool Fragment::restore(const Bytes& snapshot) {
  Impl& m = *impl_;
  ByteReader r(snapshot);
  if (!read_tag(r, BlobTag::fragment_state) || r.u64() != m.ops.size()) return false;
  std::vector<std::unique_ptr<Operator>> fresh = m.fresh_ops();
  for (auto& op : fresh) {
    const Bytes blob = r.bytes();
    if (!r.ok() || !op->restore(blob)) return false;
  }
  Impl::State state;
  if (!m.read_state(r, state) || !r.at_end()) return false;
  m.ops = std::move(fresh);
  m.st = std::move(state);
  m.reset_boundaries();
  return true;
}

std::vector<std::uint64_t> Fragment::state_versions() const {
  std::vector<std::uint64_t> versions;
  for (const auto& op : impl_->ops) versions.push_back(op->state_version());
  return versions;
}

bool Fragment::supports_delta() const {
  return std::any_of(impl_->ops.begin(), impl_->ops.end(), [](const auto& op) { return op->supports_delta(); });
}

Bytes Fragment::snapshot_delta(const std::vector<std::uint64_t>& since_versions) const {
  HAPAIR_CHECK_MSG(since_versions.size() == impl_->ops.size(),
                   "delta base has " << since_versions.size() << " versions for " << impl_->ops.size() << " operators");
  ByteWriter w;
  write_tag(w, BlobTag::fragment_delta);
  w.u64(impl_->ops.size());
  for (std::size_t i = 0; i < impl_->ops.size(); ++i) w.bytes(impl_->ops[i]->snapshot_delta(since_versions[i]));
  impl_->write_state(w);
  return w.take();
}

bool Fragment::apply_delta(const Bytes& delta) {
  Impl& m = *impl_;
  ByteReader r(delta);
  if (!read_tag(r, BlobTag::fragment_delta) || r.u64() != m.ops.size()) return false;
  std::vector<Bytes> blobs;
  for (std::size_t i = 0; i < m.ops.size(); ++i) blobs.push_back(r.bytes());
  Impl::State state;
  if (!m.read_state(r, state) || !r.at_end()) return false;
  for (std::size_t i = 0; i < m.ops.size(); ++i)
    if (!m.ops[i]->apply_delta(blobs[i])) return false;
  m.st = std::move(state);
  return true;
}

// ---- restart points ----------------------------------------------------------------------------

namespace {

struct ParsedRestartPoint {
  std::map<StreamId, TupleId> inputs;
  std::vector<RestartPoint> ops;
};

bool parse_restart_point(const Bytes& blob, ParsedRestartPoint& out) {
  ByteReader r(blob);
  if (!read_tag(r, BlobTag::fragment_restart)) return false;
  const std::uint64_t inputs = r.count(16);
  for (std::uint64_t i = 0; i < inputs; ++i) {
    const std::uint64_t stream = r.u64();
    const TupleId after = r.u64();
    if (!r.ok() || stream >= kNoStream || !out.inputs.emplace(static_cast<StreamId>(stream), after).second) return false;
  }
  const std::uint64_t ops = r.count(16);
  for (std::uint64_t i = 0; i < ops; ++i) {
    RestartPoint p;
    p.replay_after = read_ids(r);
    p.resume = r.bytes();
    if (!r.ok()) return false;
    out.ops.push_back(std::move(p));
  }
  return r.ok() && r.at_end();
}

}  // namespace

Bytes Fragment::restart_point(const std::map<StreamId, TupleId>& acked_outputs) const {
  const Impl& m = *impl_;
  std::vector<TupleId> needed;
  std::vector<RestartPoint> points;
  m.compose(acked_outputs, needed, points);
  ByteWriter w;
  write_tag(w, BlobTag::fragment_restart);
  w.u64(m.input_consumers.size());
  for (const auto& [stream, readers] : m.input_consumers) {
    TupleId after = kNothingNeeded;
    for (const Consumer& c : readers) after = std::min(after, points[c.op].replay_after[c.port]);
    w.u64(stream);
    w.u64(after);
  }
  w.u64(points.size());
  for (const RestartPoint& p : points) {
    write_ids(w, p.replay_after);
    w.bytes(p.resume);
  }
  return w.take();
}

std::optional<std::map<StreamId, TupleId>> Fragment::replay_positions(const Bytes& restart_point) {
  ParsedRestartPoint parsed;
  if (!parse_restart_point(restart_point, parsed)) return std::nullopt;
  return parsed.inputs;
}

bool Fragment::restart_from(const Bytes& restart_point) {
  Impl& m = *impl_;
  ParsedRestartPoint parsed;
  if (!parse_restart_point(restart_point, parsed) || parsed.ops.size() != m.ops.size()) return false;
  for (const auto& entry : m.input_consumers)
    if (parsed.inputs.count(entry.first) == 0) return false;
  if (parsed.inputs.size() != m.input_consumers.size()) return false;
  std::vector<std::unique_ptr<Operator>> fresh = m.fresh_ops();
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    if (parsed.ops[i].replay_after.size() != fresh[i]->input_count()) return false;
    if (!fresh[i]->restart_from(parsed.ops[i])) return false;
  }
  m.ops = std::move(fresh);
  m.reset_state();
  m.reset_boundaries();
  for (std::size_t i = 0; i < m.ops.size(); ++i) m.st.skip[i] = parsed.ops[i].replay_after;
  return true;
}

void Fragment::forget_up_to(const std::map<StreamId, TupleId>& acked_outputs) {
  std::vector<TupleId> needed;
  std::vector<RestartPoint> points;
  impl_->compose(acked_outputs, needed, points);
  for (std::size_t i = 0; i < impl_->ops.size(); ++i) impl_->ops[i]->forget_up_to(needed[i]);
}

// ---- determinants ------------------------------------------------------------------------------

bool Fragment::is_nondeterministic() const {
  return std::any_of(impl_->ops.begin(), impl_->ops.end(), [](const auto& op) { return op->is_nondeterministic(); });
}

std::vector<Determinants> Fragment::take_determinants() {
  std::vector<Determinants> taken;
  for (std::size_t i = 0; i < impl_->ops.size(); ++i) {
    Operator& op = *impl_->ops[i];
    if (!op.is_nondeterministic()) continue;
    std::vector<DeterminantRecord> records = op.take_determinants();
    if (records.empty()) continue;
    Determinants d;
    d.op_index = static_cast<std::uint16_t>(i);
    d.first_seq = impl_->st.determinant_seq[i];
    impl_->st.determinant_seq[i] += records.size();
    d.records = std::move(records);
    taken.push_back(std::move(d));
  }
  return taken;
}

void Fragment::set_follow_determinants(bool follow) {
  for (auto& op : impl_->ops)
    if (op->is_nondeterministic()) op->set_follow_determinants(follow);
}

void Fragment::add_determinants(const Determinants& d, FragmentOutputs& out) {
  Impl& m = *impl_;
  const std::uint64_t n = d.records.size();
  if (d.op_index >= m.ops.size() || !m.ops[d.op_index]->is_nondeterministic()) {
    m.dropped += std::max<std::uint64_t>(n, 1);
    return;
  }
  const std::size_t i = d.op_index;
  const std::uint64_t expected = m.st.determinant_seq[i];
  if (d.first_seq > expected) {
    // A gap: the records in between were lost, and later ones cannot be applied without them.
    m.dropped += std::max<std::uint64_t>(n, 1);
    return;
  }
  const std::uint64_t already = expected - d.first_seq;
  if (already >= n) {
    m.dropped += n;
    return;
  }
  m.dropped += already;
  const std::vector<DeterminantRecord> fresh(d.records.begin() + static_cast<std::ptrdiff_t>(already), d.records.end());
  m.st.determinant_seq[i] += fresh.size();
  Tuples produced;
  m.ops[i]->add_determinants(fresh, produced);
  m.route(i, produced, out);
  m.notify_if_finished(i, out);
}

std::uint64_t Fragment::determinants_applied(std::uint16_t op_index) const {
  if (op_index >= impl_->st.determinant_seq.size()) return 0;
  return impl_->st.determinant_seq[op_index] - 1;
}

void Fragment::release_buffered(FragmentOutputs& out) {
  Impl& m = *impl_;
  for (std::size_t i = 0; i < m.ops.size(); ++i) {
    if (!m.ops[i]->is_nondeterministic()) continue;
    m.ops[i]->set_follow_determinants(false);
    Tuples produced;
    m.ops[i]->add_determinants({}, produced);  // no new records: honour pending ones, flush the rest
    m.route(i, produced, out);
    m.notify_if_finished(i, out);
  }
}

std::size_t Fragment::buffered_tuples() const {
  std::size_t n = 0;
  for (const auto& op : impl_->ops) n += op->buffered_tuples();
  return n;
}

std::vector<std::pair<std::uint16_t, MergeSegment>> Fragment::take_merge_order() {
  std::vector<std::pair<std::uint16_t, MergeSegment>> taken;
  for (std::size_t i = 0; i < impl_->ops.size(); ++i) {
    if (!impl_->ops[i]->is_nondeterministic()) continue;
    for (MergeSegment& seg : impl_->ops[i]->take_merge_order())
      taken.emplace_back(static_cast<std::uint16_t>(i), std::move(seg));
  }
  return taken;
}

bool Fragment::replay_merge_order(std::uint16_t op_index, const std::vector<MergeRun>& runs) {
  if (op_index >= impl_->ops.size() || !impl_->ops[op_index]->is_nondeterministic()) return false;
  return impl_->ops[op_index]->replay_merge_order(runs);
}

std::uint64_t Fragment::unmatched_merge_runs() const {
  std::uint64_t n = 0;
  for (const auto& op : impl_->ops) n += op->unmatched_merge_runs();
  return n;
}

std::uint64_t Fragment::dropped_inputs() const { return impl_->dropped; }

}  // namespace hapair
