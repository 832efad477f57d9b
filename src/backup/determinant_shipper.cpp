#include "backup/determinant_shipper.h"

#include <algorithm>

#include "protocols/check.h"

namespace hapair {

DeterminantShipper::DeterminantShipper(Server& server, const std::vector<NodeId>& standbys, const std::vector<NodeId>& not_ready)
    : server_(server) {
  HAPAIR_CHECK_MSG(!standbys.empty(), "node " << server_.node().self() << " ships determinants to no standby");
  for (NodeId s : standbys) {
    HAPAIR_CHECK_MSG(s != kNoNode && s != server_.node().self(), "node " << server_.node().self() << " ships determinants to node " << s);
    standbys_[s] = Progress{};
  }
  for (NodeId s : not_ready) {
    HAPAIR_CHECK_MSG(standbys_.count(s), "node " << s << " is installing my state but is not one of my standbys");
    standbys_[s].ready = false;
  }
}

void DeterminantShipper::mark_ready(NodeId standby, const std::map<std::uint16_t, std::uint64_t>& covered) {
  auto it = standbys_.find(standby);
  if (it == standbys_.end()) return;
  it->second.ready = true;
  for (const auto& [op, seq] : covered) it->second.acked[op] = std::max(it->second.acked[op], seq);
  std::erase_if(unacked_, [&](const Determinants& d) { return all_acked(d.op_index, d.first_seq + d.records.size() - 1); });
  release();
}

void DeterminantShipper::add_standby(NodeId standby) {
  HAPAIR_CHECK_MSG(standby != kNoNode && standby != server_.node().self(),
                   "node " << server_.node().self() << " ships determinants to node " << standby);
  standbys_[standby] = Progress{};
}

bool DeterminantShipper::remove_standby(NodeId standby) {
  standbys_.erase(standby);
  if (standbys_.empty()) return false;
  // What waited only for the lost standby goes out now.
  std::erase_if(unacked_, [&](const Determinants& d) { return all_acked(d.op_index, d.first_seq + d.records.size() - 1); });
  release();
  return true;
}

bool DeterminantShipper::all_acked(std::uint16_t op, std::uint64_t seq) const {
  for (const auto& [n, p] : standbys_) {
    auto it = p.acked.find(op);
    if (!p.ready || it == p.acked.end() || it->second < seq) return false;
  }
  return true;
}

void DeterminantShipper::send_to_all(TimeUs now, const Determinants& d, Effects& eff) {
  for (const auto& [n, p] : standbys_) server_.send(eff, now, n, d);
}

void DeterminantShipper::on_start() {
  // Output produced before this standby existed is released already; later output waits for
  // the standby's acknowledgement of the determinants it depends on. (A new primary with
  // followers held its whole log at the takeover: those gates stay where they are.)
  bool held = false;
  for (const auto& [s, o] : server_.outputs()) held = held || o.gate().held();
  if (!held) server_.outputs().hold_all();
}

void DeterminantShipper::after_processing(TimeUs now, Effects& eff) {
  std::vector<Determinants> taken;
  if (!server_.workload().act_on_fragment([&](Fragment& f, FragmentOutputs&) { taken = f.take_determinants(); })) return;
  for (auto& d : taken) {
    if (d.records.empty()) continue;
    // My fragment numbers its records consecutively, and only this shipper takes them while it
    // lives: what it sends continues what it sent, so the standby can apply it without a gap.
    // (Where the numbering starts is not checked: a node that took over numbers on from the
    // count in the state it installed, which came from a peer.)
    auto prev = sent_.find(d.op_index);
    HAPAIR_CHECK_MSG(prev == sent_.end() || d.first_seq == prev->second + 1,
                     "operator " << d.op_index << " ships records from " << d.first_seq << " after "
                                 << (prev == sent_.end() ? 0 : prev->second));
    sent_[d.op_index] = d.first_seq + d.records.size() - 1;
    server_.count("determinant_records_sent", static_cast<std::int64_t>(d.records.size()));
    if (unacked_.empty()) oldest_sent_us_ = now;
    send_to_all(now, d, eff);
    unacked_.push_back(std::move(d));
  }
  Hold h;
  bool grew = holds_.empty();
  for (const auto& [s, o] : server_.outputs()) {
    h.up_to[s] = o.queue().last_id();
    if (!holds_.empty() && holds_.back().up_to[s] != h.up_to[s]) grew = true;
    // A primary's queues only grow (a rebase shifts ids up): the holds, released oldest first,
    // move each stream's gate forward only.
    HAPAIR_CHECK_MSG(holds_.empty() || h.up_to[s] >= holds_.back().up_to[s],
                     "stream " << s << " holds up to " << h.up_to[s] << " after " << holds_.back().up_to[s]);
  }
  h.needs = sent_;
  if (grew) holds_.push_back(std::move(h));
  // Bounded: one entry per processing turn that produced output; acks arrive within an RTT.
  release();
}

void DeterminantShipper::on_ack(NodeId from, const DeterminantAck& ack) {
  auto p = standbys_.find(from);
  if (p == standbys_.end()) {
    server_.count("determinant_ack_of_no_standby_dropped");
    return;
  }
  auto& a = p->second.acked[ack.op_index];
  if (ack.up_to_seq > a) {
    a = ack.up_to_seq;
    resends_ = 0;
  }
  // Kept until every standby has it (a standby installing my state acknowledges nothing before).
  std::erase_if(unacked_, [&](const Determinants& d) { return all_acked(d.op_index, d.first_seq + d.records.size() - 1); });
  release();
}

TimeUs DeterminantShipper::retransmit(TimeUs now, Effects& eff) {
  if (unacked_.empty()) return kNever;
  const TimeUs timeout = us_from_ms(static_cast<double>(server_.node().settings().retransmit_timeout_ms))
                         << std::min<std::uint32_t>(resends_, 4);
  if (now - oldest_sent_us_ < timeout) return oldest_sent_us_ + timeout;
  // Coalesce: one message per operator carries every unacknowledged record, so a resend is not
  // itself a train of messages any one of which, lost, stalls the standby at a gap again.
  std::size_t records = 0;
  for (const Determinants& d : unacked_) records += d.records.size();
  std::vector<Determinants> merged;
  for (Determinants& d : unacked_) {
    Determinants* m = nullptr;
    for (Determinants& x : merged)
      if (x.op_index == d.op_index) m = &x;
    if (m && m->first_seq + m->records.size() == d.first_seq) {
      m->records.insert(m->records.end(), d.records.begin(), d.records.end());
    } else {
      merged.push_back(std::move(d));
    }
  }
  unacked_.assign(merged.begin(), merged.end());
  std::size_t merged_records = 0;
  for (const Determinants& d : unacked_) merged_records += d.records.size();
  HAPAIR_CHECK_MSG(merged_records == records, "coalescing " << records << " unacknowledged records gives " << merged_records);
  for (const Determinants& d : unacked_) send_to_all(now, d, eff);
  server_.count("determinants_resent", static_cast<std::int64_t>(unacked_.size()));
  oldest_sent_us_ = now;
  ++resends_;
  return now + timeout;
}

void DeterminantShipper::release() {
  while (!holds_.empty()) {
    const Hold& h = holds_.front();
    bool covered = true;
    for (const auto& [n, p] : standbys_)
      if (!p.ready) covered = false;
    for (const auto& [op, seq] : h.needs)
      if (!all_acked(op, seq)) covered = false;
    if (!covered) break;
    for (const auto& [s, id] : h.up_to) {
      const ReleaseGate& gate = server_.outputs().at(s).gate();
      // Every gate is held while this shipper lives (on_start holds them; they open only when
      // the standby is lost, and this shipper with it), so output goes out only through here.
      HAPAIR_CHECK_MSG(gate.held(), "stream " << s << " is not held while determinants are shipped to " << standbys_.size() << " standbys");
      if (id > gate.limit()) server_.outputs().release(s, id);
      HAPAIR_CHECK_MSG(gate.limit() >= id, "stream " << s << " released to " << gate.limit() << " short of " << id);
    }
    holds_.pop_front();
  }
}

}  // namespace hapair
