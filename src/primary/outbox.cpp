#include "primary/outbox.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace hapair {

Outbox::Outbox(const NodeIdentity& node, const RouteTable& routes)
    : node_(node), routes_(routes), trace_data_plane_(node.settings().trace_level == TraceLevel::data) {}

void Outbox::count(const std::string& name, std::int64_t n) {
  std::int64_t& c = counters_[name];
  if (n > 0 && c > std::numeric_limits<std::int64_t>::max() - n) c = std::numeric_limits<std::int64_t>::max();
  else if (n < 0 && c < std::numeric_limits<std::int64_t>::min() - n) c = std::numeric_limits<std::int64_t>::min();
  else c += n;
}

std::int64_t Outbox::tuples_between(TupleId a, TupleId b) {
  if (b <= a) return 0;
  return static_cast<std::int64_t>(std::min<TupleId>(b - a, std::numeric_limits<std::int64_t>::max()));
}

void Outbox::send(Effects& eff, TimeUs now, NodeId to, Message body) {
  HAPAIR_CHECK_MSG(to < node_.plan().nodes.size() && to != node_.self(), "send to node " << to << " from " << node_.self());
  trace_sent(eff, now, to, body);
  Envelope e;
  e.header.sender = node_.self();
  e.header.epoch = routes_.epoch();
  e.header.sent_us = now;
  e.body = std::move(body);
  eff.sends.push_back(Outgoing{to, std::move(e)});
}

void Outbox::trace_sent(Effects& eff, TimeUs now, NodeId to, const Message& body) {
  if (!trace_data_plane_ && !std::holds_alternative<ReplayRequest>(body)) return;  // data-plane kinds only
  if (const auto* b = std::get_if<TupleBatch>(&body)) {
    if (b->tuples.empty()) return;
    trace(eff, now, TraceKind::batch_sent)
        .with(TraceKey::peer, to)
        .with(TraceKey::stream, b->stream)
        .with(TraceKey::first_id, b->tuples.front().id)
        .with(TraceKey::last_id, b->tuples.back().id)
        .with(TraceKey::count, b->tuples.size())
        .with(TraceKey::replay, b->replay);
  } else if (const auto* a0 = std::get_if<Level0Ack>(&body)) {
    trace(eff, now, TraceKind::level0_ack).with(TraceKey::peer, to).with(TraceKey::stream, a0->stream).with(TraceKey::position, a0->up_to);
  } else if (const auto* a1 = std::get_if<Level1Ack>(&body)) {
    trace(eff, now, TraceKind::level1_ack)
        .with(TraceKey::peer, to)
        .with(TraceKey::stream, a1->stream)
        .with(TraceKey::position, a1->up_to)
        .with(TraceKey::generation, a1->generation);
  } else if (const auto* r = std::get_if<ReplayRequest>(&body)) {
    TraceEvent& e = trace(eff, now, TraceKind::replay_request)
                        .with(TraceKey::peer, to)
                        .with(TraceKey::stream, r->stream)
                        .with(TraceKey::after_id, r->after_id);
    if (r->up_to > 0) e.with(TraceKey::last_id, r->up_to);
  }
}

TraceEvent& Outbox::trace(Effects& eff, TimeUs now, TraceKind kind) {
  if (is_data_plane(kind) && !trace_data_plane_) {
    not_recorded_ = TraceEvent(now, node_.self(), kind);
    return not_recorded_;
  }
  return eff.traces.emplace_back(now, node_.self(), kind);
}

}  // namespace hapair
