#include "primary/workload.h"

#include <algorithm>
#include <utility>

#include "operators/source_generator.h"
#include "protocols/check.h"

namespace hapair {

Workload::Workload(const NodeIdentity& node, const Role& role, const RouteTable& routes, Outbox& outbox,
                   InputSide& inputs, OutputSide& outputs)
    : node_(node), role_(role), routes_(routes), outbox_(outbox), inputs_(inputs), outputs_(outputs) {
  if (node_.kind() == FragmentKind::operators) reset();
  if (node_.kind() == FragmentKind::source) {
    source_.emplace(node_.plan().spec(node_.fragment_id()).source, node_.settings().seed);
    source_count_ = source_tuple_count(source_->spec(), node_.settings().duration_s);
  }
}

TimeUs Workload::run(TimeUs now, Effects& eff) {
  const TimeUs next_source = node_.kind() == FragmentKind::source ? emit_source_tuples(now, eff) : kNever;
  process_input(now, eff);
  return next_source;
}

void Workload::on_queue_full(TimeUs now, Effects& eff, const std::string& what, const std::string& stream) {
  const Settings& settings = node_.settings();
  if (settings.queue_full_policy == QueueFullPolicy::error) {
    if (fatal_error_.empty()) {
      fatal_error_ = "output queue of " + what + " is full (" + std::to_string(settings.output_queue_tuples_max) +
                     " tuples = output_queue_tuples_max) and queue_full_policy = error";
      outbox_.trace(eff, now, TraceKind::fatal)
          .with(TraceKey::reason, TraceReason::queue_full)
          .with(TraceKey::stream, node_.plan().stream_id(stream))
          .with_text(fatal_error_);
    }
    eff.fatal_error = fatal_error_;
    return;
  }
  if (!input_blocked_) {
    input_blocked_ = true;
    outbox_.count("backpressure_episodes");
    outbox_.trace(eff, now, TraceKind::backpressure).with(TraceKey::stream, node_.plan().stream_id(stream));
  }
}

void Workload::process_input(TimeUs now, Effects& eff) {
  if (paused_) return;
  if (role_ != Role::primary && role_ != Role::active_backup) return;
  const bool sink = node_.kind() == FragmentKind::sink;
  // A sink delivers everything queued: room for it at once, not a reallocation every doubling.
  if (sink) eff.deliveries.reserve(eff.deliveries.size() + inputs_.queued());
  while (inputs_.queued() > 0) {
    // Before every input: an operator whose output queue is full applies the queue-full policy
    // (a sink has no output queue).
    if (!sink && outputs_.any_full(nullptr)) {
      std::string which;
      outputs_.any_full(&which);
      on_queue_full(now, eff, "stream '" + which + "' on node '" + node_.name() + "'", which);
      return;
    }
    const InputQueue::Run& run = inputs_.front_run();
    const StreamId stream = run.stream;
    if (run.eos) {
      inputs_.take_front(1);
      end_of_stream(now, stream, eff);
    } else if (run.boundary_only) {
      const TimeUs boundary = run.boundary_us;
      inputs_.take_front(1);
      if (!sink) apply_boundary(stream, boundary);
    } else if (sink) {
      // A sink delivers the whole run.
      const std::size_t n = run.items();
      const Tuple* t = run.first();
      for (std::size_t i = 0; i < n; ++i) eff.deliveries.push_back(Delivery{now, stream, t[i], run.from, run.replayed});
      tuples_processed_ += n;
      tuples_delivered_ += n;
      inputs_.take_front(n);
    } else {
      // As many of the run's tuples as surely leave every output queue short of full: while
      // fewer outputs than the smallest room were appended, no queue can be full before the next
      // tuple, so taking them in one go checks nothing the tuple-by-tuple loop would have
      // stopped at; once they reach it, the check above decides again.
      const std::size_t n = run.items();
      const Tuple* first = run.first();
      const std::size_t taken = fragment_->process_run(stream, first, n, outs_, outputs_.room());
      for (std::size_t i = 0; i < taken; ++i) oldest_processed_ts_ = std::min(oldest_processed_ts_, first[i].ts_us);
      // The run's boundary holds once its last tuple is taken.
      const TimeUs boundary = taken == n ? run.boundary_us : 0;
      inputs_.take_front(taken);
      tuples_processed_ += taken;
      operator_tuples_ += taken;
      append_outputs(outs_);
      if (boundary > 0) apply_boundary(stream, boundary);
    }
  }
  input_blocked_ = false;
  publish_boundaries();
}

void Workload::apply_boundary(StreamId stream, TimeUs boundary_us) {
  fragment_->advance_boundary(stream, boundary_us, outs_);
  append_outputs(outs_);
}

void Workload::publish_boundaries() {
  if (!node_.plan().boundaries || node_.kind() != FragmentKind::operators) return;
  for (StreamId s : fragment_->outputs()) outputs_.set_boundary(s, fragment_->output_boundary(s));
}

void Workload::end_of_stream(TimeUs now, StreamId stream, Effects& eff) {
  if (node_.kind() == FragmentKind::operators) {
    fragment_->end_of_stream(stream, outs_);
    append_outputs(outs_);
    for (const auto& [s, o] : outputs_)
      if (fragment_->output_ended(s)) outputs_.end_stream(s);
  } else if (node_.kind() == FragmentKind::sink && inputs_.all_ended() && !end_of_output_traced_) {
    end_of_output_traced_ = true;
    outbox_.trace(eff, now, TraceKind::end_of_output);
  }
}

void Workload::append_outputs(FragmentOutputs& outs) {
  outputs_.append(outs);
  outs.clear();
}

TimeUs Workload::emit_source_tuples(TimeUs now, Effects& eff) {
  HAPAIR_CHECK(node_.kind() == FragmentKind::source && source_);
  const Settings& settings = node_.settings();
  const StreamId s = outputs_.begin()->first;
  const OutputQueue& queue = outputs_.at(s).queue();
  // Every tuple due by now, as far as the queue has room: its queue recomputes the tuples
  // (protocols/tuple_recipe.h), so emitting is moving the last id.
  const TupleId due = std::min(source_count_, source_->last_due_by(now));
  if (next_source_id_ <= due) {
    const TupleId last = std::min<TupleId>(due, next_source_id_ - 1 + queue.room());
    if (last >= next_source_id_) {
      input_blocked_ = false;
      outputs_.extend_source(s, last);
      tuples_emitted_ += last - next_source_id_ + 1;
      next_source_id_ = last + 1;
    }
    if (next_source_id_ <= due) {
      on_queue_full(now, eff, "source '" + node_.name() + "'", node_.plan().streams[s].name);
      return kNever;  // woken again by the acknowledgement that makes room
    }
  }
  if (next_source_id_ > source_count_) {
    outputs_.end_stream(s);
    return kNever;
  }
  // Every later tuple of a source has at least the next one's ts.
  if (node_.plan().boundaries) outputs_.set_boundary(s, source_->time_us(next_source_id_));
  // Batch what falls due within one flush interval into one wake-up.
  const TimeUs next = source_->time_us(next_source_id_);
  const TimeUs flush = us_from_ms(static_cast<double>(settings.batch_flush_ms));
  const TupleId batch_last = std::min<TupleId>(source_count_, next_source_id_ + settings.batch_tuples - 1);
  return std::max(next, std::min(next + flush, source_->time_us(batch_last)));
}

// ---- the fragment's state ---------------------------------------------------------------------

void Workload::reset() {
  if (node_.kind() != FragmentKind::operators) return;
  collect_merge_order();
  fragment_ = std::make_unique<Fragment>(node_.plan(), node_.fragment_id());
}

bool Workload::restore(const Bytes& state) {
  if (node_.kind() != FragmentKind::operators) return true;
  reset();
  if (fragment_->restore(state)) return true;
  reset();
  return false;
}

void Workload::forget_causes_up_to(const std::map<StreamId, TupleId>& acked_outputs) {
  if (fragment_) fragment_->forget_up_to(acked_outputs);
}

bool Workload::act_on_fragment(const std::function<void(Fragment&, FragmentOutputs&)>& act) {
  if (!fragment_) return false;
  FragmentOutputs outs;
  act(*fragment_, outs);
  append_outputs(outs);
  return true;
}

// ---- what the checker and the metrics read ----------------------------------------------------

void Workload::collect_merge_order() {
  if (!fragment_) return;
  for (auto& [op, seg] : fragment_->take_merge_order())
    merge_collected_.push_back(MergeOrder{node_.self(), routes_.epoch(), role_ == Role::primary, seg.following, op,
                                          seg.first_output, std::move(seg.runs)});
}

void Workload::report_merge_orders(Effects& eff) {
  if (merge_collected_.empty()) return;
  if (eff.merge_orders.empty()) {
    eff.merge_orders.swap(merge_collected_);
  } else {
    eff.merge_orders.insert(eff.merge_orders.end(), std::make_move_iterator(merge_collected_.begin()),
                            std::make_move_iterator(merge_collected_.end()));
    merge_collected_.clear();
  }
}

void Workload::add_metrics(Metrics& m) const {
  auto put = [&](const char* name, std::uint64_t v) {
    if (v) m[name] += static_cast<std::int64_t>(v);
  };
  put("tuples_processed", tuples_processed_);
  put("tuples_delivered", tuples_delivered_);
  put("tuples_emitted", tuples_emitted_);
  if (fragment_) m["operator_buffered_tuples"] = static_cast<std::int64_t>(fragment_->buffered_tuples());
}

}  // namespace hapair
